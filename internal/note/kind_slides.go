package note

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"foundry/internal/problem"
)

// A slides tab is stored as one part per slide ("s/<tab>/<slide>"); the
// order of the deck is in the head. slide_add writes one slide and the head.
var slidesKind = kind{
	label: "Slides",
	ops:   []string{"slide_add", "slides_add_outline", "replace_tab_data"},
	fits:  "slide_add, slides_add_outline or replace_tab_data",
	create: func(d *Doc, t *Tab, outline []SlideInput) {
		t.Slides = newSlides(d, outline)
	},
	checkData: func(data json.RawMessage) (TabData, error) {
		var in struct {
			Slides *[]SlideInput `json:"slides"`
		}
		if err := decodeStrict(data, &in); err != nil {
			return TabData{}, err
		}
		if in.Slides == nil {
			return TabData{}, problem.New(problem.Invalid, "slides", `data of a slides tab is {"slides": [{"title": ..., "body": ..., "notes": ...}, ...]}; slides is missing`)
		}
		if len(*in.Slides) > MaxSlidesPerTab {
			return TabData{}, deckLimit(len(*in.Slides))
		}
		if err := checkSlides(*in.Slides, "slides"); err != nil {
			return TabData{}, err
		}
		return TabData{slides: *in.Slides}, nil
	},
	replaceData: func(d *Doc, t *Tab, td TabData) {
		next := newSlides(d, td.slides)
		keepLooks(t.Slides, next)
		t.Slides = next
	},
	read: func(d *Doc, t *Tab, c *Content) { c.Slides = nonNilList(t.Slides) },
	diff: func(w *writer, base, next *Doc, bt, t *Tab, ht *headTab) error {
		had := map[string]*Slide{}
		if bt != nil {
			for i := range bt.Slides {
				had[bt.Slides[i].ID] = &bt.Slides[i]
			}
		}
		now := map[string]bool{}
		for _, s := range t.Slides {
			if now[s.ID] {
				return fmt.Errorf("tab %s: slide ID %s appears twice", t.ID, s.ID)
			}
			now[s.ID] = true
			ht.Slides = append(ht.Slides, s.ID)
			b := had[s.ID]
			if b != nil && *b == s {
				continue
			}
			var old []byte
			if b != nil {
				old, _ = json.Marshal(b)
			}
			data, err := json.Marshal(s)
			if err != nil {
				return err
			}
			w.put(slideKey(t.ID, s.ID), old, data)
		}
		if bt != nil {
			for _, s := range bt.Slides {
				if !now[s.ID] {
					w.put(slideKey(t.ID, s.ID), nil, nil)
				}
			}
		}
		return nil
	},
	assemble: func(a *assembler, d *Doc, t *Tab, ht headTab) error {
		var had map[string]*Slide
		if bt := a.baseTab(t.ID, TypeSlides); bt != nil {
			had = map[string]*Slide{}
			for i := range bt.Slides {
				had[bt.Slides[i].ID] = &bt.Slides[i]
			}
		}
		for _, id := range ht.Slides {
			key := slideKey(t.ID, id)
			data, ok := a.part(key)
			switch {
			case ok && data != nil:
				var s Slide
				if err := json.Unmarshal(data, &s); err != nil {
					return fmt.Errorf("note part %s: %w", key, err)
				}
				t.Slides = append(t.Slides, s)
			case !ok && had[id] != nil:
				t.Slides = append(t.Slides, *had[id])
			default:
				return missing(key)
			}
		}
		return nil
	},
	prefix: func(tabID string) string { return "s/" + tabID + "/" },
}

// Slide layouts and themes: people pick them in the editor; the connector
// cannot write them. "" is the default (SlideLayoutDefault, SlideThemeDefault).
var (
	SlideLayouts = []string{"title-body", "title", "section", "two-column", "quote"}
	SlideThemes  = []string{"paper", "ink", "ocean", "forest", "sunset"}
)

