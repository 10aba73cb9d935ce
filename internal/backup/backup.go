// Package backup takes, checks and restores backups of a SQLite data
// folder: its database and its blobs (the bytes of Notes' files), with a
// manifest that says what is in it. A backup is taken online, while a server
// writes: the database is copied first, in one read transaction (VACUUM
// INTO), so it is the state of one moment; the blobs are copied after it,
// and as blobs are content-addressed and written before the version that
// names them, every blob that copy names is already on disk. The CLI
// (foundry backup, foundry restore) and serve's schedule share it.
//
// A backup is a folder:
//
//	manifest.json           what is in it (see Manifest), written last
//	foundry.db              the database
//	blobs/<ws>/<ab>/<rest>  the blobs, as in the data folder
//
// It is written into a hidden folder beside the target and renamed into
// place once whole and verified, so a folder by the target's name is always
// a whole backup. A target named *.tar.gz (or *.tgz) gets one compressed
// archive of that folder instead (archive.go).
//
// PostgreSQL deployments are backed up with PostgreSQL's own tools (see the
// operators' guide); their blobs are rows of the database.
package backup

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the driver the store uses

	"foundry/internal/store"
)

// Format is the version of the backup's layout and manifest.
const Format = 1

// Names inside a backup and a data folder.
const (
	ManifestName = "manifest.json"
	DBName       = "foundry.db"
	BlobsDir     = "blobs"
)

// Manifest describes one backup. Every hash is the hex SHA-256 of a file's
// bytes.
type Manifest struct {
	Format         int       `json:"format"`
	FoundryVersion string    `json:"foundry_version"`
	SchemaVersion  int       `json:"schema_version"`
	Created        time.Time `json:"created"`
	Database       File      `json:"database"`
	Counts         Counts    `json:"counts"`
	Blobs          []Blob    `json:"blobs"`
	// MissingBlobs are files the database names whose bytes were not in
	// the data folder when the backup was taken (lost before it, or never
	// stored, as in data from early releases): the backup cannot hold
	// them, and says so rather than refusing to back up the rest.
	MissingBlobs []Blob `json:"missing_blobs,omitempty"`
}

// File is one file of a backup.
type File struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Blob is one blob of a workspace; its hash is its name.
type Blob struct {
	Workspace string `json:"workspace"`
	SHA256    string `json:"sha256"`
	Size      int64  `json:"size"`
}

// Counts are what the backup holds, for the operator to recognize it.
type Counts struct {
	Workspaces int64 `json:"workspaces"`
	Notes      int64 `json:"notes"`
	Versions   int64 `json:"versions"` // versions of every resource (Notes, Rooms, repositories)
	Blobs      int64 `json:"blobs"`
	BlobBytes  int64 `json:"blob_bytes"`
}

// Options of Backup and Restore.
type Options struct {
	// Version is the Foundry version written into the manifest.
	Version string
	// Progress, if set, is told what is being done, a line at a time.
	Progress func(msg string)
	// Now, if set, is the clock (tests).
	Now func() time.Time
}

