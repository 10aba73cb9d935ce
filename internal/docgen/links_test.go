package docgen_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"foundry/internal/docgen"
)

// TestDocLinksResolve: every relative link and anchor of the README and
// the docs names a file, folder or heading that exists.
func TestDocLinksResolve(t *testing.T) {
	files := []string{"README.md"}
	mds, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if len(mds) == 0 {
		t.Fatal("no docs/*.md found")
	}
	for _, m := range mds {
		rel, _ := filepath.Rel(root, m)
		files = append(files, filepath.ToSlash(rel))
	}
	for _, err := range docgen.CheckLinks(root, files) {
		t.Error(err)
	}
}

func TestCheckLinksFindsBrokenOnes(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "docs", "pics"), 0o755)
	os.WriteFile(filepath.Join(dir, "docs", "pics", "a.png"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "docs", "b.md"), []byte("# B\n\n## The `serve` flags\n\n## Again\n\n## Again\n\n<a id=\"custom\"></a>\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "README.md"), []byte(strings.Join([]string{
		"# Top",
		"[ok](docs/b.md) [ok](docs/b.md#the-serve-flags) [ok](docs/b.md#again-1) [ok](docs/b.md#custom)",
		`<img src="docs/pics/a.png"> [folder](docs/pics/) [self](#top) [web](https://example.com/x.md#nope)`,
		"`[in code](missing.md)`",
		"```",
		"[fenced](missing.md)",
		"```",
		"[gone](docs/c.md) [bad anchor](docs/b.md#again-2) [self](#nowhere)",
		`<img src="docs/pics/z.png">`,
		"[ref]: docs/missing.md",
	}, "\n")), 0o644)
	var got []string
	for _, err := range docgen.CheckLinks(dir, []string{"README.md"}) {
		got = append(got, err.Error())
	}
	want := []string{
		`README.md:8: link "docs/c.md": docs/c.md does not exist`,
		`README.md:8: link "docs/b.md#again-2": no heading or id "again-2" in b.md`,
		`README.md:8: link "#nowhere": no heading or id "nowhere" in README.md`,
		`README.md:9: link "docs/pics/z.png": docs/pics/z.png does not exist`,
		`README.md:10: link "docs/missing.md": docs/missing.md does not exist`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Run it":                            "run-it",
		"`foundry serve` flags":             "foundry-serve-flags",
		"Notes (`notes`)":                   "notes-notes",
		"`list_notes`":                      "list_notes",
		"What Foundry guarantees, measured": "what-foundry-guarantees-measured",
		"Claude Desktop and claude.ai":      "claude-desktop-and-claudeai",
		"PostgreSQL: scale out":             "postgresql-scale-out",
		"[A link](x.md) here":               "a-link-here",
	} {
		if got := docgen.Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}
