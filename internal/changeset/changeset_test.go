package changeset

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// A differential case: what @codemirror/state made of random documents
// and changes (testdata/gen.mjs).
type diffCase struct {
	Doc             string          `json:"doc"`
	SpecsA          []Change        `json:"specs_a"`
	SpecsB          []Change        `json:"specs_b"`
	SpecsC          []Change        `json:"specs_c"`
	A               json.RawMessage `json:"a"`
	B               json.RawMessage `json:"b"`
	C               json.RawMessage `json:"c"`
	ApplyA          string          `json:"apply_a"`
	ComposeAC       json.RawMessage `json:"compose_ac"`
	ApplyAC         string          `json:"apply_ac"`
	MapAB           json.RawMessage `json:"map_a_b"`
	MapABBefore     json.RawMessage `json:"map_a_b_before"`
	Converged       string          `json:"converged"`
	ConvergedBefore string          `json:"converged_before"`
	InvertA         json.RawMessage `json:"invert_a"`
	MapPos          []struct {
		Pos    int     `json:"pos"`
		Assoc  int     `json:"assoc"`
		Mode   MapMode `json:"mode"`
		Mapped *int    `json:"mapped"`
	} `json:"map_pos"`
}

func same(t *testing.T, k int, what string, got ChangeSet, want json.RawMessage) {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatalf("case %d: %s: %v", k, what, err)
	}
	var w bytes.Buffer
	if err := json.Compact(&w, want); err != nil {
		t.Fatalf("case %d: %s: the expected JSON: %v", k, what, err)
	}
	if !bytes.Equal(g, w.Bytes()) {
		t.Errorf("case %d: %s: Go %s, @codemirror/state %s", k, what, g, w.Bytes())
	}
}

