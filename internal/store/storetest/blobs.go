package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"sync"
	"testing"

	"foundry/internal/store"
)

// BlobContract runs the blob store's contract against stores made by open
// (a fresh, empty store each call).
func BlobContract(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, b store.Blobs, ws string)
	}{
		{"a blob reads back byte for byte, by its SHA-256", testBlobRoundTrip},
		{"another workspace's hash is not found", testBlobWorkspaces},
		{"one byte over the limit stores nothing", testBlobLimit},
		{"the same bytes put twice, even at once, are one blob", testBlobDedupe},
		{"a blob seeks, across chunk boundaries", testBlobSeek},
		{"hostile names are not found", testBlobHostileNames},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			tc.fn(t, store.WithTokenCache(s).Blobs(), Seed(t, s))
		})
	}
}

func blobBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]byte, n)
	for i := range out {
		out[i] = byte(r.UintN(256))
	}
	return out
}

func hexSHA(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func readBlob(t *testing.T, b store.Blobs, ws, sha string) []byte {
	t.Helper()
	r, err := b.Open(context.Background(), ws, sha)
	if err != nil {
		t.Fatalf("open %s: %v", sha, err)
	}
	defer r.Close()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read %s: %v", sha, err)
	}
	if int64(len(got)) != r.Size() {
		t.Fatalf("read %d bytes, Size says %d", len(got), r.Size())
	}
	return got
}

func testBlobRoundTrip(t *testing.T, b store.Blobs, ws string) {
	ctx := context.Background()
	for _, n := range []int{0, 1, 1000, store.BlobChunk, store.BlobChunk + 7, 2*store.BlobChunk + 1} {
		data := blobBytes(n, uint64(n))
		sha, size, err := b.Put(ctx, ws, bytes.NewReader(data), int64(n))
		if err != nil {
			t.Fatalf("put %d bytes: %v", n, err)
		}
		if sha != hexSHA(data) || size != int64(n) {
			t.Fatalf("put %d bytes: got (%s, %d), want (%s, %d)", n, sha, size, hexSHA(data), n)
		}
		if have, err := b.Has(ctx, ws, sha); err != nil || !have {
			t.Fatalf("has after put: %v %v", have, err)
		}
		if got := readBlob(t, b, ws, sha); !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: read back differs", n)
		}
	}
	missing := hexSHA([]byte("never stored"))
	if have, err := b.Has(ctx, ws, missing); err != nil || have {
		t.Fatalf("has of a blob never put: %v %v", have, err)
	}
	if _, err := b.Open(ctx, ws, missing); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("open of a blob never put: %v, want ErrNotFound", err)
	}
}

func testBlobWorkspaces(t *testing.T, b store.Blobs, ws string) {
	ctx := context.Background()
	data := []byte("only in the first workspace")
	sha, _, err := b.Put(ctx, ws, bytes.NewReader(data), 100)
	if err != nil {
		t.Fatal(err)
	}
	other := store.NewID("ws")
	if have, err := b.Has(ctx, other, sha); err != nil || have {
		t.Fatalf("another workspace has the blob: %v %v", have, err)
	}
	if _, err := b.Open(ctx, other, sha); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another workspace opens the blob: %v", err)
	}
	// The other workspace storing the same bytes gets its own copy.
	if sha2, _, err := b.Put(ctx, other, bytes.NewReader(data), 100); err != nil || sha2 != sha {
		t.Fatalf("put in the other workspace: %s %v", sha2, err)
	}
	if got := readBlob(t, b, other, sha); !bytes.Equal(got, data) {
		t.Fatal("the other workspace's copy differs")
	}
}

func testBlobLimit(t *testing.T, b store.Blobs, ws string) {
	ctx := context.Background()
	data := blobBytes(4097, 3)
	_, _, err := b.Put(ctx, ws, bytes.NewReader(data), 4096)
	var tl *store.BlobTooLargeError
	if !errors.As(err, &tl) || tl.Limit != 4096 {
		t.Fatalf("put over the limit: %v, want BlobTooLargeError{4096}", err)
	}
	if have, _ := b.Has(ctx, ws, hexSHA(data)); have {
		t.Fatal("a blob over the limit was stored")
	}
	if have, _ := b.Has(ctx, ws, hexSHA(data[:4096])); have {
		t.Fatal("the first limit bytes of a blob over the limit were stored")
	}
	if _, _, err := b.Put(ctx, ws, bytes.NewReader(data[:4096]), 4096); err != nil {
		t.Fatalf("put at exactly the limit: %v", err)
	}
}

func testBlobDedupe(t *testing.T, b store.Blobs, ws string) {
	ctx := context.Background()
	data := blobBytes(store.BlobChunk+100, 9)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	shas := make([]string, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			shas[i], _, errs[i] = b.Put(ctx, ws, bytes.NewReader(data), int64(len(data)))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil || shas[i] != hexSHA(data) {
			t.Fatalf("put %d: %s %v", i, shas[i], err)
		}
	}
	if got := readBlob(t, b, ws, hexSHA(data)); !bytes.Equal(got, data) {
		t.Fatal("a blob put concurrently reads back wrong")
	}
}

func testBlobSeek(t *testing.T, b store.Blobs, ws string) {
	ctx := context.Background()
	data := blobBytes(2*store.BlobChunk+50, 5)
	sha, _, err := b.Put(ctx, ws, bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	r, err := b.Open(ctx, ws, sha)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, off := range []int64{store.BlobChunk - 10, 5, 2*store.BlobChunk + 40, store.BlobChunk} {
		if _, err := r.Seek(off, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, 20)
		n, err := io.ReadFull(r, got)
		want := data[off:min(off+20, int64(len(data)))]
		if !bytes.Equal(got[:n], want) || (err != nil && n != len(want)) {
			t.Fatalf("at %d: read %d bytes (%v), differ from the blob's", off, n, err)
		}
	}
	if end, err := r.Seek(0, io.SeekEnd); err != nil || end != int64(len(data)) {
		t.Fatalf("seek to end: %d %v", end, err)
	}
}

func testBlobHostileNames(t *testing.T, b store.Blobs, ws string) {
	ctx := context.Background()
	sha, _, err := b.Put(ctx, ws, bytes.NewReader([]byte("x")), 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ ws, sha string }{
		{"../" + ws, sha}, {ws, "../" + sha[3:]}, {ws, sha[:63]}, {ws, sha + "0"},
		{ws, "ABCDEF" + sha[6:]}, {"", sha}, {ws + "/..", sha}, {ws, ""},
	} {
		if have, err := b.Has(ctx, c.ws, c.sha); have || err != nil {
			t.Errorf("has(%q, %q) = %v, %v", c.ws, c.sha, have, err)
		}
		if _, err := b.Open(ctx, c.ws, c.sha); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("open(%q, %q) = %v, want ErrNotFound", c.ws, c.sha, err)
		}
	}
	if _, _, err := b.Put(ctx, "../x", bytes.NewReader([]byte("x")), 1); err == nil {
		t.Error("put in workspace ../x succeeded")
	}
}
