package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"foundry/internal/search"
)

// The full-text index of Notes. Each Note is indexed as units (its title, a
// chunk of its text, a slide, a block of cells, its sources, its files:
// see note.SearchUnit), one row each in search_docs, written by the guarded
// write that changes them (Change.Search), so a unit is searchable exactly
// when the write that made it is committed. A unit's words are cut and
// folded by package search, and each database only stores and matches
// them: SQLite in the FTS5 table search_terms (ascii tokenizer, which
// splits at the spaces between the words and nowhere else), PostgreSQL in
// a tsvector built from them as they are (no parser, no dictionary), with a
// GIN index. So both answer the same query with the same units.
//
// Which Notes are indexed whole, as this build of Foundry cuts words
// (SearchFormat), is in search_indexed; a Note missing there (it was
// written before the index existed) is indexed by IndexNote in the
// background (service.IndexNotes), and meanwhile only the units its
// writes since changed are found.

// SearchFormat is how this build cuts words into the index: a Note
// indexed at another format is indexed again.
const SearchFormat = 1

// SearchDoc is one unit of a Note's index as a write leaves it: Terms are
// its words (search.Terms); "" removes the unit.
type SearchDoc struct {
	Key     string
	TabType string
	Terms   string
}

// SearchQuery asks for the units of a workspace's Notes that match every
// term of Query.
type SearchQuery struct {
	Workspace    string
	Query        search.Query
	TabType      string   // "" any; otherwise only that tab type's units (no titles)
	ApprovedOnly bool     // only Notes with connected access
	IDs          []string // nil = any Note
	After        *SearchCursor
	Limit        int
}

// SearchHit is one matching unit. Hits come title units first, then by
// the Note's last change, newest first, then by Note ID and unit key: the
// same order on both stores.
type SearchHit struct {
	NoteID  string
	Key     string
	TabType string
	Cursor  SearchCursor // this hit's place in the order, to page after it
}

// SearchCursor is a place in the order of hits.
type SearchCursor struct {
	Body      bool // not a title unit
	UpdatedUS int64
	NoteID    string
	Key       string
}

// String encodes c for a page's cursor.
func (c SearchCursor) String() string {
	b, _ := json.Marshal([]any{c.Body, c.UpdatedUS, c.NoteID, c.Key})
	return string(b)
}

// ParseSearchCursor reads what SearchCursor.String wrote.
func ParseSearchCursor(s string) (SearchCursor, error) {
	var a []json.RawMessage
	var c SearchCursor
	if err := json.Unmarshal([]byte(s), &a); err != nil || len(a) != 4 {
		return c, errors.New("not a search cursor")
	}
	for i, p := range []any{&c.Body, &c.UpdatedUS, &c.NoteID, &c.Key} {
		if err := json.Unmarshal(a[i], p); err != nil {
			return c, errors.New("not a search cursor")
		}
	}
	return c, nil
}

// postgresSearchTables and sqliteSearchTables are the index's tables.
const (
	sqliteSearchTables = `CREATE TABLE IF NOT EXISTS search_docs (
		rid INTEGER PRIMARY KEY,
		workspace_id TEXT NOT NULL,
		resource_id TEXT NOT NULL,
		key TEXT NOT NULL,
		tab_type TEXT NOT NULL,
		UNIQUE (resource_id, key)
	);
	CREATE VIRTUAL TABLE IF NOT EXISTS search_terms USING fts5(terms, content = '', contentless_delete = 1, tokenize = 'ascii');
	CREATE TABLE IF NOT EXISTS search_indexed (
		resource_id TEXT PRIMARY KEY,
		format INTEGER NOT NULL
	)`
	postgresSearchTables = `CREATE TABLE IF NOT EXISTS search_docs (
		workspace_id TEXT NOT NULL,
		resource_id TEXT NOT NULL,
		key TEXT NOT NULL,
		tab_type TEXT NOT NULL,
		terms tsvector NOT NULL,
		PRIMARY KEY (resource_id, key)
	);
	CREATE INDEX IF NOT EXISTS search_docs_terms ON search_docs USING gin (terms);
	CREATE TABLE IF NOT EXISTS search_indexed (
		resource_id TEXT PRIMARY KEY,
		format INTEGER NOT NULL
	)`
)

