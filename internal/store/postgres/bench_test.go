package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkDurableWrites16 measures committed guarded writes per second with
// 16 concurrent writers, each appending to its own Note (no conflicts, no
// replays): every write is a full transaction with a row lock, key check,
// history row, key row, event row and NOTIFY, acknowledged after COMMIT.
func BenchmarkDurableWrites16(b *testing.B) {
	const writers = 16
	u, _ := freshSchema(b)
	s := open(b, u)
	ws := seed(b, s)
	ids := make([]string, writers)
	for i := range ids {
		ids[i] = create(b, s, ws)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	b.ResetTimer()
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			version := int64(1)
			for {
				n := next.Add(1)
				if n > int64(b.N) {
					return
				}
				out, err := s.Guarded(context.Background(), appendLine(ws, ids[w], fmt.Sprintf("bench-%d-%d", w, n), version, fmt.Sprint(n)))
				if err != nil {
					errs <- err
					return
				}
				version = out.Version
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
}
