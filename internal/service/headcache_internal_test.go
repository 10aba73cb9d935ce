package service

import (
	"testing"
	"time"

	"foundry/internal/store"
)

// TestHeadCacheKeepsNothingAWriteReplaced: a store read begun before a
// doorbell or a write of this node is not kept; while this node writes
// the Note, no head of it is served; a head is served while fresh only.
func TestHeadCacheKeepsNothingAWriteReplaced(t *testing.T) {
	now := time.Unix(1000, 0)
	c := &headCache{now: func() time.Time { return now }}
	head := func(v int64) cachedHead { return cachedHead{r: store.Resource{ID: "note_a", Version: v}, at: now} }
	served := func() int64 {
		h, ok := c.get("note_a")
		if !ok {
			return 0
		}
		return h.r.Version
	}

	gen, _ := c.begin("note_a")
	c.put("note_a", gen, head(1))
	if v := served(); v != 1 {
		t.Fatalf("served version %d, want 1", v)
	}

	// A read began, a doorbell rang, the read answers: not kept.
	gen, _ = c.begin("note_a")
	c.drop("note_a")
	c.put("note_a", gen, head(1))
	if v := served(); v != 0 {
		t.Fatalf("a head read before a doorbell was kept (version %d)", v)
	}

	// While this node writes, nothing is served or kept; after, a read
	// begun during the write is not kept either.
	gen, _ = c.begin("note_a")
	c.put("note_a", gen, head(1))
	done := c.writing("note_a")
	if v := served(); v != 0 {
		t.Fatalf("served version %d during a write", v)
	}
	during, _ := c.begin("note_a")
	c.put("note_a", during, head(1))
	if v := served(); v != 0 {
		t.Fatalf("kept version %d during a write", v)
	}
	done()
	c.put("note_a", during, head(1))
	if v := served(); v != 0 {
		t.Fatalf("kept version %d read during a write that has returned", v)
	}
	gen, _ = c.begin("note_a")
	c.put("note_a", gen, head(2))
	if v := served(); v != 2 {
		t.Fatalf("served version %d after the write, want 2", v)
	}

	// Fresh for headFresh from when its read began.
	now = now.Add(headFresh - time.Millisecond)
	if v := served(); v != 2 {
		t.Fatalf("served version %d just before headFresh, want 2", v)
	}
	now = now.Add(time.Millisecond)
	if v := served(); v != 0 {
		t.Fatalf("served version %d after headFresh", v)
	}
	// Another Note's doorbell leaves this one's head alone, unless they
	// share a shard; a drop of this one never touches another's.
	gen, at := c.begin("note_a")
	c.put("note_a", gen, cachedHead{r: store.Resource{ID: "note_a", Version: 3}, at: at})
	c.drop("note_b")
	if headShard("note_a") != headShard("note_b") {
		if v := served(); v != 3 {
			t.Fatalf("a doorbell of another Note dropped this one (served %d)", v)
		}
	}
}

// TestHeadCacheIsBounded: at maxHeads heads, keeping one more forgets one.
func TestHeadCacheIsBounded(t *testing.T) {
	c := &headCache{}
	for i := range maxHeads + 10 {
		id := store.NewID("note")
		gen, at := c.begin(id)
		c.put(id, gen, cachedHead{r: store.Resource{ID: id, Version: int64(i)}, at: at})
	}
	if n := len(c.m); n != maxHeads {
		t.Fatalf("%d heads kept, want %d", n, maxHeads)
	}
}
