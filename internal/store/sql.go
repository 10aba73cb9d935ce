package store

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
)

// Querier is what the shared SQL needs: *sql.DB, *sql.Tx and *sql.Conn all fit.
type Querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Dialect holds the few differences between SQLite and PostgreSQL that the
// shared SQL has to know about. Queries are written with ? placeholders.
type Dialect struct {
	Name      string // "sqlite" or "postgres"
	dollar    bool   // rewrite ? to $1, $2, …
	ForUpdate string // row lock suffix for the guarded read
	// BootstrapLock is run first in CreateFirstWorkspace's transaction, so
	// nodes starting together create one workspace between them (the wait
	// is unbounded: another node may be migrating). SQLite needs none: its
	// single writer serializes every write.
	BootstrapLock []string
	// docName extracts the JSON string "name" from the text column doc.
	docName string
	// titleIndex is the migration that indexes resources.title for title
	// queries (see titlematch.go). PostgreSQL has none: its index needs
	// pg_trgm, which a database may refuse, so each start tries to make it
	// (postgres.ensureTitleIndex) and queries work the same without it.
	titleIndex string
	// blobTables is the migration that makes the tables of file bytes
	// (see Blobs): PostgreSQL keeps them in rows; SQLite keeps them as files
	// in the data folder and needs none.
	blobTables string
	// searchTables is the migration that makes the full-text index
	// (search.go).
	searchTables string
	// nowUS is the time of the statement in microseconds since the epoch.
	nowUS string
}

// MigrationLock is the PostgreSQL advisory lock key that whole migrations
// and first-start bootstrap run under.
const MigrationLock = 7204302

var (
	SQLite = Dialect{Name: "sqlite", docName: `json_extract(doc, '$.name')`, titleIndex: sqliteTitleIndex, blobTables: `SELECT 1`, searchTables: sqliteSearchTables,
		nowUS: `CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER)`}
	Postgres = Dialect{Name: "postgres", dollar: true, ForUpdate: " FOR UPDATE",
		BootstrapLock: []string{`SET LOCAL lock_timeout = 0`, `SET LOCAL statement_timeout = 0`,
			`SELECT pg_advisory_xact_lock(` + strconv.Itoa(MigrationLock) + `)`},
		docName: `(doc::json ->> 'name')`, blobTables: postgresBlobTables, searchTables: postgresSearchTables,
		nowUS: `CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)`}
)

