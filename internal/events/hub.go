// Package events wakes waiters when a resource changes. The feed itself is a
// table in the store; this is only the in-process doorbell. On PostgreSQL the
// store rings it from LISTEN/NOTIFY so a write on any node wakes every node.
package events

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
)

// Hub maps a resource to the channels of the requests waiting on it.
type Hub struct {
	mu        sync.Mutex
	waiters   map[string]map[chan struct{}]struct{}
	listeners map[int]func(typ, id string)
	next      int
}

func NewHub() *Hub { return &Hub{waiters: map[string]map[chan struct{}]struct{}{}} }

func key(typ, id string) string { return typ + "\x00" + id }

// Wait returns a channel closed at the next Notify for (typ, id).
func (h *Hub) Wait(typ, id string) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	k := key(typ, id)
	h.mu.Lock()
	if h.waiters[k] == nil {
		h.waiters[k] = map[chan struct{}]struct{}{}
	}
	h.waiters[k][ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		if _, ok := h.waiters[k][ch]; ok {
			delete(h.waiters[k], ch)
			if len(h.waiters[k]) == 0 {
				delete(h.waiters, k)
			}
		}
		h.mu.Unlock()
	}
}

// Notify wakes every waiter of (typ, id).
func (h *Hub) Notify(typ, id string) {
	k := key(typ, id)
	h.mu.Lock()
	ws := h.waiters[k]
	delete(h.waiters, k)
	ls := make([]func(typ, id string), 0, len(h.listeners))
	for _, l := range h.listeners {
		ls = append(ls, l)
	}
	h.mu.Unlock()
	for ch := range ws {
		close(ch)
	}
	for _, l := range ls {
		call(l, typ, id)
	}
}

// call runs one listener; a panic in it is logged with its stack and stops
// neither the other listeners nor the writer that rang the bell.
func call(l func(typ, id string), typ, id string) {
	defer func() {
		if v := recover(); v != nil {
			slog.Error("panic in a change listener", "type", typ, "id", id, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		}
	}()
	l(typ, id)
}

// OnNotify calls fn for every Notify (fn must not block); the returned func
// stops it.
func (h *Hub) OnNotify(fn func(typ, id string)) func() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.listeners == nil {
		h.listeners = map[int]func(typ, id string){}
	}
	h.next++
	n := h.next
	h.listeners[n] = fn
	return func() {
		h.mu.Lock()
		delete(h.listeners, n)
		h.mu.Unlock()
	}
}
