package service

import (
	"container/list"
	"sync"
	"time"

	"foundry/internal/note"
	"foundry/internal/store"
)

// docCache keeps decoded Notes by ID and version, bounded by an estimate of
// the memory they take. A version identifies a Note exactly on every node,
// so a hit is never stale; an entry of an older version is still useful:
// the Note at a newer version is built from it and the parts written since
// (see loadNote), so a write to one block does not throw the rest away.
// Cached Docs are shared: callers only read them (an edit works on a
// note.Clone).
type docCache struct {
	mu    sync.Mutex
	max   int64 // bytes; 0: defaultDocCacheBytes
	used  int64
	m     map[string]*list.Element
	order list.List // front: most recently used
}

type cachedDoc struct {
	id      string
	version int64
	doc     *note.Doc
	size    int64
}

// defaultDocCacheBytes bounds the decoded Notes a node keeps: about three
// Notes of 1,000,000 cells.
const defaultDocCacheBytes = 128 << 20

// docSize estimates the memory a decoded Note takes: a decoded cell or
// rune of text costs a few times its stored bytes.
func docSize(d *note.Doc) int64 { return 3*int64(d.StoredBytes()) + 4096 }

// get returns the cached Note id at version exactly.
func (c *docCache) get(id string, version int64) (*note.Doc, bool) {
	d, v := c.latest(id)
	return d, d != nil && v == version
}

// latest returns the newest cached version of Note id (nil if none).
func (c *docCache) latest(id string) (*note.Doc, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[id]
	if !ok {
		return nil, 0
	}
	c.order.MoveToFront(e)
	cd := e.Value.(*cachedDoc)
	return cd.doc, cd.version
}

// put caches d as Note id at version, unless a newer version is cached.
func (c *docCache) put(id string, version int64, d *note.Doc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]*list.Element{}
	}
	limit := c.max
	if limit == 0 {
		limit = defaultDocCacheBytes
	}
	size := docSize(d)
	if e, ok := c.m[id]; ok {
		cd := e.Value.(*cachedDoc)
		if cd.version > version {
			return
		}
		c.used -= cd.size
		c.order.Remove(e)
		delete(c.m, id)
	}
	if size > limit {
		return // bigger than the whole cache: read it each time
	}
	for c.used+size > limit {
		last := c.order.Back()
		cd := last.Value.(*cachedDoc)
		c.used -= cd.size
		c.order.Remove(last)
		delete(c.m, cd.id)
	}
	c.m[id] = c.order.PushFront(&cachedDoc{id: id, version: version, doc: d, size: size})
	c.used += size
}

// headCache keeps the heads of Notes (version, title, owner, connected
// access, whether the Note is deleted) that reads check access with and
// pick the cached document by, so a read of a Note whose document is
// cached asks the store nothing. It is change-notified: every committed
// write to a Note, on any node, rings the store's doorbell (Store.OnChange),
// which drops the Note's head here.
//
// A head is served only while it is fresh:
//   - never while this node is writing the Note (noteWrite marks the write
//     from before it starts until after the doorbell rang), so a read
//     started after a write of this node returned sees that write;
//   - never if a doorbell for the Note rang after the store read it began
//     (the generation check of put), so a slow read never caches what a
//     write has replaced meanwhile;
//   - at most headFresh after the store read began, so a write on another
//     node is seen within the doorbell's delay (PostgreSQL: LISTEN/NOTIFY
//     and the feed follower; SQLite: another process's writes, found by the
//     store's watcher), and within headFresh should the doorbell not ring
//     at all (a follower reconnecting).
type headCache struct {
	once  sync.Once
	mu    sync.Mutex
	m     map[string]cachedHead
	busy  map[string]int     // Notes this node is writing: how many writes
	gen   [headShards]uint64 // bumped by every drop, per shard of IDs
	now   func() time.Time   // the clock (nil: time.Now)
	fresh time.Duration      // 0: headFresh
}

// cachedHead is one Note's head as the store answered it (no document).
type cachedHead struct {
	r store.Resource
	// deleted says whether the Note is deleted, if known: a person's read
	// asks (an agent's never does: a deleted Note is never approved).
	deleted, deletedKnown bool
	at                    time.Time // when the store read began
}

const (
	// headFresh bounds how long a head is served without the store being
	// asked again, should no doorbell ring.
	headFresh = time.Second
	// maxHeads bounds the heads kept; at the bound an arbitrary one goes.
	maxHeads   = 8192
	headShards = 64
)

func headShard(id string) int {
	h := uint32(2166136261) // FNV-1a
	for i := 0; i < len(id); i++ {
		h = (h ^ uint32(id[i])) * 16777619
	}
	return int(h % headShards)
}

// watch subscribes the cache to st's doorbell, once.
func (c *headCache) watch(st store.Store) {
	c.once.Do(func() {
		// The subscription lasts as long as the store: a Service lives as
		// long as the store it was made on.
		st.OnChange(func(typ, id string) {
			if typ == store.TypeNote {
				c.drop(id)
			}
		})
	})
}

func (c *headCache) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// get answers Note id's head if it is fresh.
func (c *headCache) get(id string) (cachedHead, bool) {
	now := c.clock()
	c.mu.Lock()
	defer c.mu.Unlock()
	h, ok := c.m[id]
	fresh := c.fresh
	if fresh == 0 {
		fresh = headFresh
	}
	if !ok || c.busy[id] > 0 || now.Sub(h.at) >= fresh || now.Before(h.at) {
		return cachedHead{}, false
	}
	return h, true
}

// begin is called before a store read of Note id's head: it answers the
// generation put checks, and the time the read began.
func (c *headCache) begin(id string) (uint64, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen[headShard(id)], c.clock()
}

// put keeps h as Note id's head, read by a store read that began at gen,
// unless a doorbell rang or a write of this node ran since.
func (c *headCache) put(id string, gen uint64, h cachedHead) {
	h.r.Doc = nil
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen[headShard(id)] != gen || c.busy[id] > 0 {
		return
	}
	if c.m == nil {
		c.m = map[string]cachedHead{}
	}
	if _, ok := c.m[id]; !ok && len(c.m) >= maxHeads {
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[id] = h
}

// drop forgets Note id's head, and makes every store read of it begun
// before now keep nothing.
func (c *headCache) drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen[headShard(id)]++
	delete(c.m, id)
}

// writing marks a write of this node to Note id until the returned func is
// called (after the write returned, its doorbell rung): meanwhile the
// Note's head is not served from the cache, nor kept.
func (c *headCache) writing(id string) (done func()) {
	c.mu.Lock()
	if c.busy == nil {
		c.busy = map[string]int{}
	}
	c.busy[id]++
	c.gen[headShard(id)]++
	delete(c.m, id)
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.busy[id]--; c.busy[id] <= 0 {
			delete(c.busy, id)
		}
		c.gen[headShard(id)]++
		delete(c.m, id)
	}
}
