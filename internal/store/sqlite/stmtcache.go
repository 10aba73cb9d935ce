package sqlite

import (
	"context"
	"database/sql"
)

// stmtConn is the writer's connection with every statement prepared once.
// The writer runs ~8 statements per guarded write; parsing them again each
// time was ~30% of its CPU, and the single writer is what bounds group commit.
//
// It runs every statement without the caller's cancellation: a job whose
// caller is gone is skipped before it starts, and once started it finishes,
// because interrupting a statement inside the shared transaction would roll
// back the whole batch, other callers' writes included.
//
// It also remembers the rows a job opens, so that rows a job leaves open (a
// panic in the middle of a loop, a forgotten Close) are closed after it:
// open rows would hold the connection, and every later statement and Close
// would fail or wait on them.
type stmtConn struct {
	conn  *sql.Conn
	stmts map[string]*sql.Stmt
	rows  []*sql.Rows // opened by the running job
}

func (c *stmtConn) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if s := c.stmts[q]; s != nil {
		return s, nil
	}
	s, err := c.conn.PrepareContext(context.WithoutCancel(ctx), q)
	if err != nil {
		return nil, err
	}
	c.stmts[q] = s
	return s, nil
}

func (c *stmtConn) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	s, err := c.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return s.ExecContext(context.WithoutCancel(ctx), args...)
}

func (c *stmtConn) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	s, err := c.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	rows, err := s.QueryContext(context.WithoutCancel(ctx), args...)
	if err == nil {
		c.rows = append(c.rows, rows)
	}
	return rows, err
}

// closeRows closes the rows the job that just ended left open.
func (c *stmtConn) closeRows() {
	for _, r := range c.rows {
		r.Close() // closing closed rows does nothing
	}
	clear(c.rows)
	c.rows = c.rows[:0]
}

// QueryRowContext reports a prepare error through the returned row, as
// database/sql does.
func (c *stmtConn) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	s, err := c.stmt(ctx, q)
	if err != nil {
		return c.conn.QueryRowContext(ctx, q, args...) // fails the same way, with the error on Scan
	}
	return s.QueryRowContext(context.WithoutCancel(ctx), args...)
}

func (c *stmtConn) close() {
	for _, s := range c.stmts {
		s.Close()
	}
}
