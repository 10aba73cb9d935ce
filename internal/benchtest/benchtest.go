// Package benchtest holds what store benchmarks share.
package benchtest

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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

// ProcField reads one numeric field of a /proc/self file ("write_bytes: N"
// in io, "VmRSS:   N kB" in status, answered in kB as written); it skips tb
// where there is no such file (not Linux).
func ProcField(tb testing.TB, file, field string) int64 {
	tb.Helper()
	f, err := os.Open("/proc/self/" + file)
	if err != nil {
		tb.Skipf("this benchmark reads /proc/self/%s (Linux): %v", file, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && k == field {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				tb.Fatalf("/proc/self/%s %s: %v", file, field, err)
			}
			return n
		}
	}
	tb.Skipf("/proc/self/%s has no %s", file, field)
	return 0
}

// ProcessCPU is the CPU time this process has used (getrusage RUSAGE_SELF,
// user + system).
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
