package account

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"foundry/internal/auth"
	"foundry/internal/problem"
	"foundry/internal/ratelimit"
	"foundry/internal/store"
)

// Options configure a Manager. Zero values are the defaults.
type Options struct {
	// PublicURL is the URL people reach this server at; with https://
	// cookies are Secure, and its origin is trusted by Protect.
	PublicURL string
	Logger    *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
	// SessionLifetime is how long a browser session lasts (default 14 days).
	SessionLifetime time.Duration
	// AccountAddressFailures and AddressFailures are the failed sign-ins
	// allowed per account from one client address and per client address
	// in ThrottleWindow (defaults 5, 20 and 15 minutes). After
	// AccountBackoffAfter failures of an account from every address
	// (default 10), each sign-in of it without its device cookie waits a
	// doubling time from the last failure, 1 s up to AccountBackoffMax
	// (default 15 minutes). See throttle.go.
	AccountAddressFailures, AddressFailures int
	ThrottleWindow                          time.Duration
	AccountBackoffAfter                     int
	AccountBackoffMax                       time.Duration
	// PasswordHashes bounds the password hashes (sign-ins, passwords set
	// with a link) computed at once, each taking HashBytes of memory
	// (default: HashSlots of the Go memory limit); PasswordHashWait is how
	// long a sign-in waits for one before it is answered 429 (default
	// DefaultHashWait).
	PasswordHashes   int
	PasswordHashWait time.Duration
}

// Manager signs people in and out and knows their sessions; it implements
// auth.People. Sessions and the sign-in throttle's counters live in the
// store, so every node knows every session and counts every failure.
type Manager struct {
	st        store.Store
	log       *slog.Logger
	now       func() time.Time
	publicURL string
	secure    bool
	lifetime  time.Duration
	cop       *http.CrossOriginProtection
	limits    limits
	keyMu     sync.Mutex
	devKey    []byte // the device cookies' HMAC key, once read
	hashes    *hashGate
	signIns   signInStats
}

var _ auth.People = (*Manager)(nil)

// New makes a Manager on st.
func New(st store.Store, o Options) *Manager {
	m := &Manager{st: st, log: o.Logger, now: o.Now, publicURL: strings.TrimRight(o.PublicURL, "/"), lifetime: o.SessionLifetime}
	if m.log == nil {
		m.log = slog.Default()
	}
	if m.now == nil {
		m.now = time.Now
	}
	if m.lifetime <= 0 {
		m.lifetime = 14 * 24 * time.Hour
	}
	window, backoffMax := o.ThrottleWindow, o.AccountBackoffMax
	if window <= 0 {
		window = 15 * time.Minute
	}
	if backoffMax <= 0 {
		backoffMax = 15 * time.Minute
	}
	m.limits = limits{pair: orDefault(o.AccountAddressFailures, 5), address: orDefault(o.AddressFailures, 20), window: window,
		backoffAfter: orDefault(o.AccountBackoffAfter, 10), backoffBase: time.Second, backoffMax: backoffMax}
	m.hashes = newHashGate(o.PasswordHashes, o.PasswordHashWait)
	m.cop = http.NewCrossOriginProtection()
	if u, err := url.Parse(m.publicURL); err == nil && u.Host != "" {
		m.secure = u.Scheme == "https"
		// Behind a proxy that rewrites Host, the public origin is still
		// this server's own.
		if err := m.cop.AddTrustedOrigin(u.Scheme + "://" + u.Host); err != nil {
			m.log.Warn("the public URL's origin cannot be trusted for forms", "public_url", m.publicURL, "err", err)
		}
	}
	m.cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.forbidden(w, r, "This request came from another site, so it was refused. Open this page on Foundry itself and try again.")
	}))
	return m
}

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// Cookie names and limits.
const (
	// formCookie is the sign-in and setup forms' double-submit token: those
	// forms have no session yet to carry a CSRF token.
	formCookie = "foundry_csrf"
	// maxFormBytes bounds a people-facing form's body.
	maxFormBytes = 64 << 10
	// maxNextBytes bounds the return path kept across sign-in.
	maxNextBytes = 4096
)

// Protect refuses cross-origin unsafe requests (POST, PUT, DELETE, …)
// from browsers, with http.CrossOriginProtection; the public URL's origin
// is trusted. Wrap every people-facing route with it, and still check the
// CSRF token (CheckCSRF) on every form and mutating request.
func (m *Manager) Protect(h http.Handler) http.Handler { return m.cop.Handler(h) }

