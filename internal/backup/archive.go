package backup

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// A backup can also be one file: a gzip-compressed tar of the backup
// folder (foundry.db, blobs/…, manifest.json last), for copying off the
// machine. Restore and Verify take either.

// IsArchiveName reports whether a backup named name is written as an
// archive: it ends in .tar.gz or .tgz.
func IsArchiveName(name string) bool {
	return strings.HasSuffix(name, ".tar.gz") || strings.HasSuffix(name, ".tgz")
}

// writeArchive writes the backup folder dir as the archive out, through a
// temporary file beside it that is synced and renamed, so a file named out
// is always a whole archive.
func writeArchive(ctx context.Context, dir, out string) error {
	f, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".partial-*")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	zw := gzip.NewWriter(f)
	tw := tar.NewWriter(zw)
	var names []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." || rel == ManifestName {
			return err
		}
		names = append(names, rel)
		return nil
	})
	if err != nil {
		return err
	}
	names = append(names, ManifestName) // last: an archive cut short has none
	for _, rel := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := addToArchive(tw, filepath.Join(dir, rel), filepath.ToSlash(rel)); err != nil {
			return fmt.Errorf("write the archive: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	// A link, not a rename, so an archive another backup put there
	// meanwhile is never replaced.
	err = os.Link(f.Name(), out)
	switch {
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("the backup archive %s exists (another backup wrote it meanwhile): give a new file name", out)
	case err != nil:
		if _, serr := os.Lstat(out); serr == nil {
			return fmt.Errorf("the backup archive %s exists: give a new file name", out)
		}
		if err := os.Rename(f.Name(), out); err != nil { // a file system without links
			return err
		}
	default:
		os.Remove(f.Name())
	}
	done = true
	syncDir(filepath.Dir(out))
	return nil
}

func addToArchive(tw *tar.Writer, p, name string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	hdr, err := tar.FileInfoHeader(fi, "")
	if err != nil {
		return err
	}
	hdr.Name = name
	hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = 0, 0, "", ""
	if fi.IsDir() {
		hdr.Name += "/"
		return tw.WriteHeader(hdr)
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	in, err := os.Open(p)
	if err != nil {
		return err
	}
	defer in.Close()
	_, err = io.Copy(tw, in)
	return err
}

// isArchive reports whether the backup at p is an archive (a file) rather
// than a folder.
func isArchive(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// extractArchive unpacks the backup archive src into the empty folder dst.
// Only the names a backup holds are taken (manifest.json, foundry.db,
// blobs/<ws>/<ab>/<rest> and their folders), as plain files and folders:
// anything else (another name, a link, a path out of dst) refuses the
// archive.
func extractArchive(ctx context.Context, src, dst string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s is not a backup archive (gzip: %v)", src, err)
	}
	tr := tar.NewReader(zr)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("the backup archive %s is damaged: %v", src, err)
		}
		name := strings.TrimSuffix(hdr.Name, "/")
		if !archiveName(name, hdr.Typeflag == tar.TypeDir) || (hdr.Typeflag != tar.TypeDir && hdr.Typeflag != tar.TypeReg) {
			return fmt.Errorf("the backup archive %s holds %q, which no Foundry backup holds: it is not one, or it was changed", src, hdr.Name)
		}
		p := filepath.Join(dst, filepath.FromSlash(name))
		if hdr.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o700); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return fmt.Errorf("the backup archive %s: %s: %w", src, hdr.Name, err)
		}
		_, err = io.Copy(out, tr)
		if err == nil {
			err = out.Sync()
		}
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("the backup archive %s is damaged: %s: %v", src, hdr.Name, err)
		}
	}
}

// archiveName reports whether name (slash-separated, clean) is one a
// backup holds.
func archiveName(name string, dir bool) bool {
	if name == "" || path.Clean(name) != name || strings.HasPrefix(name, "/") {
		return false
	}
	parts := strings.Split(name, "/")
	if len(parts) == 1 {
		return (name == BlobsDir && dir) || (!dir && (name == ManifestName || name == DBName))
	}
	if parts[0] != BlobsDir || len(parts) > 4 || !wsName.MatchString(parts[1]) {
		return false
	}
	switch len(parts) {
	case 2:
		return dir
	case 3:
		return dir && len(parts[2]) == 2 && hexName.MatchString(parts[2])
	}
	return !dir && len(parts[2]) == 2 && hexName.MatchString(parts[2]) && len(parts[3]) == 62 && hexName.MatchString(parts[3])
}

// withFolder runs fn on the backup at p as a folder: p itself, or an
// archive unpacked into a temporary folder beside it (removed after).
func withFolder(ctx context.Context, p string, fn func(dir string) error) error {
	if !isArchive(p) {
		return fn(p)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(p), "."+filepath.Base(p)+".check-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := extractArchive(ctx, p, tmp); err != nil {
		return err
	}
	return fn(tmp)
}
