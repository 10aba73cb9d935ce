package snippet_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"foundry/internal/snippet"
)

func multiFile() map[string]string {
	return map[string]string{
		"src/App.tsx": `import { useState } from "react";
import { Button } from "./components/Button";
import { title } from "./data.json";
import "./app.css";

export default function App() {
  const [n, setN] = useState<number>(0);
  return <main className="app"><h1>{title}</h1><Button onClick={() => setN(n + 1)}>clicked {n}</Button></main>;
}
`,
		"src/components/Button.tsx": `import type { ReactNode } from "react";
import "./button.css";
export function Button(props: { onClick: () => void; children: ReactNode }) {
  return <button className="btn" onClick={props.onClick}>{props.children}</button>;
}
`,
		"src/components/button.css": ".btn { color: rebeccapurple; }\n",
		"src/app.css":               `.app { padding: 8px; }` + "\n",
		"src/data.json":             `{"title": "Counter ✓"}`,
	}
}

func TestCompilesAMultiFileSnippetWithCSSAndJSX(t *testing.T) {
	r := snippet.Compile(multiFile())
	if !r.OK() {
		t.Fatalf("errors: %+v", r.Errors)
	}
	for _, want := range []string{"var __foundryApp", "globalThis.__foundry", "rebeccapurple", "clicked", "Counter"} {
		if !strings.Contains(r.JS+r.CSS, want) {
			t.Errorf("the output lacks %q:\nJS:\n%s\nCSS:\n%s", want, r.JS, r.CSS)
		}
	}
	if !strings.Contains(r.CSS, ".btn") || !strings.Contains(r.CSS, ".app") || strings.Contains(r.JS, "rebeccapurple") {
		t.Errorf("the CSS is not bundled apart from the script:\nCSS: %s", r.CSS)
	}
	if len(r.Hash) != 64 {
		t.Errorf("hash %q", r.Hash)
	}
	for _, bad := range []string{"require(\"react\")", "import ", "fetch("} {
		if strings.Contains(r.JS, bad) {
			t.Errorf("the script still contains %q", bad)
		}
	}
}

// refusal compiles a snippet whose App imports spec and answers its one
// error.
func refusal(t *testing.T, spec string) snippet.Message {
	t.Helper()
	files := map[string]string{"src/App.tsx": fmt.Sprintf("import x from %q;\nexport default function App() { return <p>{String(x)}</p> }\n", spec)}
	r := snippet.Compile(files)
	if r.OK() || r.JS != "" || r.CSS != "" {
		t.Fatalf("import %q compiled: %+v", spec, r)
	}
	m := r.Errors[0]
	if m.File != "src/App.tsx" || m.Line != 1 {
		t.Errorf("import %q: error at %q line %d, want src/App.tsx line 1: %+v", spec, m.File, m.Line, m)
	}
	if !strings.Contains(m.Text, "is not allowed") || !strings.Contains(m.Text, "react") {
		t.Errorf("import %q: the error does not say what is allowed: %s", spec, m.Text)
	}
	return m
}

