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

// SearchHit is one matching unit. Hits come title units first, then the
// other units, each the unit indexed last first (by its rid, taken when a
// unit is first indexed and kept while it is edited): the same order on
// both stores for the same writes, and one SQLite's FTS5 reads in,
// stopping at the page's end, without sorting every match.
type SearchHit struct {
	NoteID  string
	Key     string
	TabType string
	Cursor  SearchCursor // this hit's place in the order, to page after it
}

// SearchCursor is a place in the order of hits.
type SearchCursor struct {
	Body bool  // not a title unit
	RID  int64 // the unit's rid
}

// String encodes c for a page's cursor.
func (c SearchCursor) String() string {
	k := "t"
	if c.Body {
		k = "b"
	}
	return k + strconv.FormatInt(c.RID, 10)
}

// ParseSearchCursor reads what SearchCursor.String wrote.
func ParseSearchCursor(s string) (SearchCursor, error) {
	if len(s) < 2 || (s[0] != 't' && s[0] != 'b') {
		return SearchCursor{}, errors.New("not a search cursor")
	}
	n, err := strconv.ParseInt(s[1:], 10, 64)
	if err != nil || n < 1 || strconv.FormatInt(n, 10) != s[1:] {
		return SearchCursor{}, errors.New("not a search cursor")
	}
	return SearchCursor{Body: s[0] == 'b', RID: n}, nil
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
	CREATE VIRTUAL TABLE IF NOT EXISTS search_terms USING fts5(title, body, content = '', contentless_delete = 1, tokenize = 'ascii');
	CREATE TABLE IF NOT EXISTS search_indexed (
		resource_id TEXT PRIMARY KEY,
		format INTEGER NOT NULL
	)`
	postgresSearchTables = `CREATE TABLE IF NOT EXISTS search_docs (
		rid BIGSERIAL UNIQUE,
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
	if d.Name != "postgres" {
		return writeSearchSQLite(ctx, q, ws, id, docs, reset)
	}
	for _, doc := range docs {
		if err := writeSearchDocPG(ctx, q, ws, id, doc, reset); err != nil {
			return fmt.Errorf("index %s: %w", doc.Key, err)
		}
	}
	return nil
}

// searchBatch is how many units one statement writes to the SQLite
// full-text table (three parameters each).
const searchBatch = 300

// writeSearchSQLite is writeSearch on SQLite. FTS5 writes what it holds
// in memory to disk at the start of every statement of the transaction
// (a savepoint), so the units' rows are looked up and made first, then
// the words go in a few statements of many units: a write of thousands of
// units (an import) makes a few segments of the index, not thousands.
func writeSearchSQLite(ctx context.Context, q Querier, ws, id string, docs []SearchDoc, fresh bool) error {
	type put struct {
		rid         int64
		title, body string
	}
	var puts []put
	var gone []any
	for _, doc := range docs {
		var rid int64
		if !fresh {
			err := q.QueryRowContext(ctx, `SELECT rid FROM search_docs WHERE resource_id = ? AND key = ?`, id, doc.Key).Scan(&rid)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("index %s: %w", doc.Key, err)
			}
		}
		switch {
		case doc.Terms == "" && rid == 0:
			continue
		case doc.Terms == "":
			if _, err := q.ExecContext(ctx, `DELETE FROM search_docs WHERE rid = ?`, rid); err != nil {
				return fmt.Errorf("index %s: %w", doc.Key, err)
			}
			gone = append(gone, rid)
			continue
		case rid == 0:
			if err := q.QueryRowContext(ctx, `INSERT INTO search_docs (workspace_id, resource_id, key, tab_type) VALUES (?, ?, ?, ?) RETURNING rid`, ws, id, doc.Key, doc.TabType).Scan(&rid); err != nil {
				return fmt.Errorf("index %s: %w", doc.Key, err)
			}
		}
		title, body := "", doc.Terms
		if doc.Key == titleUnit {
			title, body = body, ""
		}
		puts = append(puts, put{rid, title, body})
	}
	for len(gone) > 0 {
		n := min(len(gone), searchBatch*3)
		if _, err := q.ExecContext(ctx, `DELETE FROM search_terms WHERE rowid IN (?`+strings.Repeat(", ?", n-1)+`)`, gone[:n]...); err != nil {
			return fmt.Errorf("index: %w", err)
		}
		gone = gone[n:]
	}
	for len(puts) > 0 {
		n := min(len(puts), searchBatch)
		args := make([]any, 0, 3*n)
		for _, p := range puts[:n] {
			args = append(args, p.rid, p.title, p.body)
		}
		if _, err := q.ExecContext(ctx, `INSERT OR REPLACE INTO search_terms (rowid, title, body) VALUES (?, ?, ?)`+strings.Repeat(", (?, ?, ?)", n-1), args...); err != nil {
			return fmt.Errorf("index: %w", err)
		}
		puts = puts[n:]
	}
	return nil
}

