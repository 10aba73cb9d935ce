package note

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"foundry/internal/parts"
)

// store is a naive model of the tables a Note is stored in: live parts
// (tombstones kept), and history per version.
type partStore struct {
	head    []byte
	live    map[string][]byte
	hist    map[string][]histEntry // key → entries by version
	heads   map[int][]byte         // version → head (when it changed)
	version int
}

type histEntry struct {
	version int
	full    bool
	data    []byte // nil: gone
}

func (s *partStore) apply(t *testing.T, w Writes) []Part {
	t.Helper()
	s.version++
	if w.Head != nil {
		s.head = w.Head
		s.heads[s.version] = w.Head
	}
	var changed []Part
	for _, p := range w.Parts {
		s.live[p.Key] = p.Data
		if !p.Full && p.Data == nil {
			t.Fatalf("tombstone %s kept as a delta", p.Key)
		}
		hd := p.Hist
		if p.Data == nil {
			hd = nil
		}
		s.hist[p.Key] = append(s.hist[p.Key], histEntry{s.version, p.Full, hd})
		changed = append(changed, Part{Key: p.Key, Data: p.Data, ChainLen: p.ChainLen, ChainBytes: p.ChainBytes})
	}
	return changed
}

// at rebuilds version v from history alone.
func (s *partStore) at(t *testing.T, v int) Doc {
	t.Helper()
	var head []byte
	for u := v; u >= 1; u-- {
		if h, ok := s.heads[u]; ok {
			head = h
			break
		}
	}
	var ps []Part
	for key, es := range s.hist {
		var data []byte
		have := false
		for _, e := range es {
			if e.version > v {
				break
			}
			switch {
			case e.full:
				data, have = e.data, e.data != nil
			case !have:
				t.Fatalf("%s v%d: delta with no snapshot before it", key, e.version)
			default:
				var err error
				if data, err = parts.Apply(data, e.data); err != nil {
					t.Fatalf("%s v%d: %v", key, e.version, err)
				}
			}
		}
		if have {
			ps = append(ps, Part{Key: key, Data: data})
		}
	}
	d, err := Assemble(head, ps, nil)
	if err != nil {
		t.Fatalf("rebuild v%d: %v", v, err)
	}
	return d
}

func (s *partStore) all() []Part {
	var out []Part
	for k, v := range s.live {
		out = append(out, Part{Key: k, Data: v})
	}
	return out
}

func docJSON(t *testing.T, d Doc) string {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// randomEdit changes d (a Clone) by one random operation of this package.
func randomEdit(r *rand.Rand, d *Doc, now time.Time) {
	var sheets, decks []string
	for _, t := range d.Tabs {
		switch t.Type {
		case TypeSheet:
			sheets = append(sheets, t.ID)
		case TypeSlides:
			decks = append(decks, t.ID)
		}
	}
	words := []string{"a", "é", "日本", "😀", "\n", "word ", "x,y", `"q"`}
	text := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(words[r.Intn(len(words))])
		}
		return b.String()
	}
	switch op := r.Intn(12); {
	case op == 0 && len(d.Tabs) < 12:
		typ := TypeSheet
		if r.Intn(2) == 0 {
			typ = TypeSlides
		}
		_, _ = CreateTab(d, typ, "", nil, now)
	case op <= 3 && len(sheets) > 0:
		vals := make([][]any, 1+r.Intn(5))
		for i := range vals {
			vals[i] = make([]any, 1+r.Intn(5))
			for j := range vals[i] {
				switch r.Intn(4) {
				case 0:
					vals[i][j] = float64(r.Intn(1000))
				case 1:
					vals[i][j] = text(2)
				case 2:
					vals[i][j] = r.Intn(2) == 0
				}
			}
		}
		if _, err := SheetSetRange(d, sheets[r.Intn(len(sheets))], "", r.Intn(100), r.Intn(100), vals); err != nil {
			panic(err)
		}
	case op == 4 && len(sheets) > 0:
		rows := r.Intn(40)
		cells := make([][]any, rows)
		for i := range cells {
			cells[i] = make([]any, r.Intn(70))
			for j := range cells[i] {
				if r.Intn(3) == 0 {
					cells[i][j] = float64(j)
				}
			}
		}
		data, _ := json.Marshal(map[string]any{"sheets": []any{map[string]any{"name": "S", "cells": cells}}})
		if err := ReplaceTabData(d, sheets[r.Intn(len(sheets))], data); err != nil {
			panic(err)
		}
	case op == 5 && len(decks) > 0:
		_, _ = SlideAdd(d, decks[r.Intn(len(decks))], SlideInput{Title: text(2), Body: text(5)})
	case op == 6 && len(decks) > 0:
		data, _ := json.Marshal(map[string]any{"slides": []any{map[string]any{"title": "T", "body": text(3)}}})
		if err := ReplaceTabData(d, decks[r.Intn(len(decks))], data); err != nil {
			panic(err)
		}
	case op == 7 && len(d.Tabs) > 3:
		_ = DeleteTab(d, d.Tabs[3+r.Intn(len(d.Tabs)-3)].ID)
	case op == 8:
		_, _, _ = AddSource(d, text(2), fmt.Sprintf("https://example.com/%d", r.Intn(20)), now)
	case op == 9:
		_ = MoveTab(d, d.Tabs[r.Intn(len(d.Tabs))].ID, r.Intn(len(d.Tabs)))
	default:
		// Text: a splice somewhere, sometimes a big insertion.
		m := d.Markdown
		at := r.Intn(len(m) + 1)
		for at > 0 && at < len(m) && (m[at]&0xC0) == 0x80 {
			at--
		}
		end := min(len(m), at+r.Intn(30))
		for end < len(m) && (m[end]&0xC0) == 0x80 {
			end++
		}
		ins := text(r.Intn(8))
		if r.Intn(10) == 0 {
			ins = strings.Repeat(text(20), 200)
		}
		d.Markdown = m[:at] + ins + m[end:]
	}
}

