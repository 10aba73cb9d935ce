package storetest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"foundry/internal/store"
)

// actorsFixture is two workspaces with people, tokens and connections of
// fixed IDs (every store is given the same rows, so every store must give
// the same answer), and the answer each known actor of workspace A has.
type actorsFixture struct {
	a, b  string                 // workspace IDs
	known map[string]store.Actor // every actor of a that Actors must name
	// foreign are actor strings of b's rows: never named when a is asked.
	foreign []string
}

func seedActors(t testing.TB, s store.Store, many int) actorsFixture {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	f := actorsFixture{a: "ws_actors_a", b: "ws_actors_b", known: map[string]store.Actor{}}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	user := func(ws, id, name, email string) {
		t.Helper()
		must(s.CreateUser(ctx, store.User{ID: id, Workspace: ws, Email: email, Name: name, Role: "member", CreatedAt: now}))
	}
	token := func(ws, user, id, name string) {
		t.Helper()
		must(s.CreateToken(ctx, store.Token{ID: id, Workspace: ws, User: user, Name: name, Hash: "hash_" + id, Scopes: []string{"osfoundry:read"}, CreatedAt: now}))
	}
	client := func(id, name string) {
		t.Helper()
		must(s.CreateClient(ctx, store.Client{ID: id, Name: name, RedirectURIs: []string{"http://127.0.0.1/cb"}, Kind: store.ClientRegistered, CreatedAt: now}))
	}
	connect := func(ws, user, client, id string) {
		t.Helper()
		_, err := s.PutConnection(ctx, store.Connection{ID: id, Workspace: ws, User: user, Client: client, Scopes: []string{"osfoundry:read"}, CreatedAt: now})
		must(err)
	}
	must(s.CreateWorkspace(ctx, store.Workspace{ID: f.a, Name: "A", CreatedAt: now},
		store.User{ID: "usr_ada", Email: "ada@a.example", Name: "Ada Lovelace", Role: "owner", CreatedAt: now}))
	must(s.CreateWorkspace(ctx, store.Workspace{ID: f.b, Name: "B", CreatedAt: now},
		store.User{ID: "usr_bob", Email: "bob@b.example", Name: "Bob", Role: "owner", CreatedAt: now}))

	user(f.a, "usr_noname", "", "noname@a.example")
	user(f.a, "usr_ünï", "Zoë 日本", "zoe@a.example")
	token(f.a, "usr_ada", "tok_laptop", "laptop")
	token(f.a, "usr_ada", "tok_revoked", "old key")
	must(s.RevokeToken(ctx, f.a, "tok_revoked"))
	client("cli_named", "Claude Desktop")
	client("cli_unnamed", "")
	client("cli_gone", "Deleted client")
	connect(f.a, "usr_ada", "cli_named", "conn_named")
	connect(f.a, "usr_ada", "cli_unnamed", "conn_unnamed")
	connect(f.a, "usr_noname", "cli_gone", "conn_gone")
	must(s.DeleteClient(ctx, "cli_gone"))
	connect(f.a, "usr_noname", "cli_named", "conn_revoked")
	must(s.RevokeConnection(ctx, f.a, "conn_revoked"))
	// A token and a connection of one ID: the connection is the answer.
	token(f.a, "usr_ada", "dup_1", "the token")
	connect(f.a, "usr_ünï", "cli_named", "dup_1")
	// A person deleted is no one.
	user(f.a, "usr_deleted", "Gone", "gone@a.example")
	must(s.DeleteUser(ctx, f.a, "usr_deleted"))

	f.known = map[string]store.Actor{
		"user:usr_ada":       {Kind: store.ActorPerson, ID: "usr_ada", Name: "Ada Lovelace"},
		"user:usr_noname":    {Kind: store.ActorPerson, ID: "usr_noname", Name: "noname@a.example"},
		"user:usr_ünï":       {Kind: store.ActorPerson, ID: "usr_ünï", Name: "Zoë 日本"},
		"token:tok_laptop":   {Kind: store.ActorToken, ID: "tok_laptop", Name: "laptop"},
		"token:tok_revoked":  {Kind: store.ActorToken, ID: "tok_revoked", Name: "old key"},
		"token:conn_named":   {Kind: store.ActorClient, ID: "conn_named", Name: "Claude Desktop"},
		"token:conn_unnamed": {Kind: store.ActorClient, ID: "conn_unnamed", Name: "cli_unnamed"},
		"token:conn_gone":    {Kind: store.ActorClient, ID: "conn_gone", Name: "cli_gone"},
		"token:conn_revoked": {Kind: store.ActorClient, ID: "conn_revoked", Name: "Claude Desktop"},
		"token:dup_1":        {Kind: store.ActorClient, ID: "dup_1", Name: "Claude Desktop"},
	}
	for i := range many {
		id := fmt.Sprintf("usr_many_%04d", i)
		user(f.a, id, "Person "+id, id+"@a.example")
		f.known["user:"+id] = store.Actor{Kind: store.ActorPerson, ID: id, Name: "Person " + id}
	}

	token(f.b, "usr_bob", "tok_b", "B's key")
	connect(f.b, "usr_bob", "cli_named", "conn_b")
	f.foreign = []string{"user:usr_bob", "token:tok_b", "token:conn_b"}
	return f
}

