package store_test

// The release fixture: a data folder and a PostgreSQL dump written by
// release 1 of Foundry, and what every Note and Room read as then. Opening
// them with this build runs its migrations; every read must answer as it
// did. TestReleaseFixtureUpgrades is that check; TestWriteReleaseFixture
// (only with FOUNDRY_WRITE_RELEASE_FIXTURE=1 and a PostgreSQL server) is how
// the fixture was made, kept so the next release can make its own.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"foundry/internal/auth"
	"foundry/internal/note"
	"foundry/internal/service"
	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
	"foundry/internal/store/sqlite"
)

const (
	releaseDir = "testdata/release-1"
	// releaseSchema is the schema the PostgreSQL dump creates and fills; a
	// test loads it and renames it to a fresh schema of its own.
	releaseSchema = "foundry_fixture_release_1"
	// releaseLock serializes loads of the dump across test processes, since
	// each one creates releaseSchema before renaming it.
	releaseLock = 7204399
	writeEnv    = "FOUNDRY_WRITE_RELEASE_FIXTURE"
)

// golden is what the fixture reads as: the secrets of its tokens (a
// fixture's, made for it) and every read, in order.
type golden struct {
	Secrets map[string]string `json:"secrets"`
	Reads   []read            `json:"reads"`
}

// read is one call and its answer (or its error's text). Extra marks
// answers whose objects may gain fields in a later release (history
// entries, decoded versions): every field of the golden must be there and
// equal, new ones are allowed. Published answers (list_note_tabs,
// read_note_tab, …) are compared exactly.
type read struct {
	Call   string          `json:"call"`
	Answer json.RawMessage `json:"answer,omitempty"`
	Error  string          `json:"error,omitempty"`
	Extra  bool            `json:"extra_fields_allowed,omitempty"`
}

func TestReleaseFixtureUpgrades(t *testing.T) {
	var g golden
	raw, err := os.ReadFile(filepath.Join(releaseDir, "golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		copyFile(t, filepath.Join(releaseDir, "foundry.db"), filepath.Join(dir, "foundry.db"))
		s, err := sqlite.Open(context.Background(), dir, sqlite.Options{})
		if err != nil {
			t.Fatalf("open the release-1 data folder: %v", err)
		}
		defer s.Close()
		titleIndexHolds(t, &s.Base, `SELECT (SELECT COUNT(*) FROM resource_titles) = (SELECT COUNT(*) FROM resources)`)
		upgradeRelease(t, s)
		compareReads(t, g, readRelease(t, s, g.Secrets))
	})
	t.Run("postgres", func(t *testing.T) {
		u := loadReleaseDump(t)
		s, err := postgres.Open(context.Background(), u)
		if err != nil {
			t.Fatalf("open the release-1 database: %v", err)
		}
		defer s.Close()
		titleIndexHolds(t, &s.Base, `SELECT COUNT(*) = 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'resources_title_trgm'`)
		upgradeRelease(t, s)
		compareReads(t, g, readRelease(t, s, g.Secrets))
	})
}

// titleIndexHolds checks that opening the release's database made the
// title index for the titles it holds (release 1 had none): check is a
// query that says so.
func titleIndexHolds(t *testing.T, b *store.Base, check string) {
	t.Helper()
	var ok bool
	if err := b.R.QueryRowContext(context.Background(), check).Scan(&ok); err != nil || !ok {
		t.Errorf("the title index of the upgraded database (%s): %v, %v", check, ok, err)
	}
}

// upgradeRelease moves the release's Notes, stored whole, to parts as a
// start does, and checks that every one moved at the version it had.
func upgradeRelease(t *testing.T, s store.Store) {
	t.Helper()
	ctx := context.Background()
	wss, err := s.Workspaces(ctx)
	if err != nil || len(wss) == 0 {
		t.Fatalf("workspaces: %v, %v", wss, err)
	}
	before, err := s.List(ctx, store.ListQuery{Workspace: wss[0].ID, Type: store.TypeNote, Limit: 100, WithDoc: true})
	if err != nil {
		t.Fatal(err)
	}
	n, err := service.UpgradeNotes(ctx, s)
	if err != nil || n != len(before) || n == 0 {
		t.Fatalf("upgrade moved %d Notes, %v; the release has %d", n, err, len(before))
	}
	for _, r := range before {
		after, err := s.Head(ctx, store.TypeNote, r.ID)
		if err != nil || after.Version != r.Version || note.IsHead(r.Doc) {
			t.Fatalf("note %s: version %d → %d (%v); stored by parts before the upgrade: %v", r.ID, r.Version, after.Version, err, note.IsHead(r.Doc))
		}
		full, err := s.Get(ctx, store.TypeNote, r.ID)
		if err != nil || !note.IsHead(full.Doc) {
			t.Fatalf("note %s is not stored by parts after the upgrade (%v)", r.ID, err)
		}
	}
}

