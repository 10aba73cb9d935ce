package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"foundry/internal/auth"
	"foundry/internal/service"
)

// commaList parses a comma-separated list (of scopes, toolsets, origins):
// trimmed, empties and duplicates dropped. For scopes an empty value is an
// empty list (which CreateToken refuses), never "every scope".
func commaList(s string) []string {
	out := []string{}
	for _, sc := range strings.Split(s, ",") {
		if sc = strings.TrimSpace(sc); sc != "" && !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	return out
}

// grantText is how a grant reads in `token list` and after `token create`.
func grantText(ids []string) string {
	switch {
	case ids == nil:
		return auth.GrantAll
	case len(ids) == 0:
		return auth.GrantNone
	}
	return strings.Join(ids, ",")
}

func tokenCreateFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	scopes := fs.String("scopes", auth.ScopeRead, "comma-separated scopes: "+auth.ScopeRead+" (read tools), "+auth.ScopeWrite+" (write tools)")
	notes := fs.String("notes", auth.GrantAll, "Notes the token may reach: all (also when the flag is omitted), none, or a comma-separated list of Note IDs (they must exist, and must also be approved); an empty value grants no Note")
	rooms := fs.String("rooms", auth.GrantAll, "Rooms the token may reach: all (also when the flag is omitted), none, or a comma-separated list of Room IDs (they must exist); an empty value grants no Room")
	name := fs.String("name", "", "a name to recognise the token by in the token list (default \"Personal token N\", N one more than your tokens)")
	return func([]string) error {
		noteGrant, err := auth.ParseGrant("notes", *notes)
		if err != nil {
			return err
		}
		roomGrant, err := auth.ParseGrant("rooms", *rooms)
		if err != nil {
			return err
		}
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			secret, tok, err := svc.CreateToken(ctx, service.Operator(o), service.TokenSpec{
				Name: *name, Scopes: commaList(*scopes), Notes: noteGrant, Rooms: roomGrant,
			})
			if err != nil {
				var kv []string
				for i, id := range noteGrant {
					kv = append(kv, fmt.Sprintf("notes[%d]", i), id)
				}
				for i, id := range roomGrant {
					kv = append(kv, fmt.Sprintf("rooms[%d]", i), id)
				}
				return sent(err, kv...)
			}
			fmt.Fprintf(os.Stderr, "Created token %s (%s) with scopes %s, Notes %s, Rooms %s. It is shown once; store it now.\n",
				tok.ID, tok.Name, strings.Join(tok.Scopes, " "), grantText(tok.Notes), grantText(tok.Rooms))
			fmt.Println(secret)
			return nil
		})
	}
}

func tokenListFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	return func([]string) error {
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			toks, err := svc.ListTokens(ctx, service.Operator(o))
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tSCOPES\tNOTES\tROOMS\tCREATED\tSTATUS")
			for _, t := range toks {
				status := "active"
				if t.RevokedAt != nil {
					status = "revoked " + t.RevokedAt.Format("2006-01-02 15:04")
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Name, strings.Join(t.Scopes, ","), grantText(t.Notes), grantText(t.Rooms), t.CreatedAt.Format("2006-01-02 15:04"), status)
			}
			return tw.Flush()
		})
	}
}

func tokenRevokeFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	return func(args []string) error {
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			if err := svc.RevokeToken(ctx, service.Operator(o), args[0]); err != nil {
				return sent(err, "token_id", args[0])
			}
			fmt.Printf("revoked %s\n", args[0])
			return nil
		})
	}
}
