package web

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/andybalholm/brotli"

	"foundry/internal/auth"
)

// signedIn is a People whose Current answers signed in when the request
// has the cookie "who".
type signedIn struct{}

func (signedIn) Current(r *http.Request) (auth.Person, bool) {
	_, err := r.Cookie("who")
	return auth.Person{}, err == nil
}
func (signedIn) SignInURL(returnTo string) string              { return "/signin?next=" + returnTo }
func (signedIn) CheckCSRF(r *http.Request, p auth.Person) bool { return false }

func gz(t *testing.T, b []byte) []byte {
	var out bytes.Buffer
	w, err := gzip.NewWriterLevel(&out, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(b)
	w.Close()
	return out.Bytes()
}

func br(b []byte) []byte {
	var out bytes.Buffer
	w := brotli.NewWriterLevel(&out, brotli.BestCompression)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

func unbr(t *testing.T, b []byte) []byte {
	t.Helper()
	out, err := io.ReadAll(brotli.NewReader(bytes.NewReader(b)))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func ungz(t *testing.T, b []byte) []byte {
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

// testBundle is a small bundle: a page, an entry script and a chunk with
// both encodings, a stylesheet with gzip only, and a file with none.
func testBundle(t *testing.T) (*http.ServeMux, map[string][]byte) {
	t.Helper()
	js := []byte(strings.Repeat("export const a = 'the app';\n", 200))
	chunk := []byte(strings.Repeat("export const b = 'a chunk';\n", 100))
	css := []byte(strings.Repeat(".topbar { color: red }\n", 100))
	raw := map[string][]byte{"app-AAAA.js": js, "chunk-BBBB.js": chunk, "app-CCCC.css": css, "app-DDDD.svg": []byte("<svg/>")}
	fsys := fstest.MapFS{
		"dist/index.html":              {Data: []byte(`<!doctype html><script type="module" src="/assets/app-AAAA.js"></script>`)},
		"dist/assets/app-AAAA.js":      {Data: js},
		"dist/assets/app-AAAA.js.br":   {Data: br(js)},
		"dist/assets/app-AAAA.js.gz":   {Data: gz(t, js)},
		"dist/assets/chunk-BBBB.js":    {Data: chunk},
		"dist/assets/chunk-BBBB.js.br": {Data: br(chunk)},
		"dist/assets/chunk-BBBB.js.gz": {Data: gz(t, chunk)},
		"dist/assets/app-CCCC.css":     {Data: css},
		"dist/assets/app-CCCC.css.gz":  {Data: gz(t, css)},
		"dist/assets/app-DDDD.svg":     {Data: raw["app-DDDD.svg"]},
	}
	h, err := newHandler(signedIn{}, fsys)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Mount(mux)
	return mux, raw
}

func get(mux http.Handler, method, target string, header map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	return rec
}

// TestAssetEncodings: each asset comes in the best encoding the request
// accepts (br, then gzip, else as it is), says so (Content-Encoding,
// Vary, its length), and decodes to the file.
func TestAssetEncodings(t *testing.T) {
	mux, raw := testBundle(t)
	decode := map[string]func(*testing.T, []byte) []byte{
		"br":   unbr,
		"gzip": ungz,
		"":     func(_ *testing.T, b []byte) []byte { return b },
	}
	for _, c := range []struct {
		name, accept, want string
	}{
		{"app-AAAA.js", "gzip, deflate, br, zstd", "br"},
		{"app-AAAA.js", "gzip, deflate", "gzip"},
		{"app-AAAA.js", "x-gzip", "gzip"},
		{"app-AAAA.js", "br;q=0, gzip;q=0.5", "gzip"},
		{"app-AAAA.js", "BR;Q=1.0", "br"},
		{"app-AAAA.js", "*", "br"},
		{"app-AAAA.js", "*;q=0, identity", ""},
		{"app-AAAA.js", "", ""},
		{"app-AAAA.js", "identity", ""},
		{"app-AAAA.js", "br;q=0, gzip;q=0", ""},
		{"app-AAAA.js", "br;q=nonsense, gzip", "gzip"},
		{"app-AAAA.js", "zstd, deflate", ""},
		{"chunk-BBBB.js", "br, gzip", "br"},
		{"app-CCCC.css", "br, gzip", "gzip"},
		{"app-CCCC.css", "br", ""},
		{"app-DDDD.svg", "br, gzip", ""},
	} {
		rec := get(mux, "GET", AssetPrefix+c.name, map[string]string{"Accept-Encoding": c.accept})
		res := rec.Result()
		body := rec.Body.Bytes()
		what := c.name + " with Accept-Encoding " + strconv.Quote(c.accept)
		if res.StatusCode != http.StatusOK {
			t.Errorf("%s: %d", what, res.StatusCode)
			continue
		}
		if got := res.Header.Get("Content-Encoding"); got != c.want {
			t.Errorf("%s: Content-Encoding %q, want %q", what, got, c.want)
			continue
		}
		if got := decode[c.want](t, body); !bytes.Equal(got, raw[c.name]) {
			t.Errorf("%s: the body does not decode to the file (%d bytes, want %d)", what, len(got), len(raw[c.name]))
		}
		if n, _ := strconv.Atoi(res.Header.Get("Content-Length")); n != len(body) {
			t.Errorf("%s: Content-Length %q for %d bytes", what, res.Header.Get("Content-Length"), len(body))
		}
		if c.want != "" && len(body) >= len(raw[c.name]) {
			t.Errorf("%s: %d bytes sent for a %d-byte file", what, len(body), len(raw[c.name]))
		}
		hasEncodings := c.name != "app-DDDD.svg"
		if got := res.Header.Get("Vary"); (got == "Accept-Encoding") != hasEncodings {
			t.Errorf("%s: Vary %q", what, got)
		}
		if got := res.Header.Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
			t.Errorf("%s: Cache-Control %q", what, got)
		}
		if res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no nosniff", what)
		}
	}
	for name, ctype := range map[string]string{"app-AAAA.js": "text/javascript; charset=utf-8", "app-CCCC.css": "text/css; charset=utf-8"} {
		if got := get(mux, "GET", AssetPrefix+name, map[string]string{"Accept-Encoding": "br, gzip"}).Header().Get("Content-Type"); got != ctype {
			t.Errorf("%s: Content-Type %q, want %q", name, got, ctype)
		}
	}
}

// TestAssetValidation: every encoding of an asset has its own strong
// ETag; If-None-Match with it is answered 304 (with Vary, no body), with
// another encoding's it is not; HEAD and Range answer the encoded bytes.
func TestAssetValidation(t *testing.T) {
	mux, _ := testBundle(t)
	tags := map[string]string{}
	for _, accept := range []string{"br", "gzip", ""} {
		rec := get(mux, "GET", AssetPrefix+"app-AAAA.js", map[string]string{"Accept-Encoding": accept})
		tag := rec.Header().Get("ETag")
		if !strings.HasPrefix(tag, `"`) || !strings.HasSuffix(tag, `"`) || len(tag) < 10 {
			t.Fatalf("Accept-Encoding %q: ETag %q, want a strong entity tag", accept, tag)
		}
		for other, seen := range tags {
			if seen == tag {
				t.Errorf("Accept-Encoding %q and %q: the same ETag %s for different bytes", accept, other, tag)
			}
		}
		tags[accept] = tag
		again := get(mux, "GET", AssetPrefix+"app-AAAA.js", map[string]string{"Accept-Encoding": accept, "If-None-Match": tag})
		if again.Code != http.StatusNotModified || again.Body.Len() != 0 || again.Header().Get("Vary") != "Accept-Encoding" || again.Header().Get("ETag") != tag {
			t.Errorf("Accept-Encoding %q, If-None-Match its tag: %d, %d bytes, headers %v", accept, again.Code, again.Body.Len(), again.Header())
		}
	}
	if rec := get(mux, "GET", AssetPrefix+"app-AAAA.js", map[string]string{"Accept-Encoding": "gzip", "If-None-Match": tags["br"]}); rec.Code != http.StatusOK || rec.Header().Get("Content-Encoding") != "gzip" {
		t.Errorf("gzip asked with the br copy's tag: %d %q, want 200 gzip", rec.Code, rec.Header().Get("Content-Encoding"))
	}
	// A rebuilt file (other bytes) has another tag.
	if rec := get(mux, "GET", AssetPrefix+"chunk-BBBB.js", nil); rec.Header().Get("ETag") == tags[""] {
		t.Errorf("two different files have the ETag %s", tags[""])
	}

	full := get(mux, "GET", AssetPrefix+"app-AAAA.js", map[string]string{"Accept-Encoding": "br"})
	head := get(mux, "HEAD", AssetPrefix+"app-AAAA.js", map[string]string{"Accept-Encoding": "br"})
	if head.Code != http.StatusOK || head.Body.Len() != 0 || head.Header().Get("Content-Length") != strconv.Itoa(full.Body.Len()) || head.Header().Get("Content-Encoding") != "br" {
		t.Errorf("HEAD: %d, %d bytes, headers %v (GET sends %d bytes)", head.Code, head.Body.Len(), head.Header(), full.Body.Len())
	}
	part := get(mux, "GET", AssetPrefix+"app-AAAA.js", map[string]string{"Accept-Encoding": "br", "Range": "bytes=0-9"})
	if part.Code != http.StatusPartialContent || !bytes.Equal(part.Body.Bytes(), full.Body.Bytes()[:10]) || part.Header().Get("Content-Range") != "bytes 0-9/"+strconv.Itoa(full.Body.Len()) {
		t.Errorf("Range bytes=0-9: %d %q, headers %v", part.Code, part.Body.Bytes(), part.Header())
	}
	bad := get(mux, "GET", AssetPrefix+"app-AAAA.js", map[string]string{"Accept-Encoding": "br", "Range": "bytes=999999-"})
	if bad.Code != http.StatusRequestedRangeNotSatisfiable || bad.Header().Get("Content-Encoding") != "" {
		t.Errorf("a range past the end: %d, Content-Encoding %q", bad.Code, bad.Header().Get("Content-Encoding"))
	}
}

// TestPageValidation: the page is revalidated on every load (no-cache)
// and answered 304 while it is the same; signed out, it is a redirect.
func TestPageValidation(t *testing.T) {
	mux, _ := testBundle(t)
	who := map[string]string{"Cookie": "who=1"}
	rec := get(mux, "GET", "/notes/n1", who)
	tag := rec.Header().Get("ETag")
	if rec.Code != http.StatusOK || rec.Header().Get("Cache-Control") != "no-cache" || tag == "" || rec.Header().Get("Content-Security-Policy") != CSP ||
		!strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") || !strings.Contains(rec.Body.String(), `type="module"`) {
		t.Fatalf("the page: %d, headers %v\n%s", rec.Code, rec.Header(), rec.Body)
	}
	again := get(mux, "GET", "/", map[string]string{"Cookie": "who=1", "If-None-Match": tag})
	if again.Code != http.StatusNotModified || again.Body.Len() != 0 || again.Header().Get("ETag") != tag {
		t.Errorf("the page with If-None-Match its tag: %d, %d bytes", again.Code, again.Body.Len())
	}
	if other := get(mux, "GET", "/", map[string]string{"Cookie": "who=1", "If-None-Match": `"something-else"`}); other.Code != http.StatusOK {
		t.Errorf("the page with another tag: %d, want 200", other.Code)
	}
	out := get(mux, "GET", "/notes", map[string]string{"If-None-Match": tag})
	if out.Code != http.StatusSeeOther || out.Header().Get("Cache-Control") != "no-store" || out.Header().Get("ETag") != "" {
		t.Errorf("signed out, with the page's tag: %d, headers %v, want a redirect to sign in", out.Code, out.Header())
	}
}

// TestUnknownAsset: a name the bundle does not have, and a compressed
// copy asked for by its own name, are not found.
func TestUnknownAsset(t *testing.T) {
	mux, _ := testBundle(t)
	for _, p := range []string{"app-NOSUCH.js", "app-AAAA.js.br", "app-AAAA.js.gz", "chunk-BBBB.js.br", "index.html"} {
		if rec := get(mux, "GET", AssetPrefix+p, map[string]string{"Accept-Encoding": "br, gzip"}); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s%s: %d, want 404", AssetPrefix, p, rec.Code)
		}
	}
	if rec := get(mux, "POST", AssetPrefix+"app-AAAA.js", nil); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST an asset: %d, want 405", rec.Code)
	}
}