// loadReleaseDump loads the release-1 dump into a fresh schema and returns
// a URL whose search_path is it.
func loadReleaseDump(t *testing.T) string {
	t.Helper()
	u, schema := pgtest.Schema(t)
	dump, err := os.ReadFile(filepath.Join(releaseDir, "postgres.sql"))
	if err != nil {
		t.Fatal(err)
	}
	// psql's meta-commands (\restrict …) are not SQL; the rest is run as
	// one simple-protocol script.
	var script strings.Builder
	for _, line := range strings.SplitAfter(string(dump), "\n") {
		if !strings.HasPrefix(line, `\`) {
			script.WriteString(line)
		}
	}
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, pgtest.BaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	for _, stmt := range []string{
		fmt.Sprintf(`SELECT pg_advisory_lock(%d)`, releaseLock),
		`DROP SCHEMA ` + schema,
		`DROP SCHEMA IF EXISTS ` + releaseSchema + ` CASCADE`,
		script.String(),
		`ALTER SCHEMA ` + releaseSchema + ` RENAME TO ` + schema,
		fmt.Sprintf(`SELECT pg_advisory_unlock(%d)`, releaseLock),
	} {
		if _, err := admin.Exec(ctx, stmt, pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Fatalf("load the release-1 dump: %v", err)
		}
	}
	return u
}

// readRelease reads everything the fixture holds, the way agents and
// people read it.
func readRelease(t *testing.T, s store.Store, secrets map[string]string) []read {
	t.Helper()
	ctx := context.Background()
	svc := service.New(s)
	var out []read
	add := func(call string, v any, err error, extra bool) {
		r := read{Call: call, Extra: extra}
		if err != nil {
			r.Error = err.Error()
		} else {
			b, merr := json.Marshal(v)
			if merr != nil {
				t.Fatalf("%s: %v", call, merr)
			}
			r.Answer = b
		}
		out = append(out, r)
	}
	o, err := svc.FirstWorkspace(ctx)
	if err != nil {
		t.Fatalf("first workspace: %v", err)
	}
	ws := o.Workspace.ID
	op := service.Operator(o)
	add("first_workspace", o, nil, false)
	// The tokens' rows as release 1 wrote them (the service's list is now
	// the connections' entries, which release 1 did not answer).
	toks, err := s.Tokens(ctx, ws)
	add("tokens", toks, err, false)
	names := make([]string, 0, len(secrets))
	for n := range secrets {
		names = append(names, n)
	}
	sort.Strings(names)
	var p auth.Principal
	for _, n := range names {
		pr, err := auth.Verify(ctx, s, secrets[n])
		add("verify "+n, pr, err, false)
		if n == "all" {
			p = pr
		}
	}
	if p.TokenID == "" {
		t.Fatal(`the fixture has no token "all"`)
	}
	agent := service.Agent(p)

	// The workspace's Notes and Rooms and a Note's history as release 1's
	// people's reads answered them: what the store holds. The operator's
	// lists and history, which answer in this build's shapes, must say the
	// same (checkPeopleReads).
	notes, err := workspaceList(ctx, s, ws, store.TypeNote)
	add("workspace_notes", notes, err, false)
	for _, q := range []string{"", "notes", "ïcode", "2027", "zz-nothing"} {
		l, err := svc.ListNotes(ctx, agent, service.ListNotesArgs{Query: q, Page: service.Page{Limit: 50}})
		add("list_notes "+q, l, err, false)
	}
	for _, n := range notes {
		tabs, err := svc.ListNoteTabs(ctx, agent, n.ID)
		add("list_note_tabs "+n.ID, tabs, err, false)
		for _, tab := range tabs.Tabs {
			c, err := svc.ReadNoteTab(ctx, agent, service.TabArgs{NoteID: n.ID, TabID: tab.TabID})
			add("read_note_tab "+n.ID+" "+tab.TabID, c, err, false)
			for _, sh := range c.Sheets {
				rng, err := svc.ReadSheetRange(ctx, agent, service.SheetRangeArgs{TabArgs: service.TabArgs{NoteID: n.ID, TabID: tab.TabID},
					SheetID: sh.ID, StartRow: 1, StartCol: 1, Rows: 30, Cols: 14})
				add("read_sheet_range "+n.ID+" "+tab.TabID+" "+sh.ID, rng, err, false)
			}
		}
		for _, kind := range []string{"sources", "files"} {
			a, err := svc.ListNoteAttachments(ctx, agent, service.AttachmentsArgs{NoteID: n.ID, Kind: kind, Page: service.Page{Limit: 50}})
			add("list_note_attachments "+n.ID+" "+kind, a, err, false)
		}
		hist, err := s.History(ctx, store.TypeNote, n.ID)
		add("note_history "+n.ID, hist, err, true)
		checkNoteHistory(t, svc, op, n.ID, hist)
		for _, v := range hist {
			d, err := svc.NoteAt(ctx, n.ID, v.Version)
			// The model may gain fields; every field release 1 had must
			// read back as it was.
			add(fmt.Sprintf("version_doc %s %d", n.ID, v.Version), d, err, true)
		}
	}

	rooms, err := workspaceList(ctx, s, ws, store.TypeRoom)
	add("workspace_rooms", rooms, err, false)
	checkPeopleLists(t, svc, op, notes, rooms)
	for _, r := range rooms {
		v, err := svc.ReadRoom(ctx, agent, r.ID)
		add("read_room "+r.ID, v, err, false)
		apps, err := svc.ListRoomApps(ctx, agent, service.RoomAppsArgs{RoomID: r.ID, Page: service.Page{Limit: 50}})
		add("list_room_apps "+r.ID, apps, err, false)
		for _, app := range apps.Apps {
			// The status gains what the code compiled to (the proposal's
			// and the app's builds); every field release 1 had must read as
			// it did, build included.
			st, err := svc.ReadRoomAppStatus(ctx, agent, service.AppArgs{RoomID: r.ID, InstanceID: app.InstanceID})
			add("read_room_app_status "+r.ID+" "+app.InstanceID, st, err, true)
		}
		// A reviewer's view of a proposal gains what it shows (the Room's
		// name, the file count, a snippet's compile result); every field
		// release 1 had must read as it did.
		props, err := svc.ListProposals(ctx, op, service.ListProposalsArgs{RoomID: r.ID})
		add("list_proposals "+r.ID, props, err, true)
		ids := make([]string, 0, len(props))
		for _, pr := range props {
			ids = append(ids, pr.ID)
		}
		sort.Strings(ids)
		for _, id := range ids {
			g, _, err := svc.ProposalDetail(ctx, op, id)
			add("get_proposal "+id, g, err, true)
		}
		hist, err := s.History(ctx, store.TypeRoom, r.ID)
		add("room_history "+r.ID, hist, err, true)
	}
	repos, err := svc.ListRepositories(ctx, agent, service.Page{Limit: 50})
	add("list_repositories", repos, err, false)
	for _, r := range repos.Repositories {
		hist, err := s.History(ctx, store.TypeRepository, r.ID)
		add("repository_history "+r.ID, hist, err, true)
	}
	return out
}

// summary is one line of release 1's people's list of Notes or Rooms.
type summary struct {
	ID, Title string
	Version   int64
	Approved  bool // connected access (Rooms: always true)
	UpdatedAt time.Time
}

// workspaceList is every Note (deleted ones left out) or Room of workspace
// ws, by ID, as the store holds them.
func workspaceList(ctx context.Context, s store.Store, ws, typ string) ([]summary, error) {
	var out []summary
	after := ""
	for {
		rows, err := s.List(ctx, store.ListQuery{Workspace: ws, Type: typ, AfterID: after, Limit: 500})
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if typ == store.TypeNote {
				if _, err := s.GetObject(ctx, service.KindNoteDeleted, r.ID); err == nil {
					continue
				} else if !errors.Is(err, store.ErrNotFound) {
					return nil, err
				}
			}
			out = append(out, summary{ID: r.ID, Title: r.Title, Version: r.Version, Approved: r.Approved, UpdatedAt: r.UpdatedAt})
		}
		if len(rows) < 500 {
			return out, nil
		}
		after = rows[len(rows)-1].ID
	}
}

// checkPeopleLists fails unless the operator's lists of Notes and Rooms
// (what the CLI and the web app show) hold what the store holds.
func checkPeopleLists(t *testing.T, svc *service.Service, op service.Caller, notes, rooms []summary) {
	t.Helper()
	ctx := context.Background()
	var got []summary
	for cursor := ""; ; {
		l, err := svc.ListNotes(ctx, op, service.ListNotesArgs{Page: service.Page{Cursor: cursor, Limit: service.MaxPage}})
		if err != nil {
			t.Fatalf("the operator's list of Notes: %v", err)
		}
		for _, n := range l.Notes {
			at, err := time.Parse(time.RFC3339, n.UpdatedAt)
			if err != nil {
				t.Fatalf("Note %s: updated_at %q: %v", n.NoteID, n.UpdatedAt, err)
			}
			got = append(got, summary{ID: n.NoteID, Title: n.Title, Version: n.Version, Approved: n.Approved, UpdatedAt: at})
		}
		if cursor = l.NextCursor; cursor == "" {
			break
		}
	}
	// The list says when to the second.
	want := make([]summary, len(notes))
	for i, n := range notes {
		want[i] = n
		want[i].UpdatedAt = n.UpdatedAt.UTC().Truncate(time.Second)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the operator lists the Notes\n%+v\nthe store holds\n%+v", got, want)
	}
	var gotRooms, wantRooms []string
	for cursor := ""; ; {
		l, err := svc.ListRooms(ctx, op, service.Page{Cursor: cursor, Limit: service.MaxPage})
		if err != nil {
			t.Fatalf("the operator's list of Rooms: %v", err)
		}
		for _, r := range l.Rooms {
			gotRooms = append(gotRooms, fmt.Sprintf("%s %q v%d", r.RoomID, r.Name, r.Version))
		}
		if cursor = l.NextCursor; cursor == "" {
			break
		}
	}
	for _, r := range rooms {
		wantRooms = append(wantRooms, fmt.Sprintf("%s %q v%d", r.ID, r.Title, r.Version))
	}
	if !reflect.DeepEqual(gotRooms, wantRooms) {
		t.Errorf("the operator lists the Rooms %q; the store holds %q", gotRooms, wantRooms)
	}
}

// checkNoteHistory fails unless the operator's history of Note id (what the
// CLI and the web app show) is the store's, each writer named.
func checkNoteHistory(t *testing.T, svc *service.Service, op service.Caller, id string, vs []store.VersionInfo) {
	t.Helper()
	var h service.History
	for cursor := ""; ; {
		page, err := svc.NoteHistory(context.Background(), op, service.HistoryArgs{NoteID: id, Page: service.Page{Cursor: cursor, Limit: service.MaxPage}})
		if err != nil {
			t.Fatalf("the operator's history of %s: %v", id, err)
		}
		h.Version, h.Versions = page.Version, append(h.Versions, page.Versions...)
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	slices.Reverse(h.Versions) // pages come newest first
	if len(h.Versions) != len(vs) || len(vs) == 0 || h.Version != vs[len(vs)-1].Version {
		t.Fatalf("the operator's history of %s has %d versions, at version %d; the store has %d", id, len(h.Versions), h.Version, len(vs))
	}
	for i, v := range vs {
		e := h.Versions[i]
		kind, actorID, _ := strings.Cut(v.Actor, ":")
		whoKind := map[string]string{"user": "person", "token": "token"}[kind]
		if e.Version != v.Version || e.Kind != v.Kind || !e.At.Equal(v.At) || !slices.Equal(e.Changed, v.Changed) || e.Who.ID != actorID || e.Who.Kind != whoKind || e.Who.Name == "" {
			t.Errorf("%s version %d: the operator's history says %+v; the store %+v", id, v.Version, e, v)
		}
	}
}

// inMadeOrder is a list of proposals in the order service.ListProposals
// answers: as they were made (times are to the second; within one, a
// Room's proposals in the order their instances were reserved). Release 1
// listed a second's proposals by ID.
func inMadeOrder(list any) any {
	ps, ok := list.([]any)
	if !ok {
		return list
	}
	out := slices.Clone(ps)
	field := func(p any, k string) string { s, _ := p.(map[string]any)[k].(string); return s }
	instance := func(p any) int {
		n, _ := strconv.Atoi(strings.TrimPrefix(field(p, "instance_id"), "app-"))
		return n
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if field(a, "created_at") != field(b, "created_at") || field(a, "room_id") != field(b, "room_id") {
			return field(a, "created_at") < field(b, "created_at")
		}
		return instance(a) < instance(b)
	})
	return out
}

// compareReads fails for every read that does not answer as the golden.
func compareReads(t *testing.T, g golden, got []read) {
	t.Helper()
	if len(got) != len(g.Reads) {
		t.Errorf("%d reads; the golden has %d", len(got), len(g.Reads))
	}
	for i := 0; i < min(len(got), len(g.Reads)); i++ {
		w, h := g.Reads[i], got[i]
		if w.Call != h.Call {
			t.Fatalf("read %d is %q; the golden's is %q", i, h.Call, w.Call)
		}
		if w.Error != h.Error {
			t.Errorf("%s: error %q; the golden's is %q", w.Call, h.Error, w.Error)
			continue
		}
		if w.Error != "" {
			continue
		}
		var wv, hv any
		if err := json.Unmarshal(w.Answer, &wv); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(h.Answer, &hv); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(w.Call, "list_proposals ") {
			wv = inMadeOrder(wv)
		}
		// Which answers may gain fields is this build's reader's to say.
		if diff := jsonDiff("", wv, hv, w.Extra || h.Extra); diff != "" {
			t.Errorf("%s answers otherwise than release 1: %s", w.Call, diff)
		}
	}
}

// jsonDiff describes the first difference between want and got ("" when
// none); with extra, objects in got may have keys want has not.
func jsonDiff(path string, want, got any, extra bool) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: got %v, want an object", path, got)
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			gv, ok := g[k]
			if !ok {
				return fmt.Sprintf("%s.%s is missing", path, k)
			}
			if d := jsonDiff(path+"."+k, w[k], gv, extra); d != "" {
				return d
			}
		}
		if !extra {
			for k := range g {
				if _, ok := w[k]; !ok {
					return fmt.Sprintf("%s.%s is new", path, k)
				}
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: got %s, want %s", path, short(got), short(want))
		}
		for i := range w {
			if d := jsonDiff(fmt.Sprintf("%s[%d]", path, i), w[i], g[i], extra); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(want, got) {
		return fmt.Sprintf("%s: got %s, want %s", path, short(got), short(want))
	}
	return ""
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestWriteReleaseFixture writes testdata/release-1 from this build: a data
// folder filled through the service, the same rows copied into a
// PostgreSQL schema and dumped, and the golden reads. Run it only to make a
// release's fixture:
//
//	FOUNDRY_WRITE_RELEASE_FIXTURE=1 FOUNDRY_TEST_POSTGRES_URL=… go test ./internal/store/ -run TestWriteReleaseFixture
func TestWriteReleaseFixture(t *testing.T) {
	if os.Getenv(writeEnv) == "" {
		t.Skip("set " + writeEnv + "=1 to write the release fixture (it replaces " + releaseDir + ")")
	}
	base := pgtest.BaseURL(t)
	ctx := context.Background()
	dir := t.TempDir()
	s, err := sqlite.Open(ctx, dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	secrets := fillRelease(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "foundry.db-wal")); err == nil {
		t.Fatal("the data folder kept a -wal file after Close")
	}
	if err := os.MkdirAll(releaseDir, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(dir, "foundry.db"), filepath.Join(releaseDir, "foundry.db"))
	if err := os.Chmod(filepath.Join(releaseDir, "foundry.db"), 0o644); err != nil {
		t.Fatal(err)
	}

	// The same rows into a schema of their own, made by this build's
	// migrations, then dumped as plain SQL.
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, `DROP SCHEMA IF EXISTS `+releaseSchema+` CASCADE; CREATE SCHEMA `+releaseSchema); err != nil {
		t.Fatal(err)
	}
	defer admin.Exec(ctx, `DROP SCHEMA IF EXISTS `+releaseSchema+` CASCADE`)
	cfg, err := pgx.ParseConfig(base)
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["search_path"] = releaseSchema
	pu, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := pu.Query()
	q.Set("search_path", releaseSchema)
	pu.RawQuery = q.Encode()
	ps, err := postgres.Open(ctx, pu.String())
	if err != nil {
		t.Fatal(err)
	}
	ps.Close()
	pg := stdlib.OpenDB(*cfg)
	defer pg.Close()
	lite, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "foundry.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	copyRows(t, lite, pg)
	cmd := exec.Command("pg_dump", "--schema="+releaseSchema, "--inserts", "--no-owner", "--no-privileges", "--no-comments", base)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	dump, err := cmd.Output()
	if err != nil {
		t.Fatalf("pg_dump: %v: %s", err, stderr.String())
	}
	if err := os.WriteFile(filepath.Join(releaseDir, "postgres.sql"), dump, 0o644); err != nil {
		t.Fatal(err)
	}

	// The golden is read from the committed copy, by this build.
	rdir := t.TempDir()
	copyFile(t, filepath.Join(releaseDir, "foundry.db"), filepath.Join(rdir, "foundry.db"))
	rs, err := sqlite.Open(ctx, rdir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := golden{Secrets: secrets, Reads: readRelease(t, rs, secrets)}
	rs.Close()
	b, err := json.MarshalIndent(g, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(releaseDir, "golden.json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyRows copies every table of the data folder into the PostgreSQL schema
// (same tables, made by the same migrations), in foreign-key order.
func copyRows(t *testing.T, from, to *sql.DB) {
	t.Helper()
	ctx := context.Background()
	order := []string{"workspaces", "users", "tokens", "resources", "resource_versions", "idempotency_keys", "objects", "events", "event_horizons"}
	var n int
	if err := from.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT IN ('schema_migrations', '`+strings.Join(order, "', '")+`')`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("the data folder has %d tables copyRows does not know", n)
	}
	for _, table := range order {
		rows, err := from.QueryContext(ctx, `SELECT * FROM `+table)
		if err != nil {
			t.Fatal(err)
		}
		cols, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		marks := make([]string, len(cols))
		for i := range marks {
			marks[i] = fmt.Sprintf("$%d", i+1)
		}
		ins := `INSERT INTO ` + table + ` (` + strings.Join(cols, ", ") + `) VALUES (` + strings.Join(marks, ", ") + `)`
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			if _, err := to.ExecContext(ctx, ins, vals...); err != nil {
				t.Fatalf("%s: %v", table, err)
			}
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := to.ExecContext(ctx, `SELECT setval(pg_get_serial_sequence('events', 'cursor'), (SELECT COALESCE(MAX(cursor), 0) + 1 FROM events), false)`); err != nil {
		t.Fatal(err)
	}
}

// fillRelease writes the fixture's content through the service: Notes with
// every tab type and a few versions each, a Room with proposals, a
// repository and tokens. It returns the tokens' secrets by name.
func fillRelease(t *testing.T, s store.Store) map[string]string {
	t.Helper()
	ctx := context.Background()
	svc := service.New(s)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	o, _, err := svc.Bootstrap(ctx, "Release one", "owner@example.org")
	must(err)
	person := service.Person(o.Workspace.ID, o.User.ID, service.RoleOwner)
	secrets := map[string]string{}
	secret, _, err := svc.CreateToken(ctx, person, service.TokenSpec{Name: "all", Scopes: []string{auth.ScopeRead, auth.ScopeWrite}})
	must(err)
	secrets["all"] = secret
	pr, err := auth.Verify(ctx, s, secret)
	must(err)
	p := service.Agent(pr)
	ver := func(id string) int64 {
		t.Helper()
		tabs, err := svc.ListNoteTabs(ctx, person, id)
		must(err)
		return tabs.Version
	}
	key := 0
	next := func() string { key++; return fmt.Sprintf("release-1-key-%04d", key) }
	str := func(s string) *string { return &s }
	num := func(n int) *int { return &n }

	// A Note with every tab type.
	created, err := svc.CreateNoteFrom(ctx, person, service.CreateNoteArgs{Title: "Field notes — Ärger über Ünïcode ✓ 研究", Approved: true}, func(d *note.Doc) error {
		d.Markdown = "# Field notes\n\nÄrger, naïve café, 日本語のテキスト, emoji 🧪 and a tab\there.\n"
		return nil
	})
	must(err)
	research := created.NoteID
	for _, text := range []string{
		"# Field notes\n\nÄrger, naïve café, 日本語のテキスト, emoji 🧪 and a tab\there.\n\n## Day 2\n\n- ß, ẞ, İstanbul, ǅ\n",
		"# Field notes\n\nÄrger, naïve café, 日本語のテキスト, emoji 🧪 and a tab\there.\n\n## Day 2\n\n- ß, ẞ, İstanbul, ǅ\n- \"quotes\", back\\slash, 100% _under_\n",
	} {
		_, err := svc.EditNoteTab(ctx, p, service.EditTabArgs{NoteID: research, TabID: "markdown", ExpectedVersion: ver(research), IdempotencyKey: next(), Operation: "replace_text", Text: str(text)})
		must(err)
	}
	slides, err := svc.CreateNoteTab(ctx, p, service.CreateTabArgs{NoteID: research, ExpectedVersion: ver(research), IdempotencyKey: next(), TabType: note.TypeSlides, Label: "Deck — Übersicht",
		Slides: []note.SlideInput{{Title: "Why", Body: "Because 🧪"}, {Title: "How", Body: "Carefully", Notes: "Speaker notes: ünïcode"}, {Title: "When"}}})
	must(err)
	_, err = svc.EditNoteTab(ctx, p, service.EditTabArgs{NoteID: research, TabID: slides.TabID, ExpectedVersion: ver(research), IdempotencyKey: next(), Operation: "slide_add", Title: str("Questions?"), Body: str("Ask away"), Notes: str("")})
	must(err)
	sheet, err := svc.CreateNoteTab(ctx, p, service.CreateTabArgs{NoteID: research, ExpectedVersion: ver(research), IdempotencyKey: next(), TabType: note.TypeSheet, Label: "Measurements"})
	must(err)
	cells := make([][]any, 25)
	for r := range cells {
		cells[r] = make([]any, 12)
		for c := range cells[r] {
			switch (r*12 + c) % 6 {
			case 0:
				cells[r][c] = fmt.Sprintf("r%dc%d ü", r, c)
			case 1:
				cells[r][c] = float64(r*100 + c)
			case 2:
				cells[r][c] = float64(r) + 0.25
			case 3:
				cells[r][c] = r%2 == 0
			case 4:
				cells[r][c] = nil
			case 5:
				cells[r][c] = -1e9 - float64(c)
			}
		}
	}
	cells[0] = []any{"Sample", "Mass (g)", "Temp °C", "OK", nil, "Note", "日本", "", "x", 0.0, false, "end"}
	_, err = svc.EditNoteTab(ctx, p, service.EditTabArgs{NoteID: research, TabID: sheet.TabID, ExpectedVersion: ver(research), IdempotencyKey: next(), Operation: "sheet_set_range", StartRow: num(0), StartCol: num(0), Values: cells})
	must(err)
	_, err = svc.EditNoteTab(ctx, p, service.EditTabArgs{NoteID: research, TabID: sheet.TabID, ExpectedVersion: ver(research), IdempotencyKey: next(), Operation: "sheet_set_range", StartRow: num(3), StartCol: num(2), Values: [][]any{{"changed", 42.0}, {true, nil}}})
	must(err)
	for i, src := range [][2]string{{"Model Context Protocol", "https://modelcontextprotocol.io/specification"}, {"Ünïcode FAQ", "https://www.unicode.org/faq/?ref=Ärger#x"}} {
		_, err := svc.AddNoteSource(ctx, p, service.AddSourceArgs{NoteID: research, ExpectedVersion: ver(research), IdempotencyKey: fmt.Sprintf("release-1-src-%d", i), Title: src[0], URL: src[1]})
		must(err)
	}
	for i, f := range []struct {
		name, typ string
		size      int64
	}{{"photo-ü.jpg", "image/jpeg", 123456}, {"data.csv", "text/csv", 789}} {
		body := bytes.Repeat([]byte{byte(i + 1)}, int(f.size))
		_, err := svc.UploadFile(ctx, person, service.UploadArgs{NoteID: research, Guard: service.Guard{ExpectedVersion: ver(research)},
			FileUpload: service.FileUpload{Name: f.name, ContentType: f.typ, Body: bytes.NewReader(body), Length: f.size}})
		must(err)
	}

	// A Note people edit, restore and take off connected access and back.
	save := func(id, text string) {
		t.Helper()
		_, err := svc.EditNoteTab(ctx, person, service.EditTabArgs{NoteID: id, TabID: note.TypeMarkdown, ExpectedVersion: ver(id), Operation: "replace_text", Text: str(text)})
		must(err)
	}
	created, err = svc.CreateNote(ctx, person, service.CreateNoteArgs{Title: "Budget 2027", Approved: true})
	must(err)
	budget := created.NoteID
	for _, text := range []string{"Draft one", "Draft two", "Draft three"} {
		save(budget, text)
	}
	_, err = svc.RestoreVersion(ctx, person, service.RestoreArgs{NoteID: budget, Version: 2, Guard: service.Guard{ExpectedVersion: ver(budget)}})
	must(err)
	for _, on := range []bool{false, true} {
		_, err = svc.UpdateNote(ctx, person, service.UpdateNoteArgs{NoteID: budget, Approved: &on, Guard: service.Guard{ExpectedVersion: ver(budget)}})
		must(err)
	}

	// A Note agents never see.
	created, err = svc.CreateNoteFrom(ctx, person, service.CreateNoteArgs{Title: "Private — not shared"}, func(d *note.Doc) error {
		d.Markdown = "only people see this"
		return nil
	})
	must(err)
	save(created.NoteID, "only people see this, still")

	// A Room with proposals and a repository.
	rm, err := svc.CreateRoom(ctx, person, "Team room")
	must(err)
	roomID := rm.RoomID
	files := map[string]string{"src/App.tsx": "export default function App() {\n  return <h1>Hällo</h1>\n}\n"}
	approved, err := svc.ProposeSnippet(ctx, p, service.ProposeSnippetArgs{RoomID: roomID, Name: "Hello", Files: files, IdempotencyKey: "release-1-snippet-1"})
	must(err)
	_, err = svc.DecideProposal(ctx, person, approved.ProposalID, true)
	must(err)
	declined, err := svc.ProposeSnippet(ctx, p, service.ProposeSnippetArgs{RoomID: roomID, Name: "Clock", Files: map[string]string{"src/App.tsx": "export default () => null\n"}, IdempotencyKey: "release-1-snippet-2"})
	must(err)
	_, err = svc.DecideProposal(ctx, person, declined.ProposalID, false)
	must(err)
	repo, v1, err := svc.PushRepo(ctx, person, "standup-timer", map[string][]byte{"package.json": []byte(`{"name":"standup-timer","version":"1.0.0"}` + "\n")})
	must(err)
	_, _, err = svc.PushRepo(ctx, person, "standup-timer", map[string][]byte{"package.json": []byte(`{"name":"standup-timer","version":"1.1.0"}` + "\n"), "src/App.tsx": []byte("export default () => <p>⏱</p>\n")})
	must(err)
	_, err = svc.ProposeRepoApp(ctx, p, service.ProposeRepoArgs{RoomID: roomID, Name: "Standup timer", RepositoryID: repo, VersionID: v1, IdempotencyKey: "release-1-repo-1"})
	must(err)

	// Tokens: one for one Note, read only; one revoked.
	secret, _, err = svc.CreateToken(ctx, person, service.TokenSpec{Name: "research-read", Scopes: []string{auth.ScopeRead}, Notes: []string{research}, Rooms: []string{}})
	must(err)
	secrets["research-read"] = secret
	secret, tok, err := svc.CreateToken(ctx, person, service.TokenSpec{Name: "revoked", Scopes: []string{auth.ScopeRead}})
	must(err)
	secrets["revoked"] = secret
	must(svc.RevokeToken(ctx, person, tok.ID))
	return secrets
}
