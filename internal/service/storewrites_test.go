package service_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, for raw access in a test

	"foundry/internal/auth"
	"foundry/internal/problem"
	"foundry/internal/room"
	"foundry/internal/service"
	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
	"foundry/internal/store/sqlite"
)

// onStores runs fn once on a fresh SQLite store and once on a fresh
// PostgreSQL schema (skipped without FOUNDRY_TEST_POSTGRES_URL).
func onStores(t *testing.T, fn func(t *testing.T, st store.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		st, err := sqlite.Open(context.Background(), t.TempDir(), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		fn(t, st)
	})
	t.Run("postgres", func(t *testing.T) {
		u, _ := pgtest.Schema(t)
		st, err := postgres.Open(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		fn(t, st)
	})
}

// tickingClock answers a later second at every call, so that an Apply that
// reads the clock gives another answer when it is run again.
func tickingClock() func() time.Time {
	var n atomic.Int64
	base := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	return func() time.Time { return base.Add(time.Duration(n.Add(1)) * time.Second) }
}

type setup struct {
	svc   *service.Service
	o     service.Owner
	op    service.Caller
	agent auth.Principal
	room  string
}

func newSetup(t *testing.T, st store.Store) setup {
	t.Helper()
	ctx := context.Background()
	svc := service.New(st)
	svc.Now = tickingClock()
	o, _, err := svc.Bootstrap(ctx, "test", "owner@example.org")
	if err != nil {
		t.Fatal(err)
	}
	r, err := svc.CreateRoom(ctx, service.Operator(o), "Team room")
	if err != nil {
		t.Fatal(err)
	}
	agent := auth.Principal{Workspace: o.Workspace.ID, User: o.User.ID, TokenID: "tok_agent", Scopes: []string{auth.ScopeRead, auth.ScopeWrite}}
	return setup{svc: svc, o: o, op: service.Operator(o), agent: agent, room: r.RoomID}
}

// decide is the owner's decision on a proposal, from the CLI.
func decide(ctx context.Context, svc *service.Service, o service.Owner, id string, approve bool) error {
	_, err := svc.DecideProposal(ctx, service.Operator(o), id, approve)
	return err
}

// setApproved switches a Note's connected access from the CLI.
func (s setup) setApproved(ctx context.Context, id string, on bool) error {
	_, err := s.svc.UpdateNote(ctx, s.op, service.UpdateNoteArgs{NoteID: id, Approved: &on})
	return err
}

// newNote is a Note the owner makes from the CLI.
func (s setup) newNote(t *testing.T, title string, approved bool) string {
	t.Helper()
	n, err := s.svc.CreateNote(context.Background(), s.op, service.CreateNoteArgs{Title: title, Approved: approved})
	if err != nil {
		t.Fatal(err)
	}
	return n.NoteID
}

func snippet(name string) map[string]string {
	return map[string]string{"src/App.tsx": "export default function App() { return <p>" + name + "</p> }\n"}
}

func (s setup) propose(t *testing.T, name, key string) service.Proposed {
	t.Helper()
	w, err := s.svc.ProposeSnippet(context.Background(), service.Agent(s.agent), service.ProposeSnippetArgs{RoomID: s.room, Name: name, Files: snippet(name), IdempotencyKey: key})
	if err != nil {
		t.Fatalf("propose %s with key %q: %v", name, key, err)
	}
	return w
}

func (s setup) status(t *testing.T, instance string) string {
	t.Helper()
	st, err := s.svc.ReadRoomAppStatus(context.Background(), service.Agent(s.agent), service.AppArgs{RoomID: s.room, InstanceID: instance})
	if err != nil {
		t.Fatalf("status of %s: %v", instance, err)
	}
	return st.State
}

// legacyProposalID is how proposal IDs were derived before they were random:
// an agent could compute the ID of the next proposal of a Room.
func legacyProposalID(roomID, instanceID string) string {
	sum := sha256.Sum256([]byte(roomID + "\x00" + instanceID))
	return "prop_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:10]))
}

// An agent must never be able to block or steer a person's decision: keys
// it picks, however spelled, never reach the key a decision is stored under,
// and proposal IDs cannot be computed before they exist.
func TestAgentKeysCannotBlockDecisions(t *testing.T) {
	t.Parallel()
	onStores(t, func(t *testing.T, st store.Store) {
		s := newSetup(t, st)
		ctx := context.Background()

		// Before: keys naming the IDs the next proposals would have had
		// when they were derived from the Room and the instance.
		n := 0
		for inst := 1; inst <= 4; inst++ {
			for _, spell := range []string{"decide:%s", "DECIDE:%s", "decide:%s ", "people/decide:%s", "room/decide:%s"} {
				n++
				s.propose(t, fmt.Sprintf("Squat %d", n), fmt.Sprintf(spell, legacyProposalID(s.room, fmt.Sprintf("app-%d", inst+100))))
			}
		}
		// Two proposals squatting the keys of the two after them.
		for inst := 1; inst <= 2; inst++ {
			s.propose(t, fmt.Sprintf("Squat pre %d", inst), "decide:"+legacyProposalID(s.room, fmt.Sprintf("app-%d", n+2+inst)))
		}
		// The real proposals, then keys naming their (now known) IDs.
		a := s.propose(t, "Approve me", "real-proposal-a")
		b := s.propose(t, "Decline me", "real-proposal-b")
		for _, w := range []service.Proposed{a, b} {
			id := w.ProposalID
			for i, spell := range []string{"decide:%s", "Decide:%s", "decide:%s\t", "people/decide:%s"} {
				name := fmt.Sprintf("Squat post %s %d", id, i)
				_, err := s.svc.ProposeSnippet(ctx, service.Agent(s.agent), service.ProposeSnippetArgs{RoomID: s.room, Name: name, Files: snippet(name), IdempotencyKey: fmt.Sprintf(spell, id)})
				var p *problem.Problem
				// reused: squatted already; invalid: a control character is refused as a key.
				if err != nil && !(errors.As(err, &p) && (p.Code == problem.KeyReused || p.Code == problem.Invalid)) {
					t.Fatalf("propose %s: %v", name, err)
				}
			}
		}

		if err := decide(ctx, s.svc, s.o, a.ProposalID, true); err != nil {
			t.Fatalf("approve: %v", err)
		}
		if err := decide(ctx, s.svc, s.o, b.ProposalID, false); err != nil {
			t.Fatalf("decline: %v", err)
		}
		// A second decision, the same or the other, names the first.
		for _, approve := range []bool{true, false} {
			var p *problem.Problem
			if err := decide(ctx, s.svc, s.o, a.ProposalID, approve); !errors.As(err, &p) || p.Code != service.AlreadyDecided || p.Field != "proposal_id" || p.Details["decision"] != room.StatusApproved {
				t.Fatalf("decide again (approve %v): %v, want already_decided naming the approval", approve, err)
			}
		}
		if got := s.status(t, a.InstanceID); got != room.StateInLauncher {
			t.Fatalf("approved instance is %s, want %s", got, room.StateInLauncher)
		}
		if got := s.status(t, b.InstanceID); got != room.StateDeclined {
			t.Fatalf("declined instance is %s, want %s", got, room.StateDeclined)
		}
		if got := s.status(t, "app-1"); got != room.StatePendingReview {
			t.Fatalf("untouched proposal app-1 is %s, want %s", got, room.StatePendingReview)
		}
		launcher, err := s.svc.ReadRoom(ctx, service.Agent(s.agent), s.room)
		if err != nil {
			t.Fatal(err)
		}
		if apps := launcher.Apps; len(apps) != 1 || apps[0].InstanceID != a.InstanceID {
			t.Fatalf("launcher = %v, want only %s", apps, a.InstanceID)
		}
		for _, w := range []service.Proposed{a, b} {
			if id := w.ProposalID; id == legacyProposalID(s.room, w.InstanceID) {
				t.Errorf("proposal ID %s is derived from the Room and instance: an agent can compute it", id)
			}
		}
		// A replayed proposal answers its first ID, and its status is found.
		again := s.propose(t, "Approve me", "real-proposal-a")
		if again.ProposalID != a.ProposalID || again.Replayed != true {
			t.Fatalf("replay = %v, want the first proposal %v", again, a.ProposalID)
		}
	})
}

// applyTwice runs every Apply of a guarded write twice on equal input, inside
// the same transaction, and reports any difference: an Apply must be a pure
// function of what the transaction shows it. failFirst makes the first run of
// each write answer a serialization failure instead (what PostgreSQL retries).
type applyTwice struct {
	store.Store
	t         *testing.T
	failFirst bool
	runs      atomic.Int64
}

func (a *applyTwice) Guarded(ctx context.Context, m store.Mutation) (store.Outcome, error) {
	origApply, origApplyTx := m.Apply, m.ApplyTx
	apply := func(cur *store.Resource, tx store.TxReader) (*store.Change, error) {
		if origApplyTx != nil {
			return origApplyTx(cur, tx)
		}
		return origApply(cur)
	}
	var attempt atomic.Int64
	twice := func(cur *store.Resource, tx store.TxReader) (*store.Change, error) {
		a.runs.Add(1)
		c1, c2 := *cur, *cur
		c1.Doc, c2.Doc = append(json.RawMessage(nil), cur.Doc...), append(json.RawMessage(nil), cur.Doc...)
		ch1, err1 := apply(&c1, tx)
		ch2, err2 := apply(&c2, tx)
		j1, _ := json.Marshal(struct {
			C *store.Change
			E string
		}{ch1, fmt.Sprint(err1)})
		j2, _ := json.Marshal(struct {
			C *store.Change
			E string
		}{ch2, fmt.Sprint(err2)})
		if string(j1) != string(j2) {
			a.t.Errorf("%s %s: Apply run twice on the same input answered\n%s\nand then\n%s", m.Type, m.ID, j1, j2)
		}
		if a.failFirst && attempt.Add(1) == 1 {
			return nil, &pgconn.PgError{Code: "40001", Message: "injected serialization failure"}
		}
		return ch1, err1
	}
	m.Apply, m.ApplyTx = nil, twice
	return a.Store.Guarded(ctx, m)
}

// Every guarded write the services build is pure: proposing, approving,
// declining, pushing, switching access.
func TestApplyIsPure(t *testing.T) {
	t.Parallel()
	onStores(t, func(t *testing.T, st store.Store) {
		wrapped := &applyTwice{Store: st, t: t}
		s := newSetup(t, wrapped)
		ctx := context.Background()
		a := s.propose(t, "One", "pure-key-one")
		b := s.propose(t, "Two", "pure-key-two")
		if err := decide(ctx, s.svc, s.o, a.ProposalID, true); err != nil {
			t.Fatalf("approve: %v", err)
		}
		if err := decide(ctx, s.svc, s.o, b.ProposalID, false); err != nil {
			t.Fatalf("decline: %v", err)
		}
		repoID, verID, err := s.svc.PushRepo(ctx, s.op, "tool", map[string][]byte{"README.md": []byte("hi\n")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.svc.ProposeRepoApp(ctx, service.Agent(s.agent), service.ProposeRepoArgs{RoomID: s.room, Name: "Tool", RepositoryID: repoID, VersionID: verID, IdempotencyKey: "pure-key-repo"}); err != nil {
			t.Fatal(err)
		}
		noteID := s.newNote(t, "N", false)
		if err := s.setApproved(ctx, noteID, true); err != nil {
			t.Fatal(err)
		}
		if wrapped.runs.Load() < 8 {
			t.Fatalf("only %d writes went through the check", wrapped.runs.Load())
		}
	})
}

// A transaction the store runs again (PostgreSQL retries serialization
// failures) must not see its own rolled-back effect.
func TestDecisionSurvivesRetry(t *testing.T) {
	t.Parallel()
	onStores(t, func(t *testing.T, st store.Store) {
		if _, ok := st.(*postgres.Store); !ok {
			t.Skip("only PostgreSQL retries a transaction")
		}
		s := newSetup(t, st)
		ctx := context.Background()
		a := s.propose(t, "Retry me", "retry-key-one")
		b := s.propose(t, "Decline retry", "retry-key-two")
		retrying := service.New(&applyTwice{Store: st, t: t, failFirst: true})
		retrying.Now = tickingClock()
		if err := decide(ctx, retrying, s.o, a.ProposalID, true); err != nil {
			t.Fatalf("approve with one retry: %v", err)
		}
		if err := decide(ctx, retrying, s.o, b.ProposalID, false); err != nil {
			t.Fatalf("decline with one retry: %v", err)
		}
		if got := s.status(t, a.InstanceID); got != room.StateInLauncher {
			t.Fatalf("approved instance is %s", got)
		}
		if got := s.status(t, b.InstanceID); got != room.StateDeclined {
			t.Fatalf("declined instance is %s", got)
		}
		w, err := retrying.ProposeSnippet(ctx, service.Agent(s.agent), service.ProposeSnippetArgs{RoomID: s.room, Name: "Three", Files: snippet("Three"), IdempotencyKey: "retry-key-three"})
		if err != nil {
			t.Fatalf("propose with one retry: %v", err)
		}
		if got := s.status(t, w.InstanceID); got != room.StatePendingReview {
			t.Fatalf("proposal after a retry is %s", got)
		}
	})
}

// Concurrent pushes of one name each add their own version, none is lost,
// and every version they answered can be proposed; first pushes that race
// create one repository between them.
func TestConcurrentPushes(t *testing.T) {
	t.Parallel()
	onStores(t, func(t *testing.T, st store.Store) {
		s := newSetup(t, st)
		ctx := context.Background()
		const n = 21
		repos, vers, errs := make([]string, n), make([]string, n), make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				repos[i], vers[i], errs[i] = s.svc.PushRepo(ctx, s.op, "race", map[string][]byte{"main.go": fmt.Appendf(nil, "package main // %d\n", i)})
			}()
		}
		close(start)
		wg.Wait()
		seen := map[string]bool{}
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("push %d: %v", i, errs[i])
			}
			if repos[i] != repos[0] {
				t.Fatalf("push %d went to repository %s, push 0 to %s: one name made two repositories", i, repos[i], repos[0])
			}
			if seen[vers[i]] {
				t.Fatalf("version %s answered twice", vers[i])
			}
			seen[vers[i]] = true
		}
		list, err := s.svc.ListRepositories(ctx, service.Agent(s.agent), service.Page{Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		rs := list.Repositories
		if len(rs) != 1 || rs[0].Name != "race" || rs[0].ID != repos[0] {
			t.Fatalf("repositories = %+v, want one named race", rs)
		}
		if len(rs[0].Versions) != n {
			t.Fatalf("repository lists %d versions, want %d", len(rs[0].Versions), n)
		}
		for _, v := range rs[0].Versions {
			if !seen[v.ID] {
				t.Fatalf("listed version %s was never answered", v.ID)
			}
		}
		for i, v := range vers {
			if _, err := s.svc.ProposeRepoApp(ctx, service.Agent(s.agent), service.ProposeRepoArgs{RoomID: s.room, Name: fmt.Sprint("App ", i), RepositoryID: repos[i], VersionID: v, IdempotencyKey: fmt.Sprintf("propose-version-%d", i)}); err != nil {
				t.Fatalf("propose pinned version %s: %v", v, err)
			}
		}
		// Another name is another repository; the same name finds the same.
		other, _, err := s.svc.PushRepo(ctx, s.op, "other", map[string][]byte{"a.txt": []byte("a")})
		if err != nil || other == repos[0] {
			t.Fatalf("push of another name: %s, %v", other, err)
		}
		if again, _, err := s.svc.PushRepo(ctx, s.op, " race ", map[string][]byte{"a.txt": []byte("b")}); err != nil || again != repos[0] {
			t.Fatalf("push of the same name again: %s, %v; want %s", again, err, repos[0])
		}
	})
}

// An act that changes nothing bumps nothing: re-approving an approved Note
// (or unapproving an unapproved one) leaves its version, history and feed
// as they were, so no agent gets a false version_conflict.
func TestNoOpAccessChangeKeepsVersion(t *testing.T) {
	t.Parallel()
	onStores(t, func(t *testing.T, st store.Store) {
		s := newSetup(t, st)
		ctx := context.Background()
		for _, initial := range []bool{true, false} {
			id := s.newNote(t, "Plan", initial)
			before, _ := st.Head(ctx, store.TypeNote, id)
			cursor, _ := st.LastCursor(ctx, s.o.Workspace.ID, store.TypeNote, id)
			for range 3 {
				if err := s.setApproved(ctx, id, initial); err != nil {
					t.Fatal(err)
				}
			}
			after, _ := st.Head(ctx, store.TypeNote, id)
			hist, _ := st.History(ctx, store.TypeNote, id)
			evs, _ := st.Events(ctx, s.o.Workspace.ID, store.TypeNote, id, cursor, 50)
			if after.Version != before.Version || len(hist) != 1 || len(evs) != 0 || after.Approved != initial {
				t.Fatalf("approved=%v set to %v again: version %d→%d, %d history entries, %d events; want no change",
					initial, initial, before.Version, after.Version, len(hist), len(evs))
			}
			// A real change still bumps by one.
			if err := s.setApproved(ctx, id, !initial); err != nil {
				t.Fatal(err)
			}
			if h, _ := st.Head(ctx, store.TypeNote, id); h.Version != before.Version+1 || h.Approved == initial {
				t.Fatalf("switching access: version %d approved %v", h.Version, h.Approved)
			}
		}
	})
}

// Nodes started together on a fresh database bootstrap one workspace and
// one owner between them, and all of them start.
func TestNodesBootstrapTogether(t *testing.T) {
	t.Parallel()
	u, _ := pgtest.Schema(t)
	const n = 8
	owners := make([]service.Owner, n)
	errs := make([]error, n)
	created := make([]bool, n)
	stores := make([]*postgres.Store, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			st, err := postgres.Open(context.Background(), u)
			if err != nil {
				errs[i] = err
				return
			}
			stores[i] = st
			owners[i], created[i], errs[i] = service.New(st).Bootstrap(context.Background(), "Team", "owner@example.org")
		}()
	}
	close(start)
	wg.Wait()
	defer func() {
		for _, st := range stores {
			if st != nil {
				st.Close()
			}
		}
	}()
	makers := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("node %d: %v", i, errs[i])
		}
		if created[i] {
			makers++
		}
		if owners[i].Workspace.ID != owners[0].Workspace.ID || owners[i].User.ID != owners[0].User.ID {
			t.Fatalf("node %d sees workspace %s owner %s; node 0 %s %s", i, owners[i].Workspace.ID, owners[i].User.ID, owners[0].Workspace.ID, owners[0].User.ID)
		}
	}
	wss, err := stores[0].Workspaces(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	users, err := stores[0].Users(context.Background(), owners[0].Workspace.ID)
	if err != nil {
		t.Fatal(err)
	}
	if makers != 1 || len(wss) != 1 || len(users) != 1 {
		t.Fatalf("%d nodes created, %d workspaces, %d users; want 1, 1, 1", makers, len(wss), len(users))
	}
}

