package sqlite

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"foundry/internal/store"
)

// Blobs are files in the data folder: blobs/<workspace>/<ab>/<rest of the
// hash>. Each is written to a temporary file in its workspace's folder,
// synced, and renamed into place, so a blob is whole or absent; the same
// bytes are stored once per workspace. A crash may leave a temporary file
// (.put-*) behind; it is never read.
func (s *Store) Blobs() store.Blobs { return fileBlobs{dir: filepath.Join(s.dir, "blobs")} }

type fileBlobs struct{ dir string }

func (b fileBlobs) path(ws, sha string) string {
	return filepath.Join(b.dir, ws, sha[:2], sha[2:])
}

func (b fileBlobs) Put(ctx context.Context, ws string, r io.Reader, limit int64) (string, int64, error) {
	if err := store.CheckBlobWorkspace(ws); err != nil {
		return "", 0, err
	}
	folder := filepath.Join(b.dir, ws)
	if err := os.MkdirAll(folder, 0o700); err != nil {
		return "", 0, fmt.Errorf("blobs: %w", err)
	}
	tmp, err := os.CreateTemp(folder, ".put-*")
	if err != nil {
		return "", 0, fmt.Errorf("blobs: %w", err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), &ctxReader{ctx: ctx, r: io.LimitReader(r, limit+1)})
	if err != nil {
		return "", 0, err
	}
	if n > limit {
		return "", 0, &store.BlobTooLargeError{Limit: limit}
	}
	if err := tmp.Sync(); err != nil {
		return "", 0, fmt.Errorf("blobs: sync: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", 0, fmt.Errorf("blobs: %w", err)
	}
	sha := hex.EncodeToString(h.Sum(nil))
	final := b.path(ws, sha)
	if _, err := os.Stat(final); err == nil {
		os.Remove(tmp.Name()) // stored before: the same bytes are kept once
		done = true
		return sha, n, nil
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o700); err != nil {
		return "", 0, fmt.Errorf("blobs: %w", err)
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return "", 0, fmt.Errorf("blobs: %w", err)
	}
	done = true
	syncDir(filepath.Dir(final))
	return sha, n, nil
}

// syncDir makes a rename in dir durable (best effort: not every file
// system syncs a folder).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

func (b fileBlobs) Open(ctx context.Context, ws, sha string) (store.Blob, error) {
	if err := store.CheckBlobName(ws, sha); err != nil {
		return nil, err
	}
	f, err := os.Open(b.path(ws, sha))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("blobs: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("blobs: %w", err)
	}
	return fileBlob{File: f, size: st.Size()}, nil
}

func (b fileBlobs) Has(ctx context.Context, ws, sha string) (bool, error) {
	if err := store.CheckBlobName(ws, sha); err != nil {
		return false, nil
	}
	_, err := os.Stat(b.path(ws, sha))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

type fileBlob struct {
	*os.File
	size int64
}

func (f fileBlob) Size() int64 { return f.size }

// ctxReader stops reading once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
