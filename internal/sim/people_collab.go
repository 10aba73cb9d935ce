package sim

import (
	"context"
	"encoding/json"
	"fmt"

	"foundry/internal/changeset"
	"foundry/internal/service"
)

// The people's live sync: the web editor's load, push and pull, on the
// service (the routes GET and POST /api/notes/{id}/text call the same).

var _ livePeer = (*Person)(nil)

// LoadText is the markdown text, its revision and the Note's version, as
// the editor loads them.
func (p *Person) LoadText(ctx context.Context, noteID string) (string, int64, int64, error) {
	d, v, err := p.Snapshot(ctx, noteID)
	return d.Markdown, d.TextRev, v, err
}

// PushText pushes the editor's change sets based on revision rev.
func (p *Person) PushText(ctx context.Context, noteID string, rev int64, clientID string, updates []changeset.ChangeSet) (bool, int64, error) {
	raw := make([]json.RawMessage, len(updates))
	for i, u := range updates {
		b, err := json.Marshal(u)
		if err != nil {
			return false, 0, fmt.Errorf("change set: %w", err)
		}
		raw[i] = b
	}
	res, err := p.Svc.PushText(ctx, p.as(), service.PushTextArgs{NoteID: noteID, Rev: rev, ClientID: clientID, Updates: raw})
	return res.Accepted, res.Rev, err
}

// PullText is the updates after revision after.
func (p *Person) PullText(ctx context.Context, noteID string, after int64) (pulledText, error) {
	u, err := p.Svc.TextUpdatesAfter(ctx, p.as(), noteID, after)
	if err != nil {
		return pulledText{}, err
	}
	out := pulledText{Rev: u.Rev, Resync: u.Resync, Text: u.Text}
	for _, x := range u.Updates {
		out.Updates = append(out.Updates, pulledUpdate{Rev: x.Rev, ClientID: x.ClientID, Changes: x.Changes})
	}
	return out, nil
}
