// Package storetest is the one contract suite that every store passes. Each
// store's own test opens a fresh store and calls Run.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"foundry/internal/store"
)

// Run runs the whole contract against stores made by open (a fresh, empty
// store each call).
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"create starts at version 1 and each write adds exactly 1", testVersionCounter},
		{"a committed key replays its first result whatever the version", testKeyBeforeVersion},
		{"a key reused for another request is refused and writes nothing", testKeyReused},
		{"a stale version writes nothing and names the changed sub-IDs", testConflict},
		{"a refused apply writes nothing and frees the key", testApplyRefused},
		{"another workspace's resource is not found", testWorkspaceIsolation},
		{"concurrent calls with one key apply once and replay the rest", testConcurrentSameKey},
		{"concurrent writers with compare-and-swap lose nothing", testConcurrentCAS},
		{"every committed write appends one event and wakes waiters", testEvents},
		{"history keeps every version", testHistory},
		{"parts rebuild at every version, all or by key, and each version's keys are listed", testPartsHistory},
		{"tokens are found by hash and can be revoked", testTokens},
		{"objects written by a guarded write are stored with it", testObjects},
		{"a key in a separate scope never meets the same key in the default one", testKeyScopes},
		{"ApplyTx reads objects inside the transaction", testApplyTxReadsInside},
		{"concurrent create-if-missing creates once and appends the rest", testCreateIfMissing},
		{"an unchanged answer bumps nothing", testUnchanged},
		{"concurrent first-workspace creates make one workspace", testCreateFirstWorkspace},
		{"a title query finds titles that contain it, case ignored, on every path", testListQuery},
		{"a title query answers as the model does over random titles", testListQueryRandom},
		{"a list leaves out marked resources and pages whole, through the title index or not", testListUnmarkedPaging},
		{"the token cache answers every other method as the store under it", testTokenCacheForwards},
		{"a guarded write drops the objects it names", testDropObjects},
	}
	tests = append(tests, identityCases...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			tc.fn(t, s)
		})
	}
}

// CounterDoc: counter documents are {"n": int, "log": [..]}; the edits are pure.
type CounterDoc struct {
	N   int      `json:"n"`
	Log []string `json:"log"`
}

