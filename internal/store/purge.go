package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Purge implements Store.Purge. The hashes the resource names are read
// from every row of it (document, parts and history, so a file deleted
// from it long ago counts too); which of them another resource of the
// workspace names is read before the transaction, from the same rows of
// every other resource (a write that names one of them meanwhile marks it
// referenced again, and the collector looks at what resources hold now
// once more before it removes anything).
func (b *Base) Purge(ctx context.Context, workspace, typ, id string) (PurgeReport, error) {
	var rep PurgeReport
	var ws string
	err := b.R.QueryRowContext(ctx, b.D.Q(`SELECT workspace_id FROM resources WHERE type = ? AND id = ?`), typ, id).Scan(&ws)
	if errors.Is(err, sql.ErrNoRows) || err == nil && ws != workspace {
		return rep, ErrNotFound
	}
	if err != nil {
		return rep, err
	}
	own := map[string]bool{}
	if err := b.scanHashes(ctx, own, true, purgeOwnRows, typ, id); err != nil {
		return rep, err
	}
	shas := map[string]bool{}
	for h := range own {
		shas[h] = false
	}
	if len(shas) > 0 {
		if err := b.scanHashes(ctx, shas, false, purgeOtherRows, workspace, typ, id); err != nil {
			return rep, err
		}
	}
	err = b.Tx(ctx, func(q Querier) error {
		rep = PurgeReport{}
		res, err := q.ExecContext(ctx, b.D.Q(`DELETE FROM resources WHERE type = ? AND id = ? AND workspace_id = ?`), typ, id, workspace)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return ErrNotFound // purged meanwhile
		}
		res, err = q.ExecContext(ctx, b.D.Q(`DELETE FROM resource_versions WHERE type = ? AND id = ?`), typ, id)
		if err != nil {
			return err
		}
		if rep.Versions, err = res.RowsAffected(); err != nil {
			return err
		}
		for _, query := range []string{
			`DELETE FROM resource_parts WHERE type = ? AND id = ?`,
			`DELETE FROM part_versions WHERE type = ? AND id = ?`,
			`DELETE FROM events WHERE resource_type = ? AND resource_id = ?`,
			`DELETE FROM event_horizons WHERE resource_type = ? AND resource_id = ?`,
			// Keys live in the resource's scope and in scopes of their own
			// within it ("<type>/<scope>").
			`DELETE FROM idempotency_keys WHERE (scope_type = ? OR scope_type LIKE ? || '/%') AND scope_id = ?`,
		} {
			args := []any{typ, id}
			if strings.Contains(query, "scope_id") {
				args = []any{typ, typ, id}
			}
			if _, err := q.ExecContext(ctx, b.D.Q(query), args...); err != nil {
				return fmt.Errorf("purge %s %s: %w", typ, id, err)
			}
		}
		if err := dropSearch(ctx, q, b.D, id); err != nil {
			return fmt.Errorf("purge %s %s: %w", typ, id, err)
		}
		if _, err := q.ExecContext(ctx, b.D.Q(`DELETE FROM search_indexed WHERE resource_id = ?`), id); err != nil {
			return fmt.Errorf("purge %s %s: %w", typ, id, err)
		}
		if _, err := q.ExecContext(ctx, b.D.Q(`DELETE FROM objects WHERE workspace_id = ? AND (parent_id = ? OR id = ?)`), workspace, id, id); err != nil {
			return fmt.Errorf("purge %s %s: objects: %w", typ, id, err)
		}
		for h, elsewhere := range shas {
			if elsewhere {
				continue
			}
			res, err := q.ExecContext(ctx, b.D.Q(`UPDATE blobs SET referenced = 0 WHERE workspace_id = ? AND sha256 = ? AND referenced = 1`), workspace, h)
			if err != nil {
				return fmt.Errorf("purge %s %s: unreference blob %s: %w", typ, id, h, err)
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n > 0 {
				rep.Unreferenced = append(rep.Unreferenced, h)
			}
		}
		return nil
	})
	slices.Sort(rep.Unreferenced)
	return rep, err
}

// The rows a resource names blobs in: its own (purgeOwnRows, args type,
// id) and every other resource's of the workspace (purgeOtherRows, args
// workspace, type, id).
var (
	purgeOwnRows = []string{
		`SELECT doc FROM resources WHERE type = ? AND id = ?`,
		`SELECT data FROM resource_parts WHERE type = ? AND id = ? AND data IS NOT NULL`,
		`SELECT doc FROM resource_versions WHERE type = ? AND id = ?`,
		`SELECT data FROM part_versions WHERE type = ? AND id = ? AND data IS NOT NULL`,
	}
	purgeOtherRows = []string{
		`SELECT doc FROM resources WHERE workspace_id = ? AND NOT (type = ? AND id = ?)`,
		`SELECT p.data FROM resource_parts p JOIN resources r ON r.type = p.type AND r.id = p.id WHERE r.workspace_id = ? AND NOT (r.type = ? AND r.id = ?) AND p.data IS NOT NULL`,
		`SELECT v.doc FROM resource_versions v JOIN resources r ON r.type = v.type AND r.id = v.id WHERE r.workspace_id = ? AND NOT (r.type = ? AND r.id = ?)`,
		`SELECT p.data FROM part_versions p JOIN resources r ON r.type = p.type AND r.id = p.id WHERE r.workspace_id = ? AND NOT (r.type = ? AND r.id = ?) AND p.data IS NOT NULL`,
	}
)

// scanHashes reads the text of each query's rows: with collect, every run
// of 64 lowercase hex digits becomes a key of shas; without, shas[h] is
// set for each key h the text holds (see hexRuns).
func (b *Base) scanHashes(ctx context.Context, shas map[string]bool, collect bool, queries []string, args ...any) error {
	for _, query := range queries {
		rows, err := b.R.QueryContext(ctx, b.D.Q(query), args...)
		if err != nil {
			return err
		}
		var text []byte
		for rows.Next() {
			if err := rows.Scan(&text); err != nil {
				rows.Close()
				return err
			}
			if collect {
				allHexRuns(text, shas)
			} else {
				hexRuns(text, shas)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	return nil
}

// allHexRuns adds every 64-digit window of each run of lowercase hex
// digits in text to shas (a blob's hash is one; a false one names no
// blob and changes nothing).
func allHexRuns(text []byte, shas map[string]bool) {
	eachHexRun(text, func(run []byte) {
		if len(run) == 64 {
			shas[string(run)] = false
		}
	})
}
