// Package benchtest holds what store benchmarks share.
package benchtest

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Spread makes n calls of write over workers goroutines (worker w, call i,
// from 1) and answers how long they took; the first error fails b.
func Spread(b testing.TB, workers, n int, write func(w int, i int64) error) time.Duration {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	t0 := time.Now()
	for w := range workers {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				if err := write(w, i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(t0)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return took
}
