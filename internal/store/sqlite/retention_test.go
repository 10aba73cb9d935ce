package sqlite_test

import (
	"context"
	"testing"

	"foundry/internal/store"
	"foundry/internal/store/sqlite"
	"foundry/internal/store/storetest"
)

func TestRetention(t *testing.T) {
	storetest.RunRetention(t, func(t *testing.T, r store.Retention) store.Store {
		s, err := sqlite.Open(context.Background(), t.TempDir(), sqlite.Options{Retention: r})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
