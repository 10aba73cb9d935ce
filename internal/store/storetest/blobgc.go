package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"foundry/internal/store"
)

// BlobCollectContract runs the contract of the blob index and collector
// (Usage, Collect, Change.Blobs) against stores made by open (a fresh,
// empty store each call): both stores give the same answers.
func BlobCollectContract(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store, ws string)
	}{
		{"an unreferenced blob is removed after the grace period, not before", testCollectAfterGrace},
		{"a blob a write references is never collected", testCollectKeepsReferenced},
		{"a blob a resource names without the mark is kept, and marked", testCollectFindsNamed},
		{"named blobs are marked if indexed, and refuse nothing", testNamedBlobs},
		{"a blob put again within the grace period survives", testCollectRePut},
		{"a write naming a blob the workspace lacks writes nothing", testCollectMissingBlob},
		{"usage counts each workspace's blobs, unreferenced included", testBlobUsage},
		{"one collect looks at most at its batch", testCollectBatch},
		{"a write racing the collector either keeps its blob or writes nothing", testCollectRace},
		{"hostile arguments are refused", testCollectHostile},
		{"a purged resource is gone, and the blobs only it named are collected", testPurge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			tc.fn(t, store.WithTokenCache(s), Seed(t, s))
		})
	}
}

func putBytes(t *testing.T, s store.Store, ws string, b []byte) string {
	t.Helper()
	sha, n, err := s.Blobs().Put(context.Background(), ws, bytes.NewReader(b), int64(len(b)))
	if err != nil || n != int64(len(b)) {
		t.Fatalf("put: %v (%d bytes)", err, n)
	}
	return sha
}

