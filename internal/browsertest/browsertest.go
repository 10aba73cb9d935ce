// Package browsertest runs the people-facing pages in a real headless
// Chromium for tests, and photographs them into docs/screenshots.
//
// Chromium is Debian's chromium package (/usr/bin/chromium), or the binary
// FOUNDRY_CHROMIUM names. Without it a browser test skips with a message,
// unless FOUNDRY_TEST_BROWSER=required (as in CI), when it fails. Under
// go test -short every browser test skips.
//
// FOUNDRY_TEST_BROWSER_SLOWDOWN=N runs the pages' CPU N times slower, and
// FOUNDRY_TEST_BROWSER_LATE_FRAMES=MS their animation frames MS late, to
// bring out a test or a page that races a loaded machine.
//
// Screenshots are written only when FOUNDRY_SCREENSHOTS=1, so an ordinary
// test run never changes the committed pictures; nothing compares them.
package browsertest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Width and Height are the browser window's size.
const (
	Width  = 1280
	Height = 900
)

// Timeout bounds each browser test as a whole: every action in it runs
// under a context that ends then.
const Timeout = 2 * time.Minute

// Chromium is the browser binary a test would run: FOUNDRY_CHROMIUM, or
// the first of chromium and chromium-browser found on PATH or in /usr/bin.
func Chromium() (string, error) {
	if p := os.Getenv("FOUNDRY_CHROMIUM"); p != "" {
		found, err := exec.LookPath(p)
		if err != nil {
			return "", fmt.Errorf("FOUNDRY_CHROMIUM=%s: %v; point it at a Chromium binary or unset it", p, err)
		}
		return found, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if found, err := exec.LookPath(name); err == nil {
			return found, nil
		}
	}
	return "", errors.New("no Chromium found (looked for chromium and chromium-browser): install Debian's chromium package (apt-get install chromium) or set FOUNDRY_CHROMIUM")
}

// Flags are Chromium's command-line switches, besides the window size,
// the profile folder and the debugging connection chromedp adds: headless,
// no GPU, and none of the browser's own traffic (updates, sync, background
// fetches), so pages reach only the test's servers.
var Flags = []string{"headless", "no-sandbox", "disable-gpu", "disable-background-networking", "disable-component-update", "disable-sync"}

// New starts a headless Chromium for t and answers a context whose actions
// (chromedp.Run) drive its one tab. The browser is closed when t ends.
// Every request the tab makes is checked at the end to have gone to
// 127.0.0.1 or localhost only.
func New(t testing.TB) context.Context {
	t.Helper()
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	path, err := Chromium()
	if err != nil {
		if os.Getenv("FOUNDRY_TEST_BROWSER") == "required" {
			t.Fatalf("FOUNDRY_TEST_BROWSER=required: %v", err)
		}
		t.Skipf("browser test skipped: %v (set FOUNDRY_TEST_BROWSER=required to fail instead)", err)
	}
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(path)}
	for _, f := range Flags {
		opts = append(opts, chromedp.Flag(f, true))
	}
	opts = append(opts, chromedp.WindowSize(Width, Height), chromedp.UserDataDir(t.TempDir()))
	base, cancelTimeout := context.WithTimeout(context.Background(), Timeout)
	actx, cancelAlloc := chromedp.NewExecAllocator(base, opts...)
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))

	var mu sync.Mutex
	var outside []string
	stop := func() { cancelTab(); cancelAlloc(); cancelTimeout() }
	err = chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok && e.Request != nil && !loopback(e.Request.URL) {
			mu.Lock()
			outside = append(outside, e.Request.URL)
			mu.Unlock()
		}
	})
	if err == nil {
		_, err = chromedp.Call(ctx, network.Enable, network.EnableParams{})
	}
	if err == nil {
		err = slowPage(ctx)
	}
	if err != nil {
		stop()
		t.Fatalf("starting Chromium (%s): %v", path, err)
	}
	t.Cleanup(func() {
		stop()
		mu.Lock()
		defer mu.Unlock()
		if len(outside) > 0 {
			t.Errorf("the page made requests beyond 127.0.0.1 and localhost: %v", outside)
		}
	})
	return ctx
}