func TestImportsOutsideTheSnippetAreCompileErrors(t *testing.T) {
	abs, err := filepath.Abs(filepath.Join("testdata", "secret.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{
		"fs", "node:fs", "/etc/passwd", abs, "../../outside", "../../../etc/passwd", "./../../x",
		"https://example.com/x.js", "http://127.0.0.1/x.js", "//example.com/x.js", "data:text/javascript,export default 1",
		"lodash", "react-dom/server", "react/jsx-dev-runtime", "..\\..\\secret",
		"./testdata/secret.txt", "../testdata/secret.txt", "../../testdata/secret.txt", "../internal/snippet/testdata/secret.txt",
		"./missing",
	} {
		m := refusal(t, spec)
		if strings.Contains(m.Text, "secret on the server") {
			t.Errorf("import %q read the file on disk: %s", spec, m.Text)
		}
	}
}

func TestAFileOnDiskIsNotReachableEvenBesideTheEntry(t *testing.T) {
	// The test's working folder holds testdata/secret.txt; a snippet whose
	// App sits where a file-system resolver would find it still cannot.
	files := map[string]string{
		"src/App.tsx": "import s from \"../testdata/secret.txt\";\nexport default () => <p>{s}</p>;\n",
	}
	r := snippet.Compile(files)
	if r.OK() || strings.Contains(r.JS, "secret on the server") {
		t.Fatalf("reached a file on disk: %+v", r)
	}
	// CSS url() and @import go through the same resolver.
	css := map[string]string{
		"src/App.tsx": "import \"./a.css\";\nexport default () => <p/>;\n",
		"src/a.css":   "@import \"/etc/passwd\";\n.x { background: url(../../testdata/secret.txt) }\n",
	}
	r = snippet.Compile(css)
	if r.OK() || strings.Contains(r.CSS, "secret") {
		t.Fatalf("CSS reached outside the snippet: %+v", r)
	}
	if r.Errors[0].File != "src/a.css" {
		t.Errorf("CSS error names %q, want src/a.css: %+v", r.Errors[0].File, r.Errors)
	}
}

func TestEveryWayToImportGoesThroughTheResolver(t *testing.T) {
	for _, c := range []struct{ file, src, spec string }{
		{"src/App.tsx", "const m = import(\"https://x.example/m.js\");\nexport default () => <p/>;\n", "https://x.example/m.js"},
		{"src/App.tsx", "const fs = require(\"fs\");\nexport default () => <p/>;\n", "fs"},
		{"src/App.tsx", "export { readFile } from \"node:fs/promises\";\nexport default () => <p/>;\n", "node:fs/promises"},
		{"src/a.css", "@import url(\"https://evil.example/x.css\");\n", "https://evil.example/x.css"},
		{"src/a.css", ".a { background: url(https://evil.example/x.png) }\n", "https://evil.example/x.png"},
		{"src/a.css", ".a { background: url(//evil.example/x.png) }\n", "//evil.example/x.png"},
	} {
		files := map[string]string{"src/App.tsx": "import \"./a.css\";\nexport default () => <p/>;\n", "src/a.css": ".a {}\n"}
		files[c.file] = c.src
		if c.file != "src/App.tsx" {
			files["src/App.tsx"] = "import \"./a.css\";\nexport default () => <p/>;\n"
		}
		r := snippet.Compile(files)
		found := false
		for _, m := range r.Errors {
			if m.File == c.file && m.Line == 1 && strings.Contains(m.Text, fmt.Sprintf("%q is not allowed", c.spec)) {
				found = true
			}
		}
		if !found || r.JS != "" || r.CSS != "" {
			t.Errorf("%s: %s compiled or was refused for something else: %+v", c.file, c.src, r.Errors)
		}
	}
}

func TestSyntaxErrorNamesFileAndLine(t *testing.T) {
	files := map[string]string{
		"src/App.tsx":  "import { Part } from \"./Part\";\nexport default function App() { return <Part/> }\n",
		"src/Part.tsx": "export function Part() {\n  const x = 1;\n  return <p>{x</p>;\n}\n",
	}
	r := snippet.Compile(files)
	if r.OK() {
		t.Fatal("a syntax error compiled")
	}
	m := r.Errors[0]
	if m.File != "src/Part.tsx" || m.Line != 3 || !strings.Contains(m.LineText, "<p>{x</p>") || m.Text == "" {
		t.Fatalf("error = %+v; want src/Part.tsx line 3 with its text", m)
	}
}

func TestMissingDefaultExportIsAnError(t *testing.T) {
	r := snippet.Compile(map[string]string{"src/App.tsx": "export const App = () => <p/>;\n"})
	if r.OK() {
		t.Fatalf("compiled without a default export: %s", r.JS)
	}
}

func TestCacheAnswersTheSameResult(t *testing.T) {
	c := snippet.NewCache(1 << 20)
	files := multiFile()
	a := c.Compile(files)
	b := c.Compile(files)
	if a.Hash != b.Hash || a.JS != b.JS || a.CSS != b.CSS || c.Hits() != 1 {
		t.Fatalf("second compile differs or missed the cache (hits %d)", c.Hits())
	}
	// Another content, another hash; the same content in another map, the same.
	files["src/app.css"] = ".app { padding: 9px; }\n"
	if d := c.Compile(files); d.Hash == a.Hash || !strings.Contains(d.CSS, "9px") {
		t.Fatalf("a changed file answered the old result")
	}
	// A fresh cache compiles to the same bytes: the output is deterministic.
	if e := snippet.NewCache(1 << 20).Compile(multiFile()); e.JS != a.JS || e.Hash != a.Hash {
		t.Fatal("the same files compiled to different output")
	}
}

func TestCacheStaysWithinItsBytes(t *testing.T) {
	c := snippet.NewCache(16 << 10)
	for i := range 20 {
		c.Compile(map[string]string{"src/App.tsx": fmt.Sprintf("export default () => <p>%d %s</p>;\n", i, strings.Repeat("x", 2000))})
		if c.Bytes() > 16<<10 {
			t.Fatalf("cache holds %d bytes, over its bound", c.Bytes())
		}
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Compile(map[string]string{"src/App.tsx": fmt.Sprintf("export default () => <p>%d</p>;\n", i%2)})
		}()
	}
	wg.Wait()
}