// TestEmbeddedBundle: the committed bundle's every script and stylesheet
// has both compressed copies, each decoding to it, and the page loads
// its entry as a module.
func TestEmbeddedBundle(t *testing.T) {
	h, err := New(signedIn{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(h.index.body), `<script type="module" src="/assets/app-`) {
		t.Errorf("index.html does not load the app as a module:\n%s", h.index.body)
	}
	chunks := 0
	for name, f := range h.assets {
		if strings.HasPrefix(name, "chunk-") {
			chunks++
		}
		if len(f.encoded) != len(encodings) {
			t.Errorf("%s has %d compressed copies, want br and gzip: rebuild with go generate ./internal/web/...", name, len(f.encoded))
			continue
		}
		for _, e := range f.encoded {
			got := map[string]func(*testing.T, []byte) []byte{"br": unbr, "gzip": ungz}[e.coding](t, e.body)
			if !bytes.Equal(got, f.body) {
				t.Errorf("%s's %s copy does not decode to it", name, e.coding)
			}
		}
	}
	if chunks == 0 {
		t.Error("the bundle has no chunk-*.js: the editors are not split off")
	}
}

// TestAccepts is the Accept-Encoding reading on its own.
func TestAccepts(t *testing.T) {
	for _, c := range []struct {
		header, coding string
		want           bool
	}{
		{"gzip, deflate, br", "br", true},
		{"gzip;q=0.8, br;q=0.9", "gzip", true},
		{"gzip;q=0", "gzip", false},
		{"gzip; q=0.000", "gzip", false},
		{"*", "gzip", true},
		{"*;q=0", "br", false},
		{"br;q=0, *", "br", false},
		{"", "gzip", false},
		{" GZip ", "gzip", true},
		{"gzip;q=", "gzip", false},
		{"deflate", "gzip", false},
	} {
		if got := Accepts(c.header, c.coding); got != c.want {
			t.Errorf("Accepts(%q, %q) = %v, want %v", c.header, c.coding, got, c.want)
		}
	}
}

// TestLiveWorker: the committed bundle has one live worker script, served
// as JavaScript, cached as the other content-named assets are, under a
// policy of its own that lets it connect to this server and load nothing;
// the page's policy lets it start the worker from this server alone.
func TestLiveWorker(t *testing.T) {
	h, err := New(signedIn{})
	if err != nil {
		t.Fatal(err)
	}
	var workers []string
	for name := range h.assets {
		if strings.HasPrefix(name, LiveWorkerPrefix) {
			workers = append(workers, name)
		}
	}
	if len(workers) != 1 || !strings.HasSuffix(workers[0], ".js") {
		t.Fatalf("the bundle's live workers are %v, want one live-HASH.js: rebuild with go generate ./internal/web/...", workers)
	}
	mux := http.NewServeMux()
	h.Mount(mux)
	rec := get(mux, "GET", AssetPrefix+workers[0], map[string]string{"Accept-Encoding": "gzip, br"})
	hd := rec.Header()
	if rec.Code != http.StatusOK || hd.Get("Content-Type") != "text/javascript; charset=utf-8" || hd.Get("Cache-Control") != AssetCache || hd.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("GET the worker: %d, Content-Type %q, Cache-Control %q, X-Content-Type-Options %q", rec.Code, hd.Get("Content-Type"), hd.Get("Cache-Control"), hd.Get("X-Content-Type-Options"))
	}
	if got := hd.Get("Content-Security-Policy"); got != WorkerCSP {
		t.Errorf("the worker's Content-Security-Policy is %q, want %q", got, WorkerCSP)
	}
	if hd.Get("Content-Encoding") != "br" || !bytes.Equal(unbr(t, rec.Body.Bytes()), h.assets[workers[0]].body) {
		t.Errorf("the worker came as %q, not its brotli copy", hd.Get("Content-Encoding"))
	}
	// The app's script has no policy of its own (a page's script runs under
	// the page's).
	for name := range h.assets {
		if strings.HasPrefix(name, "app-") && strings.HasSuffix(name, ".js") {
			if p := get(mux, "GET", AssetPrefix+name, nil).Header().Get("Content-Security-Policy"); p != "" {
				t.Errorf("%s is served with the policy %q", name, p)
			}
		}
	}
	for _, want := range []string{"worker-src 'self'", "connect-src 'self'", "script-src 'self'"} {
		if !strings.Contains(CSP, want) {
			t.Errorf("the page's policy %q lacks %s", CSP, want)
		}
	}
	if strings.Contains(CSP+WorkerCSP, "unsafe") {
		t.Errorf("a policy allows something unsafe: %q, %q", CSP, WorkerCSP)
	}
}
