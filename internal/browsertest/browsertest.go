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
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Width and Height are the size of a tab's page, in CSS pixels.
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
// no GPU, none of the browser's own traffic (updates, sync, background
// fetches), so pages reach only the test's servers, and no tab slowed or
// hidden for being behind another (the tests' tabs run side by side, each
// in a window of its own): a hidden page gets no animation frames, and its
// timers are throttled.
var Flags = []string{"headless", "no-sandbox", "disable-gpu", "disable-background-networking", "disable-component-update", "disable-sync",
	"disable-background-timer-throttling", "disable-backgrounding-occluded-windows", "disable-renderer-backgrounding"}

// New answers a context whose actions (chromedp.Run) drive a tab of its
// own in a headless Chromium, closed when t ends. The tests of one test
// binary share one Chromium (started by the first New, ended by Close),
// each test's tab in a browser context of its own: its own cookies,
// storage and cache, as a separate browser profile has. Every request the
// tab makes is checked at the end to have gone to 127.0.0.1 or localhost
// only.
func New(t testing.TB) context.Context {
	t.Helper()
	path := chromiumOrSkip(t)
	bctx, err := browser(path)
	if err != nil {
		t.Fatalf("starting Chromium (%s): %v", path, err)
	}
	return openTab(t, bctx, path, nil)
}

// NewMapped is New for a server reached by DNS names of its own, as a
// person reaches a deployment: Chromium resolves each of hosts to
// 127.0.0.1 (--host-resolver-rules), and accepts a certificate chain that
// holds a key of spki (base64 SHA-256 hashes of SubjectPublicKeyInfo,
// --ignore-certificate-errors-spki-list), for a CA only the test knows;
// every other certificate is checked as usual. These switches are the
// whole browser's, so it is a Chromium of its own, ended when t ends.
// Requests to hosts count as staying on this machine.
func NewMapped(t testing.TB, hosts, spki []string) context.Context {
	t.Helper()
	path := chromiumOrSkip(t)
	rules := make([]string, len(hosts))
	for i, h := range hosts {
		rules[i] = "MAP " + h + " 127.0.0.1"
	}
	opts := append(allocatorOptions(path),
		chromedp.Flag("host-resolver-rules", strings.Join(rules, ",")),
		chromedp.Flag("ignore-certificate-errors-spki-list", strings.Join(spki, ",")))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelBrowser(); cancelAlloc() })
	if _, err := chromedp.Run(bctx, chromedp.Steps()); err != nil {
		t.Fatalf("starting Chromium (%s): %v", path, err)
	}
	return openTab(t, bctx, path, hosts)
}

// chromiumOrSkip is the Chromium to run, or the test skipped (or failed,
// with FOUNDRY_TEST_BROWSER=required) without one.
func chromiumOrSkip(t testing.TB) string {
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
	return path
}