func TestResolve(t *testing.T) {
	files := map[string]string{"src/App.tsx": "", "src/a/index.ts": "", "src/b.css": "", "src/c.json": ""}
	for _, c := range []struct{ from, spec, want string }{
		{"src", "./a", "src/a/index.ts"},
		{"src", "./b.css", "src/b.css"},
		{"src", "./c", "src/c.json"},
		{"src/a", "../App", "src/App.tsx"},
		{"src/a", ".././/App.tsx", "src/App.tsx"},
		{"", "./src/App.tsx", "src/App.tsx"},
		{"src", "react", "react"},
		{"src", "@app/storage", "@app/storage"},
		{"src", "../../x", ""},
		{"src", "../", ""},
		{"src", "/src/App.tsx", ""},
		{"src", "fs", ""},
	} {
		got, why := snippet.Resolve(files, c.from, c.spec)
		if got != c.want || (c.want == "" && why == "") {
			t.Errorf("Resolve(%q, %q) = %q, %q; want %q", c.from, c.spec, got, why, c.want)
		}
	}
}

func FuzzResolve(f *testing.F) {
	for _, s := range []string{"./a", "../../x", "/etc/passwd", "react", "./a/../../b", "..", "./\x00", "https://x"} {
		f.Add("src", s)
	}
	files := map[string]string{"src/App.tsx": "", "src/a.ts": "", "src/x/index.tsx": ""}
	f.Fuzz(func(t *testing.T, from, spec string) {
		if from != "" && (strings.HasPrefix(from, "/") || strings.HasPrefix(from, "..")) {
			return // importers are always snippet files
		}
		got, why := snippet.Resolve(files, from, spec)
		if got == "" {
			if why == "" {
				t.Fatalf("Resolve(%q, %q) answered neither a file nor why", from, spec)
			}
			return
		}
		if _, ok := snippet.Provided[got]; ok {
			return
		}
		if _, ok := files[got]; !ok {
			t.Fatalf("Resolve(%q, %q) = %q, which is not a snippet file", from, spec, got)
		}
	})
}

func BenchmarkCompile(b *testing.B) {
	files := multiFile()
	b.Run("cold", func(b *testing.B) {
		start := time.Now()
		for i := 0; b.Loop(); i++ {
			files["src/app.css"] = fmt.Sprintf(".app { padding: %dpx; }\n", i)
			snippet.NewCache(1 << 20).Compile(files)
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/op")
	})
	b.Run("cached", func(b *testing.B) {
		c := snippet.NewCache(1 << 20)
		c.Compile(files)
		start := time.Now()
		for b.Loop() {
			c.Compile(files)
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/op")
	})
}