// Mount adds the sign-in routes to mux, each wrapped with Protect:
// GET and POST /signin, POST /signout, GET and POST /setup, GET / (who is
// signed in) and the stylesheet.
func (m *Manager) Mount(mux *http.ServeMux) {
	for pattern, h := range map[string]http.HandlerFunc{
		"GET /signin":           m.signinForm,
		"POST /signin":          m.signin,
		"POST /signout":         m.signout,
		"GET " + SetupPath:      m.setupForm,
		"POST " + SetupPath:     m.setup,
		"GET /{$}":              m.home,
		"GET " + StylesheetPath: serveStylesheet,
	} {
		mux.Handle(pattern, m.Protect(h))
	}
}

// Current is the person signed in on r: a known, unexpired session whose
// user still exists in the session's workspace.
func (m *Manager) Current(r *http.Request) (auth.Person, bool) {
	c, err := r.Cookie(auth.SessionCookie)
	if err != nil || c.Value == "" || len(c.Value) > 128 {
		return auth.Person{}, false
	}
	s, err := m.st.SessionByHash(r.Context(), auth.HashToken(c.Value), m.now())
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			m.log.ErrorContext(r.Context(), "reading a session", "err", err)
		}
		return auth.Person{}, false
	}
	u, err := m.st.UserByID(r.Context(), s.User)
	if err != nil || u.Workspace != s.Workspace {
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			m.log.ErrorContext(r.Context(), "reading a session's user", "err", err)
		}
		return auth.Person{}, false
	}
	return auth.Person{User: u, Session: s}, true
}

// SignInURL is /signin?next=returnTo; a returnTo that is not a path on
// this server is dropped (the person lands on / after signing in).
func (m *Manager) SignInURL(returnTo string) string {
	if next := SafeNext(returnTo); next != "/" {
		return "/signin?next=" + url.QueryEscape(next)
	}
	return "/signin"
}

// CheckCSRF reports whether r carries p's CSRF token, in the header
// auth.CSRFHeader or the form field auth.CSRFField (the form is parsed
// within a 64 KiB limit if it was not), compared in constant time.
func (m *Manager) CheckCSRF(r *http.Request, p auth.Person) bool {
	got := r.Header.Get(auth.CSRFHeader)
	if got == "" {
		got = formValue(r, auth.CSRFField)
	}
	return tokensEqual(got, p.Session.CSRF)
}

func tokensEqual(got, want string) bool {
	return got != "" && want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// formValue parses r's form if it was not (bounded) and reads one field of
// the body (never of the URL's query).
func formValue(r *http.Request, field string) string {
	if r.PostForm == nil {
		if r.Body != nil {
			r.Body = http.MaxBytesReader(nil, r.Body, maxFormBytes)
		}
		if r.ParseForm() != nil {
			return ""
		}
	}
	return r.PostForm.Get(field)
}

// SafeNext is next if it is a path on this server (with its query), and
// "/" otherwise: never another host (//host, /\host, a URL with a scheme),
// never a control character or space, never a path with empty or dot
// segments, never the sign-in pages themselves.
func SafeNext(next string) string {
	if next == "" || len(next) > maxNextBytes || next[0] != '/' || strings.HasPrefix(next, "//") ||
		strings.ContainsRune(next, '\\') || strings.ContainsFunc(next, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) }) {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" || !strings.HasPrefix(u.Path, "/") || strings.HasPrefix(u.Path, "//") {
		return "/"
	}
	// Only a clean path: no empty or dot segments a later resolution
	// could turn into //host.
	clean := path.Clean(u.Path)
	if strings.HasSuffix(u.Path, "/") && clean != "/" {
		clean += "/"
	}
	if clean != u.Path {
		return "/"
	}
	switch u.Path {
	case "/signin", "/signout", SetupPath:
		return "/"
	}
	return next
}

// clientKey is the throttle key of r's address: the peer's IP (an IPv6
// address by its /64, which one host often holds whole). A proxy in front
// makes every person one address; the counter then throttles them together.
func clientKey(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

// retryText says when to try again, for a person: in seconds under a
// minute, otherwise in minutes and at what time.
func retryText(d time.Duration, at time.Time) string {
	if d < time.Minute {
		return "in " + plural(int(math.Ceil(d.Seconds())), "second")
	}
	return fmt.Sprintf("in %s (at %s UTC)", plural(int(math.Ceil(d.Minutes())), "minute"), at.UTC().Format("15:04"))
}

func retryAfter(d time.Duration) string { return strconv.Itoa(ratelimit.Seconds(d)) }

// problemText is an error for a person: a Problem's message named by its
// field's label, or a generic sentence (the error is logged).
func (m *Manager) problemText(err error, labels map[string]string) string {
	var p *problem.Problem
	if errors.As(err, &p) {
		if l, ok := labels[p.Field]; ok {
			return l + " " + p.Message
		}
		return p.Message
	}
	m.log.Error("sign-in pages", "err", err)
	return "Something went wrong on the server; try again in a moment."
}
