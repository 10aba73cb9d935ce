package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
	"foundry/internal/store/storetest"
)

func baseURL(tb testing.TB) string { return pgtest.BaseURL(tb) }

func freshSchema(tb testing.TB) (string, string) { return pgtest.Schema(tb) }

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
	ws := storetest.Seed(t, nodes[0])
	id := storetest.Create(t, nodes[1], ws)

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
			outs[i], errs[i] = nodes[i%2].Guarded(context.Background(), storetest.AppendLine(ws, id, "two-nodes-key", 1, "once"))
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
		var d storetest.CounterDoc
		json.Unmarshal(r.Doc, &d)
		if applied != 1 || d.N != 1 || r.Version != 2 {
			t.Fatalf("node %d: applied %d, n = %d, version %d; want 1, 1, 2", n, applied, d.N, r.Version)
		}
	}
}

func TestTwoNodesSameCreateKey(t *testing.T) {
	u, _ := freshSchema(t)
	nodes := []*postgres.Store{open(t, u), open(t, u)}
	ws := storetest.Seed(t, nodes[0])
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
			m := storetest.CreateMutation(ws, id)
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
	ws := storetest.Seed(t, b)
	id := storetest.Create(t, b, ws)
	wake, stop := a.Wait(store.TypeNote, id)
	defer stop()
	if _, err := b.Guarded(context.Background(), storetest.AppendLine(ws, id, "key-notify", 1, "n")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-wake:
	case <-time.After(2 * time.Second):
		t.Fatal("a waiter on node A was not woken within 2 s of a write on node B")
	}
}

// A follower whose connection is killed reconnects and goes on from where
// it was: a write made meanwhile on another node still wakes its waiters,
// and later writes do too.
func TestFollowerReconnects(t *testing.T) {
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
	ws := storetest.Seed(t, b)
	id := storetest.Create(t, b, ws)

	// Let node A hear the create first, so that nothing but the write
	// below can wake the waiter.
	settled, stopSettled := a.Wait(store.TypeNote, id)
	if _, err := b.Guarded(context.Background(), storetest.AppendLine(ws, id, "key-settle", 1, "s")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-settled:
	case <-time.After(2 * time.Second):
		t.Fatal("node A did not hear node B's write")
	}
	stopSettled()
	time.Sleep(2 * postgres.FollowInterval)

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
		t.Fatal("the waiter woke without a write")
	case <-time.After(3 * postgres.FollowInterval):
	}
	if _, err := b.Guarded(context.Background(), storetest.AppendLine(ws, id, "key-while-down", 2, "d")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-early:
	case <-time.After(5 * time.Second):
		t.Fatal("a write on node B after node A's follower was killed never woke A's waiter")
	}

	deadline := time.Now().Add(10 * time.Second)
	for v := int64(3); ; v++ {
		wake, stop := a.Wait(store.TypeNote, id)
		if _, err := b.Guarded(context.Background(), storetest.AppendLine(ws, id, fmt.Sprintf("key-reconnect-%d", v), v, "r")); err != nil {
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
			t.Fatal("node A never heard node B again after its follower was killed")
		}
	}
}

func TestBadURL(t *testing.T) {
	if _, err := postgres.Open(context.Background(), "postgres://%zz"); err == nil {
		t.Fatal("a malformed URL opened")
	}
}

// The helpers below mirror storetest's (which are unexported).

// Cursors are taken in insert order but committed in commit order: an
// event that commits after a newer one was seen still wakes its waiters.
func TestFollowerSeesLateCommits(t *testing.T) {
	u, _ := freshSchema(t)
	a, b := open(t, u), open(t, u)
	ws := storetest.Seed(t, b)
	late, early := storetest.Create(t, b, ws), storetest.Create(t, b, ws)
	time.Sleep(2 * postgres.FollowInterval)

	ctx := context.Background()
	slow, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close(ctx)
	tx, err := slow.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	// A write that has taken its cursor and not committed yet.
	var c int64
	if err := tx.QueryRow(ctx, `INSERT INTO events (workspace_id, resource_type, resource_id, kind, version, at_us) VALUES ($1, 'note', $2, 'edited', 2, 0) RETURNING cursor`, ws, late).Scan(&c); err != nil {
		t.Fatal(err)
	}
	lateWake, stopLate := a.Wait(store.TypeNote, late)
	defer stopLate()
	earlyWake, stopEarly := a.Wait(store.TypeNote, early)
	defer stopEarly()
	out, err := b.Guarded(ctx, storetest.AppendLine(ws, early, "key-early", 1, "e"))
	if err != nil {
		t.Fatal(err)
	}
	if out.Cursor <= c {
		t.Fatalf("the committed write's cursor %d is not after the open one's %d", out.Cursor, c)
	}
	select {
	case <-earlyWake:
	case <-time.After(2 * time.Second):
		t.Fatal("node A did not hear the newer write")
	}
	time.Sleep(2 * postgres.FollowInterval) // A has read past the open cursor
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lateWake:
	case <-time.After(2 * time.Second):
		t.Fatalf("node A never heard of cursor %d, committed after cursor %d was seen", c, out.Cursor)
	}
}

// A node rings a doorbell after its writes, naming each resource written
// ("<type>:<id>" on foundry_events, as earlier releases' listeners expect),
// outside the writes' transactions.
func TestDoorbellNamesTheWrite(t *testing.T) {
	u, _ := freshSchema(t)
	s := open(t, u)
	ws := storetest.Seed(t, s)
	id := storetest.Create(t, s, ws)
	ctx := context.Background()
	l, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(ctx)
	if _, err := l.Exec(ctx, `LISTEN foundry_events`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Guarded(ctx, storetest.AppendLine(ws, id, "key-bell", 1, "b")); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for {
		n, err := l.WaitForNotification(wctx)
		if err != nil {
			t.Fatalf("no doorbell naming note:%s within 5 s: %v", id, err)
		}
		if n.Payload == "note:"+id {
			return
		}
	}
}
