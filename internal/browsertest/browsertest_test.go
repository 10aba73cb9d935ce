package browsertest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

func TestMain(m *testing.M) {
	code := m.Run()
	Close()
	os.Exit(code)
}

func TestLoopback(t *testing.T) {
	for raw, want := range map[string]bool{
		"http://127.0.0.1:8080/signin":   true,
		"http://localhost:1/cb?code=x":   true,
		"https://127.0.0.1:4443/c.json":  true,
		"data:image/png;base64,AAAA":     true,
		"about:blank":                    true,
		"https://example.com/":           false,
		"http://127.0.0.1.example.com/":  false,
		"http://10.0.0.1/":               false,
		"ftp://127.0.0.1/":               false,
		"http://[::1]:9/":                true,
		"http://localhost.example.com/x": false,
		"%zz":                            false,
	} {
		if got := loopback(raw, nil); got != want {
			t.Errorf("loopback(%q) = %v, want %v", raw, got, want)
		}
	}
	// A name the browser maps to 127.0.0.1 stays too; no other does.
	mapped := []string{"foundry.test"}
	for raw, want := range map[string]bool{
		"https://foundry.test:8443/":       true,
		"https://foundry.test.example/":    false,
		"https://www.foundry.test/":        false,
		"http://127.0.0.1:8080/signin":     true,
		"https://example.com/foundry.test": false,
	} {
		if got := loopback(raw, mapped); got != want {
			t.Errorf("loopback(%q, %q) = %v, want %v", raw, mapped, got, want)
		}
	}
}

func TestChromiumFromEnvironment(t *testing.T) {
	t.Setenv("FOUNDRY_CHROMIUM", filepath.Join(t.TempDir(), "no-such-browser"))
	if _, err := Chromium(); err == nil || !strings.Contains(err.Error(), "FOUNDRY_CHROMIUM") {
		t.Fatalf("a missing FOUNDRY_CHROMIUM: %v, want an error naming it", err)
	}
}

func TestModuleRoot(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("ModuleRoot %s has no go.mod: %v", root, err)
	}
	if _, err := os.Stat(filepath.Join(root, "internal", "browsertest")); err != nil {
		t.Fatalf("ModuleRoot %s is not this module's root: %v", root, err)
	}
}

// TestNewDrivesAPage: the browser starts with its flags, loads a page from
// a loopback server, runs its form, and photographs it.
func TestNewDrivesAPage(t *testing.T) {
	var posted string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			r.ParseForm()
			posted = r.PostForm.Get("q")
			w.Write([]byte(`<!doctype html><title>done</title><p id="r">got it</p>`))
			return
		}
		w.Write([]byte(`<!doctype html><title>form</title><form method="post"><input id="q" name="q"><button id="go">Go</button></form>`))
	}))
	defer srv.Close()
	ctx := New(t)
	err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL),
		chromedp.SendKeys(chromedp.ID("q"), "héllo ✓"),
		chromedp.Click(chromedp.ID("go")),
		chromedp.WaitVisible(chromedp.ID("r")),
	)
	if err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("r")))
	if err != nil {
		t.Fatal(err)
	}
	width, err := chromedp.Run(ctx, chromedp.Evaluate[int](`window.innerWidth`))
	if err != nil {
		t.Fatal(err)
	}
	if text != "got it" || posted != "héllo ✓" {
		t.Fatalf("page text %q, posted %q", text, posted)
	}
	height, err := chromedp.Run(ctx, chromedp.Evaluate[int](`window.innerHeight`))
	if err != nil {
		t.Fatal(err)
	}
	if width != Width || height != Height {
		t.Errorf("window %d × %d, want %d × %d", width, height, Width, Height)
	}
	t.Setenv("FOUNDRY_SCREENSHOTS", "")
	Screenshot(t, ctx, "browsertest-self") // taken, not written
	root, _ := ModuleRoot()
	if _, err := os.Stat(filepath.Join(root, "docs", "screenshots", "browsertest-self.png")); err == nil {
		t.Fatal("a screenshot was written without FOUNDRY_SCREENSHOTS=1")
	}
}

// TestTabsAreSeparateProfiles: two tabs of the shared Chromium keep their
// own cookies and storage, as two people's browsers do; a tab closed with
// its test leaves the next test's tab alone.
func TestTabsAreSeparateProfiles(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/set" {
			http.SetCookie(w, &http.Cookie{Name: "who", Value: "first", Path: "/"})
		}
		w.Write([]byte(`<!doctype html><title>cookie</title><p id="c"></p>`))
	}))
	defer srv.Close()
	seen := func(ctx context.Context) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.cookie + " " + (localStorage.getItem("who") ?? "")`))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(v)
	}
	first, second := New(t), New(t)
	if err := chromedp.Do(first, chromedp.Navigate(srv.URL+"/set"), chromedp.Evaluate[chromedp.Void](`localStorage.setItem("who", "first")`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(second, chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	if got := seen(first); got != "who=first first" {
		t.Errorf("the first tab sees %q, want its cookie and storage", got)
	}
	if got := seen(second); got != "" {
		t.Errorf("the second tab sees %q: the first tab's cookie or storage", got)
	}
}

// TestCtypeLocale: the variable that decides the character type, and
// whether it is UTF-8, as the C library reads them.
func TestCtypeLocale(t *testing.T) {
	for _, c := range []struct {
		all, ctype, lang string
		name             string
		utf8             bool
	}{
		{"", "", "", "LC_CTYPE", false},
		{"", "", "C.UTF-8", "LANG", true},
		{"", "", "en_US.utf8", "LANG", true},
		{"", "POSIX", "C.UTF-8", "LC_CTYPE", false},
		{"C", "", "C.UTF-8", "LC_ALL", false},
		{"de_DE.UTF-8", "C", "", "LC_ALL", true},
	} {
		t.Setenv("LC_ALL", c.all)
		t.Setenv("LC_CTYPE", c.ctype)
		t.Setenv("LANG", c.lang)
		if name, utf8 := ctypeLocale(); name != c.name || utf8 != c.utf8 {
			t.Errorf("LC_ALL=%q LC_CTYPE=%q LANG=%q: %s, UTF-8 %v; want %s, %v", c.all, c.ctype, c.lang, name, utf8, c.name, c.utf8)
		}
	}
}
