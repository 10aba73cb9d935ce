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
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
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
		upgradeRelease(t, s)
		compareReads(t, g, readRelease(t, s, g.Secrets))
	})
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
	add("first_workspace", o, nil, false)
	toks, err := svc.ListTokens(ctx, ws)
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

	notes, err := svc.WorkspaceNotes(ctx, ws)
	add("workspace_notes", notes, err, false)
	for _, q := range []string{"", "notes", "ïcode", "2027", "zz-nothing"} {
		l, err := svc.ListNotes(ctx, p, service.ListNotesArgs{Query: q, Page: service.Page{Limit: 50}})
		add("list_notes "+q, l, err, false)
	}
	for _, n := range notes {
		tabs, err := svc.ListNoteTabs(ctx, p, n.ID)
		add("list_note_tabs "+n.ID, tabs, err, false)
		for _, tab := range tabs.Tabs {
			c, err := svc.ReadNoteTab(ctx, p, service.TabArgs{NoteID: n.ID, TabID: tab.TabID})
			add("read_note_tab "+n.ID+" "+tab.TabID, c, err, false)
			for _, sh := range c.Sheets {
				rng, err := svc.ReadSheetRange(ctx, p, service.SheetRangeArgs{TabArgs: service.TabArgs{NoteID: n.ID, TabID: tab.TabID},
					SheetID: sh.ID, StartRow: 1, StartCol: 1, Rows: 30, Cols: 14})
				add("read_sheet_range "+n.ID+" "+tab.TabID+" "+sh.ID, rng, err, false)
			}
		}
		for _, kind := range []string{"sources", "files"} {
			a, err := svc.ListNoteAttachments(ctx, p, service.AttachmentsArgs{NoteID: n.ID, Kind: kind, Page: service.Page{Limit: 50}})
			add("list_note_attachments "+n.ID+" "+kind, a, err, false)
		}
		hist, err := svc.NoteHistory(ctx, ws, n.ID)
		add("note_history "+n.ID, hist, err, true)
		for _, v := range hist {
			d, err := svc.NoteAt(ctx, n.ID, v.Version)
			// The model may gain fields; every field release 1 had must
			// read back as it was.
			add(fmt.Sprintf("version_doc %s %d", n.ID, v.Version), d, err, true)
		}
	}

	rooms, err := svc.WorkspaceRooms(ctx, ws)
	add("workspace_rooms", rooms, err, false)
	for _, r := range rooms {
		v, err := svc.ReadRoom(ctx, p, r.ID)
		add("read_room "+r.ID, v, err, false)
		apps, err := svc.ListRoomApps(ctx, p, service.RoomAppsArgs{RoomID: r.ID, Page: service.Page{Limit: 50}})
		add("list_room_apps "+r.ID, apps, err, false)
		for _, app := range apps.Apps {
			st, err := svc.ReadRoomAppStatus(ctx, p, service.AppArgs{RoomID: r.ID, InstanceID: app.InstanceID})
			add("read_room_app_status "+r.ID+" "+app.InstanceID, st, err, false)
		}
		props, err := svc.ListProposals(ctx, ws, r.ID, "")
		add("list_proposals "+r.ID, props, err, false)
		for _, pr := range props {
			g, err := svc.GetProposal(ctx, ws, pr.ID)
			add("get_proposal "+pr.ID, g, err, false)
		}
		hist, err := s.History(ctx, store.TypeRoom, r.ID)
		add("room_history "+r.ID, hist, err, true)
	}
	repos, err := svc.ListRepositories(ctx, p, service.Page{Limit: 50})
	add("list_repositories", repos, err, false)
	for _, r := range repos.Repositories {
		hist, err := s.History(ctx, store.TypeRepository, r.ID)
		add("repository_history "+r.ID, hist, err, true)
	}
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
	ws, user := o.Workspace.ID, o.User.ID
	secrets := map[string]string{}
	secret, _, err := svc.CreateToken(ctx, ws, user, service.TokenSpec{Name: "all", Scopes: []string{auth.ScopeRead, auth.ScopeWrite}})
	must(err)
	secrets["all"] = secret
	p, err := auth.Verify(ctx, s, secret)
	must(err)
	ver := func(id string) int64 {
		t.Helper()
		tabs, err := svc.ListNoteTabs(ctx, p, id)
		must(err)
		return tabs.Version
	}
	key := 0
	next := func() string { key++; return fmt.Sprintf("release-1-key-%04d", key) }
	str := func(s string) *string { return &s }
	num := func(n int) *int { return &n }

	// A Note with every tab type.
	research, err := svc.CreateNote(ctx, ws, user, "Field notes — Ärger über Ünïcode ✓ 研究", true, func(d *note.Doc) error {
		d.Markdown = "# Field notes\n\nÄrger, naïve café, 日本語のテキスト, emoji 🧪 and a tab\there.\n"
		return nil
	})
	must(err)
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
		_, err := svc.PersonEdit(ctx, ws, user, research, ver(research), "file_added", func(d *note.Doc) ([]string, error) {
			file := note.AddFile(d, f.name, f.typ, f.size, fmt.Sprintf("%064x", i+1), time.Now())
			return []string{"files", file.ID}, nil
		})
		must(err)
	}

	// A Note people edit, restore and take off connected access and back.
	budget, err := svc.CreateNote(ctx, ws, user, "Budget 2027", true, nil)
	must(err)
	for _, text := range []string{"Draft one", "Draft two", "Draft three"} {
		_, err := svc.PersonEdit(ctx, ws, user, budget, ver(budget), "text_replaced", func(d *note.Doc) ([]string, error) {
			d.Markdown = text
			return []string{"markdown"}, nil
		})
		must(err)
	}
	_, err = svc.RestoreVersion(ctx, ws, user, budget, 2)
	must(err)
	must(svc.SetNoteApproved(ctx, ws, user, budget, false))
	must(svc.SetNoteApproved(ctx, ws, user, budget, true))

	// A Note agents never see.
	private, err := svc.CreateNote(ctx, ws, user, "Private — not shared", false, func(d *note.Doc) error {
		d.Markdown = "only people see this"
		return nil
	})
	must(err)
	_, err = svc.PersonEdit(ctx, ws, user, private, 1, "text_replaced", func(d *note.Doc) ([]string, error) {
		d.Markdown = "only people see this, still"
		return []string{"markdown"}, nil
	})
	must(err)

	// A Room with proposals and a repository.
	roomID, err := svc.CreateRoom(ctx, ws, user, "Team room")
	must(err)
	files := map[string]string{"src/App.tsx": "export default function App() {\n  return <h1>Hällo</h1>\n}\n"}
	approved, err := svc.ProposeSnippet(ctx, p, service.ProposeSnippetArgs{RoomID: roomID, Name: "Hello", Files: files, IdempotencyKey: "release-1-snippet-1"})
	must(err)
	must(svc.ApproveProposal(ctx, ws, user, approved.ProposalID))
	declined, err := svc.ProposeSnippet(ctx, p, service.ProposeSnippetArgs{RoomID: roomID, Name: "Clock", Files: map[string]string{"src/App.tsx": "export default () => null\n"}, IdempotencyKey: "release-1-snippet-2"})
	must(err)
	must(svc.DeclineProposal(ctx, ws, user, declined.ProposalID))
	repo, v1, err := svc.PushRepo(ctx, ws, user, "standup-timer", map[string][]byte{"package.json": []byte(`{"name":"standup-timer","version":"1.0.0"}` + "\n")})
	must(err)
	_, _, err = svc.PushRepo(ctx, ws, user, "standup-timer", map[string][]byte{"package.json": []byte(`{"name":"standup-timer","version":"1.1.0"}` + "\n"), "src/App.tsx": []byte("export default () => <p>⏱</p>\n")})
	must(err)
	_, err = svc.ProposeRepoApp(ctx, p, service.ProposeRepoArgs{RoomID: roomID, Name: "Standup timer", RepositoryID: repo, VersionID: v1, IdempotencyKey: "release-1-repo-1"})
	must(err)

	// Tokens: one for one Note, read only; one revoked.
	secret, _, err = svc.CreateToken(ctx, ws, user, service.TokenSpec{Name: "research-read", Scopes: []string{auth.ScopeRead}, Notes: []string{research}, Rooms: []string{}})
	must(err)
	secrets["research-read"] = secret
	secret, tok, err := svc.CreateToken(ctx, ws, user, service.TokenSpec{Name: "revoked", Scopes: []string{auth.ScopeRead}})
	must(err)
	secrets["revoked"] = secret
	must(svc.RevokeToken(ctx, ws, tok.ID))
	return secrets
}
