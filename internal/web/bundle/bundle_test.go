package bundle_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"

	"foundry/internal/web/bundle"
)

// TestBuildReproducible: two builds of the same sources give the same
// bytes, and those are the committed bundle (internal/web/dist), which
// names its scripts and stylesheets by content (the app's, its chunks and
// the sandbox runtime's), has a gzip and a brotli copy of each of the
// app's that decodes to it, loads the app as a module with what it
// imports at once preloaded and the editors' chunks not, and references
// nothing off this server.
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
	if len(first) != len(wroteA) {
		t.Fatalf("the build reports %d files and wrote %d", len(wroteA), len(first))
	}
	named := regexp.MustCompile(`^(index\.html|assets/(app|chunk)-[A-Z0-9]+\.(js|css)(\.gz|\.br)?|assets/live-[A-Z0-9]+\.js(\.gz|\.br)?|sandbox/runtime-[A-Z0-9]+\.(js|css))$`)
	count := map[string]int{}
	for name, body := range first {
		if !bytes.Equal(body, second[name]) {
			t.Errorf("%s differs between two builds of the same sources", name)
		}
		if !bytes.Equal(body, committed[name]) {
			t.Errorf("%s differs from the committed internal/web/dist: run go generate ./internal/web/... and commit it", name)
		}
		if !named.MatchString(name) {
			t.Errorf("the build wrote %s, want only index.html, assets/app-HASH.js and .css, assets/chunk-HASH.js, assets/live-HASH.js (each with .gz and .br) and sandbox/runtime-HASH.js and .css", name)
		}
		switch ext := path.Ext(name); {
		case ext == ".gz" || ext == ".br":
			count[ext]++
		case strings.HasPrefix(name, "assets/"):
			count[strings.SplitN(path.Base(name), "-", 2)[0]+ext]++
			// Its compressed copies decode to it.
			if got := gunzip(t, first[name+".gz"]); !bytes.Equal(got, body) {
				t.Errorf("%s.gz does not decode to %s", name, name)
			}
			if got := unbrotli(t, first[name+".br"]); !bytes.Equal(got, body) {
				t.Errorf("%s.br does not decode to %s", name, name)
			}
		}
	}
	if count["app.js"] != 1 || count["app.css"] != 1 || count["chunk.js"] == 0 || count["live.js"] != 1 || count[".gz"] != count["app.js"]+count["app.css"]+count["chunk.js"]+count["live.js"] || count[".br"] != count[".gz"] {
		t.Errorf("the build wrote %v: want one app script, one stylesheet, chunks, one live worker, and a .gz and a .br of each", count)
	}
	// The live worker is a classic script of its own (a SharedWorker's),
	// importing nothing, and the app names it: the one in this build.
	for name, body := range first {
		if !strings.HasPrefix(name, "assets/live-") || path.Ext(name) != ".js" {
			continue
		}
		if regexp.MustCompile(`(^|[^/\w.])import\s*[({"']|\bfrom\s*"`).Match(body) {
			t.Errorf("%s imports a module: a SharedWorker's classic script cannot", name)
		}
		if !bytes.Contains(body, []byte("/api/live")) {
			t.Errorf("%s does not open /api/live", name)
		}
		named := false
		for other, ob := range first {
			named = named || (strings.HasPrefix(other, "assets/") && path.Ext(other) == ".js" && bytes.Contains(ob, []byte(`"/`+name+`"`)))
		}
		if !named {
			t.Errorf("no script of the app names the live worker /%s", name)
		}
	}
	for name := range committed {
		if _, ok := first[name]; !ok {
			t.Errorf("internal/web/dist has %s, which the build does not make: run go generate ./internal/web/... and commit it", name)
		}
	}
	index := string(first["index.html"])
	if !regexp.MustCompile(`<script type="module" src="/assets/app-[A-Z0-9]+\.js"></script>`).MatchString(index) || !regexp.MustCompile(`<link rel="stylesheet" href="/assets/app-[A-Z0-9]+\.css">`).MatchString(index) {
		t.Errorf("index.html does not load the app's script as a module and its stylesheet:\n%s", index)
	}
	for _, m := range regexp.MustCompile(`"/(assets/[^"]+)"`).FindAllStringSubmatch(index, -1) {
		if _, ok := first[m[1]]; !ok {
			t.Errorf("index.html loads /%s, which the build did not make", m[1])
		}
	}
	// What the entry imports at once is preloaded with it; the editors'
	// chunks (CodeMirror, the grid) are not.
	for name, body := range first {
		if !strings.HasPrefix(name, "assets/") || path.Ext(name) != ".js" {
			continue
		}
		loaded := strings.Contains(index, `"/`+name+`"`)
		if editor := bytes.Contains(body, []byte("revo-grid")) || bytes.Contains(body, []byte("cm-editor")); editor && loaded {
			t.Errorf("index.html loads %s, which has an editor's code", name)
		}
		if strings.HasPrefix(name, "assets/app-") {
			for _, m := range regexp.MustCompile(`from"\./(chunk-[A-Z0-9]+\.js)"`).FindAllSubmatch(body, -1) {
				if !strings.Contains(index, `<link rel="modulepreload" href="/assets/`+string(m[1])+`">`) {
					t.Errorf("the app imports %s, which index.html does not preload", m[1])
				}
			}
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

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func unbrotli(t *testing.T, b []byte) []byte {
	t.Helper()
	out, err := io.ReadAll(brotli.NewReader(bytes.NewReader(b)))
	if err != nil {
		t.Fatal(err)
	}
	return out
}
