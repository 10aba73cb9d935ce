package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// The blob index: one row of blobs per stored blob (both stores), with its
// workspace, size, when it was last put (put_us) and whether a version has
// referenced it (referenced). It answers two questions no scan of the
// bytes could: how much a workspace stores, files not yet in any Note
// included (Usage), and which blobs no version names (Collect).
//
// The life of a blob:
//
//  1. Put stores the bytes and sets put_us to now (a blob put again, the
//     same bytes, refreshes put_us), referenced 0 for a new one.
//  2. The guarded write that adds the file to a Note names the blob in
//     Change.Blobs; in its own transaction it sets referenced 1, and is
//     refused (ErrBlobMissing, nothing written) if the row is gone. So no
//     committed version names a blob the collector removed. Every other
//     write of a Note names the blobs it adds in Change.NamedBlobs, marked
//     the same way when they are indexed.
//  3. History is never deleted, so a blob once referenced stays.
//  4. Collect takes blobs with referenced 0 and put_us older than the grace
//     period, looks once more for the hash in what the workspace's
//     resources hold now (namedNow), marks those it finds, and removes the
//     rest, each by a delete conditional on the row being as it saw it
//     (referenced 0, the same put_us) in the transaction that removes the
//     bytes. A Put, a re-put or a write that references the blob meanwhile
//     changes the row, so the delete does nothing.
//
// Blobs stored before the index are kept as referenced (see its migration).
//
// So no version ever names bytes that are gone, whatever the timing; the
// grace period is what lets an upload's write, which follows its Put by
// milliseconds, commit rather than be refused as ErrBlobMissing.

// ErrBlobMissing: a write names a blob its workspace does not have (never
// put, or removed as unreferenced before the write committed).
var ErrBlobMissing = errors.New("the file's bytes are not stored (they were removed as unreferenced before the write committed); send the file again")

// Defaults of the blob collector.
const (
	DefaultBlobGrace = time.Hour
	DefaultBlobBatch = 100
	MaxBlobBatch     = 1000
)

// BlobCollect says which unreferenced blobs Collect removes.
type BlobCollect struct {
	// Grace: a blob put less than Grace before now stays (0:
	// DefaultBlobGrace; negative is refused).
	Grace time.Duration
	// Batch caps the blobs one Collect looks at (0: DefaultBlobBatch; at
	// most MaxBlobBatch).
	Batch int
}

func (c BlobCollect) withDefaults() (BlobCollect, error) {
	if c.Grace < 0 {
		return c, fmt.Errorf("blobs: the grace period is %v; it must be 0 (the default, %v) or more", c.Grace, DefaultBlobGrace)
	}
	if c.Grace == 0 {
		c.Grace = DefaultBlobGrace
	}
	if c.Batch < 0 || c.Batch > MaxBlobBatch {
		return c, fmt.Errorf("blobs: a batch of %d blobs: give 1 to %d (0: %d)", c.Batch, MaxBlobBatch, DefaultBlobBatch)
	}
	if c.Batch == 0 {
		c.Batch = DefaultBlobBatch
	}
	return c, nil
}

// BlobUsage counts blobs and their bytes.
type BlobUsage struct {
	Count int64 `json:"count"`
	Bytes int64 `json:"bytes"`
	// Unreferenced are the blobs no version names (yet): refused uploads,
	// uploads in flight, and blobs the collector has not looked at.
	UnreferencedCount int64 `json:"unreferenced_count"`
	UnreferencedBytes int64 `json:"unreferenced_bytes"`
}

// BlobReport is what one Collect did.
type BlobReport struct {
	Removed      int64 // unreferenced blobs removed
	RemovedBytes int64
	Gone         []BlobRow // the blobs removed (at most the batch)
	// Found counts unreferenced blobs found named by a resource (and
	// marked referenced, so never looked at again).
	Found int64
	// Indexed counts blob files found without an index row (SQLite, a
	// data folder from before the index), now indexed.
	Indexed int64
	// More says the batch was full: there may be more to look at now.
	More bool
}

