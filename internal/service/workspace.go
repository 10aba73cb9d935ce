package service

import (
	"context"
	"errors"
	"time"

	"foundry/internal/auth"
	"foundry/internal/note"
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

// Demo fills a fresh workspace with the approved Note "Welcome": besides the
// fixed tabs, one slides tab and one sheet tab with a little content.
func (s *Service) Demo(ctx context.Context, o Owner) (string, error) {
	now := s.Now()
	n, err := s.CreateNoteFrom(ctx, Operator(o), CreateNoteArgs{Title: "Welcome", Approved: true}, func(d *note.Doc) error {
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
	return n.NoteID, err
}

// DemoRoom creates a cloud Room with one approved snippet app, and one
// repository with one pinned version.
func (s *Service) DemoRoom(ctx context.Context, o Owner) (roomID string, err error) {
	op := Operator(o)
	r, err := s.CreateRoom(ctx, op, "Team room")
	if err != nil {
		return "", err
	}
	roomID = r.RoomID
	agent := Agent(auth.Principal{Workspace: o.Workspace.ID, User: o.User.ID, TokenID: "demo", Scopes: []string{auth.ScopeWrite}})
	files := map[string]string{"src/App.tsx": "export default function App() {\n  return <h1>Hello from the Team room</h1>\n}\n"}
	w, err := s.ProposeSnippet(ctx, agent, ProposeSnippetArgs{RoomID: roomID, Name: "Hello", Files: files, IdempotencyKey: room.SnippetKey(roomID, "Hello", files)})
	if err != nil {
		return "", err
	}
	if _, err := s.DecideProposal(ctx, op, w.ProposalID, true); err != nil {
		return "", err
	}
	_, _, err = s.PushRepo(ctx, op, "standup-timer", map[string][]byte{
		"package.json": []byte(`{"name":"standup-timer","version":"1.0.0"}` + "\n"),
		"src/App.tsx":  []byte("export default function App() {\n  return <p>Standup timer</p>\n}\n"),
	})
	return roomID, err
}

// WorkspaceName is the name of c's workspace.
func (s *Service) WorkspaceName(ctx context.Context, c Caller) (string, error) {
	all, err := s.Store.Workspaces(ctx)
	if err != nil {
		return "", err
	}
	for _, w := range all {
		if w.ID == c.Workspace {
			return w.Name, nil
		}
	}
	return "", nil
}
