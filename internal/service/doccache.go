package service

import (
	"sync"

	"foundry/internal/note"
)

// docCache keeps decoded Note documents by ID and version, so reads of an
// unchanged Note skip loading and decoding it. A version identifies a
// document exactly on every node, so a hit is never stale. Cached documents
// are shared: callers only read them.
type docCache struct {
	mu sync.Mutex
	m  map[string]cachedDoc
}

type cachedDoc struct {
	version int64
	doc     note.Doc
}

const docCacheSize = 256

func (c *docCache) get(id string, version int64) (note.Doc, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[id]
	return e.doc, ok && e.version == version
}

func (c *docCache) put(id string, version int64, d note.Doc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]cachedDoc{}
	}
	if len(c.m) >= docCacheSize {
		for k := range c.m { // evict one at random: simple and bounded
			delete(c.m, k)
			break
		}
	}
	c.m[id] = cachedDoc{version, d}
}