// Repositories stored before they were versioned resources are moved by a
// migration: same ID, same versions, and a push of the same name appends to
// them.
func TestLegacyRepositoriesMigrate(t *testing.T) {
	t.Parallel()
	type opener struct {
		name string
		open func(t *testing.T) (reopen func() store.Store, raw *sql.DB)
	}
	openers := []opener{
		{"sqlite", func(t *testing.T) (func() store.Store, *sql.DB) {
			dir := t.TempDir()
			raw, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "foundry.db")+"?_pragma=busy_timeout(10000)")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { raw.Close() })
			return func() store.Store {
				st, err := sqlite.Open(context.Background(), dir, sqlite.Options{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				return st
			}, raw
		}},
		{"postgres", func(t *testing.T) (func() store.Store, *sql.DB) {
			u, _ := pgtest.Schema(t)
			raw, err := sql.Open("pgx", u)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { raw.Close() })
			return func() store.Store {
				st, err := postgres.Open(context.Background(), u)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				return st
			}, raw
		}},
	}
	for _, op := range openers {
		t.Run(op.name, func(t *testing.T) {
			reopen, raw := op.open(t)
			first := reopen()
			s := newSetup(t, first)
			first.Close()
			ctx := context.Background()
			ws := s.o.Workspace.ID
			legacy := room.Repository{ID: "repo_legacy0000000001", Name: "old tool", CreatedAt: "2026-01-01T00:00:00Z",
				Versions: []room.Version{{ID: "ver_legacy0000000001", Files: 1, Bytes: 2, SHA256: "x", PushedAt: "2026-01-01T00:00:00Z", PushedBy: "user:u"}}}
			doc, _ := json.Marshal(legacy)
			q := func(s string) string {
				if op.name == "postgres" {
					for i := 1; strings.Contains(s, "?"); i++ {
						s = strings.Replace(s, "?", fmt.Sprintf("$%d", i), 1)
					}
				}
				return s
			}
			for _, stmt := range []struct {
				q    string
				args []any
			}{
				{`INSERT INTO objects (kind, id, workspace_id, parent_id, doc, created_us) VALUES ('repository', ?, ?, '', ?, 1)`, []any{legacy.ID, ws, string(doc)}},
				{`INSERT INTO objects (kind, id, workspace_id, parent_id, doc, created_us) VALUES ('repo_version', ?, ?, ?, '{"files":{"a":"aGk="}}', 1)`, []any{legacy.Versions[0].ID, ws, legacy.ID}},
				{`DELETE FROM schema_migrations WHERE version >= 2`, nil},
			} {
				if _, err := raw.ExecContext(ctx, q(stmt.q), stmt.args...); err != nil {
					t.Fatal(err)
				}
			}
			st := reopen()
			svc := service.New(st)
			list, err := svc.ListRepositories(ctx, service.Agent(s.agent), service.Page{Limit: 50})
			if err != nil {
				t.Fatal(err)
			}
			rs := list.Repositories
			if len(rs) != 1 || rs[0].ID != legacy.ID || rs[0].Name != legacy.Name || len(rs[0].Versions) != 1 {
				t.Fatalf("after migration: %+v, want the legacy repository", rs)
			}
			repoID, verID, err := svc.PushRepo(ctx, s.op, "old tool", map[string][]byte{"a": []byte("hi again")})
			if err != nil || repoID != legacy.ID {
				t.Fatalf("push to the legacy name: %s, %v; want %s", repoID, err, legacy.ID)
			}
			for i, v := range []string{legacy.Versions[0].ID, verID} {
				if _, err := svc.ProposeRepoApp(ctx, service.Agent(s.agent), service.ProposeRepoArgs{RoomID: s.room, Name: "Old", RepositoryID: legacy.ID, VersionID: v, IdempotencyKey: fmt.Sprintf("legacy-propose-%d", i)}); err != nil {
					t.Fatalf("propose %s: %v", v, err)
				}
			}
		})
	}
}
