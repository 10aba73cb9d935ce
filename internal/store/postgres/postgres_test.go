package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/storetest"
)

const urlEnv = "FOUNDRY_TEST_POSTGRES_URL"

func baseURL(tb testing.TB) string {
	tb.Helper()
	u := os.Getenv(urlEnv)
	if u == "" {
		tb.Skip("set " + urlEnv + " (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable) to run the PostgreSQL contract suite")
	}
	return u
}

// freshSchema creates an empty schema with an admin connection, drops it when
// the test ends (after the stores opened on it are closed: cleanups run last
// registered first, so register this before opening them), and returns the
// URL whose search_path is that schema, plus its name.
func freshSchema(tb testing.TB) (string, string) {
	tb.Helper()
	base := baseURL(tb)
	var b [6]byte
	rand.Read(b[:])
	schema := "foundry_test_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		tb.Fatalf("admin connection: %v", err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		admin, err := pgx.Connect(ctx, base)
		if err != nil {
			tb.Errorf("admin connection: %v", err)
			return
		}
		defer admin.Close(ctx)
		if _, err := admin.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			tb.Errorf("drop schema: %v", err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatalf("%s is not a URL: %v", urlEnv, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), schema
}

func open(tb testing.TB, u string) *postgres.Store {
	tb.Helper()
	s, err := postgres.Open(context.Background(), u)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("close: %v", err)
		}
	})
	return s
}

func TestContract(t *testing.T) {
	baseURL(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		u, _ := freshSchema(t)
		return open(t, u)
	})
}

func TestTwoNodesSameKey(t *testing.T) {
	u, _ := freshSchema(t)
	nodes := []*postgres.Store{open(t, u), open(t, u)}
	ws := seed(t, nodes[0])
	id := create(t, nodes[1], ws)

	const each = 8
	var wg sync.WaitGroup
	start := make(chan struct{})
	outs := make([]store.Outcome, 2*each)
	errs := make([]error, 2*each)
	for i := range 2 * each {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			outs[i], errs[i] = nodes[i%2].Guarded(context.Background(), appendLine(ws, id, "two-nodes-key", 1, "once"))
		}()
	}
	close(start)
	wg.Wait()
	applied := 0
	for i := range outs {
		if errs[i] != nil {
			t.Fatalf("call %d (node %d): %v", i, i%2, errs[i])
		}
		if !outs[i].Replayed {
			applied++
		}
		if string(outs[i].Result) != string(outs[0].Result) || outs[i].Version != 2 {
			t.Fatalf("call %d: result %s version %d, want %s version 2", i, outs[i].Result, outs[i].Version, outs[0].Result)
		}
	}
	for n, s := range nodes {
		r, err := s.Get(context.Background(), store.TypeNote, id)
		if err != nil {
			t.Fatal(err)
		}
		var d counterDoc
		json.Unmarshal(r.Doc, &d)
		if applied != 1 || d.N != 1 || r.Version != 2 {
			t.Fatalf("node %d: applied %d, n = %d, version %d; want 1, 1, 2", n, applied, d.N, r.Version)
		}
	}
}

func TestTwoNodesSameCreateKey(t *testing.T) {
	u, _ := freshSchema(t)
	nodes := []*postgres.Store{open(t, u), open(t, u)}
	ws := seed(t, nodes[0])
	id := store.NewID("note")
	const each = 4
	var wg sync.WaitGroup
	start := make(chan struct{})
	outs := make([]store.Outcome, 2*each)
	errs := make([]error, 2*each)
	for i := range 2 * each {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			m := createMutation(ws, id)
			m.Key, m.Fingerprint = "create-key-1", "create"
			outs[i], errs[i] = nodes[i%2].Guarded(context.Background(), m)
		}()
	}
	close(start)
	wg.Wait()
	applied := 0
	for i := range outs {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		if !outs[i].Replayed {
			applied++
		}
	}
	if applied != 1 {
		t.Fatalf("applied %d creates, want 1", applied)
	}
}

// Nodes that start together on an empty schema migrate it once between them.
func TestNodesStartTogether(t *testing.T) {
	u, _ := freshSchema(t)
	const n = 6
	stores := make([]*postgres.Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			stores[i], errs[i] = postgres.Open(context.Background(), u)
		}()
	}
	close(start)
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Errorf("node %d: %v", i, errs[i])
			continue
		}
		stores[i].Close()
	}
}

