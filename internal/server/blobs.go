package server

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"foundry/internal/service"
	"foundry/internal/store"
)

// The blob collector: removes the bytes of uploads no version references
// once they have not been put for the grace period (store.Blobs.Collect),
// in bounded batches, in the background of serve. Each pass first purges
// the Notes the trash has kept past their days (service.PurgeTrash), whose
// files' bytes a later pass collects. Its metrics and the
// blob store's totals are on the server's registry.

// Bounds of one collector pass.
const (
	// blobPassBatches caps the batches of one pass (each at most
	// store.DefaultBlobBatch blobs); the rest waits for the next pass.
	blobPassBatches = 10
	// maxBlobEvery is the longest wait between passes.
	maxBlobEvery = 10 * time.Minute
	// firstBlobPass is the longest wait for the first pass after start
	// (which on SQLite indexes blob files from before the index).
	firstBlobPass = time.Minute
)

// BlobCollector runs the blob collector of one server's store.
type BlobCollector struct {
	st    store.Store
	purge func(ctx context.Context, now time.Time) (purged int, more bool, err error) // the trash's purge (nil: none)
	grace time.Duration
	every time.Duration
	log   *slog.Logger

	removed, removedBytes prometheus.Counter
	runs                  *prometheus.CounterVec

	mu   sync.Mutex
	last *blobPass // the last pass, for /readyz (nil: none yet)
}

// blobPass is the /readyz detail of the last collector pass.
type blobPass struct {
	At           time.Time `json:"at"`
	Removed      int64     `json:"removed"`
	RemovedBytes int64     `json:"removed_bytes"`
	More         bool      `json:"more"`
	Error        string    `json:"error,omitempty"`
}

func newBlobCollector(st store.Store, c Config, reg *prometheus.Registry, ready *Readiness, purge func(ctx context.Context, now time.Time) (int, bool, error)) *BlobCollector {
	grace := c.BlobGrace
	if grace <= 0 {
		grace = store.DefaultBlobGrace
	}
	b := &BlobCollector{st: st, purge: purge, grace: grace, every: min(max(grace/2, time.Second), maxBlobEvery), log: c.Logger,
		removed: prometheus.NewCounter(prometheus.CounterOpts{Name: "foundry_blobs_collected_total",
			Help: "Unreferenced blobs (uploads no version names) the collector removed after the grace period."}),
		removedBytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "foundry_blob_collected_bytes_total",
			Help: "Bytes of the unreferenced blobs the collector removed."}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "foundry_blob_collector_runs_total",
			Help: "Passes of the blob collector, by outcome (ok, error)."}, []string{"outcome"}),
	}
	b.runs.WithLabelValues("ok") // both outcomes are series from the start
	b.runs.WithLabelValues("error")
	reg.MustRegister(b.removed, b.removedBytes, b.runs, blobTotals{st: st})
	ready.SetDetail("blob_collector", func() any {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.last == nil {
			return map[string]any{"grace": b.grace.String(), "last": nil}
		}
		return map[string]any{"grace": b.grace.String(), "last": *b.last}
	})
	return b
}

