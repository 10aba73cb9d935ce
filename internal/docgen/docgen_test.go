package docgen_test

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"foundry/internal/api"
	"foundry/internal/auth"
	"foundry/internal/docgen"
)

const root = "../.."

// TestGeneratedDocsAreCurrent holds every generated region of the docs to
// the code: a stale one fails with its first differing line, and
// UPDATE_DOCS=1 rewrites it.
func TestGeneratedDocsAreCurrent(t *testing.T) {
	update := os.Getenv("UPDATE_DOCS") == "1"
	for _, r := range docgen.Regions() {
		if err := docgen.SyncRegion(root, r, update); err != nil {
			t.Error(err)
		}
	}
}

func TestRenderersAreDeterministic(t *testing.T) {
	for _, r := range docgen.Regions() {
		a, err := r.Render()
		if err != nil {
			t.Fatalf("%s: %v", r.Name, err)
		}
		for range 3 {
			if b, _ := r.Render(); b != a {
				t.Errorf("%s renders differently from one run to the next", r.Name)
			}
		}
	}
}

func TestSync(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.md")
	body := "| a | b |\n|---|---|\n| 1 | 2 |\n"
	if err := docgen.Sync(path, "x", body, false); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing file: err = %v", err)
	}
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("# Doc\n\nno markers here\n")
	if err := docgen.Sync(path, "x", body, true); err == nil || !strings.Contains(err.Error(), "lacks the markers") {
		t.Errorf("no markers: err = %v", err)
	}
	write(docgen.Begin("x") + "\n" + docgen.End("x") + "\n" + docgen.Begin("x") + "\n" + docgen.End("x") + "\n")
	if err := docgen.Sync(path, "x", body, true); err == nil || !strings.Contains(err.Error(), "more than one") {
		t.Errorf("two pairs: err = %v", err)
	}

	head := "# Doc\n\nBefore.\n\n" + docgen.Begin("x")
	tail := docgen.End("x") + "\n\n" + docgen.Begin("y") + "\nleft alone\n" + docgen.End("y") + "\n\nAfter.\n"
	write(head + "\n| a | b |\n|---|---|\n| 1 | 3 |\n" + tail)
	err := docgen.Sync(path, "x", body, false)
	if !errors.Is(err, docgen.ErrStale) || !strings.Contains(err.Error(), "UPDATE_DOCS=1") || !strings.Contains(err.Error(), "line 3") || !strings.Contains(err.Error(), "| 1 | 2 |") {
		t.Fatalf("stale region: err = %v", err)
	}
	if err := docgen.Sync(path, "x", body, true); err != nil {
		t.Fatalf("update: %v", err)
	}
	got, _ := os.ReadFile(path)
	if want := head + "\n\n" + strings.TrimSpace(body) + "\n\n" + tail; string(got) != want {
		t.Errorf("rewritten:\n%s\nwant:\n%s", got, want)
	}
	if err := docgen.Sync(path, "x", body, false); err != nil {
		t.Errorf("after update: %v", err)
	}
}

func TestRoutesTable(t *testing.T) {
	table, err := docgen.RoutesTable()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range api.Routes() {
		if !strings.Contains(table, "| "+r.Method+" | `"+r.Path+"` |") {
			t.Errorf("the table lacks %s %s", r.Method, r.Path)
		}
	}
	hasAll(t, table,
		"| GET | `/api/openapi.json` | anyone | This document |",
		"| GET | `/api/me` | a person (session) |",
		"| GET | `/api/notes` | a person, or a token with `"+auth.ScopeRead+"` |",
		"| PUT | `/api/notes/{note_id}/tabs/{tab_id}/text` | a person, or a token with `"+auth.ScopeWrite+"` | Replace the markdown tab's text |",
		"| POST | `/api/proposals/{proposal_id}/approve` | a person (session) |",
	)
}

func TestLimitsTable(t *testing.T) {
	table, err := docgen.LimitsTable()
	if err != nil {
		t.Fatal(err)
	}
	hasAll(t, table,
		"| Note title | 200 characters (≤ 800 bytes), no control/bidi characters | `title` | `note.MaxTitleRunes`, `note.MaxTitleBytes` |",
		"| markdown tab text | 1 MiB (1,048,576 bytes) UTF-8",
		"| slide body, notes | 20,000 characters and 64 KiB (65,536 bytes) each |",
		"| cells per sheet tab | 1,000,000 (bounding rectangle",
		"| source URL | 2048 characters and 8192 bytes;",
		"| list page | 1–50 (default 20 over MCP, 50 over REST); position cursors ≤ 1,000,000 |",
		"| MCP request body | 16 MiB (16,777,216 bytes) |",
		"no `<>:\"\\|?*` or `\\`",
	)
}

// hasAll checks that table holds every line fragment, and shows the table
// when one is missing.
func hasAll(t *testing.T, table string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(table)
	}
}

// TestLimitsNameEveryLimitConstant fails when a package gains a limit the
// tables do not show: every exported constant named Max…, Min… or
// Default… of the packages that hold limits must be named in a row.
func TestLimitsNameEveryLimitConstant(t *testing.T) {
	limits, err := docgen.LimitsTable()
	if err != nil {
		t.Fatal(err)
	}
	conns, err := docgen.ConnectionsTable()
	if err != nil {
		t.Fatal(err)
	}
	table := limits + conns
	for _, pkg := range []string{"note", "room", "service", "mcpserver", "urlnorm", "api", "server"} {
		for _, name := range limitConstants(t, filepath.Join("..", pkg)) {
			q := pkg + "." + name
			if !strings.Contains(table, "`"+q+"`") {
				t.Errorf("%s is not in the limits table: add a row (or its value to a row) in internal/docgen/limits.go, then %s", q, docgen.UpdateHint)
			}
		}
	}
}

// limitConstants are the exported constants of the package in dir whose
// names start with Max, Min or Default.
func limitConstants(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				for _, n := range s.(*ast.ValueSpec).Names {
					if n.IsExported() && (strings.HasPrefix(n.Name, "Max") || strings.HasPrefix(n.Name, "Min") || strings.HasPrefix(n.Name, "Default")) {
						out = append(out, n.Name)
					}
				}
			}
		}
	}
	slices.Sort(out)
	return out
}