// Every version a random sequence of edits made reads back exactly: from
// all live parts, from an older Doc and the parts written since, and from
// history alone; history never keeps a delta chain past its bound.
func TestPartsRoundTripAgainstFullCopies(t *testing.T) {
	for seed := int64(1); seed <= 6; seed++ {
		r := rand.New(rand.NewSource(seed))
		now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
		s := &partStore{live: map[string][]byte{}, hist: map[string][]histEntry{}, heads: map[int][]byte{}}
		cur := New("Round trip")
		w, err := Diff(&Doc{}, &cur)
		if err != nil {
			t.Fatal(err)
		}
		s.apply(t, w)
		model := []string{"", docJSON(t, cur)} // model[v] is version v, a full copy
		for step := 0; step < 300; step++ {
			next := Clone(&cur)
			randomEdit(r, &next, now.Add(time.Duration(step)*time.Second))
			before := docJSON(t, cur)
			w, err := Diff(&cur, &next)
			if err != nil {
				t.Fatal(err)
			}
			if got := docJSON(t, cur); got != before {
				t.Fatalf("seed %d step %d: the edit changed the Doc it was cloned from", seed, step)
			}
			changed := s.apply(t, w)
			model = append(model, docJSON(t, next))
			cold, err := Assemble(s.head, s.all(), nil)
			if err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
			if got := docJSON(t, cold); got != model[s.version] {
				t.Fatalf("seed %d step %d: cold read differs:\n got %.300s\nwant %.300s", seed, step, got, model[s.version])
			}
			warm, err := Assemble(s.head, changed, &cur)
			if err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
			if got := docJSON(t, warm); got != model[s.version] {
				t.Fatalf("seed %d step %d: read from the older Doc differs", seed, step)
			}
			if warm.StoredBytes() != next.StoredBytes() || cold.StoredBytes() != next.StoredBytes() {
				t.Fatalf("seed %d step %d: sizes differ: %d %d %d", seed, step, warm.StoredBytes(), cold.StoredBytes(), next.StoredBytes())
			}
			cur = warm
		}
		for v := 1; v <= s.version; v++ {
			if got := docJSON(t, s.at(t, v)); got != model[v] {
				t.Fatalf("seed %d: version %d rebuilt from history differs:\n got %.300s\nwant %.300s", seed, v, got, model[v])
			}
		}
		for key, es := range s.hist {
			chain := 0
			for _, e := range es {
				if e.full {
					chain = 0
				} else if chain++; chain > maxChain {
					t.Fatalf("%s: delta chain of %d", key, chain)
				}
			}
		}
	}
}

// A one-cell edit of a big sheet writes one block and no head, and keeps a
// small delta in history.
func TestOneCellEditWritesOneBlock(t *testing.T) {
	d := New("Big")
	now := time.Now()
	tab, _ := CreateTab(&d, TypeSheet, "", nil, now)
	for r := 0; r < 300; r += 100 {
		vals := make([][]any, 100)
		for i := range vals {
			vals[i] = make([]any, 100)
			for j := range vals[i] {
				vals[i][j] = float64(r*100 + i*100 + j)
			}
		}
		for c := 0; c < 300; c += 100 {
			if _, err := SheetSetRange(&d, tab.ID, "", r, c, vals); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := Diff(&Doc{}, &d); err != nil {
		t.Fatal(err)
	}
	next := Clone(&d)
	if _, err := SheetSetRange(&next, tab.ID, "", 150, 150, [][]any{{"changed"}}); err != nil {
		t.Fatal(err)
	}
	w, err := Diff(&d, &next)
	if err != nil {
		t.Fatal(err)
	}
	if w.Head != nil || len(w.Parts) != 1 {
		t.Fatalf("one-cell edit wrote head=%v and %d parts", w.Head != nil, len(w.Parts))
	}
	p := w.Parts[0]
	if want := blockKey(tab.ID, next.Tabs[3].Sheets[0].ID, 150/BlockRows, 150/BlockCols); p.Key != want || p.Full || len(p.Hist) > 64 {
		t.Fatalf("wrote %s (full %v, %d bytes of history); want a small delta of %s", p.Key, p.Full, len(p.Hist), want)
	}
}

// Editing one character of a long text rewrites the chunk it is in, not
// the text.
func TestOneCharacterEditWritesOneChunk(t *testing.T) {
	d := New("Long")
	d.Markdown = strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	if _, err := Diff(&Doc{}, &d); err != nil {
		t.Fatal(err)
	}
	next := Clone(&d)
	next.Markdown = d.Markdown[:500_000] + "X" + d.Markdown[500_001:]
	w, err := Diff(&d, &next)
	if err != nil {
		t.Fatal(err)
	}
	if w.Head != nil || len(w.Parts) != 1 || len(w.Parts[0].Data) > chunkMax || w.Parts[0].Full {
		t.Fatalf("one-character edit wrote head=%v, %d parts", w.Head != nil, len(w.Parts))
	}
}