// Poll is chromedp.Poll of a JavaScript condition on the tab's page.
// chromedp.Poll runs in the execution context chromedp last learned of
// for the page; right after a navigation (a Navigate, a Reload, a form
// that posts) it can still hold the old document's, since it learns of the
// new one on another goroutine than the one that saw the page load, and
// the poll fails with "Cannot find context with specified id". Poll then
// polls again, in the new one.
func Poll(expression string, opts ...chromedp.PollOption) chromedp.Action[chromedp.Void] {
	poll := chromedp.Poll[chromedp.Void](expression, opts...)
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		for {
			v, err := poll(ctx, t)
			var e *cdproto.Error
			if !errors.As(err, &e) || !strings.Contains(e.Message, "Cannot find context with specified id") {
				return v, err
			}
			select {
			case <-ctx.Done():
				return v, ctx.Err()
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
}

// SlowdownEnv names the variable that slows the page's CPU by its factor
// (FOUNDRY_TEST_BROWSER_SLOWDOWN=4: four times slower), as a loaded machine
// does, to bring out a test that races the page.
const SlowdownEnv = "FOUNDRY_TEST_BROWSER_SLOWDOWN"

// LateFramesEnv names the variable that runs every requestAnimationFrame
// callback that many milliseconds late (FOUNDRY_TEST_BROWSER_LATE_FRAMES=50),
// as a frame comes late on a loaded machine, to bring out a page that
// does something "on the next frame" after the person has moved on.
const LateFramesEnv = "FOUNDRY_TEST_BROWSER_LATE_FRAMES"

// slowPage applies SlowdownEnv and LateFramesEnv to ctx's tab.
func slowPage(ctx context.Context) error {
	if v := os.Getenv(SlowdownEnv); v != "" {
		rate, err := strconv.ParseFloat(v, 64)
		if err != nil || rate < 1 {
			return fmt.Errorf("%s=%s: want a factor of at least 1, such as 4", SlowdownEnv, v)
		}
		if _, err := chromedp.Call(ctx, emulation.SetCPUThrottlingRate, emulation.SetCPUThrottlingRateParams{Rate: rate}); err != nil {
			return err
		}
	}
	if v := os.Getenv(LateFramesEnv); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms < 0 {
			return fmt.Errorf("%s=%s: want milliseconds, such as 50", LateFramesEnv, v)
		}
		late := fmt.Sprintf(`(() => { const raf = window.requestAnimationFrame.bind(window);
			window.requestAnimationFrame = (cb) => { setTimeout(() => raf(cb), %d); return 0; }; })()`, ms)
		if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: late}); err != nil {
			return err
		}
	}
	return nil
}

// loopback reports whether a request URL stays on this machine (data: and
// about: URLs never leave it).
func loopback(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	switch u.Scheme {
	case "data", "about", "blob":
		return true
	case "http", "https", "ws", "wss":
		h := u.Hostname()
		return h == "127.0.0.1" || h == "localhost" || h == "::1"
	}
	return false
}

// Enabled reports whether Screenshot writes files: FOUNDRY_SCREENSHOTS=1.
func Enabled() bool { return os.Getenv("FOUNDRY_SCREENSHOTS") == "1" }

// Screenshot photographs the whole page of ctx's tab as PNG. When Enabled
// it writes docs/screenshots/<name>.png under the module root; otherwise it
// still takes the picture (the page must render) and writes nothing.
func Screenshot(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	if name == "" || strings.ContainsAny(name, `/\.`) {
		t.Fatalf("screenshot name %q: use a plain name such as consent-phone", name)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if len(png) == 0 {
		t.Fatalf("screenshot %s: Chromium returned an empty picture", name)
	}
	if !Enabled() {
		return
	}
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "docs", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote docs/screenshots/%s.png (%d KB)", name, len(png)/1024)
}

// ModuleRoot is the nearest folder at or above the working directory
// holding go.mod (a test runs in its package's folder).
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for range 64 {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", errors.New("no go.mod at or above the working directory: run the test from inside the module")
}

// PhoneWidth and PhoneHeight are the screen Phone emulates, in CSS pixels.
const (
	PhoneWidth  = 390
	PhoneHeight = 844
)

// Phone lays the tab out as a phone's screen: PhoneWidth × PhoneHeight CSS
// pixels at twice the density, mobile and touch. Desktop undoes it.
func Phone() chromedp.Action[chromedp.Void] {
	return chromedp.EmulateViewport(PhoneWidth, PhoneHeight, chromedp.EmulateScale(2), chromedp.EmulateMobile)
}

// Desktop lays the tab out in the browser's own window again.
func Desktop() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := cdp.Call(ctx, t, emulation.ClearDeviceMetricsOverride, cdp.Empty{}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, t, emulation.SetTouchEmulationEnabled, emulation.SetTouchEmulationEnabledParams{Enabled: false})
		return err
	})
}

// ColorScheme emulates the person's choice of light or dark pages
// (prefers-color-scheme): "dark", "light", or "" for the browser's own.
func ColorScheme(scheme string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		})
		return err
	})
}
