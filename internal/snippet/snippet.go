// Package snippet compiles a Room snippet app (a proposal's files) into one
// classic script and one stylesheet with esbuild's Go API, for the sandboxed
// frame that runs it.
//
// The compile reads nothing but the files it is given: a resolver plugin
// answers every import, resolving only the snippet's own files (relative
// imports) and the modules the Room runtime provides (react,
// react/jsx-runtime, react-dom, react-dom/client, @app/storage, which
// become reads of globalThis.__foundry at run time). Anything else — a
// package name, a Node built-in, an absolute path, a path that climbs out
// of the snippet, a URL — is a compile error naming the import. Nothing is
// read from the server's disk and nothing from the network.
//
// The script is an IIFE that assigns globalThis.__foundryApp = { default:
// <the component src/App.tsx exports default> }. Results are cached by the
// content hash of the files, in a cache bounded by bytes.
package snippet

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/evanw/esbuild/pkg/api"

	"foundry/internal/problem"
	"foundry/internal/room"
)

// Message is one error or warning: a file of the snippet, its 1-based line
// and 0-based column, the text and the source line.
type Message = room.CompileMessage

// Result is a compiled snippet. JS and CSS are empty when Errors is not.
type Result struct {
	Hash     string    `json:"hash"`
	JS       string    `json:"js"`
	CSS      string    `json:"css"`
	Errors   []Message `json:"errors"`
	Warnings []Message `json:"warnings"`
}

// OK says whether the snippet compiled.
func (r Result) OK() bool { return len(r.Errors) == 0 }

// Summary is what a proposal keeps of r: no code.
func (r Result) Summary() *room.Compile {
	return &room.Compile{OK: r.OK(), Hash: r.Hash, Errors: slices.Clone(r.Errors), Warnings: slices.Clone(r.Warnings)}
}

// GlobalName is the global the script assigns.
const GlobalName = "__foundryApp"

// Provided are the modules the Room runtime gives a snippet, each read at
// run time from globalThis.__foundry.
var Provided = map[string]string{
	"react":             "React",
	"react/jsx-runtime": "jsxRuntime",
	"react-dom":         "ReactDOM",
	"react-dom/client":  "ReactDOMClient",
	"@app/storage":      "storage",
}

// Extensions are tried, in order, for an import without one (then
// index.<ext> in a folder of that name).
var Extensions = []string{".tsx", ".ts", ".jsx", ".js", ".css", ".json"}

// version salts the hash: a new compile recipe never answers from results
// of an old one.
const version = "foundry-snippet-1 esbuild-0.28.2"

const (
	nsFile     = "snippet"
	nsProvided = "foundry-provided"
	nsEntry    = "foundry-entry"
	entryPath  = "entry"
)

