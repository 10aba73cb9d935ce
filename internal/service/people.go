package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"foundry/internal/auth"
	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/room"
	"foundry/internal/store"
)

// Owner is the workspace and its first user, as the CLI and server see them.
type Owner struct {
	Workspace store.Workspace
	User      store.User
}

// ErrNoWorkspace: the data has not been set up yet (the server creates the
// workspace on its first start).
var ErrNoWorkspace = errors.New("no workspace yet: the server creates it on its first start")

// FirstWorkspace returns the workspace and its owner (the first user).
func (s *Service) FirstWorkspace(ctx context.Context) (Owner, error) {
	ws, err := s.Store.Workspaces(ctx)
	if err != nil {
		return Owner{}, err
	}
	if len(ws) == 0 {
		return Owner{}, ErrNoWorkspace
	}
	users, err := s.Store.Users(ctx, ws[0].ID)
	if err != nil || len(users) == 0 {
		return Owner{}, errors.Join(err, errors.New("workspace has no owner"))
	}
	return Owner{Workspace: ws[0], User: users[0]}, nil
}

// Bootstrap creates the workspace and its owner if there is none; created
// says whether it did.
func (s *Service) Bootstrap(ctx context.Context, workspaceName, ownerEmail string) (o Owner, created bool, err error) {
	if o, err := s.FirstWorkspace(ctx); err == nil {
		return o, false, nil
	} else if !errors.Is(err, ErrNoWorkspace) {
		return Owner{}, false, err
	}
	now := s.Now().UTC()
	o = Owner{
		Workspace: store.Workspace{ID: store.NewID("ws"), Name: workspaceName, CreatedAt: now},
		User:      store.User{ID: store.NewID("usr"), Email: ownerEmail, Name: "Owner", Role: "owner", CreatedAt: now},
	}
	o.User.Workspace = o.Workspace.ID
	// Nodes starting together on a fresh database all get here: the store
	// lets one of them create, and the others read what it created.
	created, err = s.Store.CreateFirstWorkspace(ctx, o.Workspace, o.User)
	if err != nil {
		return Owner{}, false, err
	}
	if !created {
		o, err := s.FirstWorkspace(ctx)
		return o, false, err
	}
	return o, true, nil
}

// CreateNote is a person creating a Note; build may fill the new document.
func (s *Service) CreateNote(ctx context.Context, ws, owner, title string, approved bool, build func(d *note.Doc) error) (string, error) {
	title, err := note.CheckTitle(title)
	if err != nil {
		return "", err
	}
	d := note.New(title)
	if build != nil {
		if err := build(&d); err != nil {
			return "", err
		}
	}
	id := store.NewID("note")
	w, err := note.Diff(&note.Doc{}, &d)
	if err != nil {
		return "", err
	}
	_, err = s.Store.Guarded(ctx, store.Mutation{
		Workspace: ws, Type: store.TypeNote, ID: id, Actor: "user:" + owner,
		Create: &store.Resource{Owner: owner, Title: title, Approved: approved, Doc: w.Head},
		Apply: func(cur *store.Resource) (*store.Change, error) {
			return &store.Change{Kind: "note_created", Parts: w.Parts, Result: mustJSON(map[string]any{"note_id": id})}, nil
		},
	})
	if err == nil {
		s.docs.put(id, 1, &d)
	}
	return id, err
}

// SetNoteApproved switches connected access on or off (a person's act).
func (s *Service) SetNoteApproved(ctx context.Context, ws, user, id string, approved bool) error {
	_, err := s.Store.Guarded(ctx, store.Mutation{
		Workspace: ws, Type: store.TypeNote, ID: id, Actor: "user:" + user,
		ApplyTx: func(cur *store.Resource, tx store.TxReader) (*store.Change, error) {
			// A deleted Note stays out of every agent's reach.
			if _, err := tx.GetObject(KindNoteDeleted, id); err == nil {
				return nil, problem.New(problem.NotFound, "note_id", "Note %q was deleted", problem.Excerpt(id))
			} else if !errors.Is(err, store.ErrNotFound) {
				return nil, err
			}
			res := mustJSON(map[string]any{"approved": approved})
			if cur.Approved == approved {
				// Already so: nothing changes, so the version stays and no
				// agent is told its edit conflicts with this.
				return &store.Change{Unchanged: true, Result: res}, nil
			}
			return &store.Change{Approved: &approved, Kind: "access_changed", Result: res}, nil
		},
	})
	return storeProblem(err, store.Mutation{Type: store.TypeNote, ID: id})
}

