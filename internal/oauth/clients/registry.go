package clients

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"foundry/internal/store"
)

// Defaults of Options.
const (
	DefaultRegisterRate  = 20 // registrations per hour per client address
	DefaultRegisterBurst = 10
	DefaultCacheTTL      = 10 * time.Minute
	DefaultCacheSize     = 1000
)

// Bounds of how long a fetched document is cached: a Cache-Control max-age
// is honoured within them.
const (
	MinCacheTTL = time.Minute
	MaxCacheTTL = 24 * time.Hour
	// FailureTTL is how long a failed fetch is remembered, so a client ID
	// that fails is not fetched again on every request.
	FailureTTL = 30 * time.Second
	// MaxClientID is the longest client ID looked up.
	MaxClientID = 2048
)

// Options tune a Registry. The zero value is the production setting.
type Options struct {
	Logger *slog.Logger // nil: slog.Default()
	// RegisterRate is how many registrations one client address may make
	// per hour (0: DefaultRegisterRate; negative: no limit), with bursts of
	// RegisterBurst (0: DefaultRegisterBurst). IPv6 addresses count per /64.
	RegisterRate, RegisterBurst int
	// ClientAddr is the address a registration is counted against (nil:
	// the host of the request's RemoteAddr).
	ClientAddr func(*http.Request) string
	// HTTPClient fetches metadata documents (nil: NewHTTPClient(Guard{})).
	// Whatever it is, redirects are not followed, no cookies are sent, and
	// a fetch ends after FetchTimeout; its transport must dial through a
	// Guard (NewHTTPClient) for the address checks.
	HTTPClient *http.Client
	// CacheTTL is how long a fetched document is used when its response has
	// no Cache-Control max-age (0: DefaultCacheTTL), within [MinCacheTTL,
	// MaxCacheTTL].
	CacheTTL time.Duration
	// CacheSize bounds how many documents one node caches (0:
	// DefaultCacheSize).
	CacheSize int
	Now       func() time.Time // nil: time.Now
}

// Registry knows the OAuth clients: stored ones (registered with /register
// or `foundry client add`) and those whose ID is the URL of a client ID
// metadata document.
type Registry struct {
	st     store.Store
	log    *slog.Logger
	now    func() time.Time
	http   *http.Client
	ttl    time.Duration
	size   int
	limits *limiter

	mu    sync.Mutex
	cache map[string]cached
	group singleflight.Group
}

type cached struct {
	client  store.Client
	err     error
	expires time.Time
}

// New makes a Registry on st.
func New(st store.Store, opts Options) *Registry {
	r := &Registry{st: st, log: opts.Logger, now: opts.Now, ttl: opts.CacheTTL, size: opts.CacheSize, cache: map[string]cached{}}
	if r.log == nil {
		r.log = slog.Default()
	}
	if r.now == nil {
		r.now = time.Now
	}
	if r.ttl == 0 {
		r.ttl = DefaultCacheTTL
	}
	r.ttl = min(max(r.ttl, MinCacheTTL), MaxCacheTTL)
	if r.size <= 0 {
		r.size = DefaultCacheSize
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = NewHTTPClient(Guard{})
	}
	c := *hc
	c.CheckRedirect, c.Jar = noRedirect, nil
	if c.Timeout <= 0 || c.Timeout > FetchTimeout {
		c.Timeout = FetchTimeout
	}
	r.http = &c
	rate, burst := opts.RegisterRate, opts.RegisterBurst
	if rate == 0 {
		rate = DefaultRegisterRate
	}
	if burst <= 0 {
		burst = DefaultRegisterBurst
	}
	addr := opts.ClientAddr
	if addr == nil {
		addr = remoteHost
	}
	if rate > 0 {
		r.limits = newLimiter(rate, burst, addr)
	}
	return r
}

// ErrDocument is what every failure to use a client ID metadata document
// is (errors.Is), a *DocumentError that says why. Such a failure is also
// store.ErrNotFound, so a caller that knows only the store's errors treats
// the client as unknown.
var ErrDocument = errors.New("client ID metadata document not usable")

