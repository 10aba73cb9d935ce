package backup

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"foundry/internal/store"
)

// SchemaError refuses a backup whose database is at a schema version newer
// than this build of Foundry knows.
type SchemaError struct {
	Backup, Known          int    // schema versions: the backup's, this build's
	BackupFoundry, Foundry string // the Foundry versions that took it and that runs
}

func (e *SchemaError) Error() string {
	took := ""
	if e.BackupFoundry != "" {
		took = fmt.Sprintf(" (it was taken by Foundry %s)", e.BackupFoundry)
	}
	return fmt.Sprintf("this backup's database is at schema version %d, newer than this Foundry %s knows (schema version %d)%s: upgrade Foundry to that version or a newer one and restore with it",
		e.Backup, e.Foundry, e.Known, took)
}

// SchemaVersion is the schema version this build knows (store.SchemaVersion):
// a backup at a lower one is migrated when a server first opens it.
func SchemaVersion() int { return store.SchemaVersion() }

// ReadManifest reads the manifest of the backup folder dir and checks that
// this build can read its format.
func ReadManifest(dir string) (Manifest, error) { return readManifest(dir, dir) }

// readManifest reads the manifest in the folder dir of the backup called
// name (the folder, or the archive it was unpacked from).
func readManifest(dir, name string) (Manifest, error) {
	m, err := readManifestIn(dir)
	if err != nil && dir != name {
		return Manifest{}, errors.New(strings.ReplaceAll(err.Error(), dir, name))
	}
	return m, err
}

func readManifestIn(dir string) (Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return Manifest{}, fmt.Errorf("%s is not a Foundry backup: it has no %s (a backup that did not finish has none)", dir, ManifestName)
	}
	if err != nil {
		return Manifest{}, err
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&m); err != nil {
		return Manifest{}, fmt.Errorf("%s of %s cannot be read: %v", ManifestName, dir, err)
	}
	if m.Format > Format {
		return Manifest{}, fmt.Errorf("%s of %s is of backup format %d; this Foundry reads format %d: upgrade Foundry to restore it", ManifestName, dir, m.Format, Format)
	}
	if m.Format < 1 || m.Database.Name != DBName || !hexName.MatchString(m.Database.SHA256) || len(m.Database.SHA256) != 64 {
		return Manifest{}, fmt.Errorf("%s of %s is not a Foundry backup manifest (no format, or no database entry)", ManifestName, dir)
	}
	seen := make(map[Blob]bool, len(m.Blobs))
	for _, bl := range m.Blobs {
		if err := checkBlobEntry(dir, bl); err != nil {
			return Manifest{}, err
		}
		k := Blob{Workspace: bl.Workspace, SHA256: bl.SHA256}
		if seen[k] {
			return Manifest{}, fmt.Errorf("%s of %s names blob %s/%s twice", ManifestName, dir, bl.Workspace, bl.SHA256)
		}
		seen[k] = true
	}
	for _, bl := range m.MissingBlobs {
		if err := checkBlobEntry(dir, bl); err != nil {
			return Manifest{}, err
		}
	}
	return m, nil
}

// checkBlobEntry refuses a manifest's blob whose names cannot be a blob's
// (they become a path).
func checkBlobEntry(dir string, b Blob) error {
	if !wsName.MatchString(b.Workspace) || len(b.SHA256) != 64 || !hexName.MatchString(b.SHA256) || b.Size < 0 {
		return fmt.Errorf("%s of %s names a blob that cannot be one (%q/%q)", ManifestName, dir, b.Workspace, b.SHA256)
	}
	return nil
}

// checkSchema refuses a manifest from a newer schema than this build's.
func checkSchema(m Manifest, version string) error {
	if m.SchemaVersion > store.SchemaVersion() {
		return &SchemaError{Backup: m.SchemaVersion, Known: store.SchemaVersion(), BackupFoundry: m.FoundryVersion, Foundry: version}
	}
	return nil
}

// Verify checks the backup folder dir against its manifest: the database's
// and every blob's size and hash, the database's integrity and schema
// version, and that every blob the database names is in the backup. The
// backup is a folder or an archive.
func Verify(ctx context.Context, backup string) (Manifest, error) {
	var m Manifest
	err := withFolder(ctx, backup, func(dir string) error {
		var err error
		if m, err = readManifest(dir, backup); err == nil {
			err = verifyFiles(ctx, dir, m)
		}
		return err
	})
	return m, err
}

// verifyFiles checks the files of the backup folder dir against m.
func verifyFiles(ctx context.Context, dir string, m Manifest) error {
	if err := verifyBytes(ctx, dir, m); err != nil {
		return err
	}
	return checkDatabase(ctx, filepath.Join(dir, DBName), m)
}

// verifyBytes checks the size and hash of the database and every blob of
// the backup folder dir against m.
func verifyBytes(ctx context.Context, dir string, m Manifest) error {
	got, err := hashFile(filepath.Join(dir, DBName), DBName)
	if err != nil {
		return fmt.Errorf("the backup's database: %w", err)
	}
	if err := sameFile(m.Database, got); err != nil {
		return err
	}
	for _, b := range m.Blobs {
		if err := ctx.Err(); err != nil {
			return err
		}
		got, err := hashFile(filepath.Join(dir, BlobsDir, blobName(b.Workspace, b.SHA256)), b.SHA256)
		if err != nil {
			return fmt.Errorf("blob %s/%s of the backup: %w", b.Workspace, b.SHA256, err)
		}
		if err := sameBlob(b, got); err != nil {
			return err
		}
	}
	return nil
}

