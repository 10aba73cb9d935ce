package sandbox_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"foundry/internal/sandbox"
)

// TestNewNeedsTheRuntime: without the runtime's script and stylesheet the
// page is not served, and the error says how to rebuild; names that are
// not the runtime's are ignored.
func TestNewNeedsTheRuntime(t *testing.T) {
	for _, files := range []map[string][]byte{
		nil,
		{"runtime-A.js": []byte("x")},
		{"runtime-A.css": []byte("x")},
		{"app-A.js": []byte("x"), "app-A.css": []byte("x")},
		{"../runtime-A.js": []byte("x"), "runtime-A.css": []byte("x")},
	} {
		if _, err := sandbox.New(files); err == nil || !strings.Contains(err.Error(), "go generate") {
			t.Errorf("New(%v) = %v, want an error saying to rebuild", keys(files), err)
		}
	}
}

// TestServe: the page loads the runtime by its names, with the policy; the
// runtime's files are served with their types, other names are not found.
func TestServe(t *testing.T) {
	h, err := sandbox.New(map[string][]byte{"runtime-ABC.js": []byte("void 0"), "runtime-DEF.css": []byte("p{}"), "notes.txt": []byte("no")})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Mount(mux)
	get := func(path string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		return w
	}
	page := get(sandbox.Path)
	body := page.Body.String()
	if page.Code != 200 || page.Header().Get("Content-Security-Policy") != sandbox.CSP || !strings.Contains(body, `<script src="/sandbox/runtime-ABC.js"></script>`) || !strings.Contains(body, `href="/sandbox/runtime-DEF.css"`) {
		t.Fatalf("the page: %d %v\n%s", page.Code, page.Header(), body)
	}
	if string(h.Page()) != body {
		t.Errorf("Page() is not what is served")
	}
	for path, ct := range map[string]string{"/sandbox/runtime-ABC.js": "text/javascript; charset=utf-8", "/sandbox/runtime-DEF.css": "text/css; charset=utf-8"} {
		w := get(path)
		if w.Code != 200 || w.Header().Get("Content-Type") != ct || w.Header().Get("X-Content-Type-Options") != "nosniff" || w.Header().Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s: %d %v", path, w.Code, w.Header())
		}
	}
	for _, path := range []string{"/sandbox/notes.txt", "/sandbox/runtime-XYZ.js", "/sandbox/"} {
		if w := get(path); w.Code != 404 {
			t.Errorf("%s: %d, want 404", path, w.Code)
		}
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
