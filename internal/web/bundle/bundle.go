// Package bundle builds the web app (web/src/main.tsx and the CSS it
// imports) with esbuild's Go API: index.html, assets/app-HASH.js and
// assets/app-HASH.css, minified, without source maps, each named by a hash
// of its content. Beside it, the sandbox runtime (web/sandbox/runtime.tsx,
// the script of the page that runs a Room's apps): sandbox/runtime-HASH.js
// and sandbox/runtime-HASH.css, built from the same React. The same sources give the same bytes on every run (no
// timestamps, no absolute paths), so CI rebuilds the committed bundle and
// fails when it differs.
package bundle

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"sort"
	"strings"

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
	js, css, err := build(src, dist, "src/main.tsx", "app", "assets", files)
	if err != nil {
		return nil, err
	}
	if js == "" || css == "" {
		return nil, fmt.Errorf("esbuild gave no script or no stylesheet (got %d files): import ./app.css from src/main.tsx", len(files))
	}
	rjs, rcss, err := build(src, dist, "sandbox/runtime.tsx", "runtime", "sandbox", files)
	if err != nil {
		return nil, err
	}
	if rjs == "" || rcss == "" {
		return nil, fmt.Errorf("esbuild gave no sandbox runtime script or stylesheet: import ./runtime.css from sandbox/runtime.tsx")
	}
	var page bytes.Buffer
	if err := indexPage.Execute(&page, struct{ JS, CSS string }{"/" + js, "/" + css}); err != nil {
		return nil, err
	}
	files["index.html"] = page.Bytes()

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

// build bundles one entry point into files (by path under dist, in the
// folder dir, named prefix-HASH) and answers the paths of its script and
// stylesheet.
func build(src, dist, entry, prefix, dir string, files map[string][]byte) (js, css string, err error) {
	res := api.Build(api.BuildOptions{
		AbsWorkingDir:     src,
		EntryPoints:       []string{entry},
		EntryNames:        prefix + "-[hash]",
		AssetNames:        prefix + "-[name]-[hash]",
		Outdir:            filepath.Join(dist, dir),
		Bundle:            true,
		Write:             false,
		Metafile:          false,
		Format:            api.FormatIIFE,
		Platform:          api.PlatformBrowser,
		Target:            api.ES2022,
		JSX:               api.JSXAutomatic,
		MinifyWhitespace:  true,
		MinifyIdentifiers: true,
		MinifySyntax:      true,
		LegalComments:     api.LegalCommentsEndOfFile,
		Sourcemap:         api.SourceMapNone,
		Charset:           api.CharsetUTF8,
		Define:            map[string]string{"process.env.NODE_ENV": `"production"`},
		Loader:            map[string]api.Loader{".svg": api.LoaderDataURL},
		LogLevel:          api.LogLevelWarning,
		TsconfigRaw:       "",
		Tsconfig:          filepath.Join(src, "tsconfig.json"),
	})
	if len(res.Errors) > 0 {
		msgs := api.FormatMessages(res.Errors, api.FormatMessagesOptions{Kind: api.ErrorMessage})
		return "", "", fmt.Errorf("esbuild (%s):\n%s", entry, strings.Join(msgs, ""))
	}
	for _, f := range res.OutputFiles {
		rel, err := filepath.Rel(dist, f.Path)
		if err != nil {
			return "", "", err
		}
		rel = filepath.ToSlash(rel)
		files[rel] = f.Contents
		switch {
		case strings.HasSuffix(rel, ".js"):
			js = rel
		case strings.HasSuffix(rel, ".css"):
			css = rel
		}
	}
	return js, css, nil
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
</head>
<body>
<div id="root"></div>
<noscript><p class="noscript">Foundry's web app needs JavaScript. Agents reach Foundry at /mcp.</p></noscript>
<script src="{{.JS}}" defer></script>
</body>
</html>
`))
