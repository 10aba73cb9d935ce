package service

import (
	"context"

	"foundry/internal/changeset"
)

// Stand-in for the text-change log (collab.go), rebuilt from history: each
// version's markdown against the one before, as one replacement. Removed
// when the log lands.

// TextUpdate is one change set of the markdown text.
type TextUpdate struct {
	Version int64               `json:"version"`
	Changes changeset.ChangeSet `json:"changes"`
}

func (s *Service) textChangesSince(ctx context.Context, ws, noteID string, version int64) ([]TextUpdate, bool, error) {
	r, _, err := s.LoadNote(ctx, noteID)
	if err != nil {
		return nil, false, err
	}
	prev, err := s.NoteAt(ctx, noteID, version)
	if err != nil {
		return nil, false, nil
	}
	var ups []TextUpdate
	for v := version + 1; v <= r.Version; v++ {
		d, err := s.NoteAt(ctx, noteID, v)
		if err != nil {
			return nil, false, nil
		}
		if d.Markdown != prev.Markdown {
			a, b := prev.Markdown, d.Markdown
			p := 0
			for p < len(a) && p < len(b) && a[p] == b[p] {
				p++
			}
			q := 0
			for q < len(a)-p && q < len(b)-p && a[len(a)-1-q] == b[len(b)-1-q] {
				q++
			}
			for p > 0 && !utf8Start(a, p) {
				p--
			}
			for q > 0 && !utf8Start(a, len(a)-q) {
				q--
			}
			cs, err := changeset.Of([]changeset.Change{{From: len16(a[:p]), To: len16(a[:len(a)-q]), Insert: b[p : len(b)-q]}}, len16(a))
			if err != nil {
				return nil, false, nil
			}
			ups = append(ups, TextUpdate{Version: v, Changes: cs})
		}
		prev = d
	}
	return ups, true, nil
}

func utf8Start(s string, i int) bool { return i >= len(s) || s[i]&0xC0 != 0x80 }
