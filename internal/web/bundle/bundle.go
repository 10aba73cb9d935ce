// Package bundle builds the web app (web/src/main.tsx and the CSS it
// imports) with esbuild's Go API: index.html, assets/app-HASH.js (an ES
// module), assets/app-HASH.css, assets/live-HASH.js (the SharedWorker
// that holds the browser's one live stream) and assets/chunk-HASH.js, the code the app
// shares between its parts or loads later with import() (the editors of
// the markdown, sheet and slides tabs load when their tab opens),
// minified, without source maps, each named by a hash of its content.
// Beside each script and stylesheet under assets/ are its gzip (.gz) and
// brotli (.br) encodings, made here once so that the server only picks
// one. Beside it, the sandbox runtime (web/sandbox/runtime.tsx, the script
// of the page that runs a Room's apps): sandbox/runtime-HASH.js and
// sandbox/runtime-HASH.css, built from the same React. The same sources
// give the same bytes on every run (no timestamps, no absolute paths, and
// both compressors are deterministic), so CI rebuilds the committed bundle
// and fails when it differs.
package bundle

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/andybalholm/brotli"
	"github.com/evanw/esbuild/pkg/api"
)

// ErrNoPackages is Build's error when web/node_modules is not installed.
var ErrNoPackages = errors.New("web/node_modules has no react: run npm ci --prefix web first")

// Build bundles the sources in root/web into dist (a folder it empties
// first) and answers the files it wrote, by path under dist, with their
// sizes.
func Build(root, dist string) (map[string]int, error) {
	src := filepath.Join(root, "web")
	if _, err := os.Stat(filepath.Join(src, "node_modules", "react", "package.json")); err != nil {
		return nil, ErrNoPackages
	}
	files := map[string][]byte{}
	// The live connection's SharedWorker (web/src/live/worker.ts) is a
	// script of its own, assets/live-HASH.js; the app is told its name.
	live, err := build(src, dist, "src/live/worker.ts", "live", "assets", false, files, nil)
	if err != nil {
		return nil, err
	}
	if live.js == "" {
		return nil, fmt.Errorf("esbuild gave no script for the live worker (src/live/worker.ts)")
	}
	app, err := build(src, dist, "src/main.tsx", "app", "assets", true, files, map[string]string{"FOUNDRY_LIVE_WORKER": strconv.Quote("/" + live.js)})
	if err != nil {
		return nil, err
	}
	if app.js == "" || app.css == "" {
		return nil, fmt.Errorf("esbuild gave no script or no stylesheet (got %d files): import ./app.css from src/main.tsx", len(files))
	}
	rt, err := build(src, dist, "sandbox/runtime.tsx", "runtime", "sandbox", false, files, nil)
	if err != nil {
		return nil, err
	}
	if rt.js == "" || rt.css == "" {
		return nil, fmt.Errorf("esbuild gave no sandbox runtime script or stylesheet: import ./runtime.css from sandbox/runtime.tsx")
	}
	var page bytes.Buffer
	preload := make([]string, len(app.preload))
	for i, p := range app.preload {
		preload[i] = "/" + p
	}
	if err := indexPage.Execute(&page, struct {
		JS, CSS string
		Preload []string
	}{"/" + app.js, "/" + app.css, preload}); err != nil {
		return nil, err
	}
	files["index.html"] = page.Bytes()
	if err := compress(files); err != nil {
		return nil, err
	}

	// The old bundle goes: dist holds exactly this build.
	if err := os.RemoveAll(dist); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	wrote := map[string]int{}
	for _, n := range names {
		p := filepath.Join(dist, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, files[n], 0o644); err != nil {
			return nil, err
		}
		wrote[n] = len(files[n])
	}
	return wrote, nil
}

// compress adds the Encodings of every script and stylesheet under
// assets/ to files.
func compress(files map[string][]byte) error {
	names := make([]string, 0, len(files))
	for n := range files {
		ext := path.Ext(n)
		if strings.HasPrefix(n, "assets/") && (ext == ".js" || ext == ".css") {
			names = append(names, n)
		}
	}
	for _, n := range names {
		var gz, br bytes.Buffer
		// A zero gzip header: no name, no time, OS "unknown".
		zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
		if err != nil {
			return err
		}
		bw := brotli.NewWriterLevel(&br, brotli.BestCompression)
		for _, w := range []interface {
			Write([]byte) (int, error)
			Close() error
		}{zw, bw} {
			if _, err := w.Write(files[n]); err != nil {
				return err
			}
			if err := w.Close(); err != nil {
				return err
			}
		}
		files[n+".gz"] = gz.Bytes()
		files[n+".br"] = br.Bytes()
	}
	return nil
}

// output is what one build of an entry point made, by path under dist.
type output struct {
	js, css string
	preload []string // the scripts js imports, at once or through another: fetched with it
}

