// Package web serves the people's web app: the bundle in dist/ (built from
// web/src by go generate, committed, embedded), its one page on every
// client route for signed-in people, and its content-named assets (the
// app's script, stylesheet and chunks, the live worker), each in the compressed encoding
// the browser takes best of those the build made.
package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"foundry/internal/auth"
)

//go:embed dist
var dist embed.FS

// CSP is the page's Content-Security-Policy: everything from this server,
// nothing inline, no framing of the page; the frames it embeds (a Room's
// apps, in the sandbox page) come from this server alone, so a frame
// cannot navigate itself anywhere else. Its one worker (the live
// connection's SharedWorker, assets/live-HASH.js) is this server's too.
const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; worker-src 'self'; frame-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// WorkerCSP is the live worker's own policy (a worker runs under the
// policy its script is served with): it loads nothing, and connects to
// this server alone.
const WorkerCSP = "default-src 'none'; connect-src 'self'"

// LiveWorkerPrefix begins the name of the live worker's script under
// AssetPrefix (live-HASH.js).
const LiveWorkerPrefix = "live-"

// Routes are the app's client routes: each serves index.html. A pattern
// ending in "/" covers every path below it (/notes/{id}, …).
var Routes = []string{"/{$}", "/notes", "/notes/", "/connected", "/approvals", "/rooms", "/rooms/", "/settings", "/settings/"}

// AssetPrefix is where the bundle's files are served.
const AssetPrefix = "/assets/"

// Cache-Control of the page (revalidated on every load, answered 304
// while it is the same) and of the assets (named by their content: a new
// build gives new names, so a copy never goes stale).
const (
	PageCache  = "no-cache"
	AssetCache = "public, max-age=31536000, immutable"
)

// Handler serves the app.
type Handler struct {
	people auth.People
	index  *file
	assets map[string]*file // by name under AssetPrefix: app-HASH.js, app-HASH.css, chunk-HASH.js
}

// file is one file as served: its bytes, its compressed copies, and the
// entity tags that tell them apart.
type file struct {
	name    string
	ctype   string
	body    []byte
	etag    string
	encoded []encoded // in encodings' order
}

// encodings are the compressed copies the build (package bundle) writes
// beside each script and stylesheet, by file suffix, the preferred first:
// brotli is the smaller.
var encodings = []struct{ suffix, coding string }{{".br", "br"}, {".gz", "gzip"}}

type encoded struct {
	coding string // Content-Encoding
	body   []byte
	etag   string
}

// New reads the embedded bundle. It fails only if the bundle is broken
// (no index.html): rebuild it with go generate ./internal/web/...
func New(people auth.People) (*Handler, error) {
	return newHandler(people, dist)
}

func newHandler(people auth.People, fsys fs.FS) (*Handler, error) {
	sub, err := fs.Sub(fsys, "dist")
	if err != nil {
		return nil, err
	}
	index, err := fs.ReadFile(sub, "index.html")
	if err != nil {
		return nil, fmt.Errorf("the web app's bundle has no index.html (%v); rebuild it (go generate ./internal/web/...)", err)
	}
	h := &Handler{people: people, index: newFile("index.html", index), assets: map[string]*file{}}
	entries, err := fs.ReadDir(sub, "assets")
	if err != nil {
		return nil, fmt.Errorf("the web app's bundle has no assets folder (%v); rebuild it (go generate ./internal/web/...)", err)
	}
	app := false
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || isEncoding(name) {
			continue
		}
		b, err := fs.ReadFile(sub, "assets/"+name)
		if err != nil {
			return nil, err
		}
		f := newFile(name, b)
		for _, enc := range encodings {
			c, err := fs.ReadFile(sub, "assets/"+name+enc.suffix)
			if err != nil {
				continue // not made for this file (the build compresses scripts and stylesheets)
			}
			f.encoded = append(f.encoded, encoded{coding: enc.coding, body: c, etag: strings.TrimSuffix(f.etag, `"`) + "." + enc.coding + `"`})
		}
		h.assets[name] = f
		app = app || (strings.HasPrefix(name, "app-") && path.Ext(name) == ".js")
	}
	if !app {
		return nil, fmt.Errorf("the web app's bundle has no app-*.js; rebuild it (go generate ./internal/web/...)")
	}
	return h, nil
}

func isEncoding(name string) bool {
	for _, enc := range encodings {
		if strings.HasSuffix(name, enc.suffix) {
			return true
		}
	}
	return false
}

