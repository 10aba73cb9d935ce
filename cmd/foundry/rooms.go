package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

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
			ps, err := svc.ListProposals(ctx, o.Workspace.ID, *roomID, st)
			if err != nil {
				return sent(err, "room_id", *roomID)
			}
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tROOM\tINSTANCE\tNAME\tKIND\tFILES\tSTATUS\tCREATED")
			for _, p := range ps {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", p.ID, p.RoomID, p.InstanceID, p.Name, p.Kind, len(p.Files), p.Status, p.CreatedAt)
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
			p, err := svc.GetProposal(ctx, o.Workspace.ID, args[0])
			if err != nil {
				return sent(err, "proposal_id", args[0])
			}
			fmt.Printf("Proposal %s: %q (%s) for Room %s, instance %s — %s\nProposed by %s at %s\n", p.ID, p.Name, p.Kind, p.RoomID, p.InstanceID, p.Status, p.ProposedBy, p.CreatedAt)
			if p.Kind == "repository" {
				fmt.Printf("Repository %s, pinned version %s. Review repository code before approving.\n", p.RepositoryID, p.VersionID)
			}
			if c := service.CompileOf(&p); c != nil {
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
			paths := make([]string, 0, len(p.Files))
			for path := range p.Files {
				paths = append(paths, path)
			}
			sort.Strings(paths)
			fmt.Printf("\nReview all proposed files (%d). Approval makes this code available in the Room app launcher. Review the files before approving.\n", len(paths))
			for _, path := range paths {
				fmt.Printf("\n===== %s =====\n%s", path, p.Files[path])
				if !strings.HasSuffix(p.Files[path], "\n") {
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
		return func(args []string) error {
			return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
				if approve {
					if err := svc.ApproveProposal(ctx, o.Workspace.ID, o.User.ID, args[0]); err != nil {
						return sent(err, "proposal_id", args[0])
					}
					fmt.Printf("approved %s: the app is in the Room's launcher\n", args[0])
					return nil
				}
				if err := svc.DeclineProposal(ctx, o.Workspace.ID, o.User.ID, args[0]); err != nil {
					return sent(err, "proposal_id", args[0])
				}
				fmt.Printf("declined %s\n", args[0])
				return nil
			})
		}
	}
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
			repoID, versionID, err := svc.PushRepo(ctx, o.Workspace.ID, o.User.ID, *name, files)
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