// PersonEdit is a person's edit of a Note, guarded by the version their
// editor was based on (the REST door's If-Match).
func (s *Service) PersonEdit(ctx context.Context, ws, user, id string, expected int64, kind string, edit func(d *note.Doc) ([]string, error)) (int64, error) {
	if expected < 1 {
		return 0, problem.New("precondition_required", "expected_version", "a change must say which version it was based on")
	}
	var written *note.Doc
	m := store.Mutation{
		Workspace: ws, Type: store.TypeNote, ID: id, ExpectedVersion: expected, Actor: "user:" + user,
		ApplyTx: func(cur *store.Resource, tx store.TxReader) (*store.Change, error) {
			written = nil
			var changed []string
			// People's edits are held to the same size limit as agents'.
			d, w, err := s.editInTx(cur, tx, "note_id", func(d *note.Doc) (err error) {
				changed, err = edit(d)
				return err
			})
			if err != nil {
				return nil, err
			}
			if w.Head == nil && len(w.Parts) == 0 {
				// An edit that leaves the Note as it was (e.g. saving
				// unchanged text, restoring the current version) is no new
				// version.
				return &store.Change{Unchanged: true, Result: mustJSON(map[string]any{"version": cur.Version})}, nil
			}
			written = d
			return &store.Change{Doc: w.Head, Parts: w.Parts, Kind: kind, Changed: changed, Result: mustJSON(map[string]any{"version": cur.Version + 1})}, nil
		},
	}
	out, err := s.Store.Guarded(ctx, m)
	if err != nil {
		return 0, storeProblem(err, m)
	}
	if written != nil && !out.Replayed {
		s.docs.put(id, out.Version, written)
	}
	return out.Version, nil
}

// NoteAt rebuilds Note id as it was at version, from history.
func (s *Service) NoteAt(ctx context.Context, id string, version int64) (note.Doc, error) {
	head, err := s.Store.VersionDoc(ctx, store.TypeNote, id, version)
	if err != nil {
		return note.Doc{}, storeProblem(err, store.Mutation{Type: store.TypeNote, ID: id})
	}
	var ps []note.Part
	if note.IsHead(head) {
		if ps, err = s.Store.VersionParts(ctx, store.TypeNote, id, version); err != nil {
			return note.Doc{}, err
		}
	}
	d, err := note.Assemble(head, ps, nil)
	if err != nil {
		return note.Doc{}, fmt.Errorf("note %s version %d: %w", id, version, err)
	}
	return d, nil
}

// Restore makes an old version of a Note current again, as a new version.
func (s *Service) Restore(ctx context.Context, ws, user, id string, expected, version int64) (int64, error) {
	prev, err := s.NoteAt(ctx, id, version)
	if err != nil {
		return 0, err
	}
	return s.PersonEdit(ctx, ws, user, id, expected, "restored", func(d *note.Doc) ([]string, error) {
		prev := prev
		// Tab IDs are never reused: keep the counters of the newer document.
		prev.NextTabN, prev.NextItem = max(prev.NextTabN, d.NextTabN), max(prev.NextItem, d.NextItem)
		var changed []string
		for _, t := range note.Refs(d) {
			changed = append(changed, t.TabID)
		}
		*d = prev
		return changed, nil
	})
}

// Summary is one line of a person's list of Notes or Rooms.
type Summary struct {
	ID, Title string
	Version   int64
	Approved  bool // connected access (Rooms: always true)
	UpdatedAt time.Time
}

// WorkspaceNotes lists every Note of the workspace, approved or not, but
// not deleted: the owner's view, not an agent's.
func (s *Service) WorkspaceNotes(ctx context.Context, ws string) ([]Summary, error) {
	all, err := s.workspaceList(ctx, ws, store.TypeNote)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, n := range all {
		gone, err := s.noteDeleted(ctx, n.ID)
		if err != nil {
			return nil, err
		}
		if !gone {
			out = append(out, n)
		}
	}
	return out, nil
}

// WorkspaceRooms lists every cloud Room of the workspace.
func (s *Service) WorkspaceRooms(ctx context.Context, ws string) ([]Summary, error) {
	return s.workspaceList(ctx, ws, store.TypeRoom)
}

func (s *Service) workspaceList(ctx context.Context, ws, typ string) ([]Summary, error) {
	const page = 500
	var out []Summary
	after := ""
	for {
		rows, err := s.Store.List(ctx, store.ListQuery{Workspace: ws, Type: typ, AfterID: after, Limit: page})
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			out = append(out, Summary{ID: r.ID, Title: r.Title, Version: r.Version, Approved: r.Approved, UpdatedAt: r.UpdatedAt})
		}
		if len(rows) < page {
			return out, nil
		}
		after = rows[len(rows)-1].ID
	}
}

