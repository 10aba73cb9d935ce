package main

import (
	"context"
	"flag"
	"fmt"
	"os"
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

// grant parses "all" (nil: everything, now and later) or a comma list.
func grant(s string) []string {
	s = strings.TrimSpace(s)
	if s == "" || s == "all" {
		return nil
	}
	out := []string{}
	for _, id := range strings.Split(s, ",") {
		if id = strings.TrimSpace(id); id != "" {
			out = append(out, id)
		}
	}
	return out
}

func tokenCreate(args []string) error {
	fs := flag.NewFlagSet("token create", flag.ContinueOnError)
	var d dataFlags
	d.register(fs)
	scopes := fs.String("scopes", auth.ScopeRead, "comma-separated scopes: "+auth.ScopeRead+", "+auth.ScopeWrite)
	notes := fs.String("notes", "all", "Notes the token may reach: all, or a comma-separated list of Note IDs (they must also be approved)")
	rooms := fs.String("rooms", "all", "Rooms the token may reach: all, or a comma-separated list of Room IDs")
	name := fs.String("name", "cli", "a name to recognise the token by in `foundry token list`")
	if err := parse(fs, args); err != nil {
		return err
	}
	return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
		secret, tok, err := auth.CreateToken(ctx, svc.Store, auth.NewTokenSpec{
			Workspace: o.Workspace.ID, User: o.User.ID, Name: *name,
			Scopes: grant(*scopes), Notes: grant(*notes), Rooms: grant(*rooms),
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "Created token %s (%s) with scopes %s. It is shown once; store it now.\n", tok.ID, tok.Name, strings.Join(tok.Scopes, " "))
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
	fmt.Fprintln(tw, "ID\tNAME\tSCOPES\tNOTES\tCREATED\tSTATUS")
	for _, t := range toks {
		notes := "all"
		if t.Notes != nil {
			notes = strings.Join(t.Notes, ",")
		}
		status := "active"
		if t.RevokedAt != nil {
			status = "revoked " + t.RevokedAt.Format("2006-01-02 15:04")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Name, strings.Join(t.Scopes, ","), notes, t.CreatedAt.Format("2006-01-02 15:04"), status)
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