// writeSearchDocPG replaces one unit's words on PostgreSQL.
func writeSearchDocPG(ctx context.Context, q Querier, ws, id string, doc SearchDoc, fresh bool) error {
	if doc.Terms == "" {
		if fresh {
			return nil
		}
		_, err := q.ExecContext(ctx, `DELETE FROM search_docs WHERE resource_id = $1 AND key = $2`, id, doc.Key)
		return err
	}
	_, err := q.ExecContext(ctx, `INSERT INTO search_docs (workspace_id, resource_id, key, tab_type, terms) VALUES ($1, $2, $3, $4, $5::tsvector)
		ON CONFLICT (resource_id, key) DO UPDATE SET terms = excluded.terms`, ws, id, doc.Key, doc.TabType, tsvector(doc.Terms))
	return err
}

// titleUnit is the key of a Note's title unit (note.TitleUnit).
const titleUnit = "t"

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

// Search implements Store.Search: the title units, then the others, each
// newest first, as many as the page holds.
func (b *Base) Search(ctx context.Context, sq SearchQuery) ([]SearchHit, error) {
	if len(sq.Query.Terms) == 0 || (sq.IDs != nil && len(sq.IDs) == 0) {
		return nil, nil
	}
	limit := max(1, sq.Limit)
	var out []SearchHit
	for _, body := range []bool{false, true} {
		if sq.After != nil && sq.After.Body && !body {
			continue
		}
		if !body && sq.TabType != "" {
			continue // titles are in no tab
		}
		var after int64
		if sq.After != nil && sq.After.Body == body {
			after = sq.After.RID
		}
		hits, err := b.searchUnits(ctx, sq, body, after, limit-len(out))
		if err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		out = append(out, hits...)
		if len(out) == limit {
			break
		}
	}
	return out, nil
}

// searchUnits is one tier of Search: title units, or the others, with a
// rid below after (0: any), at most limit.
func (b *Base) searchUnits(ctx context.Context, sq SearchQuery, body bool, after int64, limit int) ([]SearchHit, error) {
	var query strings.Builder
	args := []any{}
	match := matchText(b.D, sq.Query)
	if b.D.Name == "postgres" {
		query.WriteString(`SELECT d.rid, d.resource_id, d.key, d.tab_type FROM search_docs d
			JOIN resources r ON r.type = 'note' AND r.id = d.resource_id
			WHERE d.terms @@ ?::tsquery AND d.workspace_id = ?`)
		if body {
			query.WriteString(` AND d.key <> 't'`)
		} else {
			query.WriteString(` AND d.key = 't'`)
		}
	} else {
		// FTS5 reads its matches by rowid, newest first, and the page
		// ends the read (CROSS JOIN keeps it the outer loop).
		col := "title"
		if body {
			col = "body"
		}
		match = "{" + col + "} : (" + match + ")"
		query.WriteString(`SELECT d.rid, d.resource_id, d.key, d.tab_type FROM search_terms f
			CROSS JOIN search_docs d ON d.rid = f.rowid
			CROSS JOIN resources r ON r.type = 'note' AND r.id = d.resource_id
			WHERE search_terms MATCH ? AND d.workspace_id = ?`)
	}
	args = append(args, match, sq.Workspace)
	if sq.ApprovedOnly {
		query.WriteString(` AND r.approved = 1`)
	}
	if sq.IDs != nil {
		ids, _ := json.Marshal(sq.IDs)
		query.WriteString(` AND d.resource_id IN (` + b.D.jsonStrings() + `)`)
		args = append(args, string(ids))
	}
	if sq.TabType != "" {
		query.WriteString(` AND d.tab_type = ?`)
		args = append(args, sq.TabType)
	}
	if after > 0 {
		if b.D.Name == "postgres" {
			query.WriteString(` AND d.rid < ?`)
		} else {
			query.WriteString(` AND f.rowid < ?`)
		}
		args = append(args, after)
	}
	if b.D.Name == "postgres" {
		query.WriteString(` ORDER BY d.rid DESC`)
	} else {
		query.WriteString(` ORDER BY f.rowid DESC`)
	}
	query.WriteString(` LIMIT ` + strconv.Itoa(limit))
	rows, err := b.R.QueryContext(ctx, b.D.Q(query.String()), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []SearchHit
	for rows.Next() {
		var h SearchHit
		if err := rows.Scan(&h.Cursor.RID, &h.NoteID, &h.Key, &h.TabType); err != nil {
			return nil, err
		}
		h.Cursor.Body = body
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
