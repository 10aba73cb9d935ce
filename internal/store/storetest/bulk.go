package storetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"foundry/internal/store"
)

// BulkNote is one Note of a bulk fixture (BulkNotes).
type BulkNote struct {
	Title    string
	Approved bool
	// Mark, when set, is the kind of an object the Note gets under its own
	// ID and as its own parent (the service marks a deleted Note so).
	Mark string
}

// bulkRows is how many rows one INSERT of BulkNotes carries.
const bulkRows = 200

// MaxBulkNotes bounds one BulkNotes call.
const MaxBulkNotes = 100_000

// BulkNotes inserts notes into ws straight into the store's tables, in one
// transaction of multi-row INSERTs, and answers their IDs in order: a list
// fixture of 10,000 Notes in well under a second, where a guarded write
// each takes many. Each is at version 1 with a small document and no
// history, which is all a list reads; the title index takes them in as it
// takes any insert (SQLite's triggers, PostgreSQL's index).
func BulkNotes(tb testing.TB, b *store.Base, ws string, notes []BulkNote) []string {
	tb.Helper()
	if len(notes) > MaxBulkNotes {
		tb.Fatalf("BulkNotes: %d Notes, at most %d", len(notes), MaxBulkNotes)
	}
	ids := make([]string, len(notes))
	for i := range notes {
		ids[i] = store.NewID(store.TypeNote)
	}
	now := time.Now().UnixMicro()
	values := func(n, cols int) string {
		row := "(?" + strings.Repeat(", ?", cols-1) + ")"
		return row + strings.Repeat(", "+row, n-1)
	}
	err := b.Tx(context.Background(), func(q store.Querier) error {
		for from := 0; from < len(notes); from += bulkRows {
			to := min(from+bulkRows, len(notes))
			args := make([]any, 0, 9*(to-from))
			var marks []any
			for i := from; i < to; i++ {
				n := notes[i]
				approved := 0
				if n.Approved {
					approved = 1
				}
				args = append(args, store.TypeNote, ids[i], ws, "bulk", n.Title, approved, 1, `{"title":"","tabs":[]}`, now)
				if n.Mark != "" {
					marks = append(marks, n.Mark, ids[i], ws, ids[i], `{}`, now)
				}
			}
			if _, err := q.ExecContext(context.Background(), b.D.Q(`INSERT INTO resources (type, id, workspace_id, owner_id, title, approved, version, doc, updated_us) VALUES `+values(to-from, 9)), args...); err != nil {
				return err
			}
			if len(marks) > 0 {
				if _, err := q.ExecContext(context.Background(), b.D.Q(`INSERT INTO objects (kind, id, workspace_id, parent_id, doc, created_us) VALUES `+values(len(marks)/6, 6)), marks...); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("BulkNotes: %v", err)
	}
	return ids
}
