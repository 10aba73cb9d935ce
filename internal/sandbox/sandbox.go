// Package sandbox serves the page that runs a Room's apps: one generic
// page, the same for every app, whose policy gives it an opaque origin
// (sandbox allow-scripts) and no network at all. The app's code never
// comes from here: the page that embeds the frame fetches the approved
// bundle and hands it over by postMessage, and the frame's only way out is
// the port it was given with it.
package sandbox

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"path"
	"strings"
	"time"

	"foundry/internal/web"
)

// Path is the page's address; the app page embeds it as
// <iframe sandbox="allow-scripts" src="/sandbox/app">.
const Path = "/sandbox/app"

// AssetPrefix is where the runtime's script and stylesheet are served.
const AssetPrefix = "/sandbox/"

// CSP is the page's Content-Security-Policy. sandbox allow-scripts gives
// the document an opaque origin (no cookies, no storage, no access to the
// embedding page) and no forms, popups or top navigation; every fetch
// directive is closed but the runtime's own files and the blob: URLs it
// makes of the app's code. frame-ancestors: only this server's pages
// embed it.
const CSP = "sandbox allow-scripts; default-src 'none'; script-src 'self' blob:; style-src 'self' blob:; " +
	"img-src data: blob:; font-src 'none'; media-src 'none'; connect-src 'none'; object-src 'none'; " +
	"frame-src 'none'; child-src 'none'; worker-src 'none'; manifest-src 'none'; form-action 'none'; " +
	"base-uri 'none'; frame-ancestors 'self'; webrtc 'block'"

// PermissionsPolicy turns off every powerful feature for the page: an app
// asks for no camera, microphone, location, USB, payment or clipboard.
const PermissionsPolicy = "accelerometer=(), ambient-light-sensor=(), autoplay=(), bluetooth=(), camera=(), clipboard-read=(), " +
	"clipboard-write=(), display-capture=(), encrypted-media=(), fullscreen=(), gamepad=(), geolocation=(), gyroscope=(), hid=(), " +
	"idle-detection=(), local-fonts=(), magnetometer=(), microphone=(), midi=(), payment=(), picture-in-picture=(), " +
	"publickey-credentials-create=(), publickey-credentials-get=(), screen-wake-lock=(), serial=(), storage-access=(), usb=(), " +
	"web-share=(), window-management=(), xr-spatial-tracking=()"

// Handler serves the page and its runtime.
type Handler struct {
	page   []byte
	assets map[string][]byte // by name under AssetPrefix: runtime-HASH.js, runtime-HASH.css
}

// New takes the runtime's files, by name (runtime-HASH.js and
// runtime-HASH.css, as the web bundle builds them).
func New(files map[string][]byte) (*Handler, error) {
	var js, css string
	h := &Handler{assets: map[string][]byte{}}
	for name, b := range files {
		if strings.ContainsAny(name, `/\`) || !strings.HasPrefix(name, "runtime-") {
			continue
		}
		switch path.Ext(name) {
		case ".js":
			js = name
		case ".css":
			css = name
		default:
			continue
		}
		h.assets[name] = b
	}
	if js == "" || css == "" {
		return nil, fmt.Errorf("the sandbox runtime is missing from the web bundle (script %q, stylesheet %q); rebuild it (go generate ./internal/web/...)", js, css)
	}
	var page bytes.Buffer
	if err := pageTemplate.Execute(&page, struct{ JS, CSS string }{AssetPrefix + js, AssetPrefix + css}); err != nil {
		return nil, err
	}
	h.page = page.Bytes()
	return h, nil
}

// Mount adds GET (and HEAD) of the page and of each runtime file to mux.
func (h *Handler) Mount(mux *http.ServeMux) {
	mux.HandleFunc("GET "+Path, h.servePage)
	for name := range h.assets {
		mux.HandleFunc("GET "+AssetPrefix+name, h.serveAsset)
	}
}

// Page is the page's HTML (for tests).
func (h *Handler) Page() []byte { return bytes.Clone(h.page) }

func headers(w http.ResponseWriter) {
	hd := w.Header()
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
}

// servePage answers the page to anyone: it holds nothing but the runtime,
// and what runs in it is handed over by the page that embeds it.
func (h *Handler) servePage(w http.ResponseWriter, r *http.Request) {
	headers(w)
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Security-Policy", CSP)
	hd.Set("Permissions-Policy", PermissionsPolicy)
	hd.Set("X-Frame-Options", "SAMEORIGIN")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	hd.Set("Cache-Control", "no-cache")
	// No DNS lookups an app could leak names through (<link
	// rel=dns-prefetch> and the prefetching of its links' hosts).
	hd.Set("X-DNS-Prefetch-Control", "off")
	http.ServeContent(w, r, "app.html", time.Time{}, bytes.NewReader(h.page))
}

// serveAsset is one runtime file, named by its content, so cached for a
// year. The frame that loads it has an opaque origin, which is never the
// same origin or site as this server's: the file is public code, and says
// any origin may load it.
func (h *Handler) serveAsset(w http.ResponseWriter, r *http.Request) {
	web.ServeAsset(w, r, h.assets, func(w http.ResponseWriter) {
		headers(w)
		w.Header().Set("Cross-Origin-Resource-Policy", "cross-origin")
	})
}

var pageTemplate = template.Must(template.New("app").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="x-dns-prefetch-control" content="off">
<title>App</title>
<link rel="stylesheet" href="{{.CSS}}">
</head>
<body>
<div id="root"></div>
<script src="{{.JS}}"></script>
</body>
</html>
`))