// build bundles one entry point into files (by path under dist, in the
// folder dir, named prefix-HASH, and with split its shared and lazily
// loaded code as chunk-HASH.js, the script then an ES module). define
// names more global constants for the code, by identifier, as JavaScript.
func build(src, dist, entry, prefix, dir string, split bool, files map[string][]byte, define map[string]string) (output, error) {
	format := api.FormatIIFE
	if split {
		format = api.FormatESModule
	}
	defines := map[string]string{"process.env.NODE_ENV": `"production"`}
	for k, v := range define {
		defines[k] = v
	}
	res := api.Build(api.BuildOptions{
		AbsWorkingDir:     src,
		EntryPoints:       []string{entry},
		EntryNames:        prefix + "-[hash]",
		ChunkNames:        "chunk-[hash]",
		AssetNames:        prefix + "-[name]-[hash]",
		Outdir:            filepath.Join(dist, dir),
		Bundle:            true,
		Splitting:         split,
		Write:             false,
		Metafile:          true,
		Format:            format,
		Platform:          api.PlatformBrowser,
		Target:            api.ES2022,
		JSX:               api.JSXAutomatic,
		MinifyWhitespace:  true,
		MinifyIdentifiers: true,
		MinifySyntax:      true,
		LegalComments:     api.LegalCommentsEndOfFile,
		Sourcemap:         api.SourceMapNone,
		Charset:           api.CharsetUTF8,
		Define:            defines,
		Loader:            map[string]api.Loader{".svg": api.LoaderDataURL},
		LogLevel:          api.LogLevelWarning,
		// Stencil's lazy loader (which RevoGrid's standalone build never
		// calls) imports "./${bundleId}.entry.js": nothing to split there.
		LogOverride: map[string]api.LogLevel{"empty-glob": api.LogLevelSilent},
		TsconfigRaw: "",
		Tsconfig:    filepath.Join(src, "tsconfig.json"),
	})
	if len(res.Errors) > 0 {
		msgs := api.FormatMessages(res.Errors, api.FormatMessagesOptions{Kind: api.ErrorMessage})
		return output{}, fmt.Errorf("esbuild (%s):\n%s", entry, strings.Join(msgs, ""))
	}
	rel := func(p string) (string, error) {
		if !filepath.IsAbs(p) {
			p = filepath.Join(src, filepath.FromSlash(p))
		}
		r, err := filepath.Rel(dist, p)
		return filepath.ToSlash(r), err
	}
	for _, f := range res.OutputFiles {
		r, err := rel(f.Path)
		if err != nil {
			return output{}, err
		}
		files[r] = f.Contents
	}
	var meta struct {
		Outputs map[string]struct {
			EntryPoint string `json:"entryPoint"`
			CSSBundle  string `json:"cssBundle"`
			Imports    []struct {
				Path string `json:"path"`
				Kind string `json:"kind"`
			} `json:"imports"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal([]byte(res.Metafile), &meta); err != nil {
		return output{}, fmt.Errorf("esbuild's metafile (%s): %v", entry, err)
	}
	var out output
	imports := map[string][]string{} // static imports, by output
	for p, o := range meta.Outputs {
		r, err := rel(p)
		if err != nil {
			return output{}, err
		}
		if strings.HasSuffix(r, ".css") && !strings.HasPrefix(path.Base(r), prefix+"-") {
			// esbuild gives each lazily loaded part its own stylesheet,
			// which nothing would load.
			return output{}, fmt.Errorf("esbuild (%s) made the stylesheet %s for code loaded with import(): import that CSS from the module that imports it lazily, so that it joins %s's stylesheet", entry, r, prefix)
		}
		for _, im := range o.Imports {
			if im.Kind != "import-statement" {
				continue
			}
			ri, err := rel(im.Path)
			if err != nil {
				return output{}, err
			}
			imports[r] = append(imports[r], ri)
		}
		if o.EntryPoint == entry && strings.HasSuffix(r, ".js") {
			out.js = r
			if o.CSSBundle != "" {
				if out.css, err = rel(o.CSSBundle); err != nil {
					return output{}, err
				}
			}
		}
	}
	if out.css == "" {
		for r := range files {
			if strings.HasPrefix(r, dir+"/"+prefix+"-") && strings.HasSuffix(r, ".css") {
				out.css = r
			}
		}
	}
	seen := map[string]bool{out.js: true}
	for queue := []string{out.js}; len(queue) > 0; queue = queue[1:] {
		for _, im := range imports[queue[0]] {
			if !seen[im] {
				seen[im] = true
				out.preload = append(out.preload, im)
				queue = append(queue, im)
			}
		}
	}
	sort.Strings(out.preload)
	return out, nil
}

// indexPage is the one HTML page of the app; every client route serves it.
var indexPage = template.Must(template.New("index").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Foundry</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="{{.CSS}}">
<script type="module" src="{{.JS}}"></script>
{{- range .Preload}}
<link rel="modulepreload" href="{{.}}">
{{- end}}
</head>
<body>
<div id="root"></div>
<noscript><p class="noscript">Foundry's web app needs JavaScript. Agents reach Foundry at /mcp.</p></noscript>
</body>
</html>
`))