// DocumentError says why the metadata document at a client ID cannot be
// used, in words fit for the consent or error page.
type DocumentError struct {
	ClientID string
	Reason   string
	Err      error // the cause, if any
}

func (e *DocumentError) Error() string {
	return fmt.Sprintf("client_id %s: %s", excerpt(e.ClientID), e.Reason)
}

func (e *DocumentError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrDocument, store.ErrNotFound}
	}
	return []error{ErrDocument, store.ErrNotFound, e.Err}
}

// IsURLClientID reports whether id is a URL (it contains "://"): such IDs
// are client ID metadata documents, never stored clients.
func IsURLClientID(id string) bool { return strings.Contains(id, "://") }

// Lookup finds the client with ID id: an https URL is the client ID
// metadata document there (fetched, checked and cached); any other ID is a
// stored client (store.ErrNotFound if there is none).
func (r *Registry) Lookup(ctx context.Context, id string) (store.Client, error) {
	if !IsURLClientID(id) {
		return r.st.Client(ctx, id)
	}
	if _, why := checkClientIDURL(id); why != "" {
		return store.Client{}, &DocumentError{ClientID: id, Reason: why}
	}
	now := r.now()
	r.mu.Lock()
	c, ok := r.cache[id]
	r.mu.Unlock()
	if ok && now.Before(c.expires) {
		return c.client, c.err
	}
	v, _, _ := r.group.Do(id, func() (any, error) {
		// One fetch for every caller waiting on this ID, unbound from any
		// one caller's cancellation.
		client, ttl, err := r.fetch(context.WithoutCancel(ctx), id)
		if err != nil {
			ttl = FailureTTL
			r.log.InfoContext(ctx, "client ID metadata document refused", "client_id", excerpt(id), "reason", err.Error())
		}
		e := cached{client: client, err: err, expires: r.now().Add(ttl)}
		r.put(id, e)
		return e, nil
	})
	e := v.(cached)
	return e.client, e.err
}

// put caches e, first making room: expired entries go, then the one that
// expires soonest.
func (r *Registry) put(id string, e cached) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.cache[id]; !ok && len(r.cache) >= r.size {
		now := r.now()
		for k, c := range r.cache {
			if !now.Before(c.expires) {
				delete(r.cache, k)
			}
		}
		for len(r.cache) >= r.size {
			var victim string
			var soonest time.Time
			for k, c := range r.cache {
				if victim == "" || c.expires.Before(soonest) {
					victim, soonest = k, c.expires
				}
			}
			delete(r.cache, victim)
		}
	}
	r.cache[id] = e
}

// checkClientIDURL checks a client ID URL as the client ID metadata
// document draft says: https, a path, no dot segments, no fragment, no
// user info.
func checkClientIDURL(id string) (*url.URL, string) {
	if len(id) > MaxClientID {
		return nil, fmt.Sprintf("is %d bytes long; a client ID URL has at most %d", len(id), MaxClientID)
	}
	if strings.ContainsFunc(id, func(r rune) bool { return r <= ' ' || r == 0x7f || r > 0x7e }) {
		return nil, "has spaces, control or non-ASCII characters"
	}
	u, err := url.Parse(id)
	if err != nil {
		return nil, "is not a URL"
	}
	switch {
	case u.Scheme != "https":
		return nil, "is not an https URL: a client ID metadata document is fetched over https only"
	case u.User != nil:
		return nil, "has user info (user@): a client ID URL must not"
	case u.Fragment != "" || strings.Contains(id, "#"):
		return nil, "has a fragment (#…): a client ID URL must not"
	case u.Hostname() == "":
		return nil, "has no host"
	case u.Path == "" || u.Opaque != "":
		return nil, "has no path: the document's URL names a file, e.g. https://app.example.com/oauth/client.json"
	}
	for _, seg := range strings.Split(u.EscapedPath(), "/") {
		if seg == "." || seg == ".." || strings.EqualFold(seg, "%2e") || strings.EqualFold(seg, "%2e%2e") || strings.EqualFold(seg, ".%2e") || strings.EqualFold(seg, "%2e.") {
			return nil, "has a . or .. path segment: a client ID URL must not"
		}
	}
	return u, ""
}