func sameFile(want, got File) error {
	if got.SHA256 != want.SHA256 || got.Size != want.Size {
		return fmt.Errorf("the backup's database %s does not match its manifest (%d bytes, sha256 %s; the manifest says %d bytes, sha256 %s): the backup was changed or damaged after it was taken",
			want.Name, got.Size, got.SHA256, want.Size, want.SHA256)
	}
	return nil
}

func sameBlob(want Blob, got File) error {
	if got.SHA256 != want.SHA256 || got.Size != want.Size {
		return fmt.Errorf("blob %s/%s of the backup does not match its manifest (%d bytes hashing to %s; the manifest says %d bytes): the backup was changed or damaged after it was taken",
			want.Workspace, want.SHA256, got.Size, got.SHA256, want.Size)
	}
	return nil
}

// checkDatabase checks a backup's database file: its integrity, that its
// schema version is the manifest's, and that every blob it names is in the
// manifest.
func checkDatabase(ctx context.Context, path string, m Manifest) error {
	f, err := inspect(ctx, path)
	if err != nil {
		return err
	}
	if f.schema != m.SchemaVersion {
		return fmt.Errorf("the backup's database is at schema version %d but its manifest says %d: the manifest is not this database's", f.schema, m.SchemaVersion)
	}
	return checkReferenced(f.refs, m.Blobs, m.MissingBlobs)
}

// Restore puts the backup backupDir (a folder, or an archive Backup wrote)
// back as the new data folder
// dataDir, which must not exist or be empty: it refuses a backup from a
// newer schema than this build knows, copies the database and the blobs,
// checking each against the manifest as it copies, and checks the copied
// database. `foundry serve --data dataDir` then serves it. On any failure
// nothing is left at dataDir.
func Restore(ctx context.Context, backupDir, dataDir string, opts Options) (Manifest, error) {
	archive := isArchive(backupDir)
	if !archive {
		m, err := ReadManifest(backupDir)
		if err != nil {
			return Manifest{}, err
		}
		if err := checkSchema(m, opts.Version); err != nil {
			return Manifest{}, err
		}
	}
	if err := checkTarget(dataDir, "the data folder to restore into"); err != nil {
		return Manifest{}, err
	}
	tmp, err := makeStaging(dataDir)
	if err != nil {
		return Manifest{}, err
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	var m Manifest
	if archive {
		m, err = restoreArchive(ctx, backupDir, tmp, opts)
	} else {
		m, err = restoreFolder(ctx, backupDir, tmp, opts)
	}
	if err != nil {
		return Manifest{}, err
	}
	if err := syncTree(tmp); err != nil {
		return Manifest{}, err
	}
	if err := putInPlace(tmp, dataDir); err != nil {
		return Manifest{}, err
	}
	done = true
	return m, nil
}

// restoreArchive unpacks the backup archive into the staging folder tmp,
// checks it there, and leaves the data folder (the manifest removed).
func restoreArchive(ctx context.Context, archive, tmp string, opts Options) (Manifest, error) {
	opts.progress("unpacking %s", archive)
	if err := extractArchive(ctx, archive, tmp); err != nil {
		return Manifest{}, err
	}
	m, err := readManifest(tmp, archive)
	if err != nil {
		return Manifest{}, err
	}
	if err := checkSchema(m, opts.Version); err != nil {
		return Manifest{}, err
	}
	opts.progress("checking the database and %d blobs", len(m.Blobs))
	if err := verifyFiles(ctx, tmp, m); err != nil {
		return Manifest{}, err
	}
	// Only what the manifest lists goes into the data folder.
	listed := make(map[string]bool, len(m.Blobs))
	for _, b := range m.Blobs {
		listed[filepath.Join(tmp, BlobsDir, blobName(b.Workspace, b.SHA256))] = true
	}
	err = walkBlobs(filepath.Join(tmp, BlobsDir), func(ws, sha, path string) error {
		if !listed[path] {
			return fmt.Errorf("the backup archive %s holds blob %s/%s, which its manifest does not list: it was changed", archive, ws, sha)
		}
		return nil
	})
	if err != nil {
		return Manifest{}, err
	}
	return m, os.Remove(filepath.Join(tmp, ManifestName))
}

// restoreFolder copies the backup folder into the staging folder tmp,
// checking every byte against the manifest.
func restoreFolder(ctx context.Context, backupDir, tmp string, opts Options) (Manifest, error) {
	m, err := ReadManifest(backupDir)
	if err != nil {
		return Manifest{}, err
	}
	opts.progress("restoring the database (%d bytes)", m.Database.Size)
	size, sha, err := copyFile(filepath.Join(backupDir, DBName), filepath.Join(tmp, DBName))
	if err != nil {
		return Manifest{}, fmt.Errorf("the backup's database: %w", err)
	}
	if err := sameFile(m.Database, File{Name: DBName, Size: size, SHA256: sha}); err != nil {
		return Manifest{}, err
	}
	if err := checkDatabase(ctx, filepath.Join(tmp, DBName), m); err != nil {
		return Manifest{}, err
	}
	opts.progress("restoring %d blobs (%d bytes)", len(m.Blobs), m.Counts.BlobBytes)
	for _, b := range m.Blobs {
		if err := ctx.Err(); err != nil {
			return Manifest{}, err
		}
		name := blobName(b.Workspace, b.SHA256)
		size, sha, err := copyFile(filepath.Join(backupDir, BlobsDir, name), filepath.Join(tmp, BlobsDir, name))
		if err != nil {
			return Manifest{}, fmt.Errorf("blob %s/%s of the backup: %w", b.Workspace, b.SHA256, err)
		}
		if err := sameBlob(b, File{Size: size, SHA256: sha}); err != nil {
			return Manifest{}, err
		}
	}
	return m, nil
}