func (o Options) progress(format string, args ...any) {
	if o.Progress != nil {
		o.Progress(fmt.Sprintf(format, args...))
	}
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// Backup copies the data folder dataDir, which a server may be serving,
// into out, verifies the copy and writes its manifest. out is a folder
// that must not exist or be empty, or, named *.tar.gz or *.tgz, an
// archive of that folder that must not exist. On any failure nothing is
// left at out (an empty folder that was there stays).
func Backup(ctx context.Context, dataDir, out string, opts Options) (Manifest, error) {
	src := filepath.Join(dataDir, DBName)
	if fi, err := os.Stat(src); err != nil || !fi.Mode().IsRegular() {
		return Manifest{}, fmt.Errorf("%s holds no Foundry database (%s): give the --data folder the server uses", dataDir, DBName)
	}
	archive := IsArchiveName(out)
	if archive {
		if _, err := os.Lstat(out); err == nil {
			return Manifest{}, fmt.Errorf("the backup archive %s exists: give a new file name", out)
		}
	} else if err := checkTarget(out, "the backup folder"); err != nil {
		return Manifest{}, err
	}
	if o, d := absPath(out), absPath(dataDir); o != "" && d != "" && isUnder(o, d) {
		return Manifest{}, fmt.Errorf("the backup %s is inside the data folder %s: give a place elsewhere (on another disk, ideally)", out, dataDir)
	}
	tmp, err := makeStaging(out)
	if err != nil {
		return Manifest{}, err
	}
	done := false
	defer func() {
		if !done || archive {
			os.RemoveAll(tmp)
		}
	}()
	m, err := build(ctx, dataDir, tmp, opts)
	if err != nil {
		return Manifest{}, err
	}
	if archive {
		opts.progress("writing the archive %s", out)
		err = writeArchive(ctx, tmp, out)
	} else {
		err = putInPlace(tmp, out)
	}
	if err != nil {
		return Manifest{}, err
	}
	done = true
	return m, nil
}

// build writes the backup of dataDir into the empty folder tmp, the
// manifest last.
func build(ctx context.Context, dataDir, tmp string, opts Options) (Manifest, error) {
	src := filepath.Join(dataDir, DBName)
	start := opts.now()

	opts.progress("copying the database %s", src)
	dbCopy := filepath.Join(tmp, DBName)
	if err := copyDatabase(ctx, src, dbCopy); err != nil {
		return Manifest{}, err
	}
	facts, err := inspect(ctx, dbCopy)
	if err != nil {
		return Manifest{}, err
	}
	dbFile, err := hashFile(dbCopy, DBName)
	if err != nil {
		return Manifest{}, err
	}
	opts.progress("database copied: %d bytes, schema version %d; copying blobs", dbFile.Size, facts.schema)

	from := filepath.Join(dataDir, BlobsDir)
	blobs, err := copyBlobs(ctx, from, filepath.Join(tmp, BlobsDir), facts.wanted, opts)
	if err != nil {
		return Manifest{}, err
	}
	missing, err := lostBlobs(from, facts.refs, blobs)
	if err != nil {
		return Manifest{}, err
	}
	if len(missing) > 0 {
		opts.progress("warning: %s", missingText(missing))
	}
	m := Manifest{
		Format: Format, FoundryVersion: opts.Version, SchemaVersion: facts.schema,
		Created: start.UTC().Truncate(time.Second), Database: dbFile, Counts: facts.counts, Blobs: blobs,
		MissingBlobs: missing,
	}
	m.Counts.Blobs = int64(len(blobs))
	for _, b := range blobs {
		m.Counts.BlobBytes += b.Size
	}
	if err := writeManifest(filepath.Join(tmp, ManifestName), m); err != nil {
		return Manifest{}, err
	}
	if err := syncTree(tmp); err != nil {
		return Manifest{}, err
	}
	return m, nil
}

// absPath is path made absolute and clean ("" if it cannot be).
func absPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	return abs
}

// checkTarget refuses a folder that holds anything (or a file): a backup or
// a restore never mixes with what is there.
func checkTarget(path, what string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s %s is a file, not a folder: give a folder that does not exist yet", what, path)
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s %s is not empty (it holds %s): give a new or empty folder", what, path, entries[0].Name())
	}
	return nil
}

// makeStaging makes the hidden folder beside target that a backup or a
// restore is written into before it is renamed to target.
func makeStaging(target string) (string, error) {
	parent := filepath.Dir(filepath.Clean(target))
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(filepath.Clean(target))+".partial-*")
	if err != nil {
		return "", err
	}
	return tmp, nil
}

// putInPlace renames the whole staging folder to target (which may be an
// empty folder: rename replaces it) and makes the rename durable.
func putInPlace(tmp, target string) error {
	if fi, err := os.Stat(target); err == nil && fi.IsDir() {
		// Empty, as checked: removed so the rename works on every system.
		if err := os.Remove(target); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, target); err != nil {
		return err
	}
	syncDir(filepath.Dir(filepath.Clean(target)))
	return nil
}

