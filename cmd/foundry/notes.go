package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"foundry/internal/service"
)

// The people's side of Notes and Rooms, until the web app has it.

func notesListFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	return func([]string) error {
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tTITLE\tVERSION\tCONNECTED\tUPDATED")
			cursor := ""
			for {
				page, err := svc.ListNotes(ctx, service.Operator(o), service.ListNotesArgs{Page: service.Page{Cursor: cursor, Limit: service.MaxPage}})
				if err != nil {
					return err
				}
				for _, n := range page.Notes {
					updated := n.UpdatedAt
					if t, err := time.Parse(time.RFC3339, n.UpdatedAt); err == nil {
						updated = t.Format("2006-01-02 15:04")
					}
					fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", n.NoteID, cell(n.Title), n.Version, strconv.FormatBool(n.Approved), updated)
				}
				if cursor = page.NextCursor; cursor == "" {
					return tw.Flush()
				}
			}
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
			n, err := svc.CreateNote(ctx, service.Operator(o), service.CreateNoteArgs{Title: *title, Approved: *approve})
			if err != nil {
				return err
			}
			fmt.Println(n.NoteID)
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
				// The operator has no editor state: the switch applies to
				// the version that is current.
				if _, err := svc.UpdateNote(ctx, service.Operator(o), service.UpdateNoteArgs{NoteID: args[0], Approved: &on}); err != nil {
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
	cursor := fs.String("cursor", "", "show the versions older than the page before (the cursor it printed)")
	limit := fs.Int("limit", service.MaxPage, fmt.Sprintf("versions on the page, %d–%d", service.MinPage, service.MaxPage))
	return func(args []string) error {
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			if *limit == 0 {
				return usagef("--limit: give %d–%d versions a page", service.MinPage, service.MaxPage)
			}
			h, err := svc.NoteHistory(ctx, service.Operator(o), service.HistoryArgs{NoteID: args[0], Page: service.Page{Cursor: *cursor, Limit: *limit}})
			if err != nil {
				return sent(err, "note_id", args[0])
			}
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "VERSION\tAT\tBY\tWHAT\tCHANGED")
			for _, v := range h.Versions {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", v.Version, v.At.Format("2006-01-02 15:04:05"), cell(v.Who.Name), v.Kind, strings.Join(v.Changed, ","))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if h.NextCursor != "" {
				fmt.Fprintf(os.Stderr, "older versions: %s notes history %s --cursor %s\n", self, args[0], h.NextCursor)
			}
			return nil
		})
	}
}

func notesRestoreFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	version := fs.Int64("version", 0, "the version to restore (required; the versions are in the Note's history)")
	return func(args []string) error {
		if *version < 1 {
			given := false
			fs.Visit(func(f *flag.Flag) { given = given || f.Name == "version" })
			if !given {
				return usagef("--version is required: the version to restore; `%s notes history %s` lists them", self, args[0])
			}
			return usagef("--version: %d is not a version: versions start at 1; `%s notes history %s` lists them", *version, self, args[0])
		}
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			res, err := svc.RestoreVersion(ctx, service.Operator(o), service.RestoreArgs{NoteID: args[0], Version: *version})
			if err != nil {
				return sent(err, "note_id", args[0])
			}
			if len(res.ChangedTabIDs) == 0 {
				fmt.Printf("version %d of %s is what the Note holds now: nothing changed (still version %d)\n", *version, args[0], res.Version)
				return nil
			}
			fmt.Printf("restored version %d of %s as version %d\n", *version, args[0], res.Version)
			return nil
		})
	}
}

func roomsListFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	return func([]string) error {
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tVERSION\tAPPS\tPENDING")
			cursor := ""
			for {
				page, err := svc.ListRooms(ctx, service.Operator(o), service.Page{Cursor: cursor, Limit: service.MaxPage})
				if err != nil {
					return err
				}
				for _, r := range page.Rooms {
					fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\n", r.RoomID, cell(r.Name), r.Version, r.Apps, r.Pending)
				}
				if cursor = page.NextCursor; cursor == "" {
					return tw.Flush()
				}
			}
		})
	}
}

func roomsCreateFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	name := fs.String("name", "", "the Room's name (required)")
	return func([]string) error {
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			r, err := svc.CreateRoom(ctx, service.Operator(o), *name)
			if err != nil {
				return sent(err)
			}
			fmt.Println(r.RoomID)
			return nil
		})
	}
}

func notesRenameFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	return func(args []string) error {
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			res, err := svc.UpdateNote(ctx, service.Operator(o), service.UpdateNoteArgs{NoteID: args[0], Title: &args[1]})
			if err != nil {
				return sent(err, "note_id", args[0])
			}
			fmt.Printf("renamed %s to %q (version %d)\n", args[0], res.Title, res.Version)
			return nil
		})
	}
}

func notesDuplicateFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	return func(args []string) error {
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			res, err := svc.DuplicateNote(ctx, service.Operator(o), service.NoteArgs{NoteID: args[0]})
			if err != nil {
				return sent(err, "note_id", args[0])
			}
			fmt.Println(res.NoteID)
			return nil
		})
	}
}

func notesDeleteFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	return func(args []string) error {
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			if _, err := svc.DeleteNote(ctx, service.Operator(o), service.NoteArgs{NoteID: args[0]}); err != nil {
				return sent(err, "note_id", args[0])
			}
			fmt.Printf("moved %s to the trash: %s notes untrash %s brings it back within %d days\n", args[0], self, args[0], service.TrashDays)
			return nil
		})
	}
}

func notesTrashFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	return func([]string) error {
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tTITLE\tDELETED\tBY\tREMOVED FOR GOOD")
			cursor := ""
			for {
				page, err := svc.TrashedNotes(ctx, service.Operator(o), service.Page{Cursor: cursor, Limit: service.MaxPage})
				if err != nil {
					return err
				}
				for _, n := range page.Notes {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", n.NoteID, cell(n.Title), n.DeletedAt.Format("2006-01-02 15:04"), cell(n.DeletedBy.Name), n.PurgeAt.Format("2006-01-02 15:04"))
				}
				if cursor = page.NextCursor; cursor == "" {
					return tw.Flush()
				}
			}
		})
	}
}

func notesUntrashFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	return func(args []string) error {
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			res, err := svc.UntrashNote(ctx, service.Operator(o), service.NoteArgs{NoteID: args[0]})
			if err != nil {
				return sent(err, "note_id", args[0])
			}
			fmt.Printf("restored %s %q from the trash (version %d)\n", args[0], res.Title, res.Version)
			return nil
		})
	}
}

func roomsRenameFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	name := fs.String("name", "", "the Room's new name (required)")
	return func(args []string) error {
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			r, err := svc.RenameRoom(ctx, service.Operator(o), service.RoomRenameArgs{RoomID: args[0], Name: *name})
			if err != nil {
				return sent(err, "room_id", args[0])
			}
			fmt.Printf("renamed %s (version %d)\n", r.RoomID, r.Version)
			return nil
		})
	}
}

func roomsDeleteFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	return func(args []string) error {
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			if _, err := svc.DeleteRoom(ctx, service.Operator(o), service.RoomArgs{RoomID: args[0]}); err != nil {
				return sent(err, "room_id", args[0])
			}
			fmt.Printf("deleted %s: its apps stopped and its pending proposals were declined\n", args[0])
			return nil
		})
	}
}
