package main

import (
	"archive/zip"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"foundry/internal/server"
	"foundry/internal/service"
)

// Export and import: the operator's door to service.ExportNote,
// ExportAll and ImportArchive. The format is docs/export-format.md.

const exportLong = `OUT is a folder (created; it must be new or empty) or a file ending in .zip
(it must not exist yet; it appears only once the export is whole). Each Note
is a folder <title>-<id>/ with note.json, its markdown as .md, sheets as .csv
and .json (exact cells), slides, sources and the files' metadata as .json,
and the files' bytes. --history adds every version with its author and time.
With --all, progress goes to standard error.
`

const importLong = `ARCHIVE is a folder or a .zip an export wrote. Each Note in it becomes a new
Note (new IDs, connected access off, version 1) with the same content; the
new IDs are printed one a line. A Note with an entry that can't be read is
not created, and the entry is named on standard error (exit code 1); the
other Notes are still imported. A new --data folder (moving to a new server)
gets its workspace created first, as the first serve creates it.
`

func exportFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	noteID := fs.String("note", "", "the Note to export (its ID, from notes list)")
	all := fs.Bool("all", false, "export every Note of the workspace (deleted ones left out)")
	history := fs.Bool("history", false, "add every version of each Note: who wrote it, when, and the Note as it was")
	return func(args []string) error {
		if (*noteID == "") == !*all {
			return usagef("--note ID or --all: give exactly one (which Note to export, or every Note)")
		}
		out := args[0]
		if strings.TrimSpace(out) == "" {
			return usagef("OUT is empty: give a folder, or a file name ending in .zip")
		}
		return withWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			opts := service.ExportOptions{History: *history}
			export := func(w service.ArchiveWriter) (int, error) {
				if *noteID != "" {
					_, err := svc.ExportNote(ctx, service.Operator(o), *noteID, w, opts)
					return 1, sent(err, "note_id", *noteID)
				}
				done, err := svc.ExportAll(ctx, service.Operator(o), w, service.ExportAllOptions{ExportOptions: opts, Progress: func(i int, n service.ExportedNote) {
					fmt.Fprintf(os.Stderr, "exported %d: %s (%s, version %d, %d files)\n", i, cell(n.Title), n.NoteID, n.Version, n.Files)
				}})
				return len(done), err
			}
			var n int
			var err error
			if strings.HasSuffix(strings.ToLower(out), ".zip") {
				n, err = exportZip(out, export)
			} else {
				n, err = exportFolder(out, export)
			}
			if err != nil {
				return err
			}
			fmt.Printf("exported %d Note%s to %s\n", n, plural(n), out)
			return nil
		})
	}
}

// exportZip writes the zip beside out and renames it into place once it is
// whole, so a failed export leaves no half archive.
func exportZip(out string, export func(service.ArchiveWriter) (int, error)) (int, error) {
	if _, err := os.Lstat(out); err == nil {
		return 0, usagef("OUT %s exists already: give a new file name (an export never overwrites)", out)
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name())
	zw := service.NewZipWriter(tmp, time.Now())
	n, err := export(zw)
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	if _, err := os.Lstat(out); err == nil {
		return 0, fmt.Errorf("%s appeared while exporting: the export was not written over it", out)
	}
	return n, os.Rename(tmp.Name(), out)
}

func exportFolder(out string, export func(service.ArchiveWriter) (int, error)) (int, error) {
	if st, err := os.Stat(out); err == nil && !st.IsDir() {
		return 0, usagef("OUT %s is a file: give a new or empty folder, or a name ending in .zip", out)
	}
	fw, err := service.NewFolderWriter(out)
	if err != nil {
		return 0, err
	}
	n, err := export(fw)
	return n, errors.Join(err, fw.Close())
}

func importFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	return func(args []string) error {
		in := args[0]
		st, err := os.Stat(in)
		if err != nil {
			return usagef("ARCHIVE %s: %v; give a folder or a .zip an export wrote", in, errors.Unwrap(err))
		}
		var a service.Archive
		if st.IsDir() {
			fa, err := service.OpenFolderArchive(in)
			if err != nil {
				return err
			}
			defer fa.Close()
			a = fa
		} else {
			zr, err := zip.OpenReader(in)
			// An entry with an unsafe name is reported by the import, by
			// name, and never read: the rest of the zip is still good.
			if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
				return fmt.Errorf("%s is not a zip an export wrote: %v", in, err)
			}
			defer zr.Close()
			a = service.NewZipArchive(&zr.Reader)
		}
		return intoWorkspace(d, func(ctx context.Context, svc *service.Service, o service.Owner) error {
			res, err := svc.ImportArchive(ctx, service.Operator(o), a, service.ImportOptions{Progress: func(i int, n service.Imported) {
				fmt.Fprintf(os.Stderr, "imported %d: %s as %s (from %s)\n", i, cell(n.Title), n.NoteID, n.From)
			}})
			for _, n := range res.Notes {
				fmt.Println(n.NoteID)
			}
			if err != nil {
				return err
			}
			for _, p := range res.Skipped {
				fmt.Fprintf(os.Stderr, "skipped: %s\n", cell(p.String()))
			}
			for _, p := range res.Problems {
				fmt.Fprintf(os.Stderr, "not imported: %s\n", cell(p.String()))
			}
			if len(res.Problems) > 0 {
				return fmt.Errorf("%d entr%s could not be read (named above); the Notes they belong to were not created, %d Note%s were", len(res.Problems), map[bool]string{true: "y", false: "ies"}[len(res.Problems) == 1], len(res.Notes), plural(len(res.Notes)))
			}
			if len(res.Notes) == 0 {
				return fmt.Errorf("%s holds no Note: an export's archive has a folder with a note.json for each", in)
			}
			return nil
		})
	}
}

// intoWorkspace is withWorkspace for an import, which may be the first
// thing done with a new data folder (moving to a new server): the
// workspace is created as the first serve creates it.
func intoWorkspace(d dataFlags, fn func(ctx context.Context, svc *service.Service, o service.Owner) error) error {
	ctx := context.Background()
	st, err := server.OpenStore(ctx, d.config())
	if err != nil {
		return err
	}
	svc := service.New(st)
	o, created, err := svc.Bootstrap(ctx, firstWorkspaceName, firstOwnerEmail)
	if err != nil {
		st.Close()
		return err
	}
	if created {
		fmt.Fprintf(os.Stderr, "created the workspace, as a first serve does: `%s serve %s` prints the link to set the owner's password\n", self, d.arg())
	}
	err = fn(ctx, svc, o)
	return errors.Join(err, st.Close())
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// The workspace and owner a new data folder starts with (serve and import).
const (
	firstWorkspaceName = "Foundry"
	firstOwnerEmail    = "owner@localhost"
)