// newFile is name's bytes with a strong entity tag made of their hash.
func newFile(name string, b []byte) *file {
	sum := sha256.Sum256(b)
	return &file{name: name, ctype: contentType(name), body: b, etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`}
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".html":
		return "text/html; charset=utf-8"
	}
	return "application/octet-stream"
}

// serve answers f, in the best encoding the request accepts, with its
// entity tag: a request whose If-None-Match has it gets 304, and Range
// and HEAD are answered as http.ServeContent does (a range is of the
// encoded bytes, the ones sent).
func (f *file) serve(w http.ResponseWriter, r *http.Request, cache string) {
	hd := w.Header()
	hd.Set("Content-Type", f.ctype)
	hd.Set("Cache-Control", cache)
	body, tag := f.body, f.etag
	if len(f.encoded) > 0 {
		hd.Add("Vary", "Accept-Encoding")
		accept := r.Header.Get("Accept-Encoding")
		for _, e := range f.encoded {
			if Accepts(accept, e.coding) {
				hd.Set("Content-Encoding", e.coding)
				body, tag = e.body, e.etag
				break
			}
		}
	}
	hd.Set("ETag", tag)
	// ServeContent leaves out the length of a whole response that has a
	// Content-Encoding (for handlers that compress as they write): this
	// one is the encoded file, of known length. (A range's it sets.)
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	http.ServeContent(w, r, f.name, time.Time{}, bytes.NewReader(body))
}

// Accepts reports whether an Accept-Encoding header value takes coding:
// named with a q-value above 0 (or none), or left to a "*" above 0.
// "x-gzip" is gzip.
func Accepts(header, coding string) bool {
	star := false
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(part, ";")
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "x-gzip" {
			name = "gzip"
		}
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = f
				} else {
					q = 0
				}
			}
		}
		switch name {
		case coding:
			return q > 0
		case "*":
			star = q > 0
		}
	}
	return star
}

// Mount adds the app's routes to mux: GET (and HEAD) of each of Routes,
// and of each asset by its exact name (its compressed copies are not
// files of their own), so that other files under /assets/ (the sign-in
// pages' stylesheet) stay where they are.
func (h *Handler) Mount(mux *http.ServeMux) {
	for _, r := range Routes {
		mux.HandleFunc("GET "+r, h.page)
	}
	for name := range h.assets {
		mux.HandleFunc("GET "+AssetPrefix+name, h.asset)
	}
}

// Sandbox is the sandbox runtime's files (the script and stylesheet of the
// page that runs a Room's apps, package sandbox), by name.
func Sandbox() (map[string][]byte, error) {
	entries, err := fs.ReadDir(dist, "dist/sandbox")
	if err != nil {
		return nil, fmt.Errorf("the web app's bundle has no sandbox runtime (%v); rebuild it (go generate ./internal/web/...)", err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := fs.ReadFile(dist, "dist/sandbox/"+e.Name())
		if err != nil {
			return nil, err
		}
		out[e.Name()] = b
	}
	return out, nil
}

// Assets are the names of the bundle's files under AssetPrefix.
func (h *Handler) Assets() []string {
	out := make([]string, 0, len(h.assets))
	for n := range h.assets {
		out = append(out, n)
	}
	return out
}

func securityHeaders(w http.ResponseWriter) {
	hd := w.Header()
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "same-origin")
}

// page is index.html for a signed-in person; anyone else is sent to sign
// in, and comes back to the same path.
func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w)
	if _, ok := h.people.Current(r); !ok {
		w.Header().Set("Cache-Control", "no-store")
		http.Redirect(w, r, h.people.SignInURL(r.URL.RequestURI()), http.StatusSeeOther)
		return
	}
	hd := w.Header()
	hd.Set("Content-Security-Policy", CSP)
	hd.Set("X-Frame-Options", "DENY")
	h.index.serve(w, r, PageCache)
}

// asset is one bundle file.
func (h *Handler) asset(w http.ResponseWriter, r *http.Request) {
	f, ok := h.assets[path.Base(r.URL.Path)]
	if !ok {
		http.NotFound(w, r)
		return
	}
	securityHeaders(w)
	if strings.HasPrefix(f.name, LiveWorkerPrefix) {
		w.Header().Set("Content-Security-Policy", WorkerCSP)
	}
	f.serve(w, r, AssetCache)
}

// ServeAsset answers the file of assets the request's last path segment
// names, after headers has set the route's own: a bundle file's name
// changes with its content, so it is cached for a year.
func ServeAsset(w http.ResponseWriter, r *http.Request, assets map[string][]byte, headers func(http.ResponseWriter)) {
	name := path.Base(r.URL.Path)
	b, ok := assets[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	headers(w)
	hd := w.Header()
	hd.Set("Cache-Control", AssetCache)
	if ext := path.Ext(name); ext == ".js" || ext == ".css" {
		hd.Set("Content-Type", contentType(name))
	}
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(b))
}
