package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"foundry/internal/oauth/clients"
	"foundry/internal/server"
)

// OAuth clients an operator registers ahead (a client that cannot register
// itself, or one that needs a secret). Clients that register themselves at
// /register or by a metadata document URL need none of this.

const clientAddLong = `Most MCP clients register themselves when they connect; add one here
when it cannot (it needs a fixed client ID, or a secret).

A public client (the default) proves itself with PKCE alone; a
--confidential one also gets a client secret, printed once after the
client ID. Redirect URIs: https, a loopback http URI (127.0.0.1, [::1] or
localhost; any port matches), or a native app's private-use scheme such as
com.example.app:/callback.
`

// repeated is a flag that may be given more than once.
type repeated []string

func (r *repeated) String() string { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error {
	*r = append(*r, v)
	return nil
}

func clientAddFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	name := fs.String("name", "", "the client's name, shown on the consent page (required)")
	var uris repeated
	fs.Var(&uris, "redirect-uri", "a URI the client receives its authorization codes at (required; repeat the flag for more)")
	confidential := fs.Bool("confidential", false, "give the client a secret (shown once) that it authenticates with at the token endpoint")
	return func([]string) error {
		if len(uris) == 0 {
			return usagef("--redirect-uri: give at least one, e.g. --redirect-uri http://127.0.0.1/callback")
		}
		spec := clients.Spec{Name: *name, RedirectURIs: uris, Confidential: *confidential}
		var ce *clients.Error
		if errors.As(clients.CheckSpec(spec), &ce) {
			return usagef("%s", clientFlagError(ce))
		}
		ctx := context.Background()
		st, err := server.OpenStore(ctx, d.config())
		if err != nil {
			return err
		}
		defer st.Close()
		c, secret, err := clients.Add(ctx, st, spec)
		if err != nil {
			return err
		}
		kind := "public (PKCE)"
		if secret != "" {
			kind = "confidential"
		}
		fmt.Fprintf(os.Stderr, "Added %s client %s (%s) with redirect URIs %s.\n", kind, c.ID, c.Name, strings.Join(c.RedirectURIs, " "))
		fmt.Println(c.ID)
		if secret != "" {
			fmt.Fprintln(os.Stderr, "Its client ID is printed first, then its secret, which is shown once: store it now.")
			fmt.Println(secret)
		}
		return nil
	}
}

// clientFlagError says a refused field by the flag it came from.
func clientFlagError(e *clients.Error) string {
	switch base, _, _ := strings.Cut(e.Field, "["); base {
	case "client_name":
		return "--name: " + e.Msg
	case "redirect_uris":
		return "--redirect-uri: " + e.Msg
	}
	return e.Error()
}

func clientListFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	return func([]string) error {
		ctx := context.Background()
		st, err := server.OpenStore(ctx, d.config())
		if err != nil {
			return err
		}
		defer st.Close()
		cs, err := clients.List(ctx, st)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tKIND\tREDIRECT URIS\tCREATED")
		for _, c := range cs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.ID, c.Name, c.Kind, strings.Join(c.RedirectURIs, ","), c.CreatedAt.Format("2006-01-02 15:04"))
		}
		return tw.Flush()
	}
}

func clientRemoveFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	return func(args []string) error {
		ctx := context.Background()
		st, err := server.OpenStore(ctx, d.config())
		if err != nil {
			return err
		}
		defer st.Close()
		n, err := clients.Remove(ctx, st, args[0])
		if errors.Is(err, clients.ErrNoClient) {
			return fmt.Errorf("no client %s; `foundry client list` shows them", args[0])
		}
		if err != nil {
			return err
		}
		plural := "s"
		if n == 1 {
			plural = ""
		}
		fmt.Printf("removed %s (%d connection%s revoked)\n", args[0], n, plural)
		return nil
	}
}
