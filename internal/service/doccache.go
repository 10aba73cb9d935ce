package service

import (
	"container/list"
	"sync"

	"foundry/internal/note"
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
