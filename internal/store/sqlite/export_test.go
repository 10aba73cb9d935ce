package sqlite

import (
	"context"
	"slices"
)

// Faults is faults, for the external tests.
type Faults = faults

// OpenWithFaults opens a store whose writer consults f.
func OpenWithFaults(ctx context.Context, dir string, opts Options, f *Faults) (*Store, error) {
	return open(ctx, dir, opts, f)
}

// OwnCursors lists the cursors marked as this process's own that the
// watcher has not seen yet.
func OwnCursors(s *Store) []int64 {
	s.w8.mu.Lock()
	defer s.w8.mu.Unlock()
	var cs []int64
	for c := range s.w8.own {
		cs = append(cs, c)
	}
	slices.Sort(cs)
	return cs
}

// Closing is closed once Close has stopped queuing.
func Closing(s *Store) <-chan struct{} { return s.done }
