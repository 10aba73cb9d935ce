package postgres

// A pipelined transaction sends a guarded write's statements in as few round
// trips as the write's data dependencies allow. The shared write code
// (store.Guarded) talks to database/sql; the pool's connections are pgx's
// stdlib connections, wrapped so that a transaction begun with a pipelining
// context (withPipeline) does not send each statement on its own:
//
//   - ExecContext only queues the statement and answers at once (the shared
//     code does not read the result; RowsAffected, if asked, sends the queue);
//   - QueryContext queues the query too; the first read of its rows sends
//     everything queued, in order, as one pgx batch (one round trip) and
//     keeps every result in memory;
//   - BEGIN goes out with the first batch and COMMIT with the last, so a
//     write that reads once, writes and commits costs three round trips.
//
// A statement that fails poisons the transaction, as it does on the server:
// its own error (the *pgconn.PgError, so a serialization failure is still
// retried and a lock timeout still answers resource_busy) is returned by the
// read that sent it, by every later statement and by Commit. Every other
// transaction, and every statement outside one, is stdlib's unchanged.

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

type pipelineKey struct{}

// withPipeline marks ctx so that a transaction begun with it is pipelined.
func withPipeline(ctx context.Context) context.Context {
	return context.WithValue(ctx, pipelineKey{}, true)
}

// connector opens stdlib connections and wraps each in a pipeConn.
type connector struct{ inner driver.Connector }

func (c connector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sc, ok := dc.(*stdlib.Conn)
	if !ok {
		dc.Close()
		return nil, fmt.Errorf("postgres: unexpected driver connection %T", dc)
	}
	return &pipeConn{Conn: sc}, nil
}

func (c connector) Driver() driver.Driver { return c.inner.Driver() }

// pipeConn is a stdlib connection that can run a pipelined transaction.
// database/sql serializes every call on one connection (statements, reads of
// rows, results), so p needs no lock of its own.
type pipeConn struct {
	*stdlib.Conn
	p *pipeTx // the open pipelined transaction, if any
}

var (
	_ driver.ConnBeginTx        = (*pipeConn)(nil)
	_ driver.ExecerContext      = (*pipeConn)(nil)
	_ driver.QueryerContext     = (*pipeConn)(nil)
	_ driver.SessionResetter    = (*pipeConn)(nil)
	_ driver.Validator          = (*pipeConn)(nil)
	_ driver.NamedValueChecker  = (*pipeConn)(nil)
	_ driver.ConnPrepareContext = (*pipeConn)(nil)
)

func (c *pipeConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if on, _ := ctx.Value(pipelineKey{}).(bool); !on {
		return c.Conn.BeginTx(ctx, opts)
	}
	if c.p != nil {
		return nil, errors.New("postgres: a pipelined transaction is already open on this connection")
	}
	begin, err := beginSQL(opts)
	if err != nil {
		return nil, err
	}
	c.p = &pipeTx{c: c, pg: c.Conn.Conn(), begin: begin}
	return c.p, nil
}

func beginSQL(opts driver.TxOptions) (string, error) {
	s := "BEGIN"
	switch sql.IsolationLevel(opts.Isolation) {
	case sql.LevelDefault:
	case sql.LevelReadCommitted:
		s += " ISOLATION LEVEL READ COMMITTED"
	case sql.LevelRepeatableRead, sql.LevelSnapshot:
		s += " ISOLATION LEVEL REPEATABLE READ"
	case sql.LevelSerializable:
		s += " ISOLATION LEVEL SERIALIZABLE"
	default:
		return "", fmt.Errorf("postgres: isolation level %v is not supported", sql.IsolationLevel(opts.Isolation))
	}
	if opts.ReadOnly {
		s += " READ ONLY"
	}
	return s, nil
}

func (c *pipeConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if c.p == nil {
		return c.Conn.ExecContext(ctx, query, args)
	}
	st, err := c.p.queue(ctx, query, args, false)
	if err != nil {
		return nil, err
	}
	return pipeResult{st: st}, nil
}

func (c *pipeConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if c.p == nil {
		return c.Conn.QueryContext(ctx, query, args)
	}
	st, err := c.p.queue(ctx, query, args, true)
	if err != nil {
		return nil, err
	}
	return &pipeRows{st: st}, nil
}

func (c *pipeConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if c.p != nil {
		// database/sql prepares only when ExecContext/QueryContext answer
		// driver.ErrSkip, which these never do inside a pipeline.
		return nil, errors.New("postgres: prepared statements are not supported in a pipelined transaction")
	}
	return c.Conn.PrepareContext(ctx, query)
}

func (c *pipeConn) ResetSession(ctx context.Context) error {
	if c.p != nil {
		return driver.ErrBadConn // a pipelined transaction outlived its sql.Tx
	}
	return c.Conn.ResetSession(ctx)
}

func (c *pipeConn) IsValid() bool { return c.p == nil && !c.Conn.Conn().IsClosed() }

// stmt is one queued statement and, once sent, its result.
type stmt struct {
	p     *pipeTx
	ctx   context.Context // the caller's: the batch that sends it runs under it
	sql   string
	args  []any
	query bool

	sent bool
	err  error // this statement's error, or the earlier one that kept it from running
	tag  pgconn.CommandTag
	cols []string
	rows [][]driver.Value
}

// pipeTx is one pipelined transaction.
type pipeTx struct {
	c     *pipeConn
	pg    *pgx.Conn
	begin string
	begun bool    // BEGIN was sent: the server has (or had) a transaction open
	q     []*stmt // queued, not sent
	err   error   // the first failure; the transaction is aborted
}