// Hash is the content hash of a snippet's files: SHA-256 over the recipe
// version and every path and content (sorted by path, each length-prefixed).
func Hash(files map[string]string) string {
	h := sha256.New()
	part := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	part(version)
	for _, p := range sortedPaths(files) {
		part(p)
		part(files[p])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// DefaultCacheBytes bounds the shared cache Compile uses.
const DefaultCacheBytes = 64 << 20

var shared = NewCache(DefaultCacheBytes)

// Compile compiles files (paths as a proposal has them, e.g. src/App.tsx)
// through the shared cache.
func Compile(files map[string]string) Result { return shared.Compile(files) }

// Cache is a compile cache keyed by content hash, bounded by the bytes of
// the results it holds (least recently used first out). Safe for
// concurrent use.
type Cache struct {
	mu      sync.Mutex
	max     int64
	size    int64
	order   *list.List // front: most recently used; values are *entry
	byHash  map[string]*list.Element
	hits    int64
	compile func(map[string]string) Result
}

type entry struct {
	hash string
	res  Result
	size int64
}

// NewCache returns an empty cache holding at most maxBytes of results.
func NewCache(maxBytes int64) *Cache {
	return &Cache{max: maxBytes, order: list.New(), byHash: map[string]*list.Element{}, compile: build}
}

// Hits is how many compiles the cache answered.
func (c *Cache) Hits() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits
}

// Bytes is what the cache holds now.
func (c *Cache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size
}

// Compile answers the cached result of files, or compiles and keeps it.
func (c *Cache) Compile(files map[string]string) Result {
	hash := Hash(files)
	c.mu.Lock()
	if el, ok := c.byHash[hash]; ok {
		c.order.MoveToFront(el)
		c.hits++
		res := el.Value.(*entry).res
		c.mu.Unlock()
		return clone(res)
	}
	c.mu.Unlock()
	res := c.compile(files)
	res.Hash = hash
	c.put(hash, res)
	return clone(res)
}

func (c *Cache) put(hash string, res Result) {
	size := int64(len(res.JS) + len(res.CSS) + len(hash) + 256)
	for _, m := range append(slices.Clone(res.Errors), res.Warnings...) {
		size += int64(len(m.File)+len(m.Text)+len(m.LineText)) + 64
	}
	if size > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byHash[hash]; ok {
		return
	}
	c.byHash[hash] = c.order.PushFront(&entry{hash: hash, res: res, size: size})
	c.size += size
	for c.size > c.max {
		last := c.order.Back()
		e := last.Value.(*entry)
		c.order.Remove(last)
		delete(c.byHash, e.hash)
		c.size -= e.size
	}
}

func clone(r Result) Result {
	r.Errors, r.Warnings = slices.Clone(r.Errors), slices.Clone(r.Warnings)
	return r
}

// build is one esbuild run over files.
func build(files map[string]string) Result {
	res := api.Build(api.BuildOptions{
		EntryPoints: []string{entryPath},
		EntryNames:  "app",
		Outdir:      "/out", // never written: Write is false
		Bundle:      true,
		Write:       false,
		Format:      api.FormatIIFE,
		GlobalName:  GlobalName,
		Platform:    api.PlatformBrowser,
		Target:      api.ES2022,
		JSX:         api.JSXAutomatic,
		Define:      map[string]string{"process.env.NODE_ENV": `"production"`},
		TsconfigRaw: "{}",
		Sourcemap:   api.SourceMapNone,
		LogLevel:    api.LogLevelSilent,
		Plugins:     []api.Plugin{resolver(files)},
	})
	out := Result{Errors: messages(res.Errors), Warnings: messages(res.Warnings)}
	if len(out.Errors) > 0 {
		return out
	}
	for _, f := range res.OutputFiles {
		switch {
		case strings.HasSuffix(f.Path, ".js"):
			out.JS = string(f.Contents)
		case strings.HasSuffix(f.Path, ".css"):
			out.CSS = string(f.Contents)
		}
	}
	if out.JS == "" {
		out.Errors = append(out.Errors, Message{Text: "the compiler gave no script"})
	}
	return out
}

func messages(ms []api.Message) []Message {
	out := make([]Message, 0, len(ms))
	for _, m := range ms {
		x := Message{Text: m.Text}
		if l := m.Location; l != nil {
			x.File = strings.TrimPrefix(strings.TrimPrefix(l.File, nsFile+":"), "/")
			if l.Namespace == nsEntry || x.File == entryPath || strings.HasPrefix(l.File, nsEntry+":") {
				x.File = ""
			}
			x.Line, x.Column, x.LineText = l.Line, l.Column, l.LineText
		}
		out = append(out, x)
	}
	return out
}

// entrySource is the virtual entry: the snippet's default export, and
// nothing else, becomes the IIFE's result.
var entrySource = fmt.Sprintf("export { default } from %q;\n", "./"+room.EntryPoint)

// resolver is the only way the build finds a module.
func resolver(files map[string]string) api.Plugin {
	return api.Plugin{Name: "foundry-snippet", Setup: func(b api.PluginBuild) {
		b.OnResolve(api.OnResolveOptions{Filter: `.*`}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
			if a.Kind == api.ResolveEntryPoint {
				return api.OnResolveResult{Path: entryPath, Namespace: nsEntry}, nil
			}
			from := ""
			if a.Namespace == nsFile {
				from = path.Dir(a.Importer)
			} else if a.Namespace != nsEntry {
				return refuse(a.Path, "a provided module imports nothing"), nil
			}
			p, why := Resolve(files, from, a.Path)
			if why != "" {
				return refuse(a.Path, why), nil
			}
			if _, ok := Provided[p]; ok && !isRelative(a.Path) {
				return api.OnResolveResult{Path: p, Namespace: nsProvided}, nil
			}
			return api.OnResolveResult{Path: p, Namespace: nsFile}, nil
		})
		b.OnLoad(api.OnLoadOptions{Filter: `.*`, Namespace: nsEntry}, func(api.OnLoadArgs) (api.OnLoadResult, error) {
			src := entrySource
			return api.OnLoadResult{Contents: &src, Loader: api.LoaderJS}, nil
		})
		b.OnLoad(api.OnLoadOptions{Filter: `.*`, Namespace: nsProvided}, func(a api.OnLoadArgs) (api.OnLoadResult, error) {
			src := providedSource(a.Path)
			return api.OnLoadResult{Contents: &src, Loader: api.LoaderJS}, nil
		})
		b.OnLoad(api.OnLoadOptions{Filter: `.*`, Namespace: nsFile}, func(a api.OnLoadArgs) (api.OnLoadResult, error) {
			src, ok := files[a.Path]
			loader, known := loaderOf(a.Path)
			if !ok || !known {
				return api.OnLoadResult{Errors: []api.Message{{Text: fmt.Sprintf("%s cannot be imported: a snippet imports its own %s files", a.Path, strings.Join(Extensions, " "))}}}, nil
			}
			return api.OnLoadResult{Contents: &src, Loader: loader}, nil
		})
	}}
}

