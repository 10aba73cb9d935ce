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
	"foundry/internal/store"
)

func cmdToken(args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: foundry token create|list|revoke [flags]")
		return errUsage
	}
	switch args[0] {
	case "create":
		return tokenCreate(args[1:])
	case "list":
		return tokenList(args[1:])
	case "revoke":
		return tokenRevoke(args[1:])
	}
	fmt.Fprintf(os.Stderr, "foundry token: unknown subcommand %q (create, list, revoke)\n", args[0])
	return errUsage
}

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

// grant parses serve's list flags (--toolsets, --origins): "" or "all" is
// nil (the default), otherwise a comma list. Token grants do not use it: for
// them an empty value means nothing (auth.ParseGrant).
func grant(s string) []string {
	s = strings.TrimSpace(s)
	if s == "" || s == "all" {
		return nil
	}
	return commaList(s)
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

func tokenCreate(args []string) error {
	fs := flag.NewFlagSet("token create", flag.ContinueOnError)
	var d dataFlags
	d.register(fs)
	scopes := fs.String("scopes", auth.ScopeRead, "comma-separated scopes: "+auth.ScopeRead+", "+auth.ScopeWrite)
	notes := fs.String("notes", auth.GrantAll, "Notes the token may reach: all (also when the flag is omitted), none, or a comma-separated list of Note IDs (they must exist, and must also be approved); an empty value grants no Note")
	rooms := fs.String("rooms", auth.GrantAll, "Rooms the token may reach: all (also when the flag is omitted), none, or a comma-separated list of Room IDs (they must exist); an empty value grants no Room")
	name := fs.String("name", "cli", "a name to recognise the token by in `foundry token list`")
	if err := parse(fs, args); err != nil {
		return err
	}
	noteGrant, err := auth.ParseGrant("notes", *notes)
	if err != nil {
		return err
	}
	roomGrant, err := auth.ParseGrant("rooms", *rooms)
	if err != nil {
		return err
	}
	return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
		secret, tok, err := auth.CreateToken(ctx, svc.Store, auth.NewTokenSpec{
			Workspace: o.Workspace.ID, User: o.User.ID, Name: *name,
			Scopes: commaList(*scopes), Notes: noteGrant, Rooms: roomGrant,
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "Created token %s (%s) with scopes %s, Notes %s, Rooms %s. It is shown once; store it now.\n",
			tok.ID, tok.Name, strings.Join(tok.Scopes, " "), grantText(tok.Notes), grantText(tok.Rooms))
		fmt.Println(secret)
		return nil
	})
}

func tokenList(args []string) error {
	fs := flag.NewFlagSet("token list", flag.ContinueOnError)
	var d dataFlags
	d.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	var toks []store.Token
	err := withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) (err error) {
		toks, err = svc.Store.Tokens(ctx, o.Workspace.ID)
		return err
	})
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
}

func tokenRevoke(args []string) error {
	fs := flag.NewFlagSet("token revoke", flag.ContinueOnError)
	var d dataFlags
	d.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: foundry token revoke TOKEN_ID [--data DIR] (IDs are in `foundry token list`)")
		return errUsage
	}
	return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
		if err := svc.Store.RevokeToken(ctx, o.Workspace.ID, fs.Arg(0)); err != nil {
			return fmt.Errorf("revoke %s: %w (see `foundry token list`)", fs.Arg(0), err)
		}
		fmt.Printf("revoked %s\n", fs.Arg(0))
		return nil
	})
}
