package postgres

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"foundry/internal/store"
)

// Blobs are rows: blob_chunks holds the bytes, store.BlobChunk per row,
// and blobs one row per whole blob. Ordinary rows rather than large
// objects: they belong to a workspace by a column like every other row,
// go with pg_dump and replication as they are, and need no lo_unlink
// bookkeeping; chunks keep each row and each read small, and let a
// download seek. Put spools the upload to a temporary file while hashing
// it (so no transaction stays open while a slow client sends), then
// writes the rows in one short transaction.
//
// The blobs row is also the blob's entry in the index (store.BlobIndex).
// Storing a blob's rows and the collector removing them run under one
// advisory lock per blob (blobLock), and a re-put updates the blobs row,
// which the collector's conditional delete then leaves alone: a blob put
// again is never removed under it, on any node.
func (s *Store) Blobs() store.Blobs {
	return pgBlobs{db: s.db, BlobIndex: store.BlobIndex{B: &s.Base}}
}

type pgBlobs struct {
	db *sql.DB
	store.BlobIndex
}

// blobLock serializes, in tx, the writes of one blob's rows.
func blobLock(ctx context.Context, tx *sql.Tx, ws, sha string) error {
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 7204303))`, ws+"/"+sha)
	return err
}

func (b pgBlobs) Put(ctx context.Context, ws string, r io.Reader, limit int64) (string, int64, error) {
	if err := store.CheckBlobWorkspace(ws); err != nil {
		return "", 0, err
	}
	tmp, err := os.CreateTemp("", "foundry-blob-*")
	if err != nil {
		return "", 0, fmt.Errorf("blobs: %w", err)
	}
	defer func() {
		tmp.Close()
		os.Remove(tmp.Name())
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(r, limit+1))
	if err != nil {
		return "", 0, err
	}
	if n > limit {
		return "", 0, &store.BlobTooLargeError{Limit: limit}
	}
	sha := hex.EncodeToString(h.Sum(nil))
	// Stored before: the same bytes are kept once, put again now.
	res, err := b.db.ExecContext(ctx, `UPDATE blobs SET put_us = $3 WHERE workspace_id = $1 AND sha256 = $2`, ws, sha, time.Now().UnixMicro())
	if err != nil {
		return "", 0, err
	}
	if k, err := res.RowsAffected(); err != nil || k > 0 {
		return sha, n, err
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return "", 0, fmt.Errorf("blobs: %w", err)
	}
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return "", 0, err
	}
	defer tx.Rollback()
	if err := blobLock(ctx, tx, ws, sha); err != nil {
		return "", 0, err
	}
	buf := make([]byte, store.BlobChunk)
	for seq := 0; ; seq++ {
		k, err := io.ReadFull(tmp, buf)
		if k > 0 || seq == 0 {
			// Two uploads of the same bytes at once: the second waits for
			// the first's rows and then leaves them as they are.
			if _, err := tx.ExecContext(ctx, `INSERT INTO blob_chunks (workspace_id, sha256, seq, data) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
				ws, sha, seq, buf[:k]); err != nil {
				return "", 0, err
			}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return "", 0, fmt.Errorf("blobs: %w", err)
		}
	}
	if err := store.TouchBlob(ctx, tx, store.Postgres, ws, sha, n, time.Now()); err != nil {
		return "", 0, err
	}
	if err := tx.Commit(); err != nil {
		return "", 0, err
	}
	return sha, n, nil
}

// Collect implements store.Blobs.Collect: each blob goes with its rows in
// one transaction, under the blob's lock.
func (b pgBlobs) Collect(ctx context.Context, now time.Time, c store.BlobCollect) (store.BlobReport, error) {
	return b.CollectWith(ctx, now, c, func(ctx context.Context, r store.BlobRow) (bool, error) {
		tx, err := b.db.BeginTx(ctx, nil)
		if err != nil {
			return false, err
		}
		defer tx.Rollback()
		if err := blobLock(ctx, tx, r.Workspace, r.SHA); err != nil {
			return false, err
		}
		gone, err := store.DeleteUnreferenced(ctx, tx, store.Postgres, r)
		if err != nil || !gone {
			return false, err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM blob_chunks WHERE workspace_id = $1 AND sha256 = $2`, r.Workspace, r.SHA); err != nil {
			return false, err
		}
		return true, tx.Commit()
	})
}

func (b pgBlobs) Has(ctx context.Context, ws, sha string) (bool, error) {
	if store.CheckBlobName(ws, sha) != nil {
		return false, nil
	}
	var n int
	err := b.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM blobs WHERE workspace_id = $1 AND sha256 = $2`, ws, sha).Scan(&n)
	return n > 0, err
}

func (b pgBlobs) Open(ctx context.Context, ws, sha string) (store.Blob, error) {
	if err := store.CheckBlobName(ws, sha); err != nil {
		return nil, err
	}
	var size int64
	err := b.db.QueryRowContext(ctx, `SELECT size FROM blobs WHERE workspace_id = $1 AND sha256 = $2`, ws, sha).Scan(&size)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return &pgBlob{ctx: ctx, db: b.db, ws: ws, sha: sha, size: size, seq: -1}, nil
}

// pgBlob reads a blob a chunk at a time (one chunk in memory).
type pgBlob struct {
	ctx     context.Context
	db      *sql.DB
	ws, sha string
	size    int64
	off     int64
	seq     int    // the chunk in buf (-1: none)
	buf     []byte // chunk seq's bytes
}

func (p *pgBlob) Size() int64 { return p.size }

func (p *pgBlob) Read(out []byte) (int, error) {
	if p.off >= p.size {
		return 0, io.EOF
	}
	seq := int(p.off / store.BlobChunk)
	if seq != p.seq {
		p.buf = p.buf[:0]
		if err := p.db.QueryRowContext(p.ctx, `SELECT data FROM blob_chunks WHERE workspace_id = $1 AND sha256 = $2 AND seq = $3`, p.ws, p.sha, seq).Scan(&p.buf); err != nil {
			p.seq = -1
			return 0, fmt.Errorf("blobs: chunk %d of %s: %w", seq, p.sha, err)
		}
		p.seq = seq
	}
	at := int(p.off - int64(seq)*store.BlobChunk)
	if at >= len(p.buf) {
		return 0, io.ErrUnexpectedEOF
	}
	n := copy(out, p.buf[at:])
	p.off += int64(n)
	return n, nil
}

func (p *pgBlob) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += p.off
	case io.SeekEnd:
		offset += p.size
	default:
		return 0, errors.New("blobs: bad whence")
	}
	if offset < 0 {
		return 0, errors.New("blobs: seek before the start")
	}
	p.off = offset
	return offset, nil
}

func (p *pgBlob) Close() error { p.buf = nil; return nil }