// fetch gets, checks and converts the document at id, and says how long it
// may be cached.
func (r *Registry) fetch(ctx context.Context, id string) (store.Client, time.Duration, error) {
	fail := func(err error, format string, args ...any) (store.Client, time.Duration, error) {
		return store.Client{}, 0, &DocumentError{ClientID: id, Reason: fmt.Sprintf(format, args...), Err: err}
	}
	u, why := checkClientIDURL(id)
	if why != "" {
		return fail(nil, "%s", why)
	}
	ctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fail(err, "is not a URL that can be fetched")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "Foundry")
	resp, err := r.http.Do(req)
	if err != nil {
		return fail(err, "%s", fetchFailure(u, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return fail(nil, "the server answered HTTP %d with a redirect to %s; redirects are not followed: serve the document at the client_id URL itself", resp.StatusCode, excerpt(resp.Header.Get("Location")))
	}
	if resp.StatusCode != http.StatusOK {
		return fail(nil, "the server answered HTTP %d instead of the document", resp.StatusCode)
	}
	ct := resp.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return fail(nil, "the document is served as %q; serve it as application/json", excerpt(ct))
	}
	if resp.ContentLength > MaxBody {
		return fail(nil, "the document is %d bytes; at most %d (64 KiB) are read", resp.ContentLength, MaxBody)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil {
		return fail(err, "reading the document failed: %v", err)
	}
	if len(body) > MaxBody {
		return fail(nil, "the document is larger than %d bytes (64 KiB)", MaxBody)
	}
	c, e := documentClient(id, body, r.now())
	if e != nil {
		return fail(e, "the document is not valid: %s", e.Error())
	}
	return c, r.cacheTTL(resp.Header), nil
}

// documentClient checks a metadata document and makes its client.
func documentClient(id string, body []byte, now time.Time) (store.Client, *Error) {
	var docID string
	m, e := parseMetadata(body, &docID)
	if e != nil {
		return store.Client{}, e
	}
	if docID != id {
		return store.Client{}, invalid("client_id", "is %q but the document is at %q: client_id must be exactly the URL the document is served at", excerpt(docID), excerpt(id))
	}
	if m, e = normalize(m, true); e != nil {
		return store.Client{}, e
	}
	meta, _ := json.Marshal(m)
	name := m.ClientName
	if name == "" {
		u, _ := url.Parse(id)
		name = u.Hostname()
	}
	return store.Client{
		ID: id, Name: name, RedirectURIs: m.RedirectURIs, GrantTypes: m.GrantTypes, Scopes: clientScopes(m),
		Kind: store.ClientMetadata, Metadata: meta, CreatedAt: now.UTC(),
	}, nil
}

// fetchFailure says why a request failed, without Go's wrapping.
func fetchFailure(u *url.URL, err error) string {
	var refused *RefusedError
	var dns *net.DNSError
	var cert *tls.CertificateVerificationError
	switch {
	case errors.As(err, &refused):
		return refused.Error() + "; a client ID metadata document must be on a public https server"
	case errors.As(err, &dns):
		return fmt.Sprintf("the host %s does not resolve", excerpt(u.Hostname()))
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return fmt.Sprintf("no answer within %s", FetchTimeout)
	case errors.As(err, &cert):
		return "the server's TLS certificate is not valid: " + cert.Err.Error()
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return "fetching it failed: " + err.Error()
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// cacheTTL is how long a document may be used: its max-age within the
// bounds, the Registry's CacheTTL without one, the least with no-store or
// no-cache.
func (r *Registry) cacheTTL(h http.Header) time.Duration {
	ttl := r.ttl
	for _, d := range strings.Split(h.Get("Cache-Control"), ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(d), "=")
		switch strings.ToLower(k) {
		case "no-store", "no-cache":
			return MinCacheTTL
		case "max-age":
			if n, err := strconv.ParseInt(strings.Trim(v, `"`), 10, 64); err == nil && n >= 0 {
				ttl = time.Duration(min(n, int64(MaxCacheTTL/time.Second))) * time.Second
			}
		}
	}
	return min(max(ttl, MinCacheTTL), MaxCacheTTL)
}