func refuse(spec, why string) api.OnResolveResult {
	return api.OnResolveResult{Errors: []api.Message{{Text: fmt.Sprintf("import %q is not allowed: %s", problem.Excerpt(spec), why)}}}
}

// allowed says what may be imported, for every refusal.
var allowed = "a snippet may import only its own files (relative paths such as ./Button or ./styles.css) and " + providedList()

func providedList() string {
	names := sortedPaths(Provided)
	return strings.Join(names, ", ")
}

func isRelative(spec string) bool {
	return spec == "." || spec == ".." || strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../")
}

// Resolve answers the snippet file (or provided module) spec names when
// imported from folder from ("" or "." for the top), or why it may not be
// imported. It reads only files.
func Resolve(files map[string]string, from, spec string) (string, string) {
	switch {
	case spec == "":
		return "", "the import path is empty; " + allowed
	case strings.ContainsAny(spec, "\x00\\?#"):
		return "", "it holds a backslash, NUL, ? or #; " + allowed
	case strings.Contains(spec, "://") || strings.HasPrefix(spec, "//") || strings.HasPrefix(spec, "data:"):
		return "", "a snippet loads nothing from the network; " + allowed
	case strings.HasPrefix(spec, "/"):
		return "", "absolute paths reach outside the snippet; " + allowed
	case !isRelative(spec):
		if _, ok := Provided[spec]; ok {
			return spec, ""
		}
		if strings.HasPrefix(spec, "node:") {
			return "", "Node built-ins do not exist in the Room's sandbox; " + allowed
		}
		return "", "packages are not installed for snippets; " + allowed
	}
	if from == "" {
		from = "."
	}
	p := path.Clean(path.Join(from, spec))
	if p == ".." || strings.HasPrefix(p, "../") || p == "." || strings.HasPrefix(p, "/") {
		return "", "it points outside the snippet's files; " + allowed
	}
	if _, ok := files[p]; ok {
		return p, ""
	}
	for _, ext := range Extensions {
		if _, ok := files[p+ext]; ok {
			return p + ext, ""
		}
	}
	for _, ext := range Extensions {
		if _, ok := files[p+"/index"+ext]; ok {
			return p + "/index" + ext, ""
		}
	}
	return "", fmt.Sprintf("the snippet has no file %s (nor %s with %s, nor %s/index.*); %s", p, p, strings.Join(Extensions, " "), p, allowed)
}

func loaderOf(p string) (api.Loader, bool) {
	switch path.Ext(p) {
	case ".tsx":
		return api.LoaderTSX, true
	case ".ts":
		return api.LoaderTS, true
	case ".jsx":
		return api.LoaderJSX, true
	case ".js":
		return api.LoaderJS, true
	case ".css":
		return api.LoaderCSS, true
	case ".json":
		return api.LoaderJSON, true
	}
	return api.LoaderNone, false
}

// providedSource is a provided module: a read of globalThis.__foundry at
// run time, with a readable error if the runtime did not set it.
func providedSource(name string) string {
	key := Provided[name]
	read := fmt.Sprintf(`var f = globalThis.__foundry;
if (!f || f[%[1]q] == null) throw new Error("the Room runtime did not provide %[2]s (globalThis.__foundry.%[1]s)");
`, key, name)
	if name == "@app/storage" {
		// The module is { storage, useStoredState }: the runtime may give
		// that object, or the storage object itself.
		return read + `var s = f.storage;
module.exports = s.storage ? s : Object.assign({ storage: s }, s);
`
	}
	return read + fmt.Sprintf("module.exports = f[%q];\n", key)
}

func sortedPaths[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
