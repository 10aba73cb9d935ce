package storetest

import (
	"bytes"
	"context"
	"io"
	"reflect"
	"strings"
	"testing"

	"foundry/internal/store"
)

// testTokenCacheForwards: what store.WithTokenCache answers, beside the
// tokens it caches, is what the store under it answers; writes through it
// are the store's writes.
func testTokenCacheForwards(t *testing.T, s store.Store) {
	ctx := context.Background()
	w := store.WithTokenCache(s)
	ws := Seed(t, s)
	id := Create(t, w, ws)
	for i, line := range []string{"a", "b", "c", "d"} {
		if _, err := w.Guarded(ctx, AppendLine(ws, id, "fwd-"+line, int64(i+1), line)); err != nil {
			t.Fatal(err)
		}
	}
	same := func(what string, raw, wrapped any, errs ...error) {
		t.Helper()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		}
		if !reflect.DeepEqual(raw, wrapped) {
			t.Fatalf("%s through the wrapper:\n%+v\nwithout it:\n%+v", what, wrapped, raw)
		}
	}

	rr, err1 := s.VersionRange(ctx, store.TypeNote, id, 2, 4)
	wr, err2 := w.VersionRange(ctx, store.TypeNote, id, 2, 4)
	same("VersionRange", rr, wr, err1, err2)
	if len(wr) != 3 || wr[0].Version != 2 || wr[2].Version != 4 {
		t.Fatalf("VersionRange 2..4 through the wrapper: %+v", wr)
	}
	rh, err1 := s.History(ctx, store.TypeNote, id)
	wh, err2 := w.History(ctx, store.TypeNote, id)
	same("History", rh, wh, err1, err2)
	if len(wh) != 5 {
		t.Fatalf("history through the wrapper has %d versions, want 5", len(wh))
	}
	rg, err1 := s.Get(ctx, store.TypeNote, id)
	wg, err2 := w.Get(ctx, store.TypeNote, id)
	same("Get", rg, wg, err1, err2)
	re, err1 := s.Events(ctx, ws, store.TypeNote, id, 0, 100)
	we, err2 := w.Events(ctx, ws, store.TypeNote, id, 0, 100)
	same("Events", re, we, err1, err2)
	u := owner(t, s, ws)
	ra, err1 := s.Actors(ctx, ws, []string{"user:" + u.ID})
	wa, err2 := w.Actors(ctx, ws, []string{"user:" + u.ID})
	same("Actors", ra, wa, err1, err2)
	if wa["user:"+u.ID].Name != u.Name {
		t.Fatalf("Actors through the wrapper: %+v", wa)
	}

	// A blob put through the wrapper is the store's, and the other way.
	put := func(b store.Blobs, data string) string {
		t.Helper()
		sha, _, err := b.Put(ctx, ws, strings.NewReader(data), 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		return sha
	}
	read := func(b store.Blobs, sha string) []byte {
		t.Helper()
		bl, err := b.Open(ctx, ws, sha)
		if err != nil {
			t.Fatal(err)
		}
		defer bl.Close()
		data, err := io.ReadAll(bl)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	viaWrapper := put(w.Blobs(), "put through the wrapper")
	if got := read(s.Blobs(), viaWrapper); !bytes.Equal(got, []byte("put through the wrapper")) {
		t.Fatalf("the store reads %q for a blob put through the wrapper", got)
	}
	direct := put(s.Blobs(), "put without it")
	if got := read(w.Blobs(), direct); !bytes.Equal(got, []byte("put without it")) {
		t.Fatalf("the wrapper reads %q for a blob put without it", got)
	}
	if have, err := w.Blobs().Has(ctx, ws, hexSHA([]byte("never put"))); err != nil || have {
		t.Fatalf("the wrapper has a blob never put: %v %v", have, err)
	}
}
