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
	"strings"
	"time"

	"foundry/internal/store"
)

// Blobs are files in the data folder: blobs/<workspace>/<ab>/<rest of the
// hash>. Each is written to a temporary file in its workspace's folder,
// synced, and renamed into place, so a blob is whole or absent; the same
// bytes are stored once per workspace. A crash may leave a temporary file
// (.put-*) behind; it is never read.
//
// Each blob also has a row in the blobs table (store.BlobIndex). The file
// is renamed into place, or found there, in the writer's transaction that
// writes its row, and the collector removes a file in the writer's
// transaction that deletes its row: SQLite's write lock orders the two,
// across processes too, so a blob put again is never removed under it.
func (s *Store) Blobs() store.Blobs {
	return fileBlobs{dir: filepath.Join(s.dir, "blobs"), s: s, BlobIndex: store.BlobIndex{B: &s.Base}}
}

type fileBlobs struct {
	dir string
	s   *Store
	store.BlobIndex
}

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
	closed, renamed := false, false
	defer func() {
		if !closed {
			tmp.Close()
		}
		if !renamed {
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
	closed = true
	if err := tmp.Close(); err != nil {
		return "", 0, fmt.Errorf("blobs: %w", err)
	}
	sha := hex.EncodeToString(h.Sum(nil))
	final := b.path(ws, sha)
	if err := os.MkdirAll(filepath.Dir(final), 0o700); err != nil {
		return "", 0, fmt.Errorf("blobs: %w", err)
	}
	err = b.s.tx(ctx, func(q store.Querier) error {
		if err := store.TouchBlob(ctx, q, store.SQLite, ws, sha, n, time.Now()); err != nil {
			return err
		}
		if _, err := os.Stat(final); err == nil {
			return nil // stored before: the same bytes are kept once
		}
		if err := os.Rename(tmp.Name(), final); err != nil {
			return fmt.Errorf("blobs: %w", err)
		}
		renamed = true
		return nil
	})
	if err != nil {
		return "", 0, err
	}
	syncDir(filepath.Dir(final))
	return sha, n, nil
}

// Collect implements store.Blobs.Collect. Its first run in a process
// indexes the blob files that have no row (a data folder from before the
// index), as referenced: kept, as the migration keeps PostgreSQL's.
func (b fileBlobs) Collect(ctx context.Context, now time.Time, c store.BlobCollect) (store.BlobReport, error) {
	var indexed int64
	if b.s.blobsIndexed.CompareAndSwap(false, true) {
		n, err := b.indexFiles(ctx)
		if err != nil {
			b.s.blobsIndexed.Store(false)
			return store.BlobReport{Indexed: n}, err
		}
		indexed = n
	}
	rep, err := b.CollectWith(ctx, now, c, func(ctx context.Context, r store.BlobRow) (bool, error) {
		gone := false
		err := b.s.tx(ctx, func(q store.Querier) error {
			var err error
			if gone, err = store.DeleteUnreferenced(ctx, q, store.SQLite, r); err != nil || !gone {
				return err
			}
			if err := os.Remove(b.path(r.Workspace, r.SHA)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("blobs: %w", err)
			}
			return nil
		})
		return gone, err
	})
	rep.Indexed = indexed
	return rep, err
}

// indexFiles adds a row for every blob file that has none, put at its
// file's time, referenced (see the migration of the blob index).
func (b fileBlobs) indexFiles(ctx context.Context) (int64, error) {
	var batch []store.BlobRow
	var n int64
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := b.s.tx(ctx, func(q store.Querier) error {
			for _, r := range batch {
				res, err := q.ExecContext(ctx, `INSERT INTO blobs (workspace_id, sha256, size, created_us, put_us, referenced) VALUES (?, ?, ?, ?, ?, 1)
					ON CONFLICT (workspace_id, sha256) DO NOTHING`, r.Workspace, r.SHA, r.Size, r.PutUS, r.PutUS)
				if err != nil {
					return err
				}
				k, _ := res.RowsAffected()
				n += k
			}
			return nil
		})
		batch = batch[:0]
		return err
	}
	wss, err := os.ReadDir(b.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("blobs: %w", err)
	}
	for _, w := range wss {
		ws := w.Name()
		if !w.IsDir() || store.CheckBlobWorkspace(ws) != nil {
			continue
		}
		err := filepath.WalkDir(filepath.Join(b.dir, ws), func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(filepath.Join(b.dir, ws), p)
			sha := strings.ReplaceAll(filepath.ToSlash(rel), "/", "")
			if store.CheckBlobName(ws, sha) != nil || rel != filepath.Join(sha[:2], sha[2:]) {
				return nil // a temporary file, or not a blob
			}
			info, err := e.Info()
			if err != nil {
				return nil // removed meanwhile
			}
			batch = append(batch, store.BlobRow{Workspace: ws, SHA: sha, Size: info.Size(), PutUS: info.ModTime().UnixMicro()})
			if len(batch) >= store.MaxPruneBatch {
				return flush()
			}
			return ctx.Err()
		})
		if err != nil {
			return n, err
		}
	}
	return n, flush()
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
