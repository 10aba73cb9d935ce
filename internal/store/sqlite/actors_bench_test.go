package sqlite_test

import (
	"testing"

	"foundry/internal/store/sqlite"
	"foundry/internal/store/storetest"
)

// BenchmarkActors: naming the actors of history (see storetest.BenchActors).
func BenchmarkActors(b *testing.B) {
	storetest.BenchActors(b, openSQLite(b, sqlite.Options{}))
}
