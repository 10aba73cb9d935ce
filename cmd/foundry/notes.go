package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"foundry/internal/service"
)

// The people's side of Notes and Rooms, until the web app has it.

func notesListFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	return func([]string) error {
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			rows, err := svc.WorkspaceNotes(ctx, o.Workspace.ID)
			if err != nil {
				return err
			}
			return printSummaries(rows)
		})
	}
}

func notesCreateFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	title := fs.String("title", "", "the Note's title (required)")
	approve := fs.Bool("approve", false, "switch on connected access right away (agents can reach the Note)")
	return func([]string) error {
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			id, err := svc.CreateNote(ctx, o.Workspace.ID, o.User.ID, *title, *approve, nil)
			if err != nil {
				return err
			}
			fmt.Println(id)
			return nil
		})
	}
}

func notesApproveFlags(on bool) func(fs *flag.FlagSet) func([]string) error {
	return func(fs *flag.FlagSet) func([]string) error {
		var d dataFlags
		d.register(fs)
		return func(args []string) error {
			return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
				if err := svc.SetNoteApproved(ctx, o.Workspace.ID, o.User.ID, args[0], on); err != nil {
					return sent(err, "note_id", args[0])
				}
				if on {
					fmt.Printf("approved %s: agents with a token that grants it can reach it\n", args[0])
				} else {
					fmt.Printf("unapproved %s: agents can no longer reach it\n", args[0])
				}
				return nil
			})
		}
	}
}

func notesHistoryFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	return func(args []string) error {
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			h, err := svc.NoteHistory(ctx, o.Workspace.ID, args[0])
			if err != nil {
				return sent(err, "note_id", args[0])
			}
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "VERSION\tAT\tBY\tWHAT\tCHANGED")
			for _, v := range h {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", v.Version, v.At.Format("2006-01-02 15:04:05"), v.Actor, v.Kind, strings.Join(v.Changed, ","))
			}
			return tw.Flush()
		})
	}
}

func notesRestoreFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	version := fs.Int64("version", 0, "the version to restore (required; the versions are in the Note's history)")
	return func(args []string) error {
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			v, err := svc.RestoreVersion(ctx, o.Workspace.ID, o.User.ID, args[0], *version)
			if err != nil {
				return sent(err, "note_id", args[0])
			}
			fmt.Printf("restored version %d of %s as version %d\n", *version, args[0], v)
			return nil
		})
	}
}

func roomsListFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	return func([]string) error {
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			rows, err := svc.WorkspaceRooms(ctx, o.Workspace.ID)
			if err != nil {
				return err
			}
			return printSummaries(rows)
		})
	}
}

func roomsCreateFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	name := fs.String("name", "", "the Room's name (required)")
	return func([]string) error {
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			id, err := svc.CreateRoom(ctx, o.Workspace.ID, o.User.ID, *name)
			if err != nil {
				return err
			}
			fmt.Println(id)
			return nil
		})
	}
}

func printSummaries(rows []service.Summary) error {
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTITLE\tVERSION\tCONNECTED\tUPDATED")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", r.ID, r.Title, r.Version, strconv.FormatBool(r.Approved), r.UpdatedAt.Format("2006-01-02 15:04"))
	}
	return tw.Flush()
}
