package bundle_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"foundry/internal/web/bundle"
)

// TestBuildReproducible: two builds of the same sources give the same
// bytes, and those are the committed bundle (internal/web/dist), which
// names its scripts and stylesheets by content (the app's and the sandbox
// runtime's) and references nothing off this server.
func TestBuildReproducible(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	a, b := t.TempDir(), t.TempDir()
	wroteA, err := bundle.Build(root, a)
	if errors.Is(err, bundle.ErrNoPackages) {
		if os.Getenv("FOUNDRY_TEST_NODE") == "required" {
			t.Fatalf("FOUNDRY_TEST_NODE=required: %v", err)
		}
		t.Skipf("bundle test skipped: %v (set FOUNDRY_TEST_NODE=required to fail instead)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.Build(root, b); err != nil {
		t.Fatal(err)
	}
	first, second := read(t, a), read(t, b)
	committed := read(t, filepath.Join(root, "internal", "web", "dist"))
	if len(first) != len(wroteA) || len(first) != 5 {
		t.Fatalf("the build wrote %v, want index.html, the app's script and stylesheet, and the sandbox runtime's", wroteA)
	}
	for name, body := range first {
		if !bytes.Equal(body, second[name]) {
			t.Errorf("%s differs between two builds of the same sources", name)
		}
		if !bytes.Equal(body, committed[name]) {
			t.Errorf("%s differs from the committed internal/web/dist: run go generate ./internal/web/... and commit it", name)
		}
		code := strings.HasSuffix(name, ".js") || strings.HasSuffix(name, ".css")
		if name != "index.html" && !(code && (strings.HasPrefix(name, "assets/app-") || strings.HasPrefix(name, "sandbox/runtime-"))) {
			t.Errorf("the build wrote %s, want only assets/app-HASH.js and .css and sandbox/runtime-HASH.js and .css beside index.html", name)
		}
	}
	for name := range committed {
		if _, ok := first[name]; !ok {
			t.Errorf("internal/web/dist has %s, which the build does not make: run go generate ./internal/web/... and commit it", name)
		}
	}
	index := string(first["index.html"])
	for name := range first {
		if strings.HasPrefix(name, "assets/") && !strings.Contains(index, `"/`+name+`"`) {
			t.Errorf("index.html does not load /%s:\n%s", name, index)
		}
	}
	for _, off := range []string{"http://", "https://", "//cdn", "<script>", "style="} {
		if strings.Contains(index, off) {
			t.Errorf("index.html has %q: everything must come from this server, nothing inline", off)
		}
	}
	// The runtime is built from the same React as the app: one copy, one
	// version, inside it.
	for name, body := range first {
		if strings.HasPrefix(name, "sandbox/runtime-") && strings.HasSuffix(name, ".js") {
			if !bytes.Contains(body, []byte(`"19.3.1"`)) {
				t.Errorf("%s does not carry React 19.3.1", name)
			}
			if strings.Contains(index, name) {
				t.Errorf("index.html loads the sandbox runtime %s", name)
			}
		}
	}
}

func read(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
