package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"foundry/internal/account"
	"foundry/internal/problem"
	"foundry/internal/service"
)

const userAddLong = `Without --password-stdin it prints a one-time link (valid 24 hours) that
lets the person choose their own password; send it to them. With
--password-stdin the password is read from the first line of standard input.
`

const userPasswdLong = `Setting a password ends every browser session of the person's. Without
--password-stdin it prints a one-time link (valid 24 hours) to choose a new
password; the old one keeps working until the link is used.
`

// publicURLFlag registers --public-url, the server's address as people
// reach it, for the links the command prints.
func publicURLFlag(fs *flag.FlagSet) *string {
	return fs.String("public-url", envOr("FOUNDRY_PUBLIC_URL", "http://"+envOr("FOUNDRY_ADDR", "127.0.0.1:8080")), "URL people reach the server at, for the one-time link, as serve's --public-url (default http://FOUNDRY_ADDR, else http://127.0.0.1:8080; env FOUNDRY_PUBLIC_URL)")
}

func checkedPublicURL(v string) (string, error) {
	if err := checkPublicURL(v); err != nil {
		return "", err
	}
	return strings.TrimRight(v, "/"), nil
}

// readPasswordLine reads the first line of r (without its line ending),
// refusing one longer than a password can be.
func readPasswordLine(r io.Reader) (string, error) {
	br := bufio.NewReader(r)
	var b []byte
	for {
		c, err := br.ReadByte()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("--password-stdin: reading standard input: %w", err)
		}
		if c == '\n' {
			break
		}
		b = append(b, c)
		if len(b) > account.MaxPasswordBytes+1 { // +1: a "\r" before the "\n"
			return "", usagef("--password-stdin: the first line of standard input is longer than %d bytes, which no password is", account.MaxPasswordBytes)
		}
	}
	pw := strings.TrimSuffix(string(b), "\r")
	if pw == "" {
		return "", usagef("--password-stdin: standard input has no password; give it on the first line, e.g. from a password manager's command")
	}
	if err := account.CheckPasswordRules("--password-stdin", pw); err != nil {
		return "", usageError{say(err)}
	}
	return pw, nil
}

// printSetupLink tells how to pass the link on; the link itself goes to
// stdout, alone, so it can be piped.
func printSetupLink(email, link string, expires time.Time) {
	fmt.Fprintf(os.Stderr, "One-time link for %s to set a password (valid until %s UTC; it works once):\n", email, expires.UTC().Format("2006-01-02 15:04"))
	fmt.Println(link)
}

// checkEmailArg refuses an EMAIL argument that is no email address as a
// command given wrongly, before any data is opened.
func checkEmailArg(email string) error {
	if _, err := account.NormalizeEmail("EMAIL", email); err != nil {
		return usageError{say(err)}
	}
	return nil
}

func userAddFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	name := fs.String("name", "", "the person's name, as pages show it")
	role := fs.String("role", account.RoleMember, "member, or owner (an owner also manages the workspace's people)")
	stdin := fs.Bool("password-stdin", false, "read the password from the first line of standard input instead of printing a one-time link")
	publicURL := publicURLFlag(fs)
	return func(args []string) error {
		if err := checkEmailArg(args[0]); err != nil {
			return err
		}
		if *role != account.RoleMember && *role != account.RoleOwner {
			return usagef("--role: %q is not a role; give %s or %s", *role, account.RoleMember, account.RoleOwner)
		}
		base, err := checkedPublicURL(*publicURL)
		if err != nil {
			return err
		}
		pw := ""
		if *stdin {
			if pw, err = readPasswordLine(os.Stdin); err != nil {
				return err
			}
		}
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			inv, err := svc.InvitePerson(ctx, service.Operator(o), service.InviteArgs{Email: args[0], Name: *name, Role: *role, Password: pw}, base)
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "Added %s (%s).\n", inv.Person.Email, inv.Person.Role)
			if inv.Link == "" {
				fmt.Fprintf(os.Stderr, "The password is set: they can sign in at %s/signin.\n", base)
				return nil
			}
			printSetupLink(inv.Person.Email, inv.Link, *inv.ExpiresAt)
			return nil
		})
	}
}

func userPasswdFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	stdin := fs.Bool("password-stdin", false, "read the new password from the first line of standard input instead of printing a one-time link")
	publicURL := publicURLFlag(fs)
	return func(args []string) error {
		if err := checkEmailArg(args[0]); err != nil {
			return err
		}
		base, err := checkedPublicURL(*publicURL)
		if err != nil {
			return err
		}
		pw := ""
		if *stdin {
			if pw, err = readPasswordLine(os.Stdin); err != nil {
				return err
			}
		}
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			u, err := account.UserByEmail(ctx, svc.Store, o.Workspace.ID, args[0])
			if err != nil {
				return err
			}
			if pw != "" {
				if err := account.SetPassword(ctx, svc.Store, u, "--password-stdin", pw); err != nil {
					return err
				}
				fmt.Fprintf(os.Stderr, "Password set for %s; their browser sessions were ended. They sign in at %s/signin.\n", u.Email, base)
				return nil
			}
			link, exp, err := account.CreateSetupLink(ctx, svc.Store, u, base, time.Now())
			if err != nil {
				return err
			}
			printSetupLink(u.Email, link, exp)
			return nil
		})
	}
}

func userListFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	return func([]string) error {
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			people, err := svc.People(ctx, service.Operator(o))
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "EMAIL\tNAME\tROLE\tPASSWORD\tCREATED")
			for _, u := range people {
				pw := "set"
				if u.Status == service.StatusInvited {
					pw = "unset"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", u.Email, cell(u.Name), u.Role, pw, u.CreatedAt.Format("2006-01-02 15:04"))
			}
			return tw.Flush()
		})
	}
}

func userRemoveFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	return func(args []string) error {
		if err := checkEmailArg(args[0]); err != nil {
			return err
		}
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			op := service.Operator(o)
			u, err := svc.PersonByEmail(ctx, op, args[0])
			if err != nil {
				return err
			}
			if _, err := svc.RemovePerson(ctx, op, u.ID); err != nil {
				var p *problem.Problem
				if errors.As(err, &p) && p.Code == service.LastOwner {
					return fmt.Errorf("%s (`%s user add EMAIL --role owner`, or `%s user role EMAIL owner`)", p.Message, self, self)
				}
				return err
			}
			fmt.Printf("removed %s: their sessions and tokens are deleted and their connections revoked\n", u.Email)
			return nil
		})
	}
}

func userRoleFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	return func(args []string) error {
		if args[1] != service.RoleMember && args[1] != service.RoleOwner {
			return usagef("ROLE: %q is not a role; give %s or %s", args[1], service.RoleMember, service.RoleOwner)
		}
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			op := service.Operator(o)
			u, err := svc.PersonByEmail(ctx, op, args[0])
			if err != nil {
				return err
			}
			m, err := svc.ChangeRole(ctx, op, u.ID, args[1])
			if err != nil {
				var p *problem.Problem
				if errors.As(err, &p) && p.Code == service.LastOwner {
					return fmt.Errorf("%s (`%s user add EMAIL --role owner`, or `%s user role EMAIL owner`)", p.Message, self, self)
				}
				return err
			}
			fmt.Printf("%s is now %s\n", m.Email, m.Role)
			return nil
		})
	}
}
