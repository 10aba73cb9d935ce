package mcpserver_test

import (
	"os"
	"strings"
	"testing"

	"foundry/internal/docgen"
	"foundry/internal/mcpserver"
)

// TestToolReferenceIsCurrent holds docs/tools.md's tool reference to the
// tools the code serves, as github-mcp-server does with its README: the
// reference is generated, and a stale one fails here (where a tool is
// changed) as well as in internal/docgen, whose UPDATE_DOCS=1 rewrites it.
func TestToolReferenceIsCurrent(t *testing.T) {
	r, ok := docgen.Find("tools")
	if !ok {
		t.Fatal("internal/docgen has no tools region")
	}
	if err := docgen.SyncRegion("../..", r, os.Getenv("UPDATE_DOCS") == "1"); err != nil {
		t.Fatal(err)
	}
}

func TestReferenceRendersSchemas(t *testing.T) {
	ref := mcpserver.Reference(mcpserver.Tools(nil))
	if ref != mcpserver.Reference(mcpserver.Tools(nil)) {
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
