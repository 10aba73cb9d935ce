package postgres_test

import (
	"testing"

	"foundry/internal/store/storetest"
)

// BenchmarkActors: naming the actors of history (see storetest.BenchActors).
func BenchmarkActors(b *testing.B) {
	u, _ := freshSchema(b)
	storetest.BenchActors(b, open(b, u))
}
