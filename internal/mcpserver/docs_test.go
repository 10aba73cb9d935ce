package mcpserver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	readmeBegin      = "<!-- tools:begin -->"
	readmeEnd        = "<!-- tools:end -->"
	updateREADMEHint = "run UPDATE_README=1 go test ./internal/mcpserver/ -run TestREADMEToolReferenceIsCurrent"
)

// readmePath is the README whose tool reference is generated; a test may
// point it elsewhere.
var readmePath = "../../README.md"

var errStale = errors.New("the README tool reference is stale")

// syncREADME checks that the block between the markers in the README at
// path is ref; with update it rewrites the block instead. Only the block is
// ever touched.
func syncREADME(path, ref string, update bool) error {
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return fmt.Errorf("%s does not exist; the README must hold the generated tool reference between %s and %s lines", path, readmeBegin, readmeEnd)
	} else if err != nil {
		return err
	}
	doc := string(raw)
	i := strings.Index(doc, readmeBegin)
	j := strings.Index(doc, readmeEnd)
	if i < 0 || j < 0 || j < i {
		return fmt.Errorf("%s lacks the markers: put a %s line and, after it, a %s line where the tool reference goes, then %s", path, readmeBegin, readmeEnd, updateREADMEHint)
	}
	if strings.Count(doc, readmeBegin) != 1 || strings.Count(doc, readmeEnd) != 1 {
		return fmt.Errorf("%s has more than one %s or %s marker; keep one pair", path, readmeBegin, readmeEnd)
	}
	block := doc[i+len(readmeBegin) : j]
	want := "\n\n" + strings.TrimSpace(ref) + "\n\n"
	if block == want {
		return nil
	}
	if !update {
		return fmt.Errorf("%w in %s:\n%s\n%s", errStale, path, refDiff(strings.TrimSpace(block), strings.TrimSpace(ref)), updateREADMEHint)
	}
	out := doc[:i+len(readmeBegin)] + want + doc[j:]
	return os.WriteFile(path, []byte(out), 0o644)
}

// TestREADMEToolReferenceIsCurrent holds README.md's tool list to the tools
// the code serves, as github-mcp-server does: the list is generated, and a
// stale one fails CI.
func TestREADMEToolReferenceIsCurrent(t *testing.T) {
	if err := syncREADME(readmePath, Reference(Tools(nil)), os.Getenv("UPDATE_README") == "1"); err != nil {
		t.Fatal(err)
	}
}

func TestSyncREADME(t *testing.T) {
	dir := t.TempDir()
	ref := Reference(Tools(nil))
	path := filepath.Join(dir, "README.md")

	if err := syncREADME(path, ref, false); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing README: err = %v", err)
	}
	os.WriteFile(path, []byte("# Foundry\n\nno markers here\n"), 0o644)
	if err := syncREADME(path, ref, true); err == nil || !strings.Contains(err.Error(), "lacks the markers") {
		t.Errorf("README without markers: err = %v", err)
	}

	head, tail := "# Foundry\n\n## Tools\n\n"+readmeBegin, readmeEnd+"\n\n## License\n\nMIT\n"
	os.WriteFile(path, []byte(head+"\n| old | list |\n"+tail), 0o644)
	if err := syncREADME(path, ref, false); !errors.Is(err, errStale) || !strings.Contains(err.Error(), "UPDATE_README=1") {
		t.Fatalf("stale README: err = %v", err)
	}
	if err := syncREADME(path, ref, true); err != nil {
		t.Fatalf("update: %v", err)
	}
	got, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(got), head+"\n\n") || !strings.HasSuffix(string(got), "\n\n"+tail) || !strings.Contains(string(got), "#### `edit_note_tab`") {
		t.Errorf("rewritten README:\n%s", got)
	}
	if err := syncREADME(path, ref, false); err != nil {
		t.Errorf("after update: %v", err)
	}
}

func TestReferenceRendersSchemas(t *testing.T) {
	ref := Reference(Tools(nil))
	if ref != Reference(Tools(nil)) {
		t.Fatal("Reference is not deterministic")
	}
	for _, want := range []string{
		"### Notes (`notes`)",
		"#### `list_note_attachments`\n\nScope `osfoundry:read` · read-only\n",
		"#### `add_note_source`\n\nScope `osfoundry:write` · write (destructive)\n",
		"| `kind` | one of `sources`, `files` | yes |  |",
		"| `limit` | integer |  | value 1–50 |",
		"| `note_id` | string | yes | length 1–64 |",
		"| `slides` | array of object |  | items 1–20 |",
		"| `slides[].title` | string | yes | length 1–500 |",
		"| `values` | array of array of (string or number or boolean or null) |  | items ≤ 100; each: items ≤ 100 |",
		"| `data.sheets[].cells` | array of array of (string or number or boolean or null) | yes |  |",
		"| `text` | string |  | length ≤ 1048576 |",
	} {
		if !strings.Contains(ref, want) {
			t.Errorf("reference lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(ref)
	}
}

// refDiff shows the first lines where two texts part.
func refDiff(got, want string) string {
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
			return fmt.Sprintf("first difference at line %d of the block:\n- README:    %s\n+ generated: %s", i+1, a, b)
		}
	}
	return ""
}