// hostileActors are strings that name no actor of any workspace, however
// the store reads them.
var hostileActors = []string{
	"", "user", "user:", "token:", "token", ":", "user::", "bot:usr_ada", "usr_ada", "tok_laptop",
	"USER:usr_ada", "User:usr_ada", "user:USR_ADA", " user:usr_ada", "user:usr_ada ", "user: usr_ada",
	"user:usr_ada\x00", "user:\x00", "token:tok_laptop\x00x", "user:\xff\xfe", "user:usr_\xc3",
	"user:%", "user:usr_%", "user:_sr_ada", "user:*", "user:usr_ad?", "token:tok_lapto_",
	"user:usr_ada' OR '1'='1", "token:x'); DROP TABLE users; --", `user:"]`, `user:\`, `user:["usr_ada"]`,
	"user:tok_laptop", "token:usr_ada", "token:cli_named", "user:conn_named", "token:hash_tok_laptop",
	"user:token:tok_laptop", "token:user:usr_ada", "user:usr_deleted",
	"user:" + strings.Repeat("x", 10_000), "token:" + strings.Repeat("é", 3000),
}

func actorsOf(t *testing.T, s store.Store, ws string, actors []string) map[string]store.Actor {
	t.Helper()
	got, err := s.Actors(context.Background(), ws, actors)
	if err != nil {
		t.Fatalf("Actors(%d actors): %v", len(actors), err)
	}
	if got == nil {
		t.Fatalf("Actors(%d actors) answered a nil map", len(actors))
	}
	return got
}

func wantActors(t *testing.T, what string, got, want map[string]store.Actor) {
	t.Helper()
	if maps.Equal(got, want) {
		return
	}
	for k, w := range want {
		if g, ok := got[k]; !ok {
			t.Errorf("%s: %q missing (want %+v)", what, k, w)
		} else if g != w {
			t.Errorf("%s: %q is %+v, want %+v", what, k, g, w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %q answered (%+v) but not asked for or not of the workspace", what, k, g)
		}
	}
}

func testActors(t *testing.T, s store.Store) {
	f := seedActors(t, s, 0)
	known := slices.Sorted(maps.Keys(f.known))

	wantActors(t, "nil list", actorsOf(t, s, f.a, nil), map[string]store.Actor{})
	wantActors(t, "empty list", actorsOf(t, s, f.a, []string{}), map[string]store.Actor{})
	wantActors(t, "every known actor", actorsOf(t, s, f.a, known), f.known)

	// Only what is asked for.
	one := map[string]store.Actor{"token:conn_named": f.known["token:conn_named"]}
	wantActors(t, "one client", actorsOf(t, s, f.a, []string{"token:conn_named"}), one)
	wantActors(t, "one person", actorsOf(t, s, f.a, []string{"user:usr_noname"}),
		map[string]store.Actor{"user:usr_noname": f.known["user:usr_noname"]})

	// Duplicates are answered once.
	dups := append(append([]string{}, known...), known...)
	dups = append(dups, "user:usr_ada", "user:usr_ada", "token:dup_1")
	wantActors(t, "duplicates", actorsOf(t, s, f.a, dups), f.known)

	// Malformed and hostile strings are left out, and do not disturb the
	// rest of the answer.
	wantActors(t, "hostile only", actorsOf(t, s, f.a, hostileActors), map[string]store.Actor{})
	mixed := append(append([]string{}, hostileActors...), known...)
	wantActors(t, "hostile and known", actorsOf(t, s, f.a, mixed), f.known)

	// Another workspace's rows are never named, whichever workspace asks.
	wantActors(t, "b's actors asked of a", actorsOf(t, s, f.a, f.foreign), map[string]store.Actor{})
	wantActors(t, "a's actors asked of b", actorsOf(t, s, f.b, known), map[string]store.Actor{})
	wantActors(t, "an unknown workspace", actorsOf(t, s, "ws_nobody", append(known, f.foreign...)), map[string]store.Actor{})
	wantActors(t, "an empty workspace ID", actorsOf(t, s, "", append(known, f.foreign...)), map[string]store.Actor{})
	wantActors(t, "b's own", actorsOf(t, s, f.b, f.foreign), map[string]store.Actor{
		"user:usr_bob": {Kind: store.ActorPerson, ID: "usr_bob", Name: "Bob"},
		"token:tok_b":  {Kind: store.ActorToken, ID: "tok_b", Name: "B's key"},
		"token:conn_b": {Kind: store.ActorClient, ID: "conn_b", Name: "Claude Desktop"},
	})

	// The caller's slice is not changed.
	in := []string{"token:tok_laptop", "user:usr_ada", "token:tok_laptop"}
	actorsOf(t, s, f.a, in)
	if !slices.Equal(in, []string{"token:tok_laptop", "user:usr_ada", "token:tok_laptop"}) {
		t.Errorf("Actors changed its argument: %q", in)
	}
}

// testActorsMany asks for 1,000 actors and more at once: a quarter of them
// people of the workspace, the rest of every other sort.
func testActorsMany(t *testing.T, s store.Store) {
	f := seedActors(t, s, 250)
	var ask []string
	for k := range f.known {
		ask = append(ask, k)
	}
	ask = append(ask, f.foreign...)
	ask = append(ask, hostileActors...)
	for i := 0; len(ask) < 1000; i++ {
		ask = append(ask, fmt.Sprintf("user:usr_unknown_%04d", i), fmt.Sprintf("token:tok_unknown_%04d", i))
	}
	slices.Sort(ask)
	wantActors(t, fmt.Sprintf("%d actors", len(ask)), actorsOf(t, s, f.a, ask), f.known)

	// More than any SQL statement takes parameters.
	for i := range 70_000 {
		ask = append(ask, fmt.Sprintf("token:tok_more_%05d", i))
	}
	wantActors(t, fmt.Sprintf("%d actors", len(ask)), actorsOf(t, s, f.a, ask), f.known)
}

// BenchActors measures one Actors lookup of n actors (a page of history
// names a few dozen; a long one hundreds) in a workspace of 1,000 people,
// beside reading every person, token, connection and client of the
// workspace, as names were found before there was Actors.
func BenchActors(b *testing.B, s store.Store) {
	f := seedActors(b, s, 1000)
	ctx := context.Background()
	for _, n := range []int{10, 100, 1000} {
		ask := make([]string, 0, n)
		for i := 0; len(ask) < n; i++ {
			switch i % 4 {
			case 0, 1:
				ask = append(ask, fmt.Sprintf("user:usr_many_%04d", (i*7)%1000))
			case 2:
				ask = append(ask, "token:conn_named")
			default:
				ask = append(ask, fmt.Sprintf("token:tok_unknown_%d", i))
			}
		}
		b.Run(fmt.Sprintf("actors=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Actors(ctx, f.a, ask); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "us/lookup")
		})
	}
	b.Run("every-row-of-the-workspace", func(b *testing.B) {
		queries := 0
		for b.Loop() {
			queries = 3
			if _, err := s.Users(ctx, f.a); err != nil {
				b.Fatal(err)
			}
			if _, err := s.Tokens(ctx, f.a); err != nil {
				b.Fatal(err)
			}
			conns, err := s.Connections(ctx, f.a)
			if err != nil {
				b.Fatal(err)
			}
			seen := map[string]bool{}
			for _, c := range conns {
				if !seen[c.Client] {
					seen[c.Client] = true
					queries++
					_, _ = s.Client(ctx, c.Client)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "us/lookup")
		b.ReportMetric(float64(queries), "queries/lookup") // one per call above
	})
}
