// Package web serves the people's web app: the bundle in dist/ (built from
// web/src by go generate, committed, embedded), its one page on every
// client route for signed-in people, and its content-named assets.
package web

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"foundry/internal/auth"
)

//go:embed dist
var dist embed.FS

// CSP is the page's Content-Security-Policy: everything from this server,
// nothing inline, no framing of the page; the frames it embeds (a Room's
// apps, in the sandbox page) come from this server alone, so a frame
// cannot navigate itself anywhere else.
const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// Routes are the app's client routes: each serves index.html. A pattern
// ending in "/" covers every path below it (/notes/{id}, …).
var Routes = []string{"/{$}", "/notes", "/notes/", "/connected", "/approvals", "/rooms", "/rooms/"}

// AssetPrefix is where the bundle's files are served.
const AssetPrefix = "/assets/"

// Handler serves the app.
type Handler struct {
	people auth.People
	index  []byte
	assets map[string][]byte // by name under AssetPrefix: app-HASH.js, app-HASH.css
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
	h := &Handler{people: people, index: index, assets: map[string][]byte{}}
	entries, err := fs.ReadDir(sub, "assets")
	if err != nil {
		return nil, fmt.Errorf("the web app's bundle has no assets folder (%v); rebuild it (go generate ./internal/web/...)", err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasPrefix(e.Name(), "app-") {
			continue
		}
		b, err := fs.ReadFile(sub, "assets/"+e.Name())
		if err != nil {
			return nil, err
		}
		h.assets[e.Name()] = b
	}
	if len(h.assets) == 0 {
		return nil, fmt.Errorf("the web app's bundle has no app-* assets; rebuild it (go generate ./internal/web/...)")
	}
	return h, nil
}

// Mount adds the app's routes to mux: GET (and HEAD) of each of Routes,
// and of each asset by its exact name, so that other files under /assets/
// (the sign-in pages' stylesheet) stay where they are.
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
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("Content-Security-Policy", CSP)
	hd.Set("X-Frame-Options", "DENY")
	http.ServeContent(w, r, "index.html", time.Time{}, bytes.NewReader(h.index))
}

// asset is one bundle file.
func (h *Handler) asset(w http.ResponseWriter, r *http.Request) {
	ServeAsset(w, r, h.assets, securityHeaders)
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
	hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	switch path.Ext(name) {
	case ".js":
		hd.Set("Content-Type", "text/javascript; charset=utf-8")
	case ".css":
		hd.Set("Content-Type", "text/css; charset=utf-8")
	}
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(b))
}
