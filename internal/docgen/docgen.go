// Package docgen renders the tables of the docs that restate code — the MCP
// tool reference, the REST routes, the limits and the pages' security
// policies — and keeps each in its marked region of a Markdown file, so a
// doc cannot drift from the code it describes: `go test ./internal/docgen/`
// fails when a region is stale, and UPDATE_DOCS=1 rewrites it. Every
// renderer depends only on the code, so the output is the same on every
// machine and every run.
package docgen

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"foundry/internal/mcpserver"
)

// UpdateHint is how to rewrite every generated region.
const UpdateHint = "run UPDATE_DOCS=1 go test ./internal/docgen/ to rewrite it"

// ErrStale is the error of a region that differs from what the code renders.
var ErrStale = errors.New("generated region is stale")

// Region is one generated block of a doc.
type Region struct {
	File   string // relative to the repository root, slash-separated
	Name   string // the marker's name: <!-- BEGIN GENERATED Name -->
	Render func() (string, error)
}

// Regions lists every generated region of the docs.
func Regions() []Region {
	return []Region{
		{File: "docs/tools.md", Name: "tools", Render: func() (string, error) {
			return mcpserver.Reference(mcpserver.Tools(nil)), nil
		}},
		{File: "docs/api.md", Name: "routes", Render: RoutesTable},
		{File: "docs/limits.md", Name: "limits", Render: LimitsTable},
		{File: "docs/limits.md", Name: "connections", Render: ConnectionsTable},
		{File: "docs/security.md", Name: "headers", Render: HeadersTable},
	}
}

// Find is the region called name.
func Find(name string) (Region, bool) {
	for _, r := range Regions() {
		if r.Name == name {
			return r, true
		}
	}
	return Region{}, false
}

// Begin and End are the lines around a generated region.
func Begin(name string) string { return "<!-- BEGIN GENERATED " + name + " -->" }
func End(name string) string   { return "<!-- END GENERATED " + name + " -->" }

// SyncRegion renders r and checks it against its file under root, or with
// update rewrites the region.
func SyncRegion(root string, r Region, update bool) error {
	body, err := r.Render()
	if err != nil {
		return fmt.Errorf("rendering %s for %s: %w", r.Name, r.File, err)
	}
	return Sync(filepath.Join(root, filepath.FromSlash(r.File)), r.Name, body, update)
}

// Sync checks that the region called name in the Markdown file at path
// holds body; with update it rewrites the region instead. Only the region
// is ever touched: the text between the markers becomes a blank line, body,
// and a blank line.
func Sync(path, name, body string, update bool) error {
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return fmt.Errorf("%s does not exist; it must hold the generated %s between a %s line and a %s line", path, name, Begin(name), End(name))
	} else if err != nil {
		return err
	}
	doc := string(raw)
	begin, end := Begin(name), End(name)
	if strings.Count(doc, begin) > 1 || strings.Count(doc, end) > 1 {
		return fmt.Errorf("%s has more than one %s or %s line; keep one pair", path, begin, end)
	}
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < 0 || j < i {
		return fmt.Errorf("%s lacks the markers of %s: put a %s line and, after it, a %s line where it goes, then %s", path, name, begin, end, UpdateHint)
	}
	block := doc[i+len(begin) : j]
	want := "\n\n" + strings.TrimSpace(body) + "\n\n"
	if block == want {
		return nil
	}
	if !update {
		return fmt.Errorf("%s: the %s %w:\n%s\n%s", path, name, ErrStale, firstDifference(strings.TrimSpace(block), strings.TrimSpace(body)), UpdateHint)
	}
	return os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644)
}

// firstDifference shows the first line where the file and the code part.
func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("first difference at line %d of the region:\n- in the file: %s\n+ generated:   %s", i+1, a, b)
		}
	}
	return ""
}

// cell keeps a value inside its Markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
