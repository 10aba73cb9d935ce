package sqlite

// faults lets this package's tests break the writer where real faults break
// it (a failing RELEASE or COMMIT) and hold it so that chosen jobs share a
// batch. It is nil outside tests: Open never sets it.
type faults struct {
	// Stmt is consulted before the writer runs one of its own statements
	// (BEGIN IMMEDIATE, SAVEPOINT w, RELEASE w, ROLLBACK TO w, COMMIT,
	// ROLLBACK). An error fails that statement without running it, as
	// SQLite failing it would, leaving the transaction in whatever state the
	// writer then has to cope with.
	Stmt func(q string) error
	// Batch is called when the writer has taken the first job of a batch,
	// before it takes whatever else is queued.
	Batch func()
	// Queued is called when submit has queued a job.
	Queued func()
}