// tsvector is terms as a PostgreSQL tsvector literal: each word quoted
// (no word holds a quote or a backslash: they are ASCII punctuation) with
// its position, from 1.
func tsvector(terms string) string {
	var b strings.Builder
	b.Grow(len(terms) * 2)
	for i, w := range strings.Fields(terms) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('\'')
		b.WriteString(w)
		b.WriteString("':")
		b.WriteString(strconv.Itoa(min(i+1, 16383)))
	}
	return b.String()
}

// writeSearch stores a write's units of resource id: with reset, every
// unit it had goes first and the resource is marked indexed whole.
func writeSearch(ctx context.Context, q Querier, d Dialect, ws, id string, docs []SearchDoc, reset bool) error {
	if reset {
		if err := dropSearch(ctx, q, d, id); err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, d.Q(`INSERT INTO search_indexed (resource_id, format) VALUES (?, ?) ON CONFLICT (resource_id) DO UPDATE SET format = excluded.format`), id, SearchFormat); err != nil {
			return fmt.Errorf("mark indexed: %w", err)
		}
	}
	for _, doc := range docs {
		if err := writeSearchDoc(ctx, q, d, ws, id, doc, reset); err != nil {
			return fmt.Errorf("index %s: %w", doc.Key, err)
		}
	}
	return nil
}

func writeSearchDoc(ctx context.Context, q Querier, d Dialect, ws, id string, doc SearchDoc, fresh bool) error {
	if d.Name == "postgres" {
		if doc.Terms == "" {
			if fresh {
				return nil
			}
			_, err := q.ExecContext(ctx, `DELETE FROM search_docs WHERE resource_id = $1 AND key = $2`, id, doc.Key)
			return err
		}
		_, err := q.ExecContext(ctx, `INSERT INTO search_docs (workspace_id, resource_id, key, tab_type, terms) VALUES ($1, $2, $3, $4, $5::tsvector)
			ON CONFLICT (resource_id, key) DO UPDATE SET tab_type = excluded.tab_type, terms = excluded.terms`, ws, id, doc.Key, doc.TabType, tsvector(doc.Terms))
		return err
	}
	// SQLite: the unit's row keeps its rid for good (a unit's tab type
	// never changes under its key), and its words are replaced under it.
	var rid int64
	if !fresh {
		err := q.QueryRowContext(ctx, `SELECT rid FROM search_docs WHERE resource_id = ? AND key = ?`, id, doc.Key).Scan(&rid)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
	}
	switch {
	case doc.Terms == "" && rid == 0:
		return nil
	case doc.Terms == "":
		if _, err := q.ExecContext(ctx, `DELETE FROM search_terms WHERE rowid = ?`, rid); err != nil {
			return err
		}
		_, err := q.ExecContext(ctx, `DELETE FROM search_docs WHERE rid = ?`, rid)
		return err
	case rid == 0:
		if err := q.QueryRowContext(ctx, `INSERT INTO search_docs (workspace_id, resource_id, key, tab_type) VALUES (?, ?, ?, ?) RETURNING rid`, ws, id, doc.Key, doc.TabType).Scan(&rid); err != nil {
			return err
		}
	}
	_, err := q.ExecContext(ctx, `INSERT OR REPLACE INTO search_terms (rowid, terms) VALUES (?, ?)`, rid, doc.Terms)
	return err
}

// dropSearch removes every unit of resource id from the index.
func dropSearch(ctx context.Context, q Querier, d Dialect, id string) error {
	if d.Name != "postgres" {
		if _, err := q.ExecContext(ctx, `DELETE FROM search_terms WHERE rowid IN (SELECT rid FROM search_docs WHERE resource_id = ?)`, id); err != nil {
			return fmt.Errorf("drop index: %w", err)
		}
	}
	if _, err := q.ExecContext(ctx, d.Q(`DELETE FROM search_docs WHERE resource_id = ?`), id); err != nil {
		return fmt.Errorf("drop index: %w", err)
	}
	return nil
}

// matchText is q in the database's own query language, built from the
// words package search cut, each quoted, so nothing a person typed is
// ever syntax.
func matchText(d Dialect, q search.Query) string {
	var b strings.Builder
	for i, t := range q.Terms {
		if d.Name == "postgres" {
			if i > 0 {
				b.WriteString(" & ")
			}
			b.WriteByte('(')
			for k, w := range t.Words {
				if k > 0 {
					b.WriteString(" <-> ")
				}
				b.WriteString("'" + w + "'")
			}
			if t.Prefix {
				b.WriteString(":*")
			}
			b.WriteByte(')')
			continue
		}
		if i > 0 {
			b.WriteString(" AND ")
		}
		b.WriteString(`"` + strings.Join(t.Words, " ") + `"`)
		if t.Prefix {
			b.WriteString("*")
		}
	}
	return b.String()
}