// BlobRow is one row of the blob index.
type BlobRow struct {
	Workspace, SHA string
	Size, PutUS    int64
}

// BlobIndex is the index both stores keep their blobs in (embedded in each
// store's Blobs).
type BlobIndex struct{ B *Base }

// TouchBlob records a blob of size bytes as put at now, in q (the
// transaction that stores its bytes): a new row is unreferenced, an
// existing one keeps referenced and gets put_us now.
func TouchBlob(ctx context.Context, q Querier, d Dialect, ws, sha string, size int64, now time.Time) error {
	us := now.UnixMicro()
	_, err := q.ExecContext(ctx, d.Q(`INSERT INTO blobs (workspace_id, sha256, size, created_us, put_us, referenced) VALUES (?, ?, ?, ?, ?, 0)
		ON CONFLICT (workspace_id, sha256) DO UPDATE SET put_us = excluded.put_us`), ws, sha, size, us, us)
	if err != nil {
		return fmt.Errorf("blobs: index %s: %w", sha, err)
	}
	return nil
}

// markBlobs marks the blobs a guarded write names as referenced, in its
// transaction: one of must the workspace does not have refuses the write;
// one of named it does not have is left as it is.
func markBlobs(ctx context.Context, q Querier, d Dialect, ws string, must, named []string) error {
	for i, sha := range append(must[:len(must):len(must)], named...) {
		strict := i < len(must)
		if !strict && slices.Contains(must, sha) {
			continue // marked already
		}
		if CheckBlobName(ws, sha) != nil {
			if !strict {
				continue
			}
			return fmt.Errorf("%w (%q is not a blob's hash)", ErrBlobMissing, sha)
		}
		res, err := q.ExecContext(ctx, d.Q(`UPDATE blobs SET referenced = 1 WHERE workspace_id = ? AND sha256 = ?`), ws, sha)
		if err != nil {
			return fmt.Errorf("blobs: mark %s: %w", sha, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 && strict {
			return fmt.Errorf("%w (blob %s)", ErrBlobMissing, sha)
		}
	}
	return nil
}

const usageColumns = `COUNT(*), COALESCE(SUM(size), 0),
	COALESCE(SUM(CASE WHEN referenced = 0 THEN 1 ELSE 0 END), 0), COALESCE(SUM(CASE WHEN referenced = 0 THEN size ELSE 0 END), 0)`

// Usage implements Blobs.Usage.
func (x BlobIndex) Usage(ctx context.Context, ws string) (BlobUsage, error) {
	if err := CheckBlobWorkspace(ws); err != nil {
		return BlobUsage{}, err
	}
	var u BlobUsage
	err := x.B.R.QueryRowContext(ctx, x.B.D.Q(`SELECT `+usageColumns+` FROM blobs WHERE workspace_id = ?`), ws).
		Scan(&u.Count, &u.Bytes, &u.UnreferencedCount, &u.UnreferencedBytes)
	return u, err
}

// Totals implements Blobs.Totals.
func (x BlobIndex) Totals(ctx context.Context) (BlobUsage, error) {
	var u BlobUsage
	err := x.B.R.QueryRowContext(ctx, `SELECT `+usageColumns+` FROM blobs`).
		Scan(&u.Count, &u.Bytes, &u.UnreferencedCount, &u.UnreferencedBytes)
	return u, err
}

// CollectWith is Collect with the store's own removal: remove deletes the
// row with DeleteUnreferenced and, if it did, the bytes, in one
// transaction (or under the same lock as Put), and says whether it did.
func (x BlobIndex) CollectWith(ctx context.Context, now time.Time, c BlobCollect, remove func(ctx context.Context, r BlobRow) (bool, error)) (BlobReport, error) {
	var rep BlobReport
	c, err := c.withDefaults()
	if err != nil {
		return rep, err
	}
	cut := now.Add(-c.Grace).UnixMicro()
	rows, err := x.B.R.QueryContext(ctx, x.B.D.Q(`SELECT workspace_id, sha256, size, put_us FROM blobs
		WHERE referenced = 0 AND put_us < ? ORDER BY put_us, workspace_id, sha256 LIMIT ?`), cut, c.Batch)
	if err != nil {
		return rep, err
	}
	var cands []BlobRow
	for rows.Next() {
		var r BlobRow
		if err := rows.Scan(&r.Workspace, &r.SHA, &r.Size, &r.PutUS); err != nil {
			rows.Close()
			return rep, err
		}
		cands = append(cands, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return rep, err
	}
	rep.More = len(cands) == c.Batch
	named := map[string]map[string]bool{} // workspace → hashes its resources name now
	for _, r := range cands {
		if named[r.Workspace] == nil {
			named[r.Workspace] = map[string]bool{}
		}
		named[r.Workspace][r.SHA] = false
	}
	for ws, shas := range named {
		if err := x.namedNow(ctx, ws, shas); err != nil {
			return rep, err
		}
	}
	for _, r := range cands {
		if named[r.Workspace][r.SHA] {
			err := x.B.Tx(ctx, func(q Querier) error {
				_, err := q.ExecContext(ctx, x.B.D.Q(`UPDATE blobs SET referenced = 1 WHERE workspace_id = ? AND sha256 = ?`), r.Workspace, r.SHA)
				return err
			})
			if err != nil {
				return rep, err
			}
			rep.Found++
			continue
		}
		gone, err := remove(ctx, r)
		if err != nil {
			return rep, err
		}
		if gone {
			rep.Removed++
			rep.RemovedBytes += r.Size
			rep.Gone = append(rep.Gone, r)
		}
	}
	return rep, nil
}

// DeleteUnreferenced deletes r's index row if it is still as Collect saw
// it (unreferenced, not put since), in q, and says whether it did: only
// then may the bytes go.
func DeleteUnreferenced(ctx context.Context, q Querier, d Dialect, r BlobRow) (bool, error) {
	res, err := q.ExecContext(ctx, d.Q(`DELETE FROM blobs WHERE workspace_id = ? AND sha256 = ? AND referenced = 0 AND put_us = ?`), r.Workspace, r.SHA, r.PutUS)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// namedNow sets shas[h] for each hash h that a resource of ws names now,
// in its document or any of its parts: a last look before a blob is
// removed, in one read of the workspace's current content for the whole
// batch, wider than any one format of the files tab (any run of 64 hex
// digits counts, so a false match keeps a blob, never loses one). Every
// write of a Note marks the blobs it adds (Change.NamedBlobs), so this
// catches only a write that named a blob some other way. History is not
// read: it is large, and a splice may cut a hash.
func (x BlobIndex) namedNow(ctx context.Context, ws string, shas map[string]bool) error {
	return x.B.scanHashes(ctx, shas, false, []string{
		`SELECT doc FROM resources WHERE workspace_id = ?`,
		`SELECT p.data FROM resource_parts p JOIN resources r ON r.type = p.type AND r.id = p.id WHERE r.workspace_id = ? AND p.data IS NOT NULL`,
	}, ws)
}

// hexRuns sets shas[h] for each key h of shas that text holds as 64
// lowercase hex digits (inside any longer run of them too).
func hexRuns(text []byte, shas map[string]bool) {
	eachHexRun(text, func(run []byte) {
		for k := 0; k+64 <= len(run); k++ {
			if _, ok := shas[string(run[k:k+64])]; ok {
				shas[string(run[k:k+64])] = true
			}
		}
	})
}

// eachHexRun calls fn with each longest run of lowercase hex digits in
// text.
func eachHexRun(text []byte, fn func(run []byte)) {
	isHex := func(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }
	for i := 0; i < len(text); {
		if !isHex(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && isHex(text[j]) {
			j++
		}
		fn(text[i:j])
		i = j
	}
}
