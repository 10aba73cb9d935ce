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

// withWorkspace opens the data and finds the workspace and its owner, the
// person every CLI act is done as.
func withWorkspace(d dataFlags, fn func(ctx context.Context, svc *service.Service, o service.Owner) error) error {
	ctx := context.Background()
	st, err := d.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	svc := service.New(st)
	o, err := svc.FirstWorkspace(ctx)
	if err != nil {
		return err
	}
	return fn(ctx, svc, o)
}

func cmdProposals(args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: foundry proposals list|show|approve|decline [ID] [--data DIR]")
		return errUsage
	}
	sub := args[0]
	fs := flag.NewFlagSet("proposals "+sub, flag.ContinueOnError)
	var d dataFlags
	d.register(fs)
	status := fs.String("status", "pending", "list only: pending, approved, declined or all")
	roomID := fs.String("room", "", "list only: one Room's proposals")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	needID := sub != "list"
	if needID && fs.NArg() != 1 {
		fmt.Fprintf(os.Stderr, "usage: foundry proposals %s PROPOSAL_ID [--data DIR] (IDs are in `foundry proposals list`)\n", sub)
		return errUsage
	}
	return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
		switch sub {
		case "list":
			st := *status
			if st == "all" {
				st = ""
			}
			ps, err := svc.ListProposals(ctx, o.Workspace.ID, *roomID, st)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tROOM\tINSTANCE\tNAME\tKIND\tFILES\tSTATUS\tCREATED")
			for _, p := range ps {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", p.ID, p.RoomID, p.InstanceID, p.Name, p.Kind, len(p.Files), p.Status, p.CreatedAt)
			}
			return tw.Flush()
		case "show":
			p, err := svc.GetProposal(ctx, o.Workspace.ID, fs.Arg(0))
			if err != nil {
				return err
			}
			fmt.Printf("Proposal %s: %q (%s) for Room %s, instance %s — %s\nProposed by %s at %s\n", p.ID, p.Name, p.Kind, p.RoomID, p.InstanceID, p.Status, p.ProposedBy, p.CreatedAt)
			if p.Kind == "repository" {
				fmt.Printf("Repository %s, pinned version %s. Review repository code before approving.\n", p.RepositoryID, p.VersionID)
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
		case "approve":
			if err := svc.ApproveProposal(ctx, o.Workspace.ID, o.User.ID, fs.Arg(0)); err != nil {
				return err
			}
			fmt.Printf("approved %s: the app is in the Room's launcher\n", fs.Arg(0))
			return nil
		case "decline":
			if err := svc.DeclineProposal(ctx, o.Workspace.ID, o.User.ID, fs.Arg(0)); err != nil {
				return err
			}
			fmt.Printf("declined %s\n", fs.Arg(0))
			return nil
		}
		fmt.Fprintf(os.Stderr, "foundry proposals: unknown subcommand %q (list, show, approve, decline)\n", sub)
		return errUsage
	})
}

func cmdRepo(args []string) error {
	if len(args) == 0 || args[0] != "push" {
		fmt.Fprintln(os.Stderr, "usage: foundry repo push DIR --name NAME [--data DIR]")
		return errUsage
	}
	fset := flag.NewFlagSet("repo push", flag.ContinueOnError)
	var d dataFlags
	d.register(fset)
	name := fset.String("name", "", "repository name (created on first push)")
	if err := parse(fset, args[1:]); err != nil {
		return err
	}
	if fset.NArg() != 1 || *name == "" {
		fmt.Fprintln(os.Stderr, "usage: foundry repo push DIR --name NAME [--data DIR]")
		return errUsage
	}
	files, err := readTree(fset.Arg(0))
	if err != nil {
		return err
	}
	return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
		repoID, versionID, err := svc.PushRepo(ctx, o.Workspace.ID, o.User.ID, *name, files)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "pinned %d files of %s as a new version of %s (%s)\n", len(files), fset.Arg(0), *name, repoID)
		fmt.Println(versionID)
		return nil
	})
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