// ownNote is the Note id of workspace ws, without its document; a Note of
// another workspace is not found, as if it did not exist.
func (s *Service) ownNote(ctx context.Context, ws, id string) (store.Resource, error) {
	if err := CheckID("note_id", id); err != nil {
		return store.Resource{}, err
	}
	r, err := s.Store.Head(ctx, store.TypeNote, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && r.Workspace != ws) {
		return store.Resource{}, problem.New(problem.NotFound, "note_id", "Note %q is not in this workspace", problem.Excerpt(id))
	}
	return r, err
}

// NoteHistory is the list of a Note's versions, oldest first.
func (s *Service) NoteHistory(ctx context.Context, ws, id string) ([]store.VersionInfo, error) {
	if _, err := s.ownNote(ctx, ws, id); err != nil {
		return nil, err
	}
	return s.Store.History(ctx, store.TypeNote, id)
}

// RestoreVersion makes version of Note id current again, as a new version
// (a restore is itself a version, so it can be undone the same way). It
// returns the new version.
func (s *Service) RestoreVersion(ctx context.Context, ws, user, id string, version int64) (int64, error) {
	r, err := s.ownNote(ctx, ws, id)
	if err != nil {
		return 0, err
	}
	if r.Version < 2 {
		return 0, problem.New(problem.Invalid, "version", "Note %s has only version 1: there is no older version to restore", id).With("current_version", r.Version)
	}
	if version < 1 || version >= r.Version {
		return 0, problem.New(problem.Invalid, "version", "give a version between 1 and %d (the Note is at version %d); got %d", r.Version-1, r.Version, version).With("current_version", r.Version)
	}
	return s.Restore(ctx, ws, user, id, r.Version, version)
}

// Demo fills a fresh workspace with the approved Note "Welcome": besides the
// fixed tabs, one slides tab and one sheet tab with a little content.
func (s *Service) Demo(ctx context.Context, o Owner) (string, error) {
	now := s.Now()
	return s.CreateNote(ctx, o.Workspace.ID, o.User.ID, "Welcome", true, func(d *note.Doc) error {
		d.Markdown = "# Welcome to Foundry\n\nPeople and agents edit this Note together. Agents write by exact tab ID, with the version they read and an idempotency key.\n"
		if _, err := note.CreateTab(d, note.TypeSlides, "Intro deck", []note.SlideInput{
			{Title: "What Foundry is", Body: "Notes and Rooms shared by people and agents"},
			{Title: "Safe agent writes", Body: "Versions, idempotency keys, exact tab IDs", Notes: "Nothing an agent writes overwrites a person's edit."},
		}, now); err != nil {
			return err
		}
		t, err := note.CreateTab(d, note.TypeSheet, "Budget", nil, now)
		if err != nil {
			return err
		}
		_, err = note.SheetSetRange(d, t.ID, "", 0, 0, [][]any{{"Item", "Cost"}, {"Hosting", 12.5}, {"Domain", 1.0}})
		if err != nil {
			return err
		}
		_, _, err = note.AddSource(d, "Model Context Protocol", "https://modelcontextprotocol.io/specification", now.Add(time.Second))
		return err
	})
}

// DemoRoom creates a cloud Room with one approved snippet app, and one
// repository with one pinned version.
func (s *Service) DemoRoom(ctx context.Context, o Owner) (roomID string, err error) {
	ws, user := o.Workspace.ID, o.User.ID
	if roomID, err = s.CreateRoom(ctx, ws, user, "Team room"); err != nil {
		return "", err
	}
	p := auth.Principal{Workspace: ws, User: user, TokenID: "demo", Scopes: []string{auth.ScopeWrite}}
	files := map[string]string{"src/App.tsx": "export default function App() {\n  return <h1>Hello from the Team room</h1>\n}\n"}
	w, err := s.ProposeSnippet(ctx, p, ProposeSnippetArgs{RoomID: roomID, Name: "Hello", Files: files, IdempotencyKey: room.SnippetKey(roomID, "Hello", files)})
	if err != nil {
		return "", err
	}
	if err := s.ApproveProposal(ctx, ws, user, w.ProposalID); err != nil {
		return "", err
	}
	_, _, err = s.PushRepo(ctx, ws, user, "standup-timer", map[string][]byte{
		"package.json": []byte(`{"name":"standup-timer","version":"1.0.0"}` + "\n"),
		"src/App.tsx":  []byte("export default function App() {\n  return <p>Standup timer</p>\n}\n"),
	})
	return roomID, err
}
