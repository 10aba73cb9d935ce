package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"foundry/internal/backup"
)

const backupLong = `Takes a consistent copy of the SQLite database of --data and the bytes of
every file (blobs), while the server keeps serving: the database is copied
in one read transaction (SQLite's VACUUM INTO), then the blobs. The copy is
checked (PRAGMA integrity_check, every blob's SHA-256, every file the
database names is there) and described by OUT/manifest.json (Foundry and
schema versions, counts, hashes), written last. OUT is a folder that must
not exist or be empty; the backup is written beside it and renamed to OUT
once whole, so a folder named OUT is always a whole backup. An OUT named
*.tar.gz or *.tgz is written as one compressed archive of that folder
instead (it must not exist), for copying elsewhere.

Restore it with "foundry restore OUT --data NEWDIR". To take backups on a
schedule, give serve --backup-dir, --backup-every and --backup-keep.
PostgreSQL deployments are backed up with pg_dump or WAL archiving instead
(see the operators' guide, "Backups and restore").
`

const restoreLong = `BACKUP is a folder or an archive (*.tar.gz) that foundry backup wrote. It is
checked against its manifest (the database's and every blob's hash, the
database's integrity and schema version) and put back as the new data
folder --data, which must not exist or be empty. A backup taken by a newer
Foundry, whose schema this one does not know, is refused: restore it with
that Foundry or a newer one. Then serve it with "foundry serve --data NEWDIR".
`

// postgresBackup is the answer to --database on backup and restore.
const postgresBackup = "backs up a SQLite data folder only; a PostgreSQL database is backed up with pg_dump -Fc (or base backups and WAL archiving) and restored with pg_restore, blobs included, as the operators' guide says under \"Backups and restore\""

func backupFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	quiet := fs.Bool("quiet", false, "print no progress on standard error")
	return func(args []string) error {
		if d.database != "" {
			return usagef("--database: %s %s", self+" backup", postgresBackup)
		}
		out := args[0]
		if out == "" {
			return usagef("OUT is empty: give the folder to write the backup into")
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		m, err := backup.Backup(ctx, d.data, out, backup.Options{Version: version, Progress: progress(*quiet)})
		if err != nil {
			return fmt.Errorf("%w; no backup was written to %s", err, out)
		}
		if len(m.MissingBlobs) > 0 {
			fmt.Fprintf(os.Stderr, "%s backup: warning: %d file(s) named by the database had no bytes in %s (first: %s/%s); the backup holds everything else and lists them under missing_blobs in its manifest\n",
				self, len(m.MissingBlobs), d.data, m.MissingBlobs[0].Workspace, m.MissingBlobs[0].SHA256)
		}
		fmt.Printf("backup written to %s: schema version %d, %d workspace(s), %d Note(s), %d version(s), %d blob(s) of %d bytes; database %d bytes, sha256 %s\n",
			out, m.SchemaVersion, m.Counts.Workspaces, m.Counts.Notes, m.Counts.Versions, m.Counts.Blobs, m.Counts.BlobBytes, m.Database.Size, m.Database.SHA256)
		return nil
	}
}

func restoreFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	fs.StringVar(&d.data, "data", "", "the new data folder to restore into: it must not exist or be empty (required)")
	fs.StringVar(&d.database, "database", "", "not taken: a PostgreSQL database is restored with pg_restore")
	quiet := fs.Bool("quiet", false, "print no progress on standard error")
	return func(args []string) error {
		if d.database != "" {
			return usagef("--database: %s %s", self+" restore", postgresBackup)
		}
		if d.data == "" {
			return usagef("--data: give the new data folder to restore into, e.g. --data ./foundry-data-restored (it must not exist or be empty)")
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		m, err := backup.Restore(ctx, args[0], d.data, backup.Options{Version: version, Progress: progress(*quiet)})
		if err != nil {
			return fmt.Errorf("%w; nothing was written to %s", err, d.data)
		}
		note := ""
		if m.SchemaVersion < backup.SchemaVersion() {
			note = fmt.Sprintf(" (the server migrates it from schema version %d to %d when it starts)", m.SchemaVersion, backup.SchemaVersion())
		}
		fmt.Printf("restored the backup of %s into %s: %d workspace(s), %d Note(s), %d blob(s); serve it with: %s serve --data %s%s\n",
			m.Created.UTC().Format("2006-01-02 15:04:05 UTC"), d.data, m.Counts.Workspaces, m.Counts.Notes, m.Counts.Blobs, self, shellQuote(d.data), note)
		return nil
	}
}

// progress prints what a long act is doing on standard error.
func progress(quiet bool) func(string) {
	if quiet {
		return nil
	}
	return func(msg string) { fmt.Fprintf(os.Stderr, "%s\n", msg) }
}
