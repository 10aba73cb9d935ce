package service_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"foundry/internal/auth"
	"foundry/internal/problem"
	"foundry/internal/service"
	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
	"foundry/internal/store/sqlite"
)

// fixture is a Service over a real store with one workspace, one approved
// Note and one cloud Room, and the principals that reach them.
type fixture struct {
	svc    *service.Service
	st     store.Store
	ws     string
	owner  string
	noteID string
	roomID string
	read   auth.Principal
	write  auth.Principal
	op     service.Caller // the CLI, as the workspace's owner
	person service.Caller // the owner, signed in to the web app
}

// eachStore runs fn on a fresh SQLite store, and on a fresh PostgreSQL
// schema when FOUNDRY_TEST_POSTGRES_URL is set (the subtest skips, saying
// so, when it is not).
func eachStore(t *testing.T, fn func(t *testing.T, f *fixture)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		s, err := sqlite.Open(context.Background(), t.TempDir(), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		fn(t, newFixture(t, s))
	})
	t.Run("postgres", func(t *testing.T) {
		u, _ := pgtest.Schema(t)
		s, err := postgres.Open(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		fn(t, newFixture(t, s))
	})
}

func newFixture(t *testing.T, s store.Store) *fixture {
	t.Helper()
	ctx := context.Background()
	svc := service.New(s)
	o, _, err := svc.Bootstrap(ctx, "test", "owner@example.org")
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{svc: svc, st: s, ws: o.Workspace.ID, owner: o.User.ID, op: service.Operator(o), person: service.Person(o.Workspace.ID, o.User.ID, service.RoleOwner)}
	n, err := svc.CreateNote(ctx, f.op, service.CreateNoteArgs{Title: "Research", Approved: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := svc.CreateRoom(ctx, f.op, "Team room")
	if err != nil {
		t.Fatal(err)
	}
	f.noteID, f.roomID = n.NoteID, r.RoomID
	f.read = auth.Principal{Workspace: f.ws, User: f.owner, TokenID: "tok_read", Scopes: []string{auth.ScopeRead}}
	f.write = auth.Principal{Workspace: f.ws, User: f.owner, TokenID: "tok_write", Scopes: []string{auth.ScopeRead, auth.ScopeWrite}}
	return f
}

// fresh is another service over the same store: nothing of the first's
// memory (cached Notes, formula graphs), as after a restart.
func (f *fixture) fresh(t *testing.T) *service.Service {
	t.Helper()
	return service.New(f.st)
}

// version is the Note's current version.
func (f *fixture) version(t *testing.T) int64 {
	t.Helper()
	res, err := f.svc.ListNoteTabs(context.Background(), service.Agent(f.read), f.noteID)
	if err != nil {
		t.Fatal(err)
	}
	return res.Version
}

// wantProblem fails unless err is a *problem.Problem with code and field
// whose message mentions each of mention.
func wantProblem(t *testing.T, err error, code, field string, mention ...string) *problem.Problem {
	t.Helper()
	var p *problem.Problem
	if !errors.As(err, &p) {
		t.Fatalf("err = %v; want a *problem.Problem %s (field %q)", err, code, field)
	}
	if p.Code != code || p.Field != field {
		t.Fatalf("got %s field %q (%s); want %s field %q", p.Code, p.Field, p.Message, code, field)
	}
	for _, m := range mention {
		if !strings.Contains(p.Message, m) {
			t.Errorf("message %q does not mention %q", p.Message, m)
		}
	}
	return p
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func ptr[T any](v T) *T { return &v }