// SlideLayoutDefault and SlideThemeDefault are what a slide with no layout
// or theme set is shown in.
const (
	SlideLayoutDefault = "title-body"
	SlideThemeDefault  = "paper"
)

// CheckSlideLook checks a layout and a theme a person gives (nil: not
// given; "": back to the default).
func CheckSlideLook(layout, theme *string) error {
	for _, f := range []struct {
		name    string
		v       *string
		allowed []string
	}{{"layout", layout, SlideLayouts}, {"theme", theme, SlideThemes}} {
		if f.v == nil || *f.v == "" || slices.Contains(f.allowed, *f.v) {
			continue
		}
		return problem.New(problem.Invalid, f.name, "%s %s is not one of Foundry's slide %ss; give one of: %s (or \"\" for the default, %s)",
			f.name, Quote(problem.Excerpt(*f.v)), f.name, strings.Join(f.allowed, ", "), f.allowed[0]).With("allowed", f.allowed)
	}
	return nil
}

// keepLooks gives the slides of a replaced deck the layout and theme people
// set on the slides they replace: replace_tab_data carries no slide IDs
// (the connector writes title, body and notes only), so a new slide takes
// the look of the old slide with the same title, or else of the old slide
// at its position that no other new slide took by title. A look is never
// set by the connector, only kept.
func keepLooks(old, next []Slide) {
	if len(old) == 0 {
		return
	}
	used := make([]bool, len(old))
	took := make([]bool, len(next))
	byTitle := map[string][]int{}
	for i, s := range old {
		byTitle[s.Title] = append(byTitle[s.Title], i)
	}
	for j := range next {
		if l := byTitle[next[j].Title]; len(l) > 0 {
			i := l[0]
			byTitle[next[j].Title] = l[1:]
			used[i], took[j] = true, true
			next[j].Layout, next[j].Theme = old[i].Layout, old[i].Theme
		}
	}
	for j := range next {
		if !took[j] && j < len(old) && !used[j] {
			used[j] = true
			next[j].Layout, next[j].Theme = old[j].Layout, old[j].Theme
		}
	}
}

func slideKey(tab, slide string) string { return "s/" + tab + "/" + slide }

// The sources and files tabs are fixed; their lists live on the Doc and are
// stored as one part each ("src", "fil"). Sources are added with
// add_note_source, files by people: no edit operation works on them.
var sourcesKind = listKind(sourcesKey, func(d *Doc) *[]Source { return &d.Sources }, func(c *Content, l []Source) { c.Sources = l })

var filesKind = listKind(filesKey, func(d *Doc) *[]File { return &d.Files }, func(c *Content, l []File) { c.Files = l })

func listKind[T comparable](key string, list func(d *Doc) *[]T, read func(c *Content, l []T)) kind {
	return kind{
		fixed: true,
		read:  func(d *Doc, t *Tab, c *Content) { read(c, nonNilList(*list(d))) },
		diff: func(w *writer, base, next *Doc, bt, t *Tab, ht *headTab) error {
			nl := *list(next)
			var old []byte
			if base.lay != nil {
				bl := *list(base)
				if slices.Equal(bl, nl) {
					return nil
				}
				old, _ = json.Marshal(nonNilList(bl))
			}
			data, err := json.Marshal(nonNilList(nl))
			if err != nil {
				return err
			}
			w.put(key, old, data)
			return nil
		},
		assemble: func(a *assembler, d *Doc, t *Tab, ht headTab) error {
			data, ok := a.part(key)
			switch {
			case ok && data != nil:
				var l []T
				if err := json.Unmarshal(data, &l); err != nil {
					return fmt.Errorf("note part %s: %w", key, err)
				}
				*list(d) = nonNilList(l)
			case !ok && a.base != nil:
				*list(d) = *list(a.base)
			default:
				return missing(key)
			}
			return nil
		},
	}
}

func nonNilList[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}
