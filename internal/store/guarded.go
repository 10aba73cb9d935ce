package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"foundry/internal/parts"
)

// Guarded runs one guarded write inside a transaction the caller owns (a
// savepoint of a group commit on SQLite, a transaction on PostgreSQL). The
// order is the write contract (SPEC §2):
//
//  1. lock and load the resource (PostgreSQL: SELECT … FOR UPDATE, so two
//     calls with the same key on two nodes serialize here), or take
//     m.Create's template (CreateIfMissing: only when there is no row);
//  2. idempotency key first: a committed (scope, key) returns its first
//     result, whatever the version says now; another fingerprint is refused
//     (the scope is the resource, and m.KeyScope within it);
//  3. version compare-and-swap: a stale expected version writes nothing;
//  4. apply the pure edit (Apply, or ApplyTx, which may read other rows
//     inside this transaction);
//  5. bump the version by 1, store the result under the key, keep the
//     version in history, append an event.
//
// The caller commits and then publishes the returned event. On error the
// caller rolls back whatever this function wrote.
func Guarded(ctx context.Context, q Querier, d Dialect, m Mutation, now time.Time) (Outcome, *Event, error) {
	cur, creating, key, err := loadForWrite(ctx, q, d, m)
	if err != nil {
		return Outcome{}, nil, err
	}
	if m.Access != nil && !creating {
		if err := m.Access(&cur); err != nil {
			return Outcome{}, nil, err
		}
	}

	if key.found {
		if key.fingerprint != m.Fingerprint {
			return Outcome{}, nil, &KeyReusedError{Key: m.Key}
		}
		out := Outcome{Result: json.RawMessage(key.result), Version: key.version, Replayed: true}
		err := q.QueryRowContext(ctx, d.Q(`SELECT cursor FROM events WHERE resource_type = ? AND resource_id = ? AND version = ?`), m.Type, m.ID, key.version).Scan(&out.Cursor)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return Outcome{}, nil, err
		}
		return out, nil, nil
	}

	if m.ExpectedVersion != 0 && m.ExpectedVersion != cur.Version {
		changed, err := changedSince(ctx, q, d, m.Type, m.ID, m.ExpectedVersion)
		if err != nil {
			return Outcome{}, nil, err
		}
		return Outcome{}, nil, &ConflictError{Current: cur.Version, Changed: changed}
	}

	var ch *Change
	if m.ApplyTx != nil {
		ch, err = m.ApplyTx(&cur, txReader{ctx: ctx, q: q, d: d, typ: m.Type, id: m.ID})
	} else {
		ch, err = m.Apply(&cur)
	}
	if err != nil {
		return Outcome{}, nil, err
	}
	if ch == nil {
		return Outcome{}, nil, fmt.Errorf("guarded write on %s %s: apply returned no change", m.Type, m.ID)
	}
	if ch.Unchanged && !creating {
		if err := recordKey(ctx, q, d, m, ch.Result, cur.Version, now); err != nil {
			return Outcome{}, nil, err
		}
		return Outcome{Result: ch.Result, Version: cur.Version}, nil, nil
	}
	if ch.Doc != nil {
		cur.Doc = ch.Doc
	}
	if ch.Title != nil {
		cur.Title = *ch.Title
	}
	if ch.Approved != nil {
		cur.Approved = *ch.Approved
	}
	if !creating {
		cur.Version++
	}
	us := now.UnixMicro()
	if creating {
		_, err = q.ExecContext(ctx, d.Q(`INSERT INTO resources (type, id, workspace_id, owner_id, title, approved, version, doc, updated_us) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
			cur.Type, cur.ID, cur.Workspace, cur.Owner, cur.Title, boolInt(cur.Approved), cur.Version, string(cur.Doc), us)
	} else if ch.Doc == nil {
		// The document stays: not sent again, so neither database rewrites
		// it (PostgreSQL would store a TOASTed document anew).
		_, err = q.ExecContext(ctx, d.Q(`UPDATE resources SET title = ?, approved = ?, version = ?, updated_us = ? WHERE type = ? AND id = ?`),
			cur.Title, boolInt(cur.Approved), cur.Version, us, cur.Type, cur.ID)
	} else {
		_, err = q.ExecContext(ctx, d.Q(`UPDATE resources SET title = ?, approved = ?, version = ?, doc = ?, updated_us = ? WHERE type = ? AND id = ?`),
			cur.Title, boolInt(cur.Approved), cur.Version, string(cur.Doc), us, cur.Type, cur.ID)
	}
	if err != nil {
		return Outcome{}, nil, fmt.Errorf("write resource: %w", err)
	}
	// History keeps the document only at versions that changed it ("" says
	// "as before"), and each changed part as its write says.
	histDoc := ""
	if creating || ch.Doc != nil {
		histDoc = string(cur.Doc)
	}
	size := int64(len(histDoc))
	for _, p := range ch.Parts {
		if err := writePart(ctx, q, d, cur.Type, cur.ID, cur.Version, p); err != nil {
			return Outcome{}, nil, err
		}
		size += int64(len(p.Hist))
	}
	changed, _ := json.Marshal(nonNil(ch.Changed))
	if _, err := q.ExecContext(ctx, d.Q(`INSERT INTO resource_versions (type, id, version, kind, actor, changed, doc, at_us, change_bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		cur.Type, cur.ID, cur.Version, ch.Kind, m.Actor, string(changed), histDoc, us, size); err != nil {
		return Outcome{}, nil, fmt.Errorf("write history: %w", err)
	}
	for _, o := range ch.Objects {
		if err := putObject(ctx, q, d, o, now); err != nil {
			return Outcome{}, nil, err
		}
	}
	for _, o := range ch.DropObjects {
		if _, err := q.ExecContext(ctx, d.Q(`DELETE FROM objects WHERE kind = ? AND id = ? AND workspace_id = ?`), o.Kind, o.ID, cur.Workspace); err != nil {
			return Outcome{}, nil, fmt.Errorf("delete %s: %w", o.Kind, err)
		}
	}
	if len(ch.Search) > 0 || ch.SearchReset {
		if err := writeSearch(ctx, q, d, cur.Workspace, cur.ID, ch.Search, ch.SearchReset); err != nil {
			return Outcome{}, nil, err
		}
	}
	if err := markBlobs(ctx, q, d, cur.Workspace, ch.Blobs, ch.NamedBlobs); err != nil {
		return Outcome{}, nil, err
	}
	if err := recordKey(ctx, q, d, m, ch.Result, cur.Version, now); err != nil {
		return Outcome{}, nil, err
	}
	ev := &Event{Workspace: cur.Workspace, Type: cur.Type, ID: cur.ID, Kind: ch.Kind, Version: cur.Version, At: now.UTC()}
	if err := appendEvent(ctx, q, d, ev); err != nil {
		return Outcome{}, nil, err
	}
	return Outcome{Result: ch.Result, Version: cur.Version, Cursor: ev.Cursor}, ev, nil
}

// scopeType is the idempotency_keys.scope_type of m's key: the resource type,
// or "<type>/<KeyScope>" for a separate scope. Agents' doors never set
// KeyScope, so no key they choose can land in a separate scope.
func (m Mutation) scopeType() string {
	if m.KeyScope != "" {
		return m.Type + "/" + m.KeyScope
	}
	return m.Type
}

func recordKey(ctx context.Context, q Querier, d Dialect, m Mutation, result json.RawMessage, version int64, now time.Time) error {
	if m.Key == "" {
		return nil
	}
	if _, err := q.ExecContext(ctx, d.Q(`INSERT INTO idempotency_keys (scope_type, scope_id, key, fingerprint, result, version, created_us) VALUES (?, ?, ?, ?, ?, ?, ?)`),
		m.scopeType(), m.ID, m.Key, m.Fingerprint, string(result), version, now.UnixMicro()); err != nil {
		return fmt.Errorf("write key: %w", err)
	}
	return nil
}

// storedKey is the committed use of a Mutation's idempotency key, if any.
type storedKey struct {
	found       bool
	fingerprint string
	result      string
	version     int64
}

// lookupKey reads m's committed key. It runs after loadForWrite's lock, so
// a key committed by the write that held the lock is seen.
func lookupKey(ctx context.Context, q Querier, d Dialect, m Mutation) (storedKey, error) {
	if m.Key == "" {
		return storedKey{}, nil
	}
	k := storedKey{found: true}
	err := q.QueryRowContext(ctx, d.Q(`SELECT fingerprint, result, version FROM idempotency_keys WHERE scope_type = ? AND scope_id = ? AND key = ?`),
		m.scopeType(), m.ID, m.Key).Scan(&k.fingerprint, &k.result, &k.version)
	if errors.Is(err, sql.ErrNoRows) {
		return storedKey{}, nil
	}
	return k, err
}

// loadForWrite locks and loads the resource, or returns m.Create's template
// at version 1 (creating = true), and looks m's key up.
//
// The locking read is issued, but not read, before the key lookup: a
// Querier that pipelines (PostgreSQL's) sends both in one round trip, in
// that order, and the server runs the lookup (with its own snapshot) only
// once the lock is granted. Elsewhere the two simply run one after the
// other.
func loadForWrite(ctx context.Context, q Querier, d Dialect, m Mutation) (r Resource, creating bool, key storedKey, err error) {
	create := func() (Resource, bool, storedKey, error) {
		r := *m.Create
		r.Type, r.ID, r.Workspace, r.Version = m.Type, m.ID, m.Workspace, 1
		return r, true, key, nil
	}
	var lock *sql.Row
	if m.Create == nil || m.CreateIfMissing {
		lock = q.QueryRowContext(ctx, d.Q(`SELECT workspace_id, owner_id, title, approved, version, doc, updated_us FROM resources WHERE type = ? AND id = ?`+d.ForUpdate),
			m.Type, m.ID)
	}
	key, keyErr := lookupKey(ctx, q, d, m)
	if lock == nil {
		if keyErr != nil {
			return Resource{}, false, storedKey{}, keyErr
		}
		return create()
	}
	r = Resource{Type: m.Type, ID: m.ID}
	var approved int
	var doc string
	var us int64
	lockErr := lock.Scan(&r.Workspace, &r.Owner, &r.Title, &approved, &r.Version, &doc, &us)
	missing := errors.Is(lockErr, sql.ErrNoRows)
	switch {
	case lockErr != nil && !missing:
		return Resource{}, false, storedKey{}, lockErr // the lookup failed with it, or did not run
	case keyErr != nil:
		return Resource{}, false, storedKey{}, keyErr
	case missing && m.Create != nil:
		// A concurrent create of the same ID blocks on the primary key when
		// it inserts, and fails once this one commits (PostgreSQL retries
		// it, and the retry finds and locks this row).
		return create()
	case missing || r.Workspace != m.Workspace:
		return Resource{}, false, storedKey{}, ErrNotFound // another workspace's row is not found, never forbidden
	}
	r.Approved, r.Doc, r.UpdatedAt = approved != 0, json.RawMessage(doc), time.UnixMicro(us).UTC()
	return r, false, key, nil
}

// txReader is the TxReader of one guarded write.
type txReader struct {
	ctx     context.Context
	q       Querier
	d       Dialect
	typ, id string
}

func (t txReader) GetObject(kind, id string) (Object, error) {
	return getObject(t.ctx, t.q, t.d, kind, id)
}

func (t txReader) Parts(after int64) ([]parts.Part, error) {
	return readParts(t.ctx, t.q, t.d, t.typ, t.id, after)
}

func (t txReader) VersionParts(version int64, keys []string) ([]parts.Part, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	return versionParts(t.ctx, t.q, t.d, t.typ, t.id, version, keys)
}

// writePart stores one part at version and what history keeps of it.
func writePart(ctx context.Context, q Querier, d Dialect, typ, id string, version int64, p parts.Write) error {
	data, hist := nullText(p.Data), nullText(p.Hist)
	if p.Data == nil {
		hist = nil // a part gone is a snapshot of nothing
	}
	if _, err := q.ExecContext(ctx, d.Q(`INSERT INTO resource_parts (type, id, key, version, data, chain_len, chain_bytes) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (type, id, key) DO UPDATE SET version = excluded.version, data = excluded.data, chain_len = excluded.chain_len, chain_bytes = excluded.chain_bytes`),
		typ, id, p.Key, version, data, p.ChainLen, p.ChainBytes); err != nil {
		return fmt.Errorf("write part %s: %w", p.Key, err)
	}
	if _, err := q.ExecContext(ctx, d.Q(`INSERT INTO part_versions (type, id, key, version, snapshot, data) VALUES (?, ?, ?, ?, ?, ?)`),
		typ, id, p.Key, version, boolInt(p.Full || p.Data == nil), hist); err != nil {
		return fmt.Errorf("write part history %s: %w", p.Key, err)
	}
	return nil
}

// nullText is b as a TEXT value, nil as NULL.
func nullText(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

// readParts reads the parts of (typ, id) last written after version after.
func readParts(ctx context.Context, q Querier, d Dialect, typ, id string, after int64) ([]parts.Part, error) {
	rows, err := q.QueryContext(ctx, d.Q(`SELECT key, data, chain_len, chain_bytes FROM resource_parts WHERE type = ? AND id = ? AND version > ?`), typ, id, after)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []parts.Part
	for rows.Next() {
		var p parts.Part
		var data sql.NullString
		if err := rows.Scan(&p.Key, &data, &p.ChainLen, &p.ChainBytes); err != nil {
			return nil, err
		}
		if data.Valid {
			p.Data = []byte(data.String)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// changedSince unions the sub-IDs touched by every version after v, in
// the order they were first touched. Most versions of a long run repeat
// the same list (a person typing in one tab), so each distinct list is
// read once.
func changedSince(ctx context.Context, q Querier, d Dialect, typ, id string, v int64) ([]string, error) {
	rows, err := q.QueryContext(ctx, d.Q(`SELECT changed FROM resource_versions WHERE type = ? AND id = ? AND version > ? GROUP BY changed ORDER BY MIN(version)`), typ, id, v)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	seen := map[string]bool{}
	out := []string{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		var ids []string
		_ = json.Unmarshal([]byte(s), &ids)
		for _, x := range ids {
			if !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
		}
	}
	return out, rows.Err()
}

func appendEvent(ctx context.Context, q Querier, d Dialect, ev *Event) error {
	err := q.QueryRowContext(ctx, d.Q(`INSERT INTO events (workspace_id, resource_type, resource_id, kind, version, at_us) VALUES (?, ?, ?, ?, ?, ?) RETURNING cursor`),
		ev.Workspace, ev.Type, ev.ID, ev.Kind, ev.Version, ev.At.UnixMicro()).Scan(&ev.Cursor)
	if err != nil {
		return fmt.Errorf("append event: %w", err)
	}
	return nil
}

func putObject(ctx context.Context, q Querier, d Dialect, o Object, now time.Time) error {
	if o.CreatedAt.IsZero() {
		o.CreatedAt = now
	}
	_, err := q.ExecContext(ctx, d.Q(`INSERT INTO objects (kind, id, workspace_id, parent_id, doc, created_us) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (kind, id) DO UPDATE SET doc = excluded.doc`),
		o.Kind, o.ID, o.Workspace, o.Parent, string(o.Doc), o.CreatedAt.UnixMicro())
	if err != nil {
		return fmt.Errorf("write %s: %w", o.Kind, err)
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
