package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"

	"foundry/internal/parts"
	"foundry/internal/store"
)

// testPartsHistory: parts written by guarded writes, as snapshots and
// splices, rebuild at every version, all of them or by key (outside a
// write and inside one), and the keys a range of versions wrote are listed
// once each, with the parts gone in them.
func testPartsHistory(t *testing.T, s store.Store) {
	ctx := context.Background()
	ws := Seed(t, s)
	id := Create(t, s, ws)
	// want[v] is every part at version v.
	want := map[int64]map[string]string{1: {}}
	wrote := map[int64][]string{1: nil}
	now := map[string]string{}
	write := func(v int64, ws_ []parts.Write) {
		t.Helper()
		if _, err := s.Guarded(ctx, store.Mutation{Workspace: ws, Type: store.TypeNote, ID: id, ExpectedVersion: v, Actor: "test",
			Apply: func(cur *store.Resource) (*store.Change, error) {
				return &store.Change{Kind: "edited", Result: json.RawMessage(`{}`), Parts: ws_}, nil
			}}); err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, w := range ws_ {
			keys = append(keys, w.Key)
			if w.Data == nil {
				delete(now, w.Key)
			} else {
				now[w.Key] = string(w.Data)
			}
		}
		slices.Sort(keys)
		want[v+1], wrote[v+1] = maps.Clone(now), keys
	}
	full := func(key, data string) parts.Write {
		return parts.Write{Key: key, Data: []byte(data), Hist: []byte(data), Full: true}
	}
	splice := func(key, old, data string, chain int) parts.Write {
		d := parts.Splice([]byte(old), []byte(data))
		return parts.Write{Key: key, Data: []byte(data), Hist: d, ChainLen: chain, ChainBytes: chain * len(d)}
	}
	write(1, []parts.Write{full("a", "alpha"), full("b", "bravo"), full("c/1", "charlie")})
	write(2, []parts.Write{splice("a", "alpha", "alphabet", 1)})
	write(3, []parts.Write{{Key: "b", Full: true}, full("d", "delta")})
	write(4, []parts.Write{splice("a", "alphabet", "alpha beta", 2), full("b", "bravo again")})
	write(5, nil) // a version that wrote no part

	for v := int64(1); v <= 6; v++ {
		ps, err := s.VersionParts(ctx, store.TypeNote, id, v)
		if err != nil {
			t.Fatal(err)
		}
		if got := partMap(ps); !reflect.DeepEqual(got, want[v]) {
			t.Fatalf("VersionParts at %d = %v, want %v", v, got, want[v])
		}
		for _, keys := range [][]string{{"a"}, {"b", "d"}, {"a", "b", "c/1", "d", "never"}} {
			sub := map[string]string{}
			for _, k := range keys {
				if x, ok := want[v][k]; ok {
					sub[k] = x
				}
			}
			ps, err := s.VersionPartsOf(ctx, store.TypeNote, id, v, keys)
			if err != nil {
				t.Fatal(err)
			}
			if got := partMap(ps); !reflect.DeepEqual(got, sub) {
				t.Fatalf("VersionPartsOf(%d, %v) = %v, want %v", v, keys, got, sub)
			}
		}
		if ps, err := s.VersionPartsOf(ctx, store.TypeNote, id, v, nil); err != nil || len(ps) != 0 {
			t.Fatalf("VersionPartsOf(%d) of no key = %v, %v; want nothing", v, ps, err)
		}
		keys, err := s.PartKeys(ctx, store.TypeNote, id, v, v)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(keys, wrote[v]) {
			t.Fatalf("PartKeys(%d, %d) = %v, want %v", v, v, keys, wrote[v])
		}
	}
	if keys, err := s.PartKeys(ctx, store.TypeNote, id, 2, 5); err != nil || !slices.Equal(keys, []string{"a", "b", "c/1", "d"}) {
		t.Fatalf("PartKeys(2, 5) = %v, %v; want each key written in 2…5 once, in order", keys, err)
	}
	if keys, err := s.PartKeys(ctx, store.TypeNote, id, 6, 99); err != nil || len(keys) != 0 {
		t.Fatalf("PartKeys(6, 99) = %v, %v; want none", keys, err)
	}

	// Inside a write, the parts of an older version read as outside it.
	var inside []parts.Part
	if _, err := s.Guarded(ctx, store.Mutation{Workspace: ws, Type: store.TypeNote, ID: id, ExpectedVersion: 6, Actor: "test",
		ApplyTx: func(cur *store.Resource, tx store.TxReader) (*store.Change, error) {
			var err error
			if inside, err = tx.VersionParts(3, []string{"a", "b", "d"}); err != nil {
				return nil, err
			}
			none, err := tx.VersionParts(3, nil)
			if err != nil || len(none) != 0 {
				return nil, fmt.Errorf("VersionParts of no key in a write = %v, %v; want nothing", none, err)
			}
			return &store.Change{Unchanged: true, Result: json.RawMessage(`{}`)}, nil
		}}); err != nil {
		t.Fatal(err)
	}
	if got := partMap(inside); !reflect.DeepEqual(got, map[string]string{"a": "alphabet", "b": "bravo"}) {
		t.Fatalf("VersionParts(3) inside a write = %v", got)
	}
	// Through the token cache, the same.
	w := store.WithTokenCache(s)
	ps, err := w.VersionPartsOf(ctx, store.TypeNote, id, 4, []string{"d", "a"})
	if err != nil || !reflect.DeepEqual(partMap(ps), map[string]string{"a": "alphabet", "d": "delta"}) {
		t.Fatalf("VersionPartsOf through the token cache = %v, %v", partMap(ps), err)
	}
	if keys, err := w.PartKeys(ctx, store.TypeNote, id, 4, 4); err != nil || !slices.Equal(keys, []string{"b", "d"}) {
		t.Fatalf("PartKeys through the token cache = %v, %v", keys, err)
	}
}

func partMap(ps []parts.Part) map[string]string {
	m := map[string]string{}
	for _, p := range ps {
		m[p.Key] = string(p.Data)
	}
	return m
}