// Seed creates a workspace with its owner.
func Seed(t testing.TB, s store.Store) (ws string) {
	t.Helper()
	ctx := context.Background()
	ws = store.NewID("ws")
	now := time.Now()
	if err := s.CreateWorkspace(ctx, store.Workspace{ID: ws, Name: "test", CreatedAt: now},
		store.User{ID: store.NewID("usr"), Email: ws + "@example.org", Name: "Owner", Role: "owner", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	return ws
}

// Create makes a Note whose document is a counter and a log of lines.
func Create(t testing.TB, s store.Store, ws string) string {
	t.Helper()
	id := store.NewID("note")
	if _, err := s.Guarded(context.Background(), CreateMutation(ws, id)); err != nil {
		t.Fatal(err)
	}
	return id
}

// CreateMutation creates the counter Note id.
func CreateMutation(ws, id string) store.Mutation {
	return store.Mutation{
		Workspace: ws, Type: store.TypeNote, ID: id, Actor: "test",
		Create: &store.Resource{Owner: "o", Title: "T", Doc: json.RawMessage(`{"n":0,"log":[]}`)},
		Apply: func(cur *store.Resource) (*store.Change, error) {
			return &store.Change{Kind: "created", Result: json.RawMessage(`{}`)}, nil
		},
	}
}

// AppendLine is a guarded edit that appends line and answers the new length.
func AppendLine(ws, id, key string, expected int64, line string) store.Mutation {
	return store.Mutation{
		Workspace: ws, Type: store.TypeNote, ID: id, Key: key, Fingerprint: "append:" + line,
		ExpectedVersion: expected, Actor: "test",
		Apply: func(cur *store.Resource) (*store.Change, error) {
			var d CounterDoc
			if err := json.Unmarshal(cur.Doc, &d); err != nil {
				return nil, err
			}
			d.N++
			d.Log = append(d.Log, line)
			doc, _ := json.Marshal(d)
			res, _ := json.Marshal(map[string]any{"n": d.N, "version": cur.Version + 1})
			return &store.Change{Doc: doc, Result: res, Kind: "edited", Changed: []string{"tab-" + line}}, nil
		},
	}
}

func doc(t *testing.T, s store.Store, id string) (CounterDoc, int64) {
	t.Helper()
	r, err := s.Get(context.Background(), store.TypeNote, id)
	if err != nil {
		t.Fatal(err)
	}
	var d CounterDoc
	if err := json.Unmarshal(r.Doc, &d); err != nil {
		t.Fatal(err)
	}
	return d, r.Version
}

func testVersionCounter(t *testing.T, s store.Store) {
	ws := Seed(t, s)
	id := Create(t, s, ws)
	if _, v := doc(t, s, id); v != 1 {
		t.Fatalf("new resource version = %d, want 1", v)
	}
	for i := int64(1); i <= 3; i++ {
		out, err := s.Guarded(context.Background(), AppendLine(ws, id, fmt.Sprintf("key-%08d", i), i, fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		if out.Version != i+1 || out.Replayed {
			t.Fatalf("write %d: version %d replayed %v, want %d false", i, out.Version, out.Replayed, i+1)
		}
	}
}

func testKeyBeforeVersion(t *testing.T, s store.Store) {
	ws := Seed(t, s)
	id := Create(t, s, ws)
	first, err := s.Guarded(context.Background(), AppendLine(ws, id, "same-key-1", 1, "a"))
	if err != nil {
		t.Fatal(err)
	}
	// The resend after a lost response carries the old version.
	again, err := s.Guarded(context.Background(), AppendLine(ws, id, "same-key-1", 1, "a"))
	if err != nil {
		t.Fatalf("resend: %v (a key must be checked before the version)", err)
	}
	if !again.Replayed || string(again.Result) != string(first.Result) || again.Version != first.Version {
		t.Fatalf("resend = %+v, want replay of %+v", again, first)
	}
	if d, v := doc(t, s, id); d.N != 1 || v != 2 {
		t.Fatalf("after resend n=%d v=%d, want 1 and 2", d.N, v)
	}
}

func testKeyReused(t *testing.T, s store.Store) {
	ws := Seed(t, s)
	id := Create(t, s, ws)
	if _, err := s.Guarded(context.Background(), AppendLine(ws, id, "reused-key", 1, "a")); err != nil {
		t.Fatal(err)
	}
	_, err := s.Guarded(context.Background(), AppendLine(ws, id, "reused-key", 2, "b"))
	var kr *store.KeyReusedError
	if !errors.As(err, &kr) || kr.Key != "reused-key" {
		t.Fatalf("err = %v, want KeyReusedError", err)
	}
	if d, v := doc(t, s, id); d.N != 1 || v != 2 {
		t.Fatalf("n=%d v=%d after refused reuse, want 1 and 2", d.N, v)
	}
}

func testConflict(t *testing.T, s store.Store) {
	ws := Seed(t, s)
	id := Create(t, s, ws)
	for i, line := range []string{"x", "y"} {
		if _, err := s.Guarded(context.Background(), AppendLine(ws, id, "key-conf-"+line, int64(i+1), line)); err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.Guarded(context.Background(), AppendLine(ws, id, "key-conf-z", 1, "z"))
	var ce *store.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want ConflictError", err)
	}
	if ce.Current != 3 || fmt.Sprint(ce.Changed) != "[tab-x tab-y]" {
		t.Fatalf("conflict = %+v, want current 3 changed [tab-x tab-y]", ce)
	}
	if d, _ := doc(t, s, id); d.N != 2 {
		t.Fatalf("n = %d after conflict, want 2", d.N)
	}
	// The refused key was not recorded: it can be used once the call is fixed.
	if out, err := s.Guarded(context.Background(), AppendLine(ws, id, "key-conf-z", 3, "z")); err != nil || out.Replayed {
		t.Fatalf("fixed call: %+v %v", out, err)
	}
}

func testApplyRefused(t *testing.T, s store.Store) {
	ws := Seed(t, s)
	id := Create(t, s, ws)
	refusal := errors.New("refused by a domain rule")
	m := AppendLine(ws, id, "key-refused", 1, "a")
	m.Apply = func(*store.Resource) (*store.Change, error) { return nil, refusal }
	if _, err := s.Guarded(context.Background(), m); !errors.Is(err, refusal) {
		t.Fatalf("err = %v, want the refusal", err)
	}
	if _, v := doc(t, s, id); v != 1 {
		t.Fatalf("version %d after a refused apply, want 1", v)
	}
	if out, err := s.Guarded(context.Background(), AppendLine(ws, id, "key-refused", 1, "a")); err != nil || out.Replayed {
		t.Fatalf("key after refusal: %+v %v", out, err)
	}
}

func testWorkspaceIsolation(t *testing.T, s store.Store) {
	ws := Seed(t, s)
	other := Seed(t, s)
	id := Create(t, s, ws)
	_, err := s.Guarded(context.Background(), AppendLine(other, id, "key-other", 1, "a"))
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	if list, _ := s.List(context.Background(), store.ListQuery{Workspace: other, Type: store.TypeNote, Limit: 50}); len(list) != 0 {
		t.Fatalf("other workspace lists %d notes", len(list))
	}
}

func testConcurrentSameKey(t *testing.T, s store.Store) {
	ws := Seed(t, s)
	id := Create(t, s, ws)
	const n = 16
	var wg sync.WaitGroup
	outs := make([]store.Outcome, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], errs[i] = s.Guarded(context.Background(), AppendLine(ws, id, "concurrent-key", 1, "once"))
		}()
	}
	wg.Wait()
	applied := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		if !outs[i].Replayed {
			applied++
		}
		if string(outs[i].Result) != string(outs[0].Result) {
			t.Fatalf("call %d result %s differs from %s", i, outs[i].Result, outs[0].Result)
		}
	}
	if d, _ := doc(t, s, id); applied != 1 || d.N != 1 {
		t.Fatalf("applied %d, n = %d; want exactly 1", applied, d.N)
	}
}

func testConcurrentCAS(t *testing.T, s store.Store) {
	ws := Seed(t, s)
	id := Create(t, s, ws)
	const writers, each = 4, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				line := fmt.Sprintf("w%d-%d", w, i)
				for attempt := 0; ; attempt++ {
					_, v := doc(t, s, id) // re-read, then redo the change
					_, err := s.Guarded(context.Background(), AppendLine(ws, id, fmt.Sprintf("%s-a%d", line, attempt), v, line))
					var ce *store.ConflictError
					if errors.As(err, &ce) && attempt < 1000 {
						continue
					}
					if err != nil {
						t.Error(err)
					}
					break
				}
			}
		}()
	}
	wg.Wait()
	d, v := doc(t, s, id)
	if len(d.Log) != writers*each || v != int64(writers*each+1) {
		t.Fatalf("%d lines, version %d; want %d lines, version %d", len(d.Log), v, writers*each, writers*each+1)
	}
}

