package postgres

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"

	"github.com/jackc/pgx/v5"
)

// titleIndex is the trigram index that lets a title query (store.ListQuery
// Query, a case-blind regular expression on resources.title) read only the
// rows that can match.
const titleIndex = "resources_title_trgm"

// ensureTitleIndex makes titleIndex if it can. It needs the pg_trgm
// extension: one already installed is used wherever it lives; otherwise it
// is created (pg_trgm is a trusted extension: a role that may create in
// the database may install it), in the public schema when this role may
// create there, so that dropping one Foundry schema never takes another's
// index with it, else in the current schema. A managed database may refuse
// both: then title queries read every title of the workspace, answer the
// same, and the reason is logged once per start. Nothing here fails Open.
// It runs under the migration lock, so nodes starting together make the
// extension and the index once.
func ensureTitleIndex(ctx context.Context, conn *sql.Conn) {
	warn := func(what string, err error) {
		slog.Warn("postgres: no trigram index for title queries; list_notes with a query reads every title of the workspace (same answers, slower on many Notes)",
			"step", what, "cause", err)
	}
	schema, err := trgmSchema(ctx, conn)
	if errors.Is(err, sql.ErrNoRows) {
		create := `CREATE EXTENSION IF NOT EXISTS pg_trgm`
		var public bool
		if err := conn.QueryRowContext(ctx, `SELECT COALESCE(has_schema_privilege('public', 'CREATE'), false)`).Scan(&public); err == nil && public {
			create += ` SCHEMA public`
		}
		if _, err := conn.ExecContext(ctx, create); err != nil {
			warn("create extension pg_trgm", err)
			return
		}
		schema, err = trgmSchema(ctx, conn)
	}
	if err != nil {
		warn("find extension pg_trgm", err)
		return
	}
	// fastupdate off: new titles go into the index itself, not a pending
	// list that every query reads through until a vacuum merges it (10,000
	// fresh Notes made a rare query 15 times slower than none).
	if _, err := conn.ExecContext(ctx, `CREATE INDEX IF NOT EXISTS `+titleIndex+` ON resources USING gin (title `+pgx.Identifier{schema, "gin_trgm_ops"}.Sanitize()+`) WITH (fastupdate = off)`); err != nil {
		warn("create index "+titleIndex, err)
		return
	}
	if _, err := conn.ExecContext(ctx, `ALTER INDEX `+titleIndex+` SET (fastupdate = off)`); err != nil {
		warn("set fastupdate on "+titleIndex, err)
	}
}

// trgmSchema is the schema pg_trgm is installed in (sql.ErrNoRows: it is
// not installed).
func trgmSchema(ctx context.Context, conn *sql.Conn) (string, error) {
	var schema string
	err := conn.QueryRowContext(ctx, `SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'`).Scan(&schema)
	return schema, err
}
