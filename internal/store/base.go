package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"foundry/internal/events"
	"foundry/internal/parts"
)

// Base implements every method of Store that is the same SQL on both
// databases. Reads go to R (a pool); writes run through Tx, which each store
// provides (SQLite: its single group-commit writer; PostgreSQL: a transaction).
type Base struct {
	R   *sql.DB
	D   Dialect
	Tx  func(ctx context.Context, fn func(q Querier) error) error
	Hub *events.Hub
	// Retention is how long keys and events are kept (zero: the defaults).
	Retention Retention
	stmts     sync.Map // query → *sql.Stmt for the reads on every call's path
}

// hot prepares a read that runs on every MCP call (token, resource, feed)
// once for the pool instead of parsing it each time.
func (b *Base) hot(ctx context.Context, query string) (*sql.Stmt, error) {
	if s, ok := b.stmts.Load(query); ok {
		return s.(*sql.Stmt), nil
	}
	s, err := b.R.PrepareContext(ctx, b.D.Q(query))
	if err != nil {
		return nil, err
	}
	if prev, loaded := b.stmts.LoadOrStore(query, s); loaded {
		s.Close()
		return prev.(*sql.Stmt), nil
	}
	return s, nil
}

func (b *Base) Get(ctx context.Context, typ, id string) (Resource, error) {
	r := Resource{Type: typ, ID: id}
	var approved int
	var doc string
	var us int64
	st, err := b.hot(ctx, `SELECT workspace_id, owner_id, title, approved, version, doc, updated_us FROM resources WHERE type = ? AND id = ?`)
	if err != nil {
		return Resource{}, err
	}
	err = st.QueryRowContext(ctx, typ, id).Scan(&r.Workspace, &r.Owner, &r.Title, &approved, &r.Version, &doc, &us)
	if errors.Is(err, sql.ErrNoRows) {
		return Resource{}, ErrNotFound
	}
	r.Approved, r.Doc, r.UpdatedAt = approved != 0, json.RawMessage(doc), time.UnixMicro(us).UTC()
	return r, err
}

func (b *Base) Head(ctx context.Context, typ, id string) (Resource, error) {
	r := Resource{Type: typ, ID: id}
	var approved int
	var us int64
	st, err := b.hot(ctx, `SELECT workspace_id, owner_id, title, approved, version, updated_us FROM resources WHERE type = ? AND id = ?`)
	if err != nil {
		return Resource{}, err
	}
	err = st.QueryRowContext(ctx, typ, id).Scan(&r.Workspace, &r.Owner, &r.Title, &approved, &r.Version, &us)
	if errors.Is(err, sql.ErrNoRows) {
		return Resource{}, ErrNotFound
	}
	r.Approved, r.UpdatedAt = approved != 0, time.UnixMicro(us).UTC()
	return r, err
}

