package note

import (
	"strconv"
	"unicode/utf8"

	"foundry/internal/parts"
)

// The markdown tab is stored as chunks of text ("m/<n>") whose order is in
// the head. An edit rewrites the chunks its changed bytes fall in; a chunk
// that grows past chunkMax is cut again. Every cut is at a rune boundary.
var markdownKind = kind{
	fixed: true,
	ops:   []string{"replace_text"},
	fits:  "replace_text",
	read:  func(d *Doc, t *Tab, c *Content) { c.Text = &d.Markdown },
	diff: func(w *writer, base, next *Doc, bt, t *Tab, ht *headTab) error {
		diffMarkdown(w, base, next)
		return nil
	},
	assemble: func(a *assembler, d *Doc, t *Tab, ht headTab) error {
		var baseAt map[int][2]int // chunk ID → offset and length in base.Markdown
		if a.base != nil {
			baseAt = map[int][2]int{}
			off := 0
			for _, c := range a.base.lay.chunks {
				baseAt[c.id] = [2]int{off, c.n}
				off += c.n
			}
		}
		buf := make([]byte, 0, 64)
		for _, id := range a.chunkIDs {
			key := chunkKey(id)
			data, ok := a.part(key)
			if !ok {
				at, inBase := baseAt[id]
				if !inBase {
					return missing(key)
				}
				data = []byte(a.base.Markdown[at[0] : at[0]+at[1]])
			} else if data == nil {
				return missing(key)
			}
			buf = append(buf, data...)
			a.lay.chunks = append(a.lay.chunks, chunkRef{id, len(data)})
		}
		d.Markdown = string(buf)
		return nil
	},
}

func chunkKey(id int) string { return "m/" + strconv.Itoa(id) }

func diffMarkdown(w *writer, base, next *Doc) {
	var old string
	var chunks []chunkRef
	if base.lay != nil {
		if base.Markdown == next.Markdown {
			w.next.chunks = base.lay.chunks
			return
		}
		old, chunks = base.Markdown, base.lay.chunks
	}
	text := next.Markdown
	p := parts.CommonPrefix(old, text)
	s := parts.CommonSuffix(old[p:], text[p:])
	// Chunks i..j hold the changed bytes [p, len(old)-s) of old; a pure
	// insertion goes into the chunk it falls in (the last one at the end).
	starts := make([]int, len(chunks)+1)
	for k, c := range chunks {
		starts[k+1] = starts[k] + c.n
	}
	i, j := -1, -1
	if len(chunks) > 0 {
		i = len(chunks) - 1
		for k := range chunks {
			if starts[k+1] > p {
				i = k
				break
			}
		}
		j = i
		for k := i; k < len(chunks); k++ {
			if starts[k] < len(old)-s {
				j = k
			}
		}
	}
	a, b := 0, 0
	if i >= 0 {
		a, b = starts[i], starts[j+1]
	}
	region := text[a : b+len(text)-len(old)]
	pieces := cutText(region)
	var reuse []chunkRef
	if i >= 0 {
		reuse = chunks[i : j+1]
	}
	mid := make([]chunkRef, 0, len(pieces))
	for k, piece := range pieces {
		var id int
		var prev []byte
		if k < len(reuse) {
			id = reuse[k].id
			prev = []byte(old[starts[i+k]:starts[i+k+1]])
		} else {
			id = w.next.nextChunk
			w.next.nextChunk++
		}
		w.put(chunkKey(id), prev, []byte(piece))
		mid = append(mid, chunkRef{id, len(piece)})
	}
	for k := len(pieces); k < len(reuse); k++ {
		w.put(chunkKey(reuse[k].id), nil, nil)
	}
	out := make([]chunkRef, 0, len(chunks)+len(pieces))
	if i >= 0 {
		out = append(out, chunks[:i]...)
	}
	out = append(out, mid...)
	if i >= 0 {
		out = append(out, chunks[j+1:]...)
	}
	w.next.chunks = out
}

// cutText cuts s into pieces of at most chunkMax bytes (about chunkTarget
// each when it has to cut), at rune boundaries. "" is no pieces.
func cutText(s string) []string {
	if len(s) == 0 {
		return nil
	}
	if len(s) <= chunkMax {
		return []string{s}
	}
	var out []string
	for len(s) > chunkMax {
		n := chunkTarget
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}
