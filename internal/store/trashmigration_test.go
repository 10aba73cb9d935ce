package store_test

import (
	"context"
	"testing"
	"time"

	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
	"foundry/internal/store/sqlite"
	"foundry/internal/store/storetest"
)

// TestTrashMigrationStartsTheClock: a Note deleted before the trash (its
// mark long ago) gets its 30 days from the upgrade, on both stores, so an
// upgrade purges nothing at once. The migration is run again by taking
// its row out of schema_migrations.
func TestTrashMigrationStartsTheClock(t *testing.T) {
	check := func(t *testing.T, b *store.Base, reopen func() *store.Base, s store.Store) {
		ctx := context.Background()
		ws := storetest.Seed(t, s)
		id := storetest.Create(t, s, ws)
		old := time.Now().Add(-400 * 24 * time.Hour).UnixMicro()
		err := b.Tx(ctx, func(q store.Querier) error {
			if _, err := q.ExecContext(ctx, b.D.Q(`INSERT INTO objects (kind, id, workspace_id, parent_id, doc, created_us) VALUES ('note_deleted', ?, ?, ?, '{}', ?)`), id, ws, id, old); err != nil {
				return err
			}
			_, err := q.ExecContext(ctx, b.D.Q(`DELETE FROM schema_migrations WHERE version >= ?`), store.SchemaVersion()-1) // the trash's and the search index's, after it
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		before := time.Now().Add(-time.Minute)
		b = reopen()
		o, err := b.GetObject(ctx, "note_deleted", id)
		if err != nil {
			t.Fatal(err)
		}
		if o.CreatedAt.Before(before) || o.CreatedAt.After(time.Now().Add(time.Minute)) {
			t.Fatalf("the old mark's time after the migration is %v, want about now", o.CreatedAt)
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		s, err := sqlite.Open(context.Background(), dir, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		check(t, &s.Base, func() *store.Base {
			s.Close()
			again, err := sqlite.Open(context.Background(), dir, sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { again.Close() })
			return &again.Base
		}, s)
	})
	t.Run("postgres", func(t *testing.T) {
		u, _ := pgtest.Schema(t)
		s, err := postgres.Open(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		check(t, &s.Base, func() *store.Base {
			again, err := postgres.Open(context.Background(), u)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { again.Close() })
			return &again.Base
		}, s)
	})
}