func (b *Base) List(ctx context.Context, q ListQuery) ([]Resource, error) {
	query, args, none := b.listStatement(q)
	if none {
		return nil, nil
	}
	var rows *sql.Rows
	var err error
	if q.IDs == nil {
		// A few shapes serve every call, one per limit (callers ask for
		// a few: a page is at most service.MaxPage and one more): prepared
		// once (a title query's statement takes longer to plan than to
		// run).
		var st *sql.Stmt
		if st, err = b.hot(ctx, query); err == nil {
			rows, err = st.QueryContext(ctx, args...)
		}
	} else {
		rows, err = b.R.QueryContext(ctx, b.D.Q(query), args...)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Resource
	for rows.Next() {
		r := Resource{Workspace: q.Workspace, Type: q.Type}
		var approved int
		var us int64
		var doc string
		dest := []any{&r.ID, &r.Owner, &r.Title, &approved, &r.Version, &us}
		if q.WithDoc {
			dest = append(dest, &doc)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		r.Approved, r.UpdatedAt = approved != 0, time.UnixMicro(us).UTC()
		if q.WithDoc {
			r.Doc = json.RawMessage(doc)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// listStatement is List's statement and its arguments; none: nothing can
// match, and there is no statement to run.
func (b *Base) listStatement(q ListQuery) (query string, args []any, none bool) {
	if q.IDs != nil && len(q.IDs) == 0 {
		return "", nil, true
	}
	cols := `id, owner_id, title, approved, version, updated_us`
	if q.WithDoc {
		cols += `, doc`
	}
	// scope is the rows of the list, the title query aside, that come
	// after the ID that after (SQL) names; its arguments come in order.
	scope := func(after string, afterArgs ...any) (string, []any) {
		where := `workspace_id = ? AND type = ? AND id > ` + after
		args := append([]any{q.Workspace, q.Type}, afterArgs...)
		if q.ApprovedOnly {
			where += ` AND approved = 1`
		}
		if q.Unmarked != "" {
			// By the primary key of objects, for each row read. A scalar
			// subquery, which PostgreSQL runs per row as written (NOT
			// EXISTS becomes an anti-join that may sort or hash every mark
			// of the kind on each call); IS DISTINCT FROM, which it takes
			// for true of most rows (IS NULL it takes for true of few, and
			// then scans and sorts the whole table for a page).
			where += ` AND (SELECT 1 FROM objects o WHERE o.kind = ? AND o.id = resources.id) IS DISTINCT FROM 1`
			args = append(args, q.Unmarked)
		}
		if q.IDs != nil {
			where += ` AND id IN (?` + strings.Repeat(`, ?`, len(q.IDs)-1) + `)`
			for _, id := range q.IDs {
				args = append(args, id)
			}
		}
		return where, args
	}
	where, args := scope(`?`, q.AfterID)
	query = `SELECT ` + cols + ` FROM resources WHERE ` + where
	if q.Query != "" {
		// See titlematch.go: every path runs the same test (match); an
		// index only narrows the rows it is run on.
		m := newTitleMatch(q.Query)
		if m.none {
			return "", nil, true
		}
		// (SQLite recompiles a statement on every call whose GLOB pattern
		// is a bare parameter, in case its LIKE optimization applies: the
		// pattern is "? || ''".)
		match, pattern := `title GLOB (? || '')`, m.glob()
		scan := match // the test where the rows are read in ID order
		if b.D.Name == "postgres" {
			// PostgreSQL plans a prepared statement anew on every call (half
			// a millisecond at 10,000 titles) for as long as that plan looks
			// cheaper than one planned for every call, which it does while
			// the planner can read the pattern. So the pattern comes in a
			// subquery, which no plan reads, and the limits are written into
			// the statement (limit and bound): a few statements, each
			// planned once. Where the rows are read in ID order, the trigram
			// index is kept out ("|| ''": otherwise PostgreSQL reads every
			// title it matches and sorts them), and IS DISTINCT FROM false
			// makes the planner count on most rows passing (it counts on
			// few for a pattern it cannot read, and then reads and sorts
			// the whole workspace for a page).
			match, pattern = `title ~ (SELECT ?::text)`, m.regex()
			scan = `((title || '') ~ (SELECT ?::text)) IS DISTINCT FROM false`
		}
		bound := max(titleCandidates*q.Limit, 1)
		if cand, candArgs, ok := b.titleCandidates(m, q.Type, bound); ok {
			// The index names the titles that may match (cand), up to a
			// bound: if it names fewer, the rows it names are tested
			// (sparse); if it has that many, the query is one many titles
			// match, and testing the rows in ID order up to the limit costs
			// less than reading every match from the index (dense). Which
			// branch runs is each one's LIMIT (0 for the other), which both
			// databases evaluate once, before reading a row. One statement,
			// so one snapshot. On SQLite both branches keep the rows they
			// found; on PostgreSQL only their IDs, which the page then reads
			// by primary key (see inIDs).
			keep, page := cols, `SELECT `+cols+` FROM (SELECT * FROM sparse UNION ALL SELECT * FROM dense) found`
			if b.D.Name == "postgres" {
				keep, page = `id`, `SELECT `+cols+` FROM resources WHERE type = ? AND `+b.D.inIDs(`SELECT id FROM sparse UNION ALL SELECT id FROM dense`)
			}
			bnd, lim := strconv.Itoa(bound), strconv.Itoa(q.Limit)
			query = `WITH ` + cand + `,
				sparse AS MATERIALIZED (SELECT ` + keep + ` FROM resources WHERE ` + where + ` AND ` + match + ` AND ` + b.D.inIDs(`SELECT id FROM cand`) + `
					LIMIT CASE WHEN (SELECT COUNT(*) FROM cand) < ` + bnd + ` THEN ` + bnd + ` ELSE 0 END),
				dense AS MATERIALIZED (SELECT ` + keep + ` FROM resources WHERE ` + where + ` AND ` + scan + `
					ORDER BY id LIMIT CASE WHEN (SELECT COUNT(*) FROM cand) >= ` + bnd + ` THEN ` + lim + ` ELSE 0 END)
				` + page
			scopeArgs := args
			args = append([]any{}, candArgs...)
			args = append(append(args, scopeArgs...), pattern)
			args = append(append(args, scopeArgs...), pattern)
			if b.D.Name == "postgres" {
				args = append(args, q.Type)
			}
		} else {
			// Nothing narrows it: test the rows in ID order up to the limit.
			query += ` AND ` + scan
			args = append(args, pattern)
		}
	}
	query += ` ORDER BY id LIMIT ` + strconv.Itoa(q.Limit)
	return query, args, false
}

func (b *Base) History(ctx context.Context, typ, id string) ([]VersionInfo, error) {
	return b.VersionRange(ctx, typ, id, 0, math.MaxInt64)
}

// VersionRange is History from version from to version to (both
// included): what a reader of a few new events needs, read by the primary
// key instead of the whole history.
func (b *Base) VersionRange(ctx context.Context, typ, id string, from, to int64) ([]VersionInfo, error) {
	rows, err := b.R.QueryContext(ctx, b.D.Q(`SELECT version, kind, actor, changed, at_us, change_bytes FROM resource_versions WHERE type = ? AND id = ? AND version >= ? AND version <= ? ORDER BY version`), typ, id, from, to)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []VersionInfo
	for rows.Next() {
		var v VersionInfo
		var changed string
		var us int64
		if err := rows.Scan(&v.Version, &v.Kind, &v.Actor, &changed, &us, &v.Bytes); err != nil {
			return nil, err
		}
		_ = json.Unmarshal([]byte(changed), &v.Changed)
		v.At = time.UnixMicro(us).UTC()
		out = append(out, v)
	}
	return out, rows.Err()
}

func (b *Base) VersionDoc(ctx context.Context, typ, id string, version int64) (json.RawMessage, error) {
	// A version that left the document as it was stores "": the document
	// is the one of the newest version at or before it that stored one.
	var doc sql.NullString
	err := b.R.QueryRowContext(ctx, b.D.Q(`SELECT (SELECT h.doc FROM resource_versions h WHERE h.type = v.type AND h.id = v.id AND h.version <= v.version AND h.doc <> '' ORDER BY h.version DESC LIMIT 1)
		FROM resource_versions v WHERE v.type = ? AND v.id = ? AND v.version = ?`), typ, id, version).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err == nil && !doc.Valid {
		return nil, fmt.Errorf("%s %s version %d: no document in history", typ, id, version)
	}
	return json.RawMessage(doc.String), err
}

func (b *Base) Parts(ctx context.Context, typ, id string, after int64) (Resource, []parts.Part, error) {
	// One snapshot: the head and the parts it names must be of one version.
	tx, err := b.R.BeginTx(ctx, &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead})
	if err != nil {
		return Resource{}, nil, err
	}
	defer tx.Rollback()
	r := Resource{Type: typ, ID: id}
	var approved int
	var doc string
	var us int64
	err = tx.QueryRowContext(ctx, b.D.Q(`SELECT workspace_id, owner_id, title, approved, version, doc, updated_us FROM resources WHERE type = ? AND id = ?`), typ, id).
		Scan(&r.Workspace, &r.Owner, &r.Title, &approved, &r.Version, &doc, &us)
	if errors.Is(err, sql.ErrNoRows) {
		return Resource{}, nil, ErrNotFound
	}
	if err != nil {
		return Resource{}, nil, err
	}
	r.Approved, r.Doc, r.UpdatedAt = approved != 0, json.RawMessage(doc), time.UnixMicro(us).UTC()
	var ps []parts.Part
	if after < r.Version {
		if ps, err = readParts(ctx, tx, b.D, typ, id, after); err != nil {
			return Resource{}, nil, err
		}
	}
	return r, ps, tx.Commit()
}

func (b *Base) StoreParts(ctx context.Context, typ, id string, version int64, doc []byte, ws []parts.Write) (done bool, err error) {
	err = b.Tx(ctx, func(q Querier) error {
		done = false
		res, err := q.ExecContext(ctx, b.D.Q(`UPDATE resources SET doc = ? WHERE type = ? AND id = ? AND version = ?`), string(doc), typ, id, version)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		if _, err := q.ExecContext(ctx, b.D.Q(`UPDATE resource_versions SET doc = ? WHERE type = ? AND id = ? AND version = ?`), string(doc), typ, id, version); err != nil {
			return err
		}
		for _, p := range ws {
			if err := writePart(ctx, q, b.D, typ, id, version, p); err != nil {
				return err
			}
		}
		done = true
		return nil
	})
	return done, err
}

func (b *Base) VersionParts(ctx context.Context, typ, id string, version int64) ([]parts.Part, error) {
	return versionParts(ctx, b.R, b.D, typ, id, version, nil)
}

func (b *Base) VersionPartsOf(ctx context.Context, typ, id string, version int64, keys []string) ([]parts.Part, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	return versionParts(ctx, b.R, b.D, typ, id, version, keys)
}

func (b *Base) PartKeys(ctx context.Context, typ, id string, from, to int64) ([]string, error) {
	rows, err := b.R.QueryContext(ctx, b.D.Q(`SELECT DISTINCT key FROM part_versions WHERE type = ? AND id = ? AND version >= ? AND version <= ? ORDER BY key`), typ, id, from, to)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// versionParts rebuilds the parts of (typ, id) as they were at version:
// every part when keys is nil, else only those keys.
func versionParts(ctx context.Context, q Querier, d Dialect, typ, id string, version int64, keys []string) ([]parts.Part, error) {
	// Each part: its newest snapshot at or before version, then the
	// splices after it up to version (a chain bounded by the writer).
	only, join, args := "", `JOIN part_versions p ON`, []any{typ, id, version}
	if keys != nil {
		// A few keys: look each one's chain up from snap (SQLite would
		// otherwise scan every part's history and probe snap).
		only, join = ` AND key IN (`+d.jsonStrings()+`)`, `CROSS JOIN part_versions p WHERE`
		args = append(args, jsonList(keys))
	}
	args = append(args, typ, id, version)
	rows, err := q.QueryContext(ctx, d.Q(`WITH snap AS (SELECT key, MAX(version) AS since FROM part_versions
			WHERE type = ? AND id = ? AND version <= ? AND snapshot = 1`+only+` GROUP BY key)
		SELECT p.key, p.snapshot, p.data FROM snap `+join+` p.type = ? AND p.id = ? AND p.key = snap.key AND p.version >= snap.since AND p.version <= ?
		ORDER BY p.key, p.version`), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []parts.Part
	var key string
	// A chain is replayed in two buffers, data and spare, taking turns.
	var data, spare []byte
	have := false
	flush := func() {
		if have {
			out = append(out, parts.Part{Key: key, Data: data})
			data = nil
		}
	}
	for rows.Next() {
		var k string
		var full int
		var d sql.RawBytes // valid until the next row: copied or applied at once
		if err := rows.Scan(&k, &full, &d); err != nil {
			return nil, err
		}
		if k != key {
			flush()
			key, have = k, false
		}
		switch {
		case full != 0:
			have = d != nil
			if have {
				data = append(data[:0], d...)
			}
		case have:
			next, err := parts.ApplyTo(spare, data, d)
			if err != nil {
				return nil, fmt.Errorf("%s %s part %s: %w", typ, id, k, err)
			}
			data, spare = next, data
		}
	}
	flush()
	return out, rows.Err()
}

func (b *Base) GetObject(ctx context.Context, kind, id string) (Object, error) {
	return getObject(ctx, b.R, b.D, kind, id)
}

func getObject(ctx context.Context, q Querier, d Dialect, kind, id string) (Object, error) {
	o := Object{Kind: kind, ID: id}
	var doc string
	var us int64
	err := q.QueryRowContext(ctx, d.Q(`SELECT workspace_id, parent_id, doc, created_us FROM objects WHERE kind = ? AND id = ?`), kind, id).
		Scan(&o.Workspace, &o.Parent, &doc, &us)
	if errors.Is(err, sql.ErrNoRows) {
		return Object{}, ErrNotFound
	}
	if err != nil {
		return Object{}, err
	}
	o.Doc, o.CreatedAt = json.RawMessage(doc), time.UnixMicro(us).UTC()
	return o, nil
}

func (b *Base) ListObjects(ctx context.Context, q ObjectQuery) ([]Object, error) {
	query := `SELECT id, parent_id, doc, created_us FROM objects WHERE workspace_id = ? AND kind = ? AND id > ?`
	args := []any{q.Workspace, q.Kind, q.AfterID}
	if q.Parent != "" {
		query += ` AND parent_id = ?`
		args = append(args, q.Parent)
	}
	query += ` ORDER BY id LIMIT ?`
	args = append(args, q.Limit)
	rows, err := b.R.QueryContext(ctx, b.D.Q(query), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Object
	for rows.Next() {
		o := Object{Workspace: q.Workspace, Kind: q.Kind}
		var doc string
		var us int64
		if err := rows.Scan(&o.ID, &o.Parent, &doc, &us); err != nil {
			return nil, err
		}
		o.Doc, o.CreatedAt = json.RawMessage(doc), time.UnixMicro(us).UTC()
		out = append(out, o)
	}
	return out, rows.Err()
}

func (b *Base) Events(ctx context.Context, workspace, typ, id string, after int64, limit int) ([]Event, error) {
	st, err := b.hot(ctx, `SELECT cursor, kind, version, at_us FROM events WHERE resource_type = ? AND resource_id = ? AND workspace_id = ? AND cursor > ? ORDER BY cursor LIMIT ?`)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, typ, id, workspace, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		e := Event{Workspace: workspace, Type: typ, ID: id}
		var us int64
		if err := rows.Scan(&e.Cursor, &e.Kind, &e.Version, &us); err != nil {
			return nil, err
		}
		e.At = time.UnixMicro(us).UTC()
		out = append(out, e)
	}
	return out, rows.Err()
}

func (b *Base) LastCursor(ctx context.Context, workspace, typ, id string) (int64, error) {
	st, err := b.hot(ctx, `SELECT COALESCE(MAX(cursor), 0) FROM events WHERE resource_type = ? AND resource_id = ? AND workspace_id = ?`)
	if err != nil {
		return 0, err
	}
	var c int64
	err = st.QueryRowContext(ctx, typ, id, workspace).Scan(&c)
	return c, err
}

func (b *Base) Wait(typ, id string) (<-chan struct{}, func()) { return b.Hub.Wait(typ, id) }

func (b *Base) OnChange(fn func(typ, id string)) func() {
	return b.Hub.OnNotify(func(typ, id string) {
		if typ == TypeNote || typ == TypeRoom { // repositories are not watched
			fn(typ, id)
		}
	})
}

func (b *Base) CreateWorkspace(ctx context.Context, w Workspace, owner User) error {
	return b.Tx(ctx, func(q Querier) error {
		if _, err := q.ExecContext(ctx, b.D.Q(`INSERT INTO workspaces (id, name, created_us) VALUES (?, ?, ?)`), w.ID, w.Name, w.CreatedAt.UnixMicro()); err != nil {
			return err
		}
		_, err := q.ExecContext(ctx, b.D.Q(`INSERT INTO users (id, workspace_id, email, name, password_hash, role, created_us) VALUES (?, ?, ?, ?, ?, ?, ?)`),
			owner.ID, w.ID, owner.Email, owner.Name, owner.PasswordHash, owner.Role, owner.CreatedAt.UnixMicro())
		return err
	})
}

func (b *Base) CreateFirstWorkspace(ctx context.Context, w Workspace, owner User) (created bool, err error) {
	err = b.Tx(ctx, func(q Querier) error {
		created = false
		for _, stmt := range b.D.BootstrapLock {
			if _, err := q.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		var n int
		if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM workspaces`).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		if _, err := q.ExecContext(ctx, b.D.Q(`INSERT INTO workspaces (id, name, created_us) VALUES (?, ?, ?)`), w.ID, w.Name, w.CreatedAt.UnixMicro()); err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, b.D.Q(`INSERT INTO users (id, workspace_id, email, name, password_hash, role, created_us) VALUES (?, ?, ?, ?, ?, ?, ?)`),
			owner.ID, w.ID, owner.Email, owner.Name, owner.PasswordHash, owner.Role, owner.CreatedAt.UnixMicro()); err != nil {
			return err
		}
		created = true
		return nil
	})
	return created, err
}

func (b *Base) Workspaces(ctx context.Context) ([]Workspace, error) {
	rows, err := b.R.QueryContext(ctx, `SELECT id, name, created_us FROM workspaces ORDER BY created_us, id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Workspace
	for rows.Next() {
		var w Workspace
		var us int64
		if err := rows.Scan(&w.ID, &w.Name, &us); err != nil {
			return nil, err
		}
		w.CreatedAt = time.UnixMicro(us).UTC()
		out = append(out, w)
	}
	return out, rows.Err()
}

func (b *Base) Users(ctx context.Context, workspace string) ([]User, error) {
	rows, err := b.R.QueryContext(ctx, b.D.Q(`SELECT id, email, name, password_hash, role, created_us FROM users WHERE workspace_id = ? ORDER BY created_us, id`), workspace)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []User
	for rows.Next() {
		u := User{Workspace: workspace}
		var us int64
		if err := rows.Scan(&u.ID, &u.Email, &u.Name, &u.PasswordHash, &u.Role, &us); err != nil {
			return nil, err
		}
		u.CreatedAt = time.UnixMicro(us).UTC()
		out = append(out, u)
	}
	return out, rows.Err()
}

func (b *Base) CreateToken(ctx context.Context, t Token) error {
	return b.Tx(ctx, func(q Querier) error {
		_, err := q.ExecContext(ctx, b.D.Q(`INSERT INTO tokens (id, workspace_id, user_id, name, hash, scopes, notes_grant, rooms_grant, created_us) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
			t.ID, t.Workspace, t.User, t.Name, t.Hash, strings.Join(t.Scopes, " "), grantText(t.Notes), grantText(t.Rooms), t.CreatedAt.UnixMicro())
		return err
	})
}

const tokenCols = `id, workspace_id, user_id, name, hash, scopes, notes_grant, rooms_grant, created_us, revoked_us, last_used_us`

func scanToken(sc interface{ Scan(...any) error }) (Token, error) {
	var t Token
	var scopes string
	var notes, rooms sql.NullString
	var created int64
	var revoked, used sql.NullInt64
	if err := sc.Scan(&t.ID, &t.Workspace, &t.User, &t.Name, &t.Hash, &scopes, &notes, &rooms, &created, &revoked, &used); err != nil {
		return Token{}, err
	}
	t.Scopes = strings.Fields(scopes)
	t.Notes, t.Rooms = grantList(notes), grantList(rooms)
	t.CreatedAt = time.UnixMicro(created).UTC()
	if revoked.Valid {
		at := time.UnixMicro(revoked.Int64).UTC()
		t.RevokedAt = &at
	}
	if used.Valid {
		at := time.UnixMicro(used.Int64).UTC()
		t.LastUsed = &at
	}
	return t, nil
}

func (b *Base) TokenByHash(ctx context.Context, hash string) (Token, error) {
	st, err := b.hot(ctx, `SELECT `+tokenCols+` FROM tokens WHERE hash = ?`)
	if err != nil {
		return Token{}, err
	}
	t, err := scanToken(st.QueryRowContext(ctx, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return Token{}, ErrNotFound
	}
	return t, err
}

func (b *Base) Tokens(ctx context.Context, workspace string) ([]Token, error) {
	return queryAll(ctx, b.R, b.D.Q(`SELECT `+tokenCols+` FROM tokens WHERE workspace_id = ? ORDER BY created_us, id`), scanToken, workspace)
}

func (b *Base) RevokeToken(ctx context.Context, workspace, id string) error {
	return b.Tx(ctx, func(q Querier) error {
		res, err := q.ExecContext(ctx, b.D.Q(`UPDATE tokens SET revoked_us = ? WHERE workspace_id = ? AND id = ? AND revoked_us IS NULL`), time.Now().UnixMicro(), workspace, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}

// grantText stores nil (everything) as NULL and a list as JSON.
func grantText(ids []string) any {
	if ids == nil {
		return nil
	}
	b, _ := json.Marshal(ids)
	return string(b)
}

func grantList(s sql.NullString) []string {
	if !s.Valid {
		return nil
	}
	ids := []string{}
	_ = json.Unmarshal([]byte(s.String), &ids)
	return ids
}