func check(t *testing.T, cases []diffCase) {
	t.Helper()
	for k, c := range cases {
		n := len(encode(c.Doc))
		a, err := Of(c.SpecsA, n)
		if err != nil {
			t.Fatalf("case %d: Of(a): %v", k, err)
		}
		same(t, k, "Of(a)", a, c.A)
		b, err := Of(c.SpecsB, n)
		if err != nil {
			t.Fatalf("case %d: Of(b): %v", k, err)
		}
		same(t, k, "Of(b)", b, c.B)
		// The JSON form reads back to the same change set.
		pa, err := Parse(c.A)
		if err != nil {
			t.Fatalf("case %d: Parse(a): %v", k, err)
		}
		same(t, k, "Parse(a)", pa, c.A)

		docA, err := a.Apply(c.Doc)
		if err != nil || docA != c.ApplyA {
			t.Errorf("case %d: Apply(a) = %q, %v; want %q", k, docA, err, c.ApplyA)
		}
		cc, err := Of(c.SpecsC, len(encode(docA)))
		if err != nil {
			t.Fatalf("case %d: Of(c): %v", k, err)
		}
		same(t, k, "Of(c)", cc, c.C)
		ac, err := a.Compose(cc)
		if err != nil {
			t.Fatalf("case %d: Compose: %v", k, err)
		}
		same(t, k, "a.Compose(c)", ac, c.ComposeAC)
		if got, err := ac.Apply(c.Doc); err != nil || got != c.ApplyAC {
			t.Errorf("case %d: Apply(a.Compose(c)) = %q, %v; want %q", k, got, err, c.ApplyAC)
		}

		ab, err := a.Map(b, false)
		if err != nil {
			t.Fatalf("case %d: Map: %v", k, err)
		}
		same(t, k, "a.Map(b)", ab, c.MapAB)
		abBefore, err := a.Map(b, true)
		if err != nil {
			t.Fatalf("case %d: Map before: %v", k, err)
		}
		same(t, k, "a.Map(b, before)", abBefore, c.MapABBefore)
		// Either order of the two people's edits makes one document.
		bThenA, err := b.Compose(ab)
		if err != nil {
			t.Fatalf("case %d: b.Compose(a.Map(b)): %v", k, err)
		}
		ba, err := b.Map(a, true)
		if err != nil {
			t.Fatalf("case %d: b.Map(a, before): %v", k, err)
		}
		aThenB, err := a.Compose(ba)
		if err != nil {
			t.Fatalf("case %d: a.Compose(b.Map(a, before)): %v", k, err)
		}
		d1, err1 := bThenA.Apply(c.Doc)
		d2, err2 := aThenB.Apply(c.Doc)
		if err1 != nil || err2 != nil || d1 != c.Converged || d2 != c.ConvergedBefore || d1 != d2 {
			t.Errorf("case %d: the two orders make %q (%v) and %q (%v); @codemirror/state %q and %q", k, d1, err1, d2, err2, c.Converged, c.ConvergedBefore)
		}

		inv, err := a.Invert(c.Doc)
		if err != nil {
			t.Fatalf("case %d: Invert: %v", k, err)
		}
		same(t, k, "a.Invert(doc)", inv, c.InvertA)
		if back, err := inv.Apply(docA); err != nil || back != c.Doc {
			t.Errorf("case %d: the inverse takes %q back to %q (%v), not the document", k, docA, back, err)
		}

		for _, p := range c.MapPos {
			got, deleted, err := a.MapPos(p.Pos, p.Assoc, p.Mode)
			if err != nil {
				t.Errorf("case %d: MapPos(%d): %v", k, p.Pos, err)
				continue
			}
			switch {
			case p.Mapped == nil && !deleted:
				t.Errorf("case %d: MapPos(%d, %d, mode %d) = %d; @codemirror/state reports the context deleted", k, p.Pos, p.Assoc, p.Mode, got)
			case p.Mapped != nil && (deleted || got != *p.Mapped):
				t.Errorf("case %d: MapPos(%d, %d, mode %d) = %d (deleted %v); @codemirror/state %d", k, p.Pos, p.Assoc, p.Mode, got, deleted, *p.Mapped)
			}
		}
		if t.Failed() {
			t.Fatalf("case %d failed (doc %q): stopping at the first failing case", k, c.Doc)
		}
	}
}

// TestAgreesWithCodeMirrorGolden compares with the committed golden file
// (testdata/golden.json, from `node testdata/gen.mjs 1 2000`).
func TestAgreesWithCodeMirrorGolden(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []diffCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 2000 {
		t.Fatalf("golden.json has %d cases, want 2000", len(cases))
	}
	check(t, cases)
}

// TestAgreesWithCodeMirrorLive runs @codemirror/state itself (the web
// app's copy in web/node_modules) on cases from a fresh seed. Without Node
// or web/node_modules it skips, unless FOUNDRY_TEST_NODE=required.
func TestAgreesWithCodeMirrorLive(t *testing.T) {
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join("..", "..", "web", "node_modules", "@codemirror", "state", "dist", "index.js"))
	}
	if err != nil {
		if os.Getenv("FOUNDRY_TEST_NODE") == "required" {
			t.Fatalf("FOUNDRY_TEST_NODE=required: %v (install web/node_modules with npm ci --prefix web)", err)
		}
		t.Skipf("differential test against @codemirror/state skipped: %v (set FOUNDRY_TEST_NODE=required to fail instead)", err)
	}
	seed := time.Now().UnixNano() % 1_000_000_007
	count := 5000
	if testing.Short() {
		count = 500
	}
	t.Logf("seed %d (rerun: node testdata/gen.mjs %d %d)", seed, seed, count)
	out, err := exec.Command(node, filepath.Join("testdata", "gen.mjs"), strconv.FormatInt(seed, 10), strconv.Itoa(count)).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("gen.mjs: %v: %s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var cases []diffCase
	if err := json.Unmarshal(out, &cases); err != nil {
		t.Fatal(err)
	}
	check(t, cases)
}
