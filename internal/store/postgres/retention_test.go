package postgres_test

import (
	"context"
	"testing"

	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/storetest"
)

func TestRetention(t *testing.T) {
	baseURL(t)
	storetest.RunRetention(t, func(t *testing.T, r store.Retention) store.Store {
		u, _ := freshSchema(t)
		s, err := postgres.OpenWith(context.Background(), u, postgres.Options{Retention: r})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