func testEvents(t *testing.T, s store.Store) {
	ws := Seed(t, s)
	id := Create(t, s, ws)
	ctx := context.Background()
	before, err := s.LastCursor(ctx, ws, store.TypeNote, id)
	if err != nil {
		t.Fatal(err)
	}
	wake, stop := s.Wait(store.TypeNote, id)
	defer stop()
	if _, err := s.Guarded(ctx, AppendLine(ws, id, "key-event", 1, "e")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-wake:
	case <-time.After(5 * time.Second):
		t.Fatal("waiter not woken within 5 s of a committed write")
	}
	evs, err := s.Events(ctx, ws, store.TypeNote, id, before, 50)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Kind != "edited" || evs[0].Version != 2 || evs[0].Cursor <= before {
		t.Fatalf("events after cursor %d = %+v, want one 'edited' at version 2", before, evs)
	}
	// A refused write appends nothing.
	s.Guarded(ctx, AppendLine(ws, id, "key-event-2", 1, "stale"))
	if evs, _ := s.Events(ctx, ws, store.TypeNote, id, evs[0].Cursor, 50); len(evs) != 0 {
		t.Fatalf("a refused write appended %d events", len(evs))
	}
}

func testHistory(t *testing.T, s store.Store) {
	ws := Seed(t, s)
	id := Create(t, s, ws)
	s.Guarded(context.Background(), AppendLine(ws, id, "key-hist-1", 1, "h1"))
	h, err := s.History(context.Background(), store.TypeNote, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 2 || h[0].Version != 1 || h[1].Version != 2 || h[1].Kind != "edited" {
		t.Fatalf("history = %+v", h)
	}
	raw, err := s.VersionDoc(context.Background(), store.TypeNote, id, 1)
	if err != nil || string(raw) != `{"n":0,"log":[]}` {
		t.Fatalf("version 1 doc = %s, %v", raw, err)
	}
}

func testTokens(t *testing.T, s store.Store) {
	ws := Seed(t, s)
	ctx := context.Background()
	users, err := s.Users(ctx, ws)
	if err != nil || len(users) != 1 {
		t.Fatalf("users = %v, %v", users, err)
	}
	tok := store.Token{ID: store.NewID("tok"), Workspace: ws, User: users[0].ID, Name: "cli", Hash: store.NewID("hash"),
		Scopes: []string{"osfoundry:read"}, Notes: []string{"note_a"}, CreatedAt: time.Now()}
	if err := s.CreateToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	got, err := s.TokenByHash(ctx, tok.Hash)
	if err != nil || got.ID != tok.ID || fmt.Sprint(got.Scopes) != "[osfoundry:read]" || fmt.Sprint(got.Notes) != "[note_a]" || got.Rooms != nil {
		t.Fatalf("token = %+v, %v", got, err)
	}
	if err := s.RevokeToken(ctx, ws, tok.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.TokenByHash(ctx, tok.Hash); got.RevokedAt == nil {
		t.Fatal("revoked token has no revocation time")
	}
	if err := s.RevokeToken(ctx, Seed(t, s), tok.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("revoking from another workspace: %v, want ErrNotFound", err)
	}
}

func testObjects(t *testing.T, s store.Store) {
	ws := Seed(t, s)
	id := Create(t, s, ws)
	m := AppendLine(ws, id, "key-object", 1, "o")
	inner := m.Apply
	m.Apply = func(cur *store.Resource) (*store.Change, error) {
		ch, err := inner(cur)
		ch.Objects = []store.Object{{Workspace: ws, Kind: store.KindProposal, ID: "prop_1", Parent: id, Doc: json.RawMessage(`{"x":1}`)}}
		return ch, err
	}
	if _, err := s.Guarded(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	o, err := s.GetObject(context.Background(), store.KindProposal, "prop_1")
	if err != nil || o.Parent != id || string(o.Doc) != `{"x":1}` {
		t.Fatalf("object = %+v, %v", o, err)
	}
	list, err := s.ListObjects(context.Background(), store.ObjectQuery{Workspace: ws, Kind: store.KindProposal, Parent: id, Limit: 10})
	if err != nil || len(list) != 1 {
		t.Fatalf("list = %+v, %v", list, err)
	}
}

func testKeyScopes(t *testing.T, s store.Store) {
	ws := Seed(t, s)
	id := Create(t, s, ws)
	ctx := context.Background()
	// An agent's key first, then the same string as a person's act's key.
	if _, err := s.Guarded(ctx, AppendLine(ws, id, "decide:prop_1", 0, "agent")); err != nil {
		t.Fatal(err)
	}
	person := AppendLine(ws, id, "decide:prop_1", 0, "person")
	person.KeyScope = store.ScopePeople
	out, err := s.Guarded(ctx, person)
	if err != nil || out.Replayed {
		t.Fatalf("the same key in another scope: %+v, %v; want a fresh write", out, err)
	}
	// Each scope replays its own key and refuses another fingerprint.
	again, err := s.Guarded(ctx, person)
	if err != nil || !again.Replayed || string(again.Result) != string(out.Result) {
		t.Fatalf("replay in the people's scope: %+v, %v", again, err)
	}
	other := AppendLine(ws, id, "decide:prop_1", 0, "other")
	other.KeyScope = store.ScopePeople
	var kr *store.KeyReusedError
	if _, err := s.Guarded(ctx, other); !errors.As(err, &kr) {
		t.Fatalf("another request under a people's key: %v, want KeyReusedError", err)
	}
	if d, _ := doc(t, s, id); fmt.Sprint(d.Log) != "[agent person]" {
		t.Fatalf("log = %v", d.Log)
	}
}

func testApplyTxReadsInside(t *testing.T, s store.Store) {
	ws := Seed(t, s)
	id := Create(t, s, ws)
	ctx := context.Background()
	m := AppendLine(ws, id, "key-object-1", 1, "o")
	inner := m.Apply
	m.Apply = func(cur *store.Resource) (*store.Change, error) {
		ch, err := inner(cur)
		ch.Objects = []store.Object{{Workspace: ws, Kind: store.KindProposal, ID: "prop_in_tx", Parent: id, Doc: json.RawMessage(`{"n":1}`)}}
		return ch, err
	}
	if _, err := s.Guarded(ctx, m); err != nil {
		t.Fatal(err)
	}
	// Each write reads the object inside its transaction and writes it
	// back incremented: concurrent writers lose no increment.
	const writers = 8
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Guarded(ctx, store.Mutation{
				Workspace: ws, Type: store.TypeNote, ID: id, Key: fmt.Sprintf("key-inc-%d", w), Fingerprint: "inc", Actor: "test",
				ApplyTx: func(cur *store.Resource, tx store.TxReader) (*store.Change, error) {
					o, err := tx.GetObject(store.KindProposal, "prop_in_tx")
					if err != nil {
						return nil, err
					}
					var v struct{ N int }
					if err := json.Unmarshal(o.Doc, &v); err != nil {
						return nil, err
					}
					next, _ := json.Marshal(map[string]int{"n": v.N + 1})
					return &store.Change{Kind: "inc", Result: next,
						Objects: []store.Object{{Workspace: ws, Kind: store.KindProposal, ID: "prop_in_tx", Parent: id, Doc: next}}}, nil
				},
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	o, err := s.GetObject(ctx, store.KindProposal, "prop_in_tx")
	if err != nil || string(o.Doc) != fmt.Sprintf(`{"n":%d}`, writers+1) {
		t.Fatalf("object = %s, %v; want n = %d", o.Doc, err, writers+1)
	}
	// A missing object is ErrNotFound inside the transaction too.
	_, err = s.Guarded(ctx, store.Mutation{Workspace: ws, Type: store.TypeNote, ID: id, Actor: "test",
		ApplyTx: func(cur *store.Resource, tx store.TxReader) (*store.Change, error) {
			_, err := tx.GetObject(store.KindProposal, "prop_missing")
			return nil, err
		}})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing object: %v, want ErrNotFound", err)
	}
}

func testCreateIfMissing(t *testing.T, s store.Store) {
	ws := Seed(t, s)
	ctx := context.Background()
	id := store.NewID("repo")
	const n = 12
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			m := AppendLine(ws, id, "", 0, fmt.Sprint(i))
			m.Create = &store.Resource{Owner: "o", Title: "one name", Doc: json.RawMessage(`{"n":0,"log":[]}`)}
			m.CreateIfMissing = true
			_, errs[i] = s.Guarded(ctx, m)
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	d, v := doc(t, s, id)
	if d.N != n || v != n {
		t.Fatalf("n = %d, version %d; want %d and %d (one create, the rest appended)", d.N, v, n, n)
	}
	if h, _ := s.History(ctx, store.TypeNote, id); len(h) != n {
		t.Fatalf("%d history entries, want %d", len(h), n)
	}
	// Another workspace's resource is not found, never appended to.
	other := AppendLine(Seed(t, s), id, "", 0, "x")
	other.Create = &store.Resource{Owner: "o", Title: "one name", Doc: json.RawMessage(`{"n":0,"log":[]}`)}
	other.CreateIfMissing = true
	if _, err := s.Guarded(ctx, other); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("create-if-missing over another workspace's row: %v, want ErrNotFound", err)
	}
}

func testUnchanged(t *testing.T, s store.Store) {
	ws := Seed(t, s)
	id := Create(t, s, ws)
	ctx := context.Background()
	before, _ := s.LastCursor(ctx, ws, store.TypeNote, id)
	m := AppendLine(ws, id, "", 0, "")
	m.Apply = func(cur *store.Resource) (*store.Change, error) {
		return &store.Change{Unchanged: true, Result: json.RawMessage(`{}`)}, nil
	}
	out, err := s.Guarded(ctx, m)
	if err != nil || out.Version != 1 || out.Cursor != 0 {
		t.Fatalf("unchanged: %+v, %v; want version 1, no cursor", out, err)
	}
	if after, _ := s.LastCursor(ctx, ws, store.TypeNote, id); after != before {
		t.Fatalf("an unchanged answer appended an event")
	}
	if h, _ := s.History(ctx, store.TypeNote, id); len(h) != 1 {
		t.Fatalf("an unchanged answer added history: %d entries", len(h))
	}
}

func testCreateFirstWorkspace(t *testing.T, s store.Store) {
	ctx := context.Background()
	now := time.Now()
	const n = 8
	var wg sync.WaitGroup
	created := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			created[i], errs[i] = s.CreateFirstWorkspace(ctx, store.Workspace{ID: store.NewID("ws"), Name: "w", CreatedAt: now},
				store.User{ID: store.NewID("usr"), Email: "owner@example.org", Name: "Owner", Role: "owner", CreatedAt: now})
		}()
	}
	wg.Wait()
	makers := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		if created[i] {
			makers++
		}
	}
	wss, err := s.Workspaces(ctx)
	if err != nil || makers != 1 || len(wss) != 1 {
		t.Fatalf("%d created, workspaces %v, %v; want exactly one", makers, wss, err)
	}
	if users, _ := s.Users(ctx, wss[0].ID); len(users) != 1 {
		t.Fatalf("%d owners", len(users))
	}
}
