package sqlite_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"foundry/internal/store"
	"foundry/internal/store/sqlite"
	"foundry/internal/store/storetest"
)

// BenchmarkBlobCollect: one Collect of a full batch of unreferenced blobs
// in a workspace of 200 Notes of 20 KB each (the last look reads them all
// once per batch). Reports the blobs removed per second.
func BenchmarkBlobCollect(b *testing.B) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, b.TempDir(), sqlite.Options{Retention: store.Retention{Every: -1}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ws := storetest.Seed(b, s)
	doc, _ := json.Marshal(map[string]any{"n": 1, "log": []string{strings.Repeat("0123456789abcdef words ", 900)}})
	for range 200 {
		id := storetest.Create(b, s, ws)
		m := storetest.AppendLine(ws, id, "", 0, "x")
		m.Apply = func(*store.Resource) (*store.Change, error) {
			return &store.Change{Kind: "edited", Doc: doc, Result: json.RawMessage(`{}`)}, nil
		}
		if _, err := s.Guarded(ctx, m); err != nil {
			b.Fatal(err)
		}
	}
	var removed int64
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		for j := range store.DefaultBlobBatch {
			if _, _, err := s.Blobs().Put(ctx, ws, bytes.NewReader([]byte{byte(i), byte(i >> 8), byte(j)}), 10); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		rep, err := s.Blobs().Collect(ctx, time.Now().Add(2*time.Hour), store.BlobCollect{})
		if err != nil || rep.Removed != store.DefaultBlobBatch {
			b.Fatalf("%+v %v", rep, err)
		}
		removed += rep.Removed
	}
	b.ReportMetric(float64(removed)/b.Elapsed().Seconds(), "blobs/s")
}
