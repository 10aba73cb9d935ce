package service

import (
	"context"
	"fmt"

	"foundry/internal/note"
	"foundry/internal/store"
)

// UpgradeNotes stores by parts every Note still stored whole (as Foundry
// did before Notes were stored by parts), each at its current version: no
// new version, so no agent's expected_version goes stale. Versions before
// it stay in history as they were and are read as they were. It answers
// how many Notes it moved; a Note written meanwhile is left for the next
// start (it is read as it is until then, and its next write stores it by
// parts anyway).
func UpgradeNotes(ctx context.Context, st store.Store) (int, error) {
	wss, err := st.Workspaces(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, ws := range wss {
		after := ""
		for {
			rows, err := st.List(ctx, store.ListQuery{Workspace: ws.ID, Type: store.TypeNote, AfterID: after, Limit: 10, WithDoc: true})
			if err != nil {
				return n, err
			}
			for _, r := range rows {
				if note.IsHead(r.Doc) {
					continue
				}
				d, err := note.Assemble(r.Doc, nil, nil)
				if err != nil {
					return n, fmt.Errorf("note %s: %w", r.ID, err)
				}
				w, err := note.Diff(&note.Doc{}, &d)
				if err != nil {
					return n, fmt.Errorf("note %s: %w", r.ID, err)
				}
				done, err := st.StoreParts(ctx, store.TypeNote, r.ID, r.Version, w.Head, w.Parts)
				if err != nil {
					return n, fmt.Errorf("note %s: %w", r.ID, err)
				}
				if done {
					n++
				}
			}
			if len(rows) < 10 {
				break
			}
			after = rows[len(rows)-1].ID
		}
	}
	return n, nil
}