func has(t *testing.T, s store.Store, ws, sha string) bool {
	t.Helper()
	ok, err := s.Blobs().Has(context.Background(), ws, sha)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func usage(t *testing.T, s store.Store, ws string) store.BlobUsage {
	t.Helper()
	u, err := s.Blobs().Usage(context.Background(), ws)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func collect(t *testing.T, s store.Store, now time.Time, c store.BlobCollect) store.BlobReport {
	t.Helper()
	rep, err := s.Blobs().Collect(context.Background(), now, c)
	if err != nil {
		t.Fatalf("collect: %v", err)
	}
	return rep
}

// referenceWrite is a guarded write on Note id that names sha in
// Change.Blobs (mark) and/or in its document (inDoc).
func referenceWrite(ws, id, sha string, mark, inDoc bool) store.Mutation {
	m := AppendLine(ws, id, "", 0, "file")
	m.Apply = func(cur *store.Resource) (*store.Change, error) {
		ch := &store.Change{Kind: "file_added", Result: json.RawMessage(`{}`)}
		if inDoc {
			ch.Doc = json.RawMessage(`{"n":1,"log":[],"files":[{"sha256":"` + sha + `"}]}`)
		} else {
			ch.Doc = json.RawMessage(`{"n":1,"log":[]}`)
		}
		if mark {
			ch.Blobs = []string{sha}
		}
		return ch, nil
	}
	return m
}

func testCollectAfterGrace(t *testing.T, s store.Store, ws string) {
	body := blobBytes(3000, 1)
	sha := putBytes(t, s, ws, body)
	if u := usage(t, s, ws); u.Count != 1 || u.Bytes != 3000 || u.UnreferencedCount != 1 || u.UnreferencedBytes != 3000 {
		t.Fatalf("usage after a put: %+v", u)
	}
	now := time.Now()
	if rep := collect(t, s, now.Add(30*time.Minute), store.BlobCollect{Grace: time.Hour}); rep.Removed != 0 || !has(t, s, ws, sha) {
		t.Fatalf("within the grace period: %+v, has=%v", rep, has(t, s, ws, sha))
	}
	rep := collect(t, s, now.Add(2*time.Hour), store.BlobCollect{Grace: time.Hour})
	if rep.Removed != 1 || rep.RemovedBytes != 3000 || has(t, s, ws, sha) {
		t.Fatalf("after the grace period: %+v, has=%v", rep, has(t, s, ws, sha))
	}
	if len(rep.Gone) != 1 || rep.Gone[0].Workspace != ws || rep.Gone[0].SHA != sha || rep.Gone[0].Size != 3000 {
		t.Fatalf("the report names %+v as removed", rep.Gone)
	}
	if _, err := s.Blobs().Open(context.Background(), ws, sha); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("open a collected blob: %v", err)
	}
	if u := usage(t, s, ws); u != (store.BlobUsage{}) {
		t.Fatalf("usage after collection: %+v", u)
	}
	// The same bytes sent again are stored whole again.
	if again := putBytes(t, s, ws, body); again != sha || !bytes.Equal(readBlob(t, s.Blobs(), ws, sha), body) {
		t.Fatal("a collected blob put again does not read back")
	}
}

func testCollectKeepsReferenced(t *testing.T, s store.Store, ws string) {
	id := Create(t, s, ws)
	sha := putBytes(t, s, ws, blobBytes(100, 2))
	if _, err := s.Guarded(context.Background(), referenceWrite(ws, id, sha, true, false)); err != nil {
		t.Fatal(err)
	}
	if u := usage(t, s, ws); u.Count != 1 || u.UnreferencedCount != 0 || u.Bytes != 100 {
		t.Fatalf("usage of a referenced blob: %+v", u)
	}
	rep := collect(t, s, time.Now().Add(1000*time.Hour), store.BlobCollect{Grace: time.Minute})
	if rep.Removed != 0 || !has(t, s, ws, sha) {
		t.Fatalf("a referenced blob was collected: %+v", rep)
	}
	// Putting it again (another upload of the same bytes) keeps it referenced.
	putBytes(t, s, ws, blobBytes(100, 2))
	if u := usage(t, s, ws); u.UnreferencedCount != 0 {
		t.Fatalf("a re-put made a referenced blob unreferenced: %+v", u)
	}
}

func testCollectFindsNamed(t *testing.T, s store.Store, ws string) {
	id := Create(t, s, ws)
	sha := putBytes(t, s, ws, blobBytes(100, 3))
	// A write that names the blob in its document only.
	if _, err := s.Guarded(context.Background(), referenceWrite(ws, id, sha, false, true)); err != nil {
		t.Fatal(err)
	}
	if u := usage(t, s, ws); u.UnreferencedCount != 1 {
		t.Fatalf("usage before the collect: %+v", u)
	}
	rep := collect(t, s, time.Now().Add(1000*time.Hour), store.BlobCollect{Grace: time.Minute})
	if rep.Removed != 0 || rep.Found != 1 || !has(t, s, ws, sha) {
		t.Fatalf("a blob a Note names: %+v, has=%v", rep, has(t, s, ws, sha))
	}
	if u := usage(t, s, ws); u.UnreferencedCount != 0 {
		t.Fatalf("a blob found named is still unreferenced: %+v", u)
	}
	// Another workspace's Notes do not keep a blob of this one.
	ws2 := Seed(t, s)
	if other := putBytes(t, s, ws2, blobBytes(100, 3)); other != sha {
		t.Fatal("same bytes, another hash")
	}
	if rep := collect(t, s, time.Now().Add(1000*time.Hour), store.BlobCollect{Grace: time.Minute}); rep.Removed != 1 || has(t, s, ws2, sha) || !has(t, s, ws, sha) {
		t.Fatalf("the other workspace's copy: %+v", rep)
	}
}

func testNamedBlobs(t *testing.T, s store.Store, ws string) {
	ctx := context.Background()
	id := Create(t, s, ws)
	sha := putBytes(t, s, ws, blobBytes(100, 11))
	never := hexSHA([]byte("not indexed"))
	m := referenceWrite(ws, id, sha, false, false)
	apply := m.Apply
	m.Apply = func(cur *store.Resource) (*store.Change, error) {
		ch, err := apply(cur)
		ch.NamedBlobs = []string{sha, never, "not a hash"}
		return ch, err
	}
	if _, err := s.Guarded(ctx, m); err != nil {
		t.Fatalf("a write naming blobs, some not indexed: %v", err)
	}
	if u := usage(t, s, ws); u.Count != 1 || u.UnreferencedCount != 0 {
		t.Fatalf("the named blob is not marked: %+v", u)
	}
	if rep := collect(t, s, time.Now().Add(1000*time.Hour), store.BlobCollect{Grace: time.Minute}); rep.Removed != 0 || !has(t, s, ws, sha) {
		t.Fatalf("a named blob was collected: %+v", rep)
	}
}

func testCollectRePut(t *testing.T, s store.Store, ws string) {
	a, b := blobBytes(100, 4), blobBytes(100, 5)
	shaA := putBytes(t, s, ws, a)
	shaB := putBytes(t, s, ws, b)
	time.Sleep(5 * time.Millisecond) // so the re-put's time differs from the first puts'
	t1 := time.Now()
	putBytes(t, s, ws, a)
	// At t1+grace the first puts are over the grace period, the re-put is not.
	rep := collect(t, s, t1.Add(time.Hour), store.BlobCollect{Grace: time.Hour})
	if rep.Removed != 1 || !has(t, s, ws, shaA) || has(t, s, ws, shaB) {
		t.Fatalf("re-put A, left B: %+v, has A=%v B=%v", rep, has(t, s, ws, shaA), has(t, s, ws, shaB))
	}
	if !bytes.Equal(readBlob(t, s.Blobs(), ws, shaA), a) {
		t.Fatal("the re-put blob does not read back")
	}
}

func testCollectMissingBlob(t *testing.T, s store.Store, ws string) {
	id := Create(t, s, ws)
	ctx := context.Background()
	never := hexSHA([]byte("never put"))
	if _, err := s.Guarded(ctx, referenceWrite(ws, id, never, true, true)); !errors.Is(err, store.ErrBlobMissing) {
		t.Fatalf("a write naming a blob never put: %v", err)
	}
	// Collected before the write: the write is refused, not committed.
	sha := putBytes(t, s, ws, blobBytes(50, 6))
	collect(t, s, time.Now().Add(2*time.Hour), store.BlobCollect{Grace: time.Hour})
	if _, err := s.Guarded(ctx, referenceWrite(ws, id, sha, true, true)); !errors.Is(err, store.ErrBlobMissing) {
		t.Fatalf("a write naming a collected blob: %v", err)
	}
	// Another workspace's blob is not this one's.
	ws2 := Seed(t, s)
	theirs := putBytes(t, s, ws2, blobBytes(50, 7))
	if _, err := s.Guarded(ctx, referenceWrite(ws, id, theirs, true, true)); !errors.Is(err, store.ErrBlobMissing) {
		t.Fatalf("a write naming another workspace's blob: %v", err)
	}
	if _, err := s.Guarded(ctx, referenceWrite(ws, id, "../../etc/passwd", true, false)); !errors.Is(err, store.ErrBlobMissing) {
		t.Fatalf("a write naming a path: %v", err)
	}
	if r, err := s.Head(ctx, store.TypeNote, id); err != nil || r.Version != 1 {
		t.Fatalf("the refused writes wrote: version %d, %v", r.Version, err)
	}
}

func testBlobUsage(t *testing.T, s store.Store, ws string) {
	ws2 := Seed(t, s)
	id := Create(t, s, ws)
	ref := putBytes(t, s, ws, blobBytes(1000, 8))
	if _, err := s.Guarded(context.Background(), referenceWrite(ws, id, ref, true, false)); err != nil {
		t.Fatal(err)
	}
	putBytes(t, s, ws, blobBytes(250, 9))
	putBytes(t, s, ws, blobBytes(250, 9)) // the same bytes: counted once
	putBytes(t, s, ws2, blobBytes(70, 10))
	want := store.BlobUsage{Count: 2, Bytes: 1250, UnreferencedCount: 1, UnreferencedBytes: 250}
	if u := usage(t, s, ws); u != want {
		t.Fatalf("usage %+v, want %+v", u, want)
	}
	if u := usage(t, s, ws2); u != (store.BlobUsage{Count: 1, Bytes: 70, UnreferencedCount: 1, UnreferencedBytes: 70}) {
		t.Fatalf("the other workspace's usage %+v", u)
	}
	tot, err := s.Blobs().Totals(context.Background())
	if err != nil || tot != (store.BlobUsage{Count: 3, Bytes: 1320, UnreferencedCount: 2, UnreferencedBytes: 320}) {
		t.Fatalf("totals %+v, %v", tot, err)
	}
}

func testCollectBatch(t *testing.T, s store.Store, ws string) {
	for i := range 3 {
		putBytes(t, s, ws, blobBytes(10, uint64(20+i)))
	}
	later := time.Now().Add(2 * time.Hour)
	if rep := collect(t, s, later, store.BlobCollect{Grace: time.Hour, Batch: 2}); rep.Removed != 2 || !rep.More {
		t.Fatalf("first batch: %+v", rep)
	}
	if rep := collect(t, s, later, store.BlobCollect{Grace: time.Hour, Batch: 2}); rep.Removed != 1 || rep.More {
		t.Fatalf("second batch: %+v", rep)
	}
	if u := usage(t, s, ws); u.Count != 0 {
		t.Fatalf("left: %+v", u)
	}
}

func testCollectHostile(t *testing.T, s store.Store, ws string) {
	ctx := context.Background()
	sha := putBytes(t, s, ws, blobBytes(10, 30))
	for _, c := range []store.BlobCollect{{Grace: -time.Second}, {Batch: -1}, {Batch: store.MaxBlobBatch + 1}} {
		if _, err := s.Blobs().Collect(ctx, time.Now().Add(1000*time.Hour), c); err == nil {
			t.Fatalf("collect %+v: no error", c)
		}
	}
	if !has(t, s, ws, sha) {
		t.Fatal("a refused collect removed a blob")
	}
	for _, bad := range []string{"", "../x", "ws/../../etc", "a b", string(make([]byte, 65))} {
		if _, err := s.Blobs().Usage(ctx, bad); err == nil {
			t.Fatalf("usage of %q: no error", bad)
		}
	}
}

// testCollectRace: a collector that may remove the blob (its clock far
// ahead) runs while a write names it: a committed write always finds its
// blob there afterwards, and a refused one is refused as ErrBlobMissing.
func testCollectRace(t *testing.T, s store.Store, ws string) {
	ctx := context.Background()
	id := Create(t, s, ws)
	far := time.Now().Add(1000 * time.Hour)
	var wrote, refused int
	for i := range 30 {
		body := blobBytes(64, uint64(100+i))
		sha := putBytes(t, s, ws, body)
		var wg sync.WaitGroup
		var werr, cerr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, cerr = s.Blobs().Collect(ctx, far, store.BlobCollect{Grace: time.Minute})
		}()
		go func() {
			defer wg.Done()
			_, werr = s.Guarded(ctx, referenceWrite(ws, id, sha, true, false))
		}()
		wg.Wait()
		if cerr != nil {
			t.Fatalf("collect: %v", cerr)
		}
		switch {
		case werr == nil:
			wrote++
			if !has(t, s, ws, sha) || !bytes.Equal(readBlob(t, s.Blobs(), ws, sha), body) {
				t.Fatalf("round %d: the write committed but its blob is gone", i)
			}
		case errors.Is(werr, store.ErrBlobMissing):
			refused++
			if has(t, s, ws, sha) {
				t.Fatalf("round %d: the write was refused but the blob is there", i)
			}
		default:
			t.Fatalf("round %d: write: %v", i, werr)
		}
	}
	t.Logf("%d writes committed, %d refused as their blob was collected first", wrote, refused)
}