// copyDatabase writes a consistent copy of the database src to dst with
// VACUUM INTO: it reads in one transaction, which in WAL mode neither waits
// for nor blocks the server's writer.
func copyDatabase(ctx context.Context, src, dst string) error {
	db, err := sql.Open("sqlite", "file:"+src+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, dst); err != nil {
		return fmt.Errorf("copy the database %s: %w", src, err)
	}
	// VACUUM INTO makes the file with the default mode and does not sync
	// what it wrote: the copy holds what the database does (password
	// hashes, tokens' hashes), so it is the owner's alone, like the data.
	if err := os.Chmod(dst, 0o600); err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// openCopy opens a database file of a backup read-only and as immutable:
// no lock, no journal, nothing written beside it.
func openCopy(path string) (*sql.DB, error) {
	return sql.Open("sqlite", "file:"+path+"?mode=ro&immutable=1")
}

// facts are what the copied database says about itself.
type facts struct {
	schema int
	counts Counts
	refs   map[Blob]bool // the blobs it names (Size unset)
	// indexed are the blobs of its blob index (the blobs table, where the
	// schema has one for SQLite), nil without one.
	indexed map[Blob]bool
}

// wanted says whether a blob of the data folder belongs in the backup:
// every blob the copy names or indexes. A blob stored after the copy was
// taken is left out, so the restored folder's index and files agree.
func (f facts) wanted(ws, sha string) bool {
	k := Blob{Workspace: ws, SHA256: sha}
	return f.indexed == nil || f.indexed[k] || f.refs[k]
}

// shaField finds the hashes the files tabs hold ("sha256":"<hex>"), in
// documents, parts and history.
var shaField = regexp.MustCompile(`"sha256":"([0-9a-f]{64})"`)

// inspect checks the copied database's integrity and reads its schema
// version, its counts and the blobs it names.
func inspect(ctx context.Context, path string) (facts, error) {
	db, err := openCopy(path)
	if err != nil {
		return facts{}, err
	}
	defer db.Close()
	if err := integrity(ctx, db); err != nil {
		return facts{}, err
	}
	var f facts
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&f.schema); err != nil {
		return facts{}, fmt.Errorf("read the schema version: %w", err)
	}
	for _, c := range []struct {
		n *int64
		q string
	}{
		{&f.counts.Workspaces, `SELECT COUNT(*) FROM workspaces`},
		{&f.counts.Notes, `SELECT COUNT(*) FROM resources WHERE type = '` + store.TypeNote + `'`},
		{&f.counts.Versions, `SELECT COUNT(*) FROM resource_versions`},
	} {
		if err := db.QueryRowContext(ctx, c.q).Scan(c.n); err != nil {
			return facts{}, fmt.Errorf("count: %w", err)
		}
	}
	f.refs = map[Blob]bool{}
	// Every text of a Note that can hold a files tab (a repository's
	// versions carry a "sha256" too, of their files as a whole, which is
	// no blob): current documents and parts,
	// and history's documents and parts (snapshots whole; a splice names a
	// hash whole when it inserted it whole). A database of an older schema
	// may not have the parts' tables yet.
	queries := map[string]string{
		"resources":         `SELECT workspace_id, doc FROM resources WHERE type = '` + store.TypeNote + `' AND instr(doc, '"sha256"') > 0`,
		"resource_parts":    `SELECT r.workspace_id, p.data FROM resource_parts p JOIN resources r ON r.type = p.type AND r.id = p.id WHERE r.type = '` + store.TypeNote + `' AND instr(p.data, '"sha256"') > 0`,
		"resource_versions": `SELECT r.workspace_id, v.doc FROM resource_versions v JOIN resources r ON r.type = v.type AND r.id = v.id WHERE r.type = '` + store.TypeNote + `' AND instr(v.doc, '"sha256"') > 0`,
		"part_versions":     `SELECT r.workspace_id, p.data FROM part_versions p JOIN resources r ON r.type = p.type AND r.id = p.id WHERE r.type = '` + store.TypeNote + `' AND instr(p.data, '"sha256"') > 0`,
	}
	for table, q := range queries {
		var n int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, table).Scan(&n); err != nil {
			return facts{}, err
		}
		if n == 0 {
			continue
		}
		if err := scanRefs(ctx, db, q, f.refs); err != nil {
			return facts{}, fmt.Errorf("find the files the database names: %w", err)
		}
	}
	var cols int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info('blobs') WHERE name IN ('workspace_id', 'sha256')`).Scan(&cols); err != nil {
		return facts{}, err
	}
	if cols == 2 {
		f.indexed = map[Blob]bool{}
		rows, err := db.QueryContext(ctx, `SELECT workspace_id, sha256 FROM blobs`)
		if err != nil {
			return facts{}, fmt.Errorf("read the blob index: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var b Blob
			if err := rows.Scan(&b.Workspace, &b.SHA256); err != nil {
				return facts{}, err
			}
			f.indexed[b] = true
		}
		if err := rows.Err(); err != nil {
			return facts{}, fmt.Errorf("read the blob index: %w", err)
		}
	}
	return f, nil
}

func scanRefs(ctx context.Context, db *sql.DB, q string, refs map[Blob]bool) error {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var ws string
		var text sql.NullString
		if err := rows.Scan(&ws, &text); err != nil {
			return err
		}
		for _, m := range shaField.FindAllStringSubmatch(text.String, -1) {
			refs[Blob{Workspace: ws, SHA256: m[1]}] = true
		}
	}
	return rows.Err()
}

// integrity runs PRAGMA integrity_check: "ok", or what is wrong.
func integrity(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return fmt.Errorf("check the database's integrity: %w", err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		if s != "ok" {
			problems = append(problems, s)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("check the database's integrity: %w", err)
	}
	if len(problems) > 0 {
		if len(problems) > 5 {
			problems = append(problems[:5], fmt.Sprintf("… %d more", len(problems)-5))
		}
		return fmt.Errorf("the database copy is damaged (PRAGMA integrity_check): %s", strings.Join(problems, "; "))
	}
	return nil
}

// checkReferenced refuses a backup whose database names a blob it
// neither holds nor lists as missing when it was taken.
func checkReferenced(refs map[Blob]bool, have, missingOK []Blob) error {
	got := make(map[Blob]bool, len(have)+len(missingOK))
	for _, b := range append(slices.Clone(have), missingOK...) {
		got[Blob{Workspace: b.Workspace, SHA256: b.SHA256}] = true
	}
	var missing []string
	for r := range refs {
		if !got[r] {
			missing = append(missing, r.Workspace+"/"+r.SHA256)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	return fmt.Errorf("the backup's database names %d file(s) whose bytes are not in the backup (first: %s) and that its manifest does not list as missing: the backup is incomplete or was changed", len(missing), missing[0])
}

// lostBlobs are the blobs the copy names that were not copied: each must
// be absent from the data folder too (lost before the backup), else the
// copy failed.
func lostBlobs(from string, refs map[Blob]bool, have []Blob) ([]Blob, error) {
	got := make(map[Blob]bool, len(have))
	for _, b := range have {
		got[Blob{Workspace: b.Workspace, SHA256: b.SHA256}] = true
	}
	missing := []Blob{}
	for r := range refs {
		if got[r] {
			continue
		}
		if _, err := os.Stat(filepath.Join(from, blobName(r.Workspace, r.SHA256))); err == nil {
			return nil, fmt.Errorf("blob %s/%s is in the data folder but was not copied: try the backup again", r.Workspace, r.SHA256)
		}
		missing = append(missing, r)
	}
	sortBlobs(missing)
	return missing, nil
}

// missingText says which files a backup could not hold.
func missingText(missing []Blob) string {
	return fmt.Sprintf("the database names %d file(s) whose bytes are not in the data folder (first: %s/%s): they could not be backed up, and they cannot be downloaded from this data folder either; the manifest lists them under missing_blobs",
		len(missing), missing[0].Workspace, missing[0].SHA256)
}

func sortBlobs(b []Blob) {
	sort.Slice(b, func(i, j int) bool {
		if b[i].Workspace != b[j].Workspace {
			return b[i].Workspace < b[j].Workspace
		}
		return b[i].SHA256 < b[j].SHA256
	})
}

// blobName is the path of a blob under a blobs folder.
func blobName(ws, sha string) string {
	return filepath.Join(ws, sha[:2], sha[2:])
}

var (
	wsName  = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	hexName = regexp.MustCompile(`^[0-9a-f]+$`)
)

// copyBlobs copies every blob under from (blobs/<ws>/<ab>/<rest>) to to,
// hashing what it reads: a blob whose bytes do not match its name is
// refused. Temporary files of uploads in progress are skipped. The blobs
// come back sorted by workspace and hash.
func copyBlobs(ctx context.Context, from, to string, wanted func(ws, sha string) bool, opts Options) ([]Blob, error) {
	out := []Blob{}
	var bytes int64
	last := time.Now()
	err := walkBlobs(from, func(ws, sha, path string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !wanted(ws, sha) {
			return nil
		}
		dst := filepath.Join(to, blobName(ws, sha))
		size, got, err := copyFile(path, dst)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed since it was listed: lostBlobs tells whether the copy names it
		}
		if err != nil {
			return fmt.Errorf("copy blob %s/%s: %w", ws, sha, err)
		}
		if got != sha {
			return fmt.Errorf("blob %s/%s in the data folder is damaged: its bytes hash to %s", ws, sha, got)
		}
		out = append(out, Blob{Workspace: ws, SHA256: sha, Size: size})
		bytes += size
		if time.Since(last) > time.Second {
			opts.progress("copied %d blobs (%d bytes)", len(out), bytes)
			last = time.Now()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sortBlobs(out)
	opts.progress("copied %d blobs (%d bytes)", len(out), bytes)
	return out, nil
}

// walkBlobs calls fn for every file under root laid out as a blob; other
// files (temporary uploads) are passed over. No blobs folder is no blobs.
func walkBlobs(root string, fn func(ws, sha, path string) error) error {
	wss, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, w := range wss {
		if !w.IsDir() || !wsName.MatchString(w.Name()) {
			continue
		}
		prefixes, err := os.ReadDir(filepath.Join(root, w.Name()))
		if err != nil {
			return err
		}
		for _, p := range prefixes {
			if !p.IsDir() || len(p.Name()) != 2 || !hexName.MatchString(p.Name()) {
				continue
			}
			files, err := os.ReadDir(filepath.Join(root, w.Name(), p.Name()))
			if err != nil {
				return err
			}
			for _, f := range files {
				sha := p.Name() + f.Name()
				if !f.Type().IsRegular() || len(sha) != 64 || !hexName.MatchString(f.Name()) {
					continue
				}
				if err := fn(w.Name(), sha, filepath.Join(root, w.Name(), p.Name(), f.Name())); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// copyFile copies src to a new file dst (making its folder), syncs it, and
// answers the size and hash of the bytes copied.
func copyFile(src, dst string) (int64, string, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, "", err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return 0, "", err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, "", err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, "", err
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// hashFile answers the size and hash of the file at path, named name.
func hashFile(path, name string) (File, error) {
	f, err := os.Open(path)
	if err != nil {
		return File{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return File{}, err
	}
	return File{Name: name, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

func writeManifest(path string, m Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncTree syncs every folder under root, so the files' names are durable
// (the files themselves were synced when written).
func syncTree(root string) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			syncDir(path)
		}
		return nil
	})
}

// syncDir makes the names in dir durable (best effort: not every file
// system syncs a folder).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