// openTab opens a tab of its own in the browser of bctx, and checks when t
// ends that its requests went to 127.0.0.1, localhost or mapped only.
func openTab(t testing.TB, bctx context.Context, path string, mapped []string) context.Context {
	t.Helper()
	base, cancelTimeout := context.WithTimeout(bctx, Timeout)
	ctx, cancelTab := chromedp.NewContext(base, chromedp.WithNewBrowserContext())
	stop := func() { cancelTab(); cancelTimeout() }

	var mu sync.Mutex
	var outside []string
	err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok && e.Request != nil && !loopback(e.Request.URL, mapped) {
			mu.Lock()
			outside = append(outside, e.Request.URL)
			mu.Unlock()
		}
	})
	if err == nil {
		_, err = chromedp.Call(ctx, network.Enable, network.EnableParams{})
	}
	if err == nil {
		_, err = chromedp.Run(ctx, Desktop())
	}
	if err == nil {
		// Each tab behaves as the focused window (document.hasFocus()),
		// also while other tests' tabs run beside it.
		_, err = chromedp.Call(ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true})
	}
	if err == nil {
		err = slowPage(ctx)
	}
	if err != nil {
		stop()
		t.Fatalf("opening a tab in Chromium (%s): %v", path, err)
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

// Click is chromedp.Click of the first node sel matches, once that node is
// what a person would hit at its center: chromedp.Click scrolls a node only
// when it is out of the window, so a node under the page's sticky top bar
// (or anything else drawn over it) took the click meant for it. Click
// scrolls such a node to the middle of the window first.
func Click[S chromedp.Selectable](sel S, opts ...chromedp.QueryOption) chromedp.Action[chromedp.Void] {
	return click(sel, 1, opts)
}

// DoubleClick is Click with two clicks, as chromedp.DoubleClick.
func DoubleClick[S chromedp.Selectable](sel S, opts ...chromedp.QueryOption) chromedp.Action[chromedp.Void] {
	return click(sel, 2, opts)
}

// uncover scrolls the node it is called on to the middle of the window
// unless it is the node (or inside the node) found at its center.
const uncover = `function () {
	const r = this.getBoundingClientRect(), x = r.left + r.width / 2, y = r.top + r.height / 2;
	const root = this.getRootNode().elementFromPoint ? this.getRootNode() : document;
	const at = x >= 0 && y >= 0 && x < innerWidth && y < innerHeight ? root.elementFromPoint(x, y) : null;
	if (!at || !(at === this || this.contains(at))) this.scrollIntoView({ block: "center", inline: "center" });
}`

// click finds the node and clicks it. A page that renders again between
// the two (a list re-read on a live event) removes the node found, and the
// click fails with "Could not find node with given id"; the node is then
// found again, as a person's next look at the page would find it.
func click[S chromedp.Selectable](sel S, count int, opts []chromedp.QueryOption) chromedp.Action[chromedp.Void] {
	once := clickOnce(sel, count, opts)
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		for attempt := 1; ; attempt++ {
			v, err := once(ctx, t)
			var e *cdproto.Error
			if attempt == 20 || !errors.As(err, &e) || !strings.Contains(e.Message, "given id") {
				return v, err
			}
			select {
			case <-ctx.Done():
				return v, ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
}

func clickOnce[S chromedp.Selectable](sel S, count int, opts []chromedp.QueryOption) chromedp.Action[chromedp.Void] {
	opts = append(opts[:len(opts):len(opts)], chromedp.NodeVisible)
	return chromedp.QueryAfter(sel, func(ctx context.Context, t *chromedp.Target, nodes []*chromedp.Node) (chromedp.Void, error) {
		if len(nodes) == 0 {
			return chromedp.Void{}, fmt.Errorf("selector %v did not return any nodes", sel)
		}
		n := nodes[0]
		obj, err := cdp.Call(ctx, t, dom.ResolveNode, dom.ResolveNodeParams{NodeID: n.NodeID})
		if err != nil {
			return chromedp.Void{}, err
		}
		if _, err := cdp.Call(ctx, t, runtime.CallFunctionOn, runtime.CallFunctionOnParams{FunctionDeclaration: uncover, ObjectID: obj.Object.ObjectID}); err != nil {
			return chromedp.Void{}, err
		}
		return chromedp.MouseClickNode(n, chromedp.ClickCount(count))(ctx, t)
	}, opts...)
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

// shared is the Chromium that a test binary's browser tests share.
var shared struct {
	mu   sync.Mutex
	path string
	ctx  context.Context // its first tab, which stays blank
	stop context.CancelFunc
}

// browser answers the shared Chromium of path, started now if it is not
// running (the first test, or a browser that exited).
func browser(path string) (context.Context, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.ctx != nil && shared.ctx.Err() == nil && shared.path == path {
		return shared.ctx, nil
	}
	if shared.stop != nil {
		shared.stop()
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), allocatorOptions(path)...)
	ctx, cancelTab := chromedp.NewContext(actx)
	stop := func() { cancelTab(); cancelAlloc() }
	if _, err := chromedp.Run(ctx, chromedp.Steps()); err != nil {
		stop()
		shared.ctx, shared.stop = nil, nil
		return nil, err
	}
	shared.path, shared.ctx, shared.stop = path, ctx, stop
	return ctx, nil
}

// allocatorOptions start the Chromium at path with Flags.
func allocatorOptions(path string) []chromedp.ExecAllocatorOption {
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(path), chromedp.WindowSize(Width, Height)}
	for _, f := range Flags {
		opts = append(opts, chromedp.Flag(f, true))
	}
	if v, ok := ctypeLocale(); !ok {
		// Without a UTF-8 locale (a bare container has none) Chromium
		// cannot take a file path that is not ASCII: an upload of
		// "report é.pdf" sets no file.
		opts = append(opts, chromedp.Env(v+"=C.UTF-8"))
	}
	// No UserDataDir: chromedp makes a temporary profile folder and removes
	// it when the browser ends.
	return opts
}

// ctypeLocale names the variable that sets the C library's character
// type (LC_ALL, else LC_CTYPE, else LANG; LC_CTYPE when none is set) and
// reports whether it is UTF-8.
func ctypeLocale() (name string, utf8 bool) {
	for _, v := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if l := strings.ToLower(os.Getenv(v)); l != "" {
			return v, strings.Contains(l, "utf-8") || strings.Contains(l, "utf8")
		}
	}
	return "LC_CTYPE", false
}

// Close ends the shared Chromium and removes its profile folder. A
// package whose tests call New calls it from TestMain after m.Run (without
// it the kernel ends the browser with the test binary, and the folder
// stays).
func Close() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.stop != nil {
		shared.stop()
	}
	shared.ctx, shared.stop = nil, nil
}

// loopback reports whether a request URL stays on this machine (data: and
// about: URLs never leave it; mapped names resolve to 127.0.0.1).
func loopback(raw string, mapped []string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	switch u.Scheme {
	case "data", "about", "blob":
		return true
	case "http", "https", "ws", "wss":
		h := u.Hostname()
		return h == "127.0.0.1" || h == "localhost" || h == "::1" || slices.Contains(mapped, h)
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
	screenshot(t, ctx, name, chromedp.FullScreenshot(100))
}

// WindowScreenshot is Screenshot of what the window shows, where the page
// is scrolled to: the part of a long page a test shows.
func WindowScreenshot(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	screenshot(t, ctx, name, chromedp.CaptureScreenshot())
}

func screenshot(t testing.TB, ctx context.Context, name string, take chromedp.Action[[]byte]) {
	t.Helper()
	if name == "" || strings.ContainsAny(name, `/\.`) {
		t.Fatalf("screenshot name %q: use a plain name such as consent-phone", name)
	}
	png, err := chromedp.Run(ctx, take)
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

// Desktop lays the tab out as New opens it: a desktop window of Width ×
// Height CSS pixels, without touch. (A tab of the shared browser has a
// window of its own, whose inner height differs from the first tab's:
// every tab is laid out at exactly this size instead.)
func Desktop() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := cdp.Call(ctx, t, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: Width, Height: Height, DeviceScaleFactor: 1}); err != nil {
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
