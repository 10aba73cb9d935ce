package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"foundry/internal/problem"
	"foundry/internal/room"
	"foundry/internal/service"
)

var proposalStatuses = []string{"pending", "approved", "declined", "all"}

func proposalsListFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	status := fs.String("status", "pending", "which proposals: pending, approved, declined or all")
	roomID := fs.String("room", "", "only this Room's proposals (a Room ID; default: every Room)")
	return func([]string) error {
		st := strings.ToLower(strings.TrimSpace(*status))
		switch st {
		case "pending", "approved", "declined":
		case "all":
			st = ""
		default:
			return usagef("--status: %q is not one of %s", *status, strings.Join(proposalStatuses, ", "))
		}
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			ps, err := svc.ListProposals(ctx, service.Operator(o), service.ListProposalsArgs{RoomID: *roomID, Status: st})
			if err != nil {
				return sent(err, "room_id", *roomID)
			}
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tROOM\tINSTANCE\tNAME\tKIND\tFILES\tSTATUS\tCREATED")
			for _, p := range ps {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", p.ID, p.RoomID, p.InstanceID, p.Name, p.Kind, p.FileCount, p.Status, p.CreatedAt)
			}
			return tw.Flush()
		})
	}
}

func proposalsShowFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	return func(args []string) error {
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			p, files, err := svc.ProposalDetail(ctx, service.Operator(o), args[0])
			if err != nil {
				return sent(err, "proposal_id", args[0])
			}
			fmt.Printf("Proposal %s: %q (%s) for Room %s, instance %s — %s\nProposed by %s at %s\n", p.ID, p.Name, p.Kind, p.RoomID, p.InstanceID, p.Status, p.ProposedBy, p.CreatedAt)
			if p.Kind == "repository" {
				fmt.Printf("Repository %s, pinned version %s. Review repository code before approving.\n", p.RepositoryID, p.VersionID)
			}
			if c := p.Compile; c != nil {
				if c.OK {
					fmt.Printf("Compile: ok (%d warnings)\n", len(c.Warnings))
				} else {
					fmt.Printf("Compile: %d errors; the app will show them instead of running\n", len(c.Errors))
				}
				for _, m := range c.Errors {
					fmt.Printf("  error %s:%d:%d: %s\n", m.File, m.Line, m.Column, m.Text)
				}
				for _, m := range c.Warnings {
					fmt.Printf("  warning %s:%d:%d: %s\n", m.File, m.Line, m.Column, m.Text)
				}
			}
			fmt.Printf("\nReview all proposed files (%d). Approval makes this code available in the Room app launcher. Review the files before approving.\n", len(files))
			for _, f := range files {
				text := f.Text
				if f.Binary {
					text = fmt.Sprintf("(%d bytes that are not text)\n", f.Bytes)
				}
				fmt.Printf("\n===== %s =====\n%s", f.Path, text)
				if !strings.HasSuffix(text, "\n") {
					fmt.Println()
				}
			}
			return nil
		})
	}
}

func proposalsDecideFlags(approve bool) func(fs *flag.FlagSet) func([]string) error {
	return func(fs *flag.FlagSet) func([]string) error {
		var d dataFlags
		d.register(fs)
		despite := new(bool)
		if approve {
			despite = fs.Bool("despite-errors", false, "approve a snippet that does not compile (its launcher tab then shows the errors)")
		}
		return func(args []string) error {
			return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
				op := service.Operator(o)
				if approve && !*despite {
					if err := compiles(ctx, svc, op, args[0]); err != nil {
						return err
					}
				}
				_, err := svc.DecideProposal(ctx, op, args[0], approve)
				// The same person deciding the same way again is told
				// nothing new: their decision stands.
				if sameDecision(err, approve, op) {
					err = nil
				}
				if err != nil {
					return sent(err, "proposal_id", args[0])
				}
				if approve {
					fmt.Printf("approved %s: the app is in the Room's launcher\n", args[0])
				} else {
					fmt.Printf("declined %s\n", args[0])
				}
				return nil
			})
		}
	}
}

// compiles refuses to approve a pending snippet that does not compile,
// naming its errors, unless the person says --despite-errors (the web app
// asks the same in its confirmation). Any other state is left to the
// decision itself to answer.
func compiles(ctx context.Context, svc *service.Service, op service.Caller, id string) error {
	x, _, err := svc.ProposalDetail(ctx, op, id)
	if err != nil || x.Status != room.StatusPending {
		return nil
	}
	c := service.CompileOf(&x.Proposal)
	if c == nil || c.OK {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%q) does not compile: %d error(s)", id, x.Name, len(c.Errors))
	for i, m := range c.Errors {
		if i == 5 {
			fmt.Fprintf(&b, "\n  … and %d more (foundry proposals show %s)", len(c.Errors)-i, id)
			break
		}
		fmt.Fprintf(&b, "\n  %s:%d:%d %s", m.File, m.Line, m.Column, m.Text)
	}
	fmt.Fprintf(&b, "\nApprove it anyway with --despite-errors (its launcher tab will show these errors), or decline it: foundry proposals decline %s", id)
	return errors.New(b.String())
}

func repoPushFlags(fset *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fset)
	name := fset.String("name", "", "repository name (required; the repository is created on its first push)")
	return func(args []string) error {
		if strings.TrimSpace(*name) == "" {
			return usagef("--name is required: the repository to pin %s into", args[0])
		}
		files, err := readTree(args[0])
		if err != nil {
			return err
		}
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			repoID, versionID, err := svc.PushRepo(ctx, service.Operator(o), *name, files)
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "pinned %d files of %s as a new version of %s (%s)\n", len(files), args[0], *name, repoID)
			fmt.Println(versionID)
			return nil
		})
	}
}

// readTree reads every regular file under dir, skipping .git and other
// dot-folders, with slash-separated relative paths.
func readTree(dir string) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if p != dir && strings.HasPrefix(e.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	return files, nil
}

// sameDecision says whether err only says that the caller already decided
// the proposal the same way.
func sameDecision(err error, approve bool, c service.Caller) bool {
	status := room.StatusDeclined
	if approve {
		status = room.StatusApproved
	}
	var pr *problem.Problem
	return errors.As(err, &pr) && pr.Code == service.AlreadyDecided && pr.Details["decision"] == status && pr.Details["decided_by_actor"] == "user:"+c.User
}