// Pass runs the collector once at now: batches until one is not full, at
// most blobPassBatches. It logs what it removed.
func (b *BlobCollector) Pass(ctx context.Context, now time.Time) (sum store.BlobReport, err error) {
	defer func() {
		p := &blobPass{At: time.Now().UTC(), Removed: sum.Removed, RemovedBytes: sum.RemovedBytes, More: sum.More}
		if err != nil && ctx.Err() == nil {
			p.Error = "the pass failed; see the server log" // the log has the cause
			b.log.Error("blobs: the collector failed; it runs again at its next pass", "cause", err)
		}
		b.mu.Lock()
		b.last = p
		b.mu.Unlock()
	}()
	b.purgeTrash(ctx, now)
	for range blobPassBatches {
		rep, err := b.st.Blobs().Collect(ctx, now, store.BlobCollect{Grace: b.grace})
		sum.Removed += rep.Removed
		sum.RemovedBytes += rep.RemovedBytes
		sum.Found += rep.Found
		sum.Indexed += rep.Indexed
		sum.More = rep.More
		b.removed.Add(float64(rep.Removed))
		b.removedBytes.Add(float64(rep.RemovedBytes))
		for _, g := range rep.Gone {
			b.log.Debug("blobs: removed an unreferenced blob", "workspace", g.Workspace, "sha256", g.SHA, "bytes", g.Size,
				"last_put", time.UnixMicro(g.PutUS).UTC().Format(time.RFC3339))
		}
		if err != nil {
			b.runs.WithLabelValues("error").Inc()
			return sum, err
		}
		if !rep.More {
			break
		}
	}
	b.runs.WithLabelValues("ok").Inc()
	if sum.Removed > 0 || sum.Found > 0 || sum.Indexed > 0 {
		b.log.Info("blobs: collected unreferenced file bytes", "removed", sum.Removed, "removed_bytes", sum.RemovedBytes,
			"found_in_history", sum.Found, "indexed", sum.Indexed, "grace", b.grace.String(), "more", sum.More)
	}
	return sum, nil
}

// purgeTrash runs the trash's purge once; what fails (or panics) is
// logged, and the next pass tries again.
func (b *BlobCollector) purgeTrash(ctx context.Context, now time.Time) {
	if b.purge == nil {
		return
	}
	defer func() {
		if v := recover(); v != nil {
			b.log.Error("trash: the purge panicked; it runs again at the next pass", "panic", fmt.Sprint(v))
		}
	}()
	n, more, err := b.purge(ctx, now)
	if err != nil && ctx.Err() == nil {
		b.log.Error("trash: the purge failed; it runs again at the next pass", "cause", err, "purged", n)
		return
	}
	if n > 0 {
		b.log.Info("trash: removed the Notes deleted longer ago than the trash keeps them", "days", service.TrashDays, "purged", n, "more", more)
	}
}

// Start runs a pass a minute after start (or sooner), then every half
// grace period (at most every 10 minutes), until the returned func is
// called, which waits for a running pass to end: call it before closing
// the store.
func (b *BlobCollector) Start() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTimer(min(b.every, firstBlobPass))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			b.Pass(ctx, time.Now()) // logs what it did, or why it failed
			t.Reset(b.every)
		}
	}()
	return func() { cancel(); wg.Wait() }
}

// blobTotals reports the blob store's totals at each scrape.
type blobTotals struct{ st store.Store }

var (
	blobBytesDesc = prometheus.NewDesc("foundry_blob_bytes", "Bytes of file content stored, by state: referenced (named by a version) or unreferenced (not yet, or never: removed after the grace period).", []string{"state"}, nil)
	blobCountDesc = prometheus.NewDesc("foundry_blobs", "Blobs (files' contents) stored, by state (referenced, unreferenced).", []string{"state"}, nil)
)

func (blobTotals) Describe(ch chan<- *prometheus.Desc) { ch <- blobBytesDesc; ch <- blobCountDesc }

func (t blobTotals) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	// The registry collects in goroutines of its own: a store that panics
	// must not take the process down with it.
	defer func() {
		if v := recover(); v != nil {
			ch <- prometheus.NewInvalidMetric(blobBytesDesc, fmt.Errorf("blob totals: panic: %v", v))
		}
	}()
	u, err := t.st.Blobs().Totals(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(blobBytesDesc, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(blobBytesDesc, prometheus.GaugeValue, float64(u.Bytes-u.UnreferencedBytes), "referenced")
	ch <- prometheus.MustNewConstMetric(blobBytesDesc, prometheus.GaugeValue, float64(u.UnreferencedBytes), "unreferenced")
	ch <- prometheus.MustNewConstMetric(blobCountDesc, prometheus.GaugeValue, float64(u.Count-u.UnreferencedCount), "referenced")
	ch <- prometheus.MustNewConstMetric(blobCountDesc, prometheus.GaugeValue, float64(u.UnreferencedCount), "unreferenced")
}