// Search implements Store.Search.
func (b *Base) Search(ctx context.Context, sq SearchQuery) ([]SearchHit, error) {
	if len(sq.Query.Terms) == 0 || (sq.IDs != nil && len(sq.IDs) == 0) {
		return nil, nil
	}
	var query strings.Builder
	args := []any{}
	if b.D.Name == "postgres" {
		query.WriteString(`SELECT d.resource_id, d.key, d.tab_type, r.updated_us FROM search_docs d
			JOIN resources r ON r.type = 'note' AND r.id = d.resource_id
			WHERE d.terms @@ ?::tsquery AND d.workspace_id = ?`)
	} else {
		query.WriteString(`SELECT d.resource_id, d.key, d.tab_type, r.updated_us FROM search_terms f
			JOIN search_docs d ON d.rid = f.rowid
			JOIN resources r ON r.type = 'note' AND r.id = d.resource_id
			WHERE search_terms MATCH ? AND d.workspace_id = ?`)
	}
	args = append(args, matchText(b.D, sq.Query), sq.Workspace)
	if sq.ApprovedOnly {
		query.WriteString(` AND r.approved = 1`)
	}
	if sq.IDs != nil {
		ids, _ := json.Marshal(sq.IDs)
		query.WriteString(` AND d.resource_id IN (` + b.D.jsonStrings() + `)`)
		args = append(args, string(ids))
	}
	if sq.TabType != "" {
		query.WriteString(` AND d.tab_type = ? AND d.key <> 't'`)
		args = append(args, sq.TabType)
	}
	body := `(d.key <> 't')`
	if c := sq.After; c != nil {
		// After c in the order: body, updated_us descending, note, key.
		query.WriteString(` AND (` + body + ` > ? OR (` + body + ` = ? AND (r.updated_us < ? OR (r.updated_us = ? AND (d.resource_id > ? OR (d.resource_id = ? AND d.key > ?))))))`)
		args = append(args, c.Body, c.Body, c.UpdatedUS, c.UpdatedUS, c.NoteID, c.NoteID, c.Key)
	}
	query.WriteString(` ORDER BY ` + body + `, r.updated_us DESC, d.resource_id, d.key LIMIT ` + strconv.Itoa(max(1, sq.Limit)))
	rows, err := b.R.QueryContext(ctx, b.D.Q(query.String()), args...)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	var out []SearchHit
	for rows.Next() {
		var h SearchHit
		if err := rows.Scan(&h.NoteID, &h.Key, &h.TabType, &h.Cursor.UpdatedUS); err != nil {
			return nil, err
		}
		h.Cursor.Body, h.Cursor.NoteID, h.Cursor.Key = h.Key != "t", h.NoteID, h.Key
		out = append(out, h)
	}
	return out, rows.Err()
}

// IndexNote implements Store.IndexNote.
func (b *Base) IndexNote(ctx context.Context, id string, version int64, docs []SearchDoc) (done bool, err error) {
	err = b.Tx(ctx, func(q Querier) error {
		done = false
		var ws string
		var v int64
		err := q.QueryRowContext(ctx, b.D.Q(`SELECT workspace_id, version FROM resources WHERE type = 'note' AND id = ?`+b.D.ForUpdate), id).Scan(&ws, &v)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && v != version) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := writeSearch(ctx, q, b.D, ws, id, docs, true); err != nil {
			return err
		}
		done = true
		return nil
	})
	return done, err
}

// Unindexed implements Store.Unindexed.
func (b *Base) Unindexed(ctx context.Context, afterID string, limit int) ([]Resource, error) {
	rows, err := b.R.QueryContext(ctx, b.D.Q(`SELECT r.id, r.workspace_id, r.version FROM resources r
		WHERE r.type = 'note' AND r.id > ? AND NOT EXISTS (SELECT 1 FROM search_indexed i WHERE i.resource_id = r.id AND i.format = ?)
		ORDER BY r.id LIMIT ?`), afterID, SearchFormat, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Resource
	for rows.Next() {
		r := Resource{Type: TypeNote}
		if err := rows.Scan(&r.ID, &r.Workspace, &r.Version); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
