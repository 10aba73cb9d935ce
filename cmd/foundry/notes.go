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
	"foundry/internal/store"
)

const notesUsage = `usage:
  foundry notes list    [--data DIR]
  foundry notes create  --title TITLE [--approve] [--data DIR]
  foundry notes approve NOTE_ID [--data DIR]      switch on connected access (agents can reach it)
  foundry notes unapprove NOTE_ID [--data DIR]    switch it off
  foundry notes history NOTE_ID [--data DIR]
  foundry notes restore NOTE_ID --version N [--data DIR]   (a restore is itself a new version)
  foundry rooms create  --name NAME [--data DIR]
  foundry rooms list    [--data DIR]`

// cmdNotes is the people's side of Notes until the web app has it.
func cmdNotes(args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, notesUsage)
		return errUsage
	}
	sub := args[0]
	fs := flag.NewFlagSet("notes "+sub, flag.ContinueOnError)
	var d dataFlags
	d.register(fs)
	title := fs.String("title", "", "create: the Note's title")
	approve := fs.Bool("approve", false, "create: switch on connected access right away")
	version := fs.Int64("version", 0, "restore: the version to restore")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if needsID := sub != "list" && sub != "create"; needsID && fs.NArg() != 1 {
		fmt.Fprintln(os.Stderr, notesUsage)
		return errUsage
	}
	return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
		ws, user := o.Workspace.ID, o.User.ID
		switch sub {
		case "list":
			return listResources(ctx, svc, ws, store.TypeNote)
		case "create":
			id, err := svc.CreateNote(ctx, ws, user, *title, *approve, nil)
			if err != nil {
				return err
			}
			fmt.Println(id)
			return nil
		case "approve", "unapprove":
			if err := svc.SetNoteApproved(ctx, ws, user, fs.Arg(0), sub == "approve"); err != nil {
				return err
			}
			fmt.Printf("%sd %s\n", sub, fs.Arg(0))
			return nil
		case "history":
			r, err := svc.Store.Get(ctx, store.TypeNote, fs.Arg(0))
			if err != nil || r.Workspace != ws {
				return fmt.Errorf("note %s: not found (see `foundry notes list`)", fs.Arg(0))
			}
			h, err := svc.Store.History(ctx, store.TypeNote, fs.Arg(0))
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "VERSION\tAT\tBY\tWHAT\tCHANGED")
			for _, v := range h {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", v.Version, v.At.Format("2006-01-02 15:04:05"), v.Actor, v.Kind, strings.Join(v.Changed, ","))
			}
			return tw.Flush()
		case "restore":
			r, err := svc.Store.Get(ctx, store.TypeNote, fs.Arg(0))
			if err != nil || r.Workspace != ws {
				return fmt.Errorf("note %s: not found (see `foundry notes list`)", fs.Arg(0))
			}
			if *version < 1 || *version >= r.Version {
				return fmt.Errorf("--version: give a version between 1 and %d (see `foundry notes history %s`)", r.Version-1, fs.Arg(0))
			}
			v, err := svc.Restore(ctx, ws, user, fs.Arg(0), r.Version, *version)
			if err != nil {
				return err
			}
			fmt.Printf("restored version %d of %s as version %d\n", *version, fs.Arg(0), v)
			return nil
		}
		fmt.Fprintln(os.Stderr, notesUsage)
		return errUsage
	})
}

func cmdRooms(args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, notesUsage)
		return errUsage
	}
	fs := flag.NewFlagSet("rooms "+args[0], flag.ContinueOnError)
	var d dataFlags
	d.register(fs)
	name := fs.String("name", "", "create: the Room's name")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
		switch args[0] {
		case "list":
			return listResources(ctx, svc, o.Workspace.ID, store.TypeRoom)
		case "create":
			id, err := svc.CreateRoom(ctx, o.Workspace.ID, o.User.ID, *name)
			if err != nil {
				return err
			}
			fmt.Println(id)
			return nil
		}
		fmt.Fprintln(os.Stderr, notesUsage)
		return errUsage
	})
}

func listResources(ctx context.Context, svc *service.Service, ws, typ string) error {
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTITLE\tVERSION\tCONNECTED\tUPDATED")
	after := ""
	for {
		rows, err := svc.Store.List(ctx, store.ListQuery{Workspace: ws, Type: typ, AfterID: after, Limit: 500})
		if err != nil {
			return err
		}
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", r.ID, r.Title, r.Version, strconv.FormatBool(r.Approved), r.UpdatedAt.Format("2006-01-02 15:04"))
		}
		if len(rows) < 500 {
			break
		}
		after = rows[len(rows)-1].ID
	}
	return tw.Flush()
}
