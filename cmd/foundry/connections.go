package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"foundry/internal/problem"
	"foundry/internal/service"
)

// connectionsListFlags lists every connected OAuth client and personal
// access token of the workspace, as GET /api/connections does for the owner.
func connectionsListFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	return func([]string) error {
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			es, err := svc.ListConnections(ctx, service.Operator(o))
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tKIND\tNAME\tUSER\tSCOPES\tNOTES\tROOMS\tCREATED\tLAST USED\tREVOKED")
			for _, e := range es {
				name := e.Name
				if e.ClientHost != "" && !strings.Contains(name, e.ClientHost) {
					name += " (" + e.ClientHost + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.ID, e.Kind, cell(name), cell(e.User.Email),
					strings.Join(e.Scopes, ","), grantText(e.Notes), grantText(e.Rooms), e.CreatedAt.Format(timeCell), when(e.LastUsedAt), when(e.RevokedAt))
			}
			return tw.Flush()
		})
	}
}

// connectionsRevokeFlags revokes a connection or a token by ID.
func connectionsRevokeFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	return func(args []string) error {
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			err := svc.RevokeConnection(ctx, service.Operator(o), args[0])
			var p *problem.Problem
			switch {
			case err == nil:
				fmt.Printf("revoked %s\n", args[0])
				return nil
			case errors.As(err, &p) && p.Code == problem.NotFound:
				return fmt.Errorf("no connection or token %s in this workspace; `%s connections list` shows them", problem.Excerpt(args[0]), self)
			case errors.As(err, &p):
				return errors.New("ID: " + p.Message)
			}
			return err
		})
	}
}

const timeCell = "2006-01-02 15:04"

func when(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(timeCell)
}

// cell keeps a value from breaking the table: no tabs or line breaks, and
// "-" for nothing.
func cell(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if s == "" {
		return "-"
	}
	return s
}