// Q adapts a query written with ? placeholders to the dialect.
func (d Dialect) Q(q string) string {
	if !d.dollar {
		return q
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// jsonStrings is a subquery of the strings of one parameter, a JSON array
// of strings: a list of any length bound as one value.
func (d Dialect) jsonStrings() string {
	if d.Name == "postgres" {
		return `SELECT jsonb_array_elements_text(?::jsonb)`
	}
	return `SELECT value FROM json_each(?)`
}

// migrations are applied in order, each once; {{serial}}, {{doc_name}} and
// {{without_rowid}} (and {{now_us}}, {{title_index}}, {{blob_tables}}, {{search_tables}}) are the only words that differ between the two databases.
var migrations = []string{
	`CREATE TABLE workspaces (
		id TEXT PRIMARY KEY,
		name TEXT NOT NULL,
		created_us BIGINT NOT NULL
	);
	CREATE TABLE users (
		id TEXT PRIMARY KEY,
		workspace_id TEXT NOT NULL REFERENCES workspaces(id),
		email TEXT NOT NULL UNIQUE,
		name TEXT NOT NULL,
		password_hash TEXT NOT NULL DEFAULT '',
		role TEXT NOT NULL,
		created_us BIGINT NOT NULL
	);
	CREATE TABLE tokens (
		id TEXT PRIMARY KEY,
		workspace_id TEXT NOT NULL REFERENCES workspaces(id),
		user_id TEXT NOT NULL REFERENCES users(id),
		name TEXT NOT NULL,
		hash TEXT NOT NULL UNIQUE,
		scopes TEXT NOT NULL,
		notes_grant TEXT,
		rooms_grant TEXT,
		created_us BIGINT NOT NULL,
		revoked_us BIGINT,
		last_used_us BIGINT
	);
	CREATE TABLE resources (
		type TEXT NOT NULL,
		id TEXT NOT NULL,
		workspace_id TEXT NOT NULL REFERENCES workspaces(id),
		owner_id TEXT NOT NULL,
		title TEXT NOT NULL,
		approved INTEGER NOT NULL DEFAULT 0,
		version BIGINT NOT NULL,
		doc TEXT NOT NULL,
		updated_us BIGINT NOT NULL,
		PRIMARY KEY (type, id)
	);
	CREATE INDEX resources_by_workspace ON resources (workspace_id, type, id);
	CREATE TABLE resource_versions (
		type TEXT NOT NULL,
		id TEXT NOT NULL,
		version BIGINT NOT NULL,
		kind TEXT NOT NULL,
		actor TEXT NOT NULL,
		changed TEXT NOT NULL,
		doc TEXT NOT NULL,
		at_us BIGINT NOT NULL,
		PRIMARY KEY (type, id, version)
	);
	CREATE TABLE idempotency_keys (
		scope_type TEXT NOT NULL,
		scope_id TEXT NOT NULL,
		key TEXT NOT NULL,
		fingerprint TEXT NOT NULL,
		result TEXT NOT NULL,
		version BIGINT NOT NULL,
		created_us BIGINT NOT NULL,
		PRIMARY KEY (scope_type, scope_id, key)
	);
	CREATE TABLE objects (
		kind TEXT NOT NULL,
		id TEXT NOT NULL,
		workspace_id TEXT NOT NULL REFERENCES workspaces(id),
		parent_id TEXT NOT NULL,
		doc TEXT NOT NULL,
		created_us BIGINT NOT NULL,
		PRIMARY KEY (kind, id)
	);
	CREATE INDEX objects_by_parent ON objects (workspace_id, kind, parent_id, id);
	CREATE TABLE events (
		cursor {{serial}},
		workspace_id TEXT NOT NULL,
		resource_type TEXT NOT NULL,
		resource_id TEXT NOT NULL,
		kind TEXT NOT NULL,
		version BIGINT NOT NULL,
		at_us BIGINT NOT NULL
	);
	CREATE INDEX events_by_resource ON events (resource_type, resource_id, cursor);`,

	// Repositories become versioned resources: a push is a guarded write
	// like every other. Each one keeps its ID (Rooms refer to it), its
	// document becomes version 1; its versions' files stay objects.
	`INSERT INTO resources (type, id, workspace_id, owner_id, title, approved, version, doc, updated_us)
		SELECT 'repository', id, workspace_id, '', COALESCE({{doc_name}}, ''), 0, 1, doc, created_us FROM objects WHERE kind = 'repository';
	INSERT INTO resource_versions (type, id, version, kind, actor, changed, doc, at_us)
		SELECT 'repository', id, 1, 'repository_migrated', 'system', '[]', doc, created_us FROM objects WHERE kind = 'repository';
	DELETE FROM objects WHERE kind = 'repository'`,

	// Retention: the pruner finds old keys and events by age, and each
	// resource keeps the cursor of its newest pruned event, so a poll from
	// an older cursor is told that events may be gone (cursor_expired).
	// Idempotent, so running it again on a database that has it is harmless.
	`CREATE INDEX IF NOT EXISTS idempotency_keys_by_age ON idempotency_keys (created_us);
	CREATE INDEX IF NOT EXISTS events_by_age ON events (at_us);
	CREATE TABLE IF NOT EXISTS event_horizons (
		resource_type TEXT NOT NULL,
		resource_id TEXT NOT NULL,
		pruned_through BIGINT NOT NULL,
		PRIMARY KEY (resource_type, resource_id)
	)`,

	// Notes by parts: a resource keeps besides its document parts that are
	// written only when they change (resource_parts: the current bytes,
	// NULL once gone), and history keeps each part's changes as snapshots
	// and splices (part_versions) instead of a copy of the resource per
	// version. A version that left the document as it was stores '' as
	// its doc. Notes move to the new shape on start (see
	// service.UpgradeNotes); their old versions stay readable as they are.
	`CREATE TABLE IF NOT EXISTS resource_parts (
		type TEXT NOT NULL,
		id TEXT NOT NULL,
		key TEXT NOT NULL,
		version BIGINT NOT NULL,
		data TEXT,
		chain_len INTEGER NOT NULL DEFAULT 0,
		chain_bytes BIGINT NOT NULL DEFAULT 0,
		PRIMARY KEY (type, id, key)
	){{without_rowid}};
	CREATE INDEX IF NOT EXISTS resource_parts_by_version ON resource_parts (type, id, version);
	CREATE TABLE IF NOT EXISTS part_versions (
		type TEXT NOT NULL,
		id TEXT NOT NULL,
		key TEXT NOT NULL,
		version BIGINT NOT NULL,
		snapshot INTEGER NOT NULL,
		data TEXT,
		PRIMARY KEY (type, id, key, version)
	){{without_rowid}};
	ALTER TABLE resource_versions ADD COLUMN change_bytes BIGINT NOT NULL DEFAULT 0`,

	// Title queries use an index (SQLite: FTS5 trigrams, kept in step with
	// resources.title by triggers). Idempotent.
	`{{title_index}}`,

	// People and OAuth: browser sessions, OAuth clients, the connections
	// people grant them, and OAuth artefacts (codes, tokens, PKCE records,
	// one-time links), each stored under the hash of its secret. Secrets
	// every node must share (the OAuth HMAC key) live in server_secrets.
	`CREATE TABLE IF NOT EXISTS sessions (
		hash TEXT PRIMARY KEY,
		workspace_id TEXT NOT NULL,
		user_id TEXT NOT NULL,
		csrf TEXT NOT NULL,
		created_us BIGINT NOT NULL,
		expires_us BIGINT NOT NULL
	);
	CREATE INDEX IF NOT EXISTS sessions_by_user ON sessions (user_id);
	CREATE INDEX IF NOT EXISTS sessions_by_expiry ON sessions (expires_us);
	CREATE TABLE IF NOT EXISTS server_secrets (
		name TEXT PRIMARY KEY,
		value TEXT NOT NULL
	);
	CREATE TABLE IF NOT EXISTS oauth_clients (
		id TEXT PRIMARY KEY,
		secret_hash TEXT NOT NULL,
		name TEXT NOT NULL,
		redirect_uris TEXT NOT NULL,
		grant_types TEXT NOT NULL,
		scopes TEXT NOT NULL,
		kind TEXT NOT NULL,
		metadata TEXT NOT NULL,
		created_us BIGINT NOT NULL
	);
	CREATE TABLE IF NOT EXISTS connections (
		id TEXT PRIMARY KEY,
		workspace_id TEXT NOT NULL,
		user_id TEXT NOT NULL,
		client_id TEXT NOT NULL,
		scopes TEXT NOT NULL,
		notes_grant TEXT,
		rooms_grant TEXT,
		created_us BIGINT NOT NULL,
		last_used_us BIGINT,
		revoked_us BIGINT
	);
	CREATE UNIQUE INDEX IF NOT EXISTS connections_live ON connections (workspace_id, user_id, client_id) WHERE revoked_us IS NULL;
	CREATE INDEX IF NOT EXISTS connections_by_client ON connections (client_id);
	CREATE TABLE IF NOT EXISTS grants (
		kind TEXT NOT NULL,
		hash TEXT NOT NULL,
		request_id TEXT NOT NULL,
		client_id TEXT NOT NULL,
		connection_id TEXT NOT NULL,
		state TEXT NOT NULL,
		data TEXT NOT NULL,
		access_hash TEXT NOT NULL,
		created_us BIGINT NOT NULL,
		expires_us BIGINT NOT NULL,
		changed_us BIGINT NOT NULL,
		PRIMARY KEY (kind, hash)
	);
	CREATE INDEX IF NOT EXISTS grants_by_request ON grants (request_id);
	CREATE INDEX IF NOT EXISTS grants_by_connection ON grants (connection_id);
	CREATE INDEX IF NOT EXISTS grants_by_client ON grants (client_id);
	CREATE INDEX IF NOT EXISTS grants_by_expiry ON grants (expires_us)`,

	// File bytes (store.Blobs), per workspace by SHA-256. Idempotent.
	`{{blob_tables}}`,

	// What one version changed (PartKeys: a diff of a version) is read by
	// version, not by scanning every part's history. Idempotent.
	`CREATE INDEX IF NOT EXISTS part_versions_by_version ON part_versions (type, id, version, key)`,

	// Every blob is indexed with its workspace, size, when it was last put
	// and whether a version has referenced it (see blobindex.go), so the
	// collector finds the unreferenced ones and a workspace's storage is
	// counted. SQLite keeps the bytes as files and gets the table here;
	// PostgreSQL has it and gains the two columns. Blobs from before are
	// kept as referenced: nothing marked them, and history keeps a file's
	// hash whole only in some versions (a splice may cut it), so no look
	// can tell that none names them. Idempotent.
	`CREATE TABLE IF NOT EXISTS blobs (
		workspace_id TEXT NOT NULL,
		sha256 TEXT NOT NULL,
		size BIGINT NOT NULL,
		created_us BIGINT NOT NULL,
		PRIMARY KEY (workspace_id, sha256)
	);
	ALTER TABLE blobs ADD COLUMN put_us BIGINT NOT NULL DEFAULT 0;
	ALTER TABLE blobs ADD COLUMN referenced INTEGER NOT NULL DEFAULT 0;
	UPDATE blobs SET put_us = created_us, referenced = 1 WHERE put_us = 0;
	CREATE INDEX IF NOT EXISTS blobs_unreferenced ON blobs (referenced, put_us)`,

	// Failed sign-ins are counted in the store, so every node counts every
	// failure (see SignInCounter); a counter is forgotten once it expires.
	// Idempotent.
	`CREATE TABLE IF NOT EXISTS signin_failures (
		key TEXT PRIMARY KEY,
		failures BIGINT NOT NULL,
		first_us BIGINT NOT NULL,
		last_us BIGINT NOT NULL,
		expires_us BIGINT NOT NULL
	);
	CREATE INDEX IF NOT EXISTS signin_failures_by_expiry ON signin_failures (expires_us)`,

	// Deleted Notes go to a trash that keeps them 30 days from their
	// deletion mark's created_us (see service.PurgeTrash). Notes deleted
	// before the trash were kept for good: their 30 days start now, so an
	// upgrade removes nothing at once.
	`UPDATE objects SET created_us = {{now_us}} WHERE kind = 'note_deleted'`,
	`{{search_tables}}`,
}

// postgresBlobTables keeps each blob as rows of at most BlobChunk bytes
// (bytea), numbered from 0, and one row that says it is whole: a blob's
// rows are written in one transaction, the blobs row last.
const postgresBlobTables = `CREATE TABLE IF NOT EXISTS blobs (
		workspace_id TEXT NOT NULL,
		sha256 TEXT NOT NULL,
		size BIGINT NOT NULL,
		created_us BIGINT NOT NULL,
		PRIMARY KEY (workspace_id, sha256)
	);
	CREATE TABLE IF NOT EXISTS blob_chunks (
		workspace_id TEXT NOT NULL,
		sha256 TEXT NOT NULL,
		seq INTEGER NOT NULL,
		data BYTEA NOT NULL,
		PRIMARY KEY (workspace_id, sha256, seq)
	)`

// sqliteTitleIndex indexes every resource's title in the FTS5 table
// resource_titles (trigram tokenizer, so any substring of three or more
// characters is found by its trigrams). Its rowid is the rid of
// resource_title_keys, a plain table with an INTEGER PRIMARY KEY (stable
// under VACUUM, unlike the rowid of resources). Triggers on resources keep
// both in step in the writing transaction; an update that leaves the title
// as it was touches neither. Running it again rebuilds the index.
const sqliteTitleIndex = `CREATE TABLE IF NOT EXISTS resource_title_keys (
		rid INTEGER PRIMARY KEY,
		type TEXT NOT NULL,
		id TEXT NOT NULL,
		UNIQUE (type, id)
	);
	CREATE VIRTUAL TABLE IF NOT EXISTS resource_titles USING fts5(title, tokenize = 'trigram case_sensitive 0');
	DELETE FROM resource_title_keys WHERE NOT EXISTS (SELECT 1 FROM resources r WHERE r.type = resource_title_keys.type AND r.id = resource_title_keys.id);
	INSERT OR IGNORE INTO resource_title_keys (type, id) SELECT type, id FROM resources;
	DELETE FROM resource_titles;
	INSERT INTO resource_titles (rowid, title) SELECT k.rid, r.title FROM resource_title_keys k JOIN resources r ON r.type = k.type AND r.id = k.id;
	DROP TRIGGER IF EXISTS resource_titles_insert;
	DROP TRIGGER IF EXISTS resource_titles_update;
	DROP TRIGGER IF EXISTS resource_titles_delete;
	CREATE TRIGGER resource_titles_insert AFTER INSERT ON resources BEGIN
		INSERT OR IGNORE INTO resource_title_keys (type, id) VALUES (new.type, new.id);
		INSERT OR REPLACE INTO resource_titles (rowid, title) SELECT rid, new.title FROM resource_title_keys WHERE type = new.type AND id = new.id;
	END;
	CREATE TRIGGER resource_titles_update AFTER UPDATE OF type, id, title ON resources
		WHEN old.title IS NOT new.title OR old.type IS NOT new.type OR old.id IS NOT new.id BEGIN
		DELETE FROM resource_titles WHERE rowid = (SELECT rid FROM resource_title_keys WHERE type = old.type AND id = old.id);
		DELETE FROM resource_title_keys WHERE type = old.type AND id = old.id;
		INSERT OR IGNORE INTO resource_title_keys (type, id) VALUES (new.type, new.id);
		INSERT OR REPLACE INTO resource_titles (rowid, title) SELECT rid, new.title FROM resource_title_keys WHERE type = new.type AND id = new.id;
	END;
	CREATE TRIGGER resource_titles_delete AFTER DELETE ON resources BEGIN
		DELETE FROM resource_titles WHERE rowid = (SELECT rid FROM resource_title_keys WHERE type = old.type AND id = old.id);
		DELETE FROM resource_title_keys WHERE type = old.type AND id = old.id;
	END`

// Migrate applies every migration the database has not seen, in order, each
// in its own transaction.
func Migrate(ctx context.Context, db *sql.DB, d Dialect) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)`); err != nil {
		return err
	}
	var have int
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
		return err
	}
	serial, withoutRowid := "INTEGER PRIMARY KEY AUTOINCREMENT", " WITHOUT ROWID"
	if d.Name == "postgres" {
		serial, withoutRowid = "BIGSERIAL PRIMARY KEY", ""
	}
	for i := have; i < len(migrations); i++ {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if d.Name == "postgres" {
			// Two nodes starting at once must not both migrate.
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7204301)`); err != nil {
				tx.Rollback()
				return err
			}
			var again int
			if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&again); err != nil {
				tx.Rollback()
				return err
			}
			if again > i {
				tx.Rollback()
				continue
			}
		}
		stmt := strings.NewReplacer("{{serial}}", serial, "{{doc_name}}", d.docName, "{{without_rowid}}", withoutRowid, "{{title_index}}", d.titleIndex, "{{blob_tables}}", d.blobTables, "{{search_tables}}", d.searchTables, "{{now_us}}", d.nowUS).Replace(migrations[i])
		for _, s := range statements(stmt) {
			if have, err := columnExists(ctx, tx, d, s); err != nil || have {
				if err != nil {
					tx.Rollback()
					return err
				}
				continue
			}
			if _, err := tx.ExecContext(ctx, s); err != nil {
				tx.Rollback()
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, d.Q(`INSERT INTO schema_migrations (version) VALUES (?)`), i+1); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// columnExists reports whether stmt is an ALTER TABLE … ADD COLUMN of a
// column the table already has, so that every migration can run again on a
// database that has it.
func columnExists(ctx context.Context, tx *sql.Tx, d Dialect, stmt string) (bool, error) {
	f := strings.Fields(stmt)
	if len(f) < 6 || !strings.EqualFold(f[0], "ALTER") || !strings.EqualFold(f[3], "ADD") || !strings.EqualFold(f[4], "COLUMN") {
		return false, nil
	}
	table, column := f[2], f[5]
	q := `SELECT COUNT(*) FROM pragma_table_info(?) WHERE name = ?`
	if d.Name == "postgres" {
		q = `SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? AND column_name = ?`
	}
	var n int
	err := tx.QueryRowContext(ctx, d.Q(q), table, column).Scan(&n)
	return n > 0, err
}

// statements splits a migration at its semicolons, except those inside a
// CREATE TRIGGER … BEGIN … END, which is one statement up to its END.
func statements(script string) []string {
	var out []string
	trigger := ""
	for _, part := range strings.Split(script, ";") {
		t := strings.TrimSpace(part)
		switch {
		case trigger != "":
			trigger += ";" + part
			if strings.EqualFold(t, "END") {
				out = append(out, trigger)
				trigger = ""
			}
		case t == "":
		case len(t) >= 14 && strings.EqualFold(t[:14], "CREATE TRIGGER"):
			trigger = part
		default:
			out = append(out, part)
		}
	}
	if trigger != "" {
		out = append(out, trigger) // unterminated: let the database say so
	}
	return out
}