func (p *pipeTx) queue(ctx context.Context, query string, args []driver.NamedValue, isQuery bool) (*stmt, error) {
	if p.err != nil {
		return nil, p.err
	}
	a := make([]any, len(args))
	for i, nv := range args {
		if nv.Name != "" {
			return nil, errors.New("postgres: named arguments are not supported")
		}
		a[i] = nv.Value
	}
	st := &stmt{p: p, ctx: ctx, sql: query, args: a, query: isQuery}
	p.q = append(p.q, st)
	return st, nil
}

// flush sends every queued statement (BEGIN first if it was not sent yet,
// COMMIT last if commit) as one batch, and reads every result.
func (p *pipeTx) flush(ctx context.Context, commit bool) error {
	if p.err != nil {
		return p.err
	}
	if len(p.q) == 0 && !commit {
		return nil
	}
	q := p.q
	p.q = nil
	b := &pgx.Batch{}
	if !p.begun {
		b.Queue(p.begin)
	}
	for _, st := range q {
		b.Queue(st.sql, st.args...)
	}
	if commit {
		b.Queue("COMMIT")
	}
	wasBegun := p.begun
	p.begun = true
	br := p.pg.SendBatch(ctx, b)
	var first error // the first statement's own error
	fail := func(where string, err error) {
		if first == nil {
			first = err
			p.err = fmt.Errorf("postgres: %s: %w", where, err)
		}
	}
	if !wasBegun {
		if _, err := br.Exec(); err != nil {
			fail("BEGIN", err)
		}
	}
	for _, st := range q {
		st.sent = true
		if first != nil {
			st.err = p.err
			continue
		}
		if !st.query {
			st.tag, st.err = br.Exec()
		} else {
			st.err = readAll(br, st)
		}
		if st.err != nil {
			fail(describe(st.sql), st.err)
		}
	}
	if commit && first == nil {
		if _, err := br.Exec(); err != nil {
			fail("COMMIT", err)
		}
	}
	if err := br.Close(); err != nil {
		fail("batch", err)
	}
	return p.err
}

func readAll(br pgx.BatchResults, st *stmt) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	fds := rows.FieldDescriptions()
	st.cols = make([]string, len(fds))
	for i, fd := range fds {
		st.cols[i] = fd.Name
	}
	for rows.Next() {
		vs, err := rows.Values()
		if err != nil {
			return err
		}
		row := make([]driver.Value, len(vs))
		for i, v := range vs {
			if row[i], err = driverValue(v); err != nil {
				return fmt.Errorf("column %s: %w", st.cols[i], err)
			}
		}
		st.rows = append(st.rows, row)
	}
	rows.Close()
	return rows.Err()
}

// driverValue turns what pgx decoded into one of database/sql's driver.Value
// types, which Scan then converts as it does for stdlib.
func driverValue(v any) (driver.Value, error) {
	switch x := v.(type) {
	case nil, int64, float64, bool, []byte, string:
		return x, nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case float32:
		return float64(x), nil
	case driver.Valuer:
		return x.Value()
	}
	if dv, err := driver.DefaultParameterConverter.ConvertValue(v); err == nil {
		return dv, nil
	}
	return nil, fmt.Errorf("unsupported value %T", v)
}

// describe names a statement in an error: its first words.
func describe(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	if len(q) > 48 {
		q = q[:48] + "…"
	}
	return q
}

// ensure sends st if it is still queued (with everything queued before and
// after it). The statement's own error, or the earlier one that aborted the
// transaction, is returned.
func (st *stmt) ensure() error {
	if !st.sent {
		if err := st.p.flush(st.ctx, false); err != nil && !st.sent {
			return err
		}
	}
	return st.err
}

func (p *pipeTx) Commit() error {
	defer func() { p.c.p = nil }()
	if p.err == nil && !p.begun && len(p.q) == 0 {
		return nil // nothing was sent or queued: there is nothing to commit
	}
	// COMMIT is awaited even if the statements' caller has given up: the
	// server bounds it (statement_timeout).
	if err := p.flush(context.Background(), true); err != nil {
		p.rollback()
		return err
	}
	return nil
}

func (p *pipeTx) Rollback() error {
	defer func() { p.c.p = nil }()
	p.q = nil
	if !p.begun {
		return nil // nothing reached the server
	}
	return p.rollback()
}

// rollback ends the server's transaction, if one is still open. A
// connection it cannot roll back is closed, so the pool drops it.
func (p *pipeTx) rollback() error {
	pc := p.pg.PgConn()
	if pc.IsClosed() || pc.TxStatus() == 'I' {
		return nil
	}
	if _, err := p.pg.Exec(context.Background(), "ROLLBACK"); err != nil {
		_ = p.pg.Close(context.Background())
		return err
	}
	return nil
}

// pipeResult is the result of a queued ExecContext.
type pipeResult struct{ st *stmt }

func (r pipeResult) LastInsertId() (int64, error) {
	return 0, errors.New("postgres: LastInsertId is not supported")
}

func (r pipeResult) RowsAffected() (int64, error) {
	if err := r.st.ensure(); err != nil {
		return 0, err
	}
	return r.st.tag.RowsAffected(), nil
}

// pipeRows are the rows of a queued QueryContext; the first read sends it.
type pipeRows struct {
	st *stmt
	i  int
}

func (r *pipeRows) Columns() []string {
	_ = r.st.ensure() // an error is answered by Next
	return r.st.cols
}

func (r *pipeRows) Close() error { return nil }

func (r *pipeRows) Next(dest []driver.Value) error {
	if err := r.st.ensure(); err != nil {
		return err
	}
	if r.i >= len(r.st.rows) {
		return io.EOF
	}
	copy(dest, r.st.rows[r.i])
	r.i++
	return nil
}