func TestNotifyReachesOtherNode(t *testing.T) {
	u, _ := freshSchema(t)
	a, b := open(t, u), open(t, u)
	ws := seed(t, b)
	id := create(t, b, ws)
	wake, stop := a.Wait(store.TypeNote, id)
	defer stop()
	if _, err := b.Guarded(context.Background(), appendLine(ws, id, "key-notify", 1, "n")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-wake:
	case <-time.After(2 * time.Second):
		t.Fatal("a waiter on node A was not woken within 2 s of a write on node B")
	}
}

// A listener whose connection is killed reconnects, wakes its waiters (it
// may have missed their writes), and hears other nodes' writes again.
func TestListenerReconnects(t *testing.T) {
	u, schema := freshSchema(t)
	appName := strings.ReplaceAll(schema, "foundry_test_", "ft-")
	ua, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	q := ua.Query()
	q.Set("application_name", appName)
	ua.RawQuery = q.Encode()
	a, b := open(t, ua.String()), open(t, u)
	ws := seed(t, b)
	id := create(t, b, ws)

	// Let node A hear the create first, so that nothing but the reconnect
	// can wake the waiter below.
	settled, stopSettled := a.Wait(store.TypeNote, id)
	if _, err := b.Guarded(context.Background(), appendLine(ws, id, "key-settle", 1, "s")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-settled:
	case <-time.After(2 * time.Second):
		t.Fatal("node A did not hear node B's write")
	}
	stopSettled()
	time.Sleep(50 * time.Millisecond)

	early, stopEarly := a.Wait(store.TypeNote, id)
	defer stopEarly()
	admin, err := pgx.Connect(context.Background(), baseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	var killed int
	if err := admin.QueryRow(context.Background(),
		`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, appName).Scan(&killed); err != nil {
		t.Fatal(err)
	}
	if killed == 0 {
		t.Fatal("found no connection of node A to terminate")
	}
	select {
	case <-early:
	case <-time.After(5 * time.Second):
		t.Fatal("a waiter was not woken after the listener reconnected")
	}

	deadline := time.Now().Add(10 * time.Second)
	for v := int64(2); ; v++ {
		wake, stop := a.Wait(store.TypeNote, id)
		if _, err := b.Guarded(context.Background(), appendLine(ws, id, fmt.Sprintf("key-reconnect-%d", v), v, "r")); err != nil {
			t.Fatal(err)
		}
		select {
		case <-wake:
			stop()
			return
		case <-time.After(500 * time.Millisecond):
		}
		stop()
		if time.Now().After(deadline) {
			t.Fatal("node A never heard node B again after its listener was killed")
		}
	}
}

func TestBadURL(t *testing.T) {
	if _, err := postgres.Open(context.Background(), "postgres://%zz"); err == nil {
		t.Fatal("a malformed URL opened")
	}
}

// The helpers below mirror storetest's (which are unexported).

type counterDoc struct {
	N   int      `json:"n"`
	Log []string `json:"log"`
}

func seed(tb testing.TB, s store.Store) string {
	tb.Helper()
	ws := store.NewID("ws")
	now := time.Now()
	if err := s.CreateWorkspace(context.Background(), store.Workspace{ID: ws, Name: "test", CreatedAt: now},
		store.User{ID: store.NewID("usr"), Email: ws + "@example.org", Name: "Owner", Role: "owner", CreatedAt: now}); err != nil {
		tb.Fatal(err)
	}
	return ws
}

func createMutation(ws, id string) store.Mutation {
	return store.Mutation{
		Workspace: ws, Type: store.TypeNote, ID: id, Actor: "test",
		Create: &store.Resource{Owner: "o", Title: "T", Doc: json.RawMessage(`{"n":0,"log":[]}`)},
		Apply: func(cur *store.Resource) (*store.Change, error) {
			return &store.Change{Kind: "created", Result: json.RawMessage(`{}`)}, nil
		},
	}
}

func create(tb testing.TB, s store.Store, ws string) string {
	tb.Helper()
	id := store.NewID("note")
	if _, err := s.Guarded(context.Background(), createMutation(ws, id)); err != nil {
		tb.Fatal(err)
	}
	return id
}

// appendLine is a guarded edit that appends line and answers the new length.
func appendLine(ws, id, key string, expected int64, line string) store.Mutation {
	return store.Mutation{
		Workspace: ws, Type: store.TypeNote, ID: id, Key: key, Fingerprint: "append:" + line,
		ExpectedVersion: expected, Actor: "test",
		Apply: func(cur *store.Resource) (*store.Change, error) {
			var d counterDoc
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
