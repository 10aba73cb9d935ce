package clients

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"foundry/internal/auth"
	"foundry/internal/reqlog"
	"foundry/internal/store"
)

// SecretPrefix marks client secrets so secret scanners can find a leaked
// one (and no one takes it for a personal access token).
const SecretPrefix = "fdycs_"

// headerList is a preflight's list of header names that may be echoed.
var headerList = regexp.MustCompile(`^[A-Za-z0-9-]+( *, *[A-Za-z0-9-]+)*$`)

// Mount serves POST /register (and its CORS preflight) on mux.
func (r *Registry) Mount(mux *http.ServeMux) {
	mux.HandleFunc("POST /register", r.Register)
	mux.HandleFunc("OPTIONS /register", r.Register)
}

// Register is dynamic client registration (RFC 7591), open to anyone and
// rate-limited per client address. Browser-based clients (the MCP
// Inspector) register across origins, so it answers CORS for every origin;
// it never uses cookies, so that is safe.
func (r *Registry) Register(w http.ResponseWriter, req *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Cache-Control", "no-store")
	if req.Method == http.MethodOptions {
		h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
		allow := "Content-Type, Authorization, Accept, MCP-Protocol-Version"
		if asked := req.Header.Get("Access-Control-Request-Headers"); len(asked) <= 1000 && headerList.MatchString(asked) {
			allow = asked // no credentials are ever used here, so any header may be sent
		}
		h.Set("Access-Control-Allow-Headers", allow)
		h.Set("Access-Control-Max-Age", "86400")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if req.Method != http.MethodPost {
		h.Set("Allow", "POST, OPTIONS")
		writeError(w, http.StatusMethodNotAllowed, "invalid_request", "register a client with POST and a JSON body")
		return
	}
	h.Set("Access-Control-Expose-Headers", "Retry-After")
	if r.limits != nil {
		if wait, ok := r.limits.allow(req, r.now()); !ok {
			secs := int(math.Ceil(wait.Seconds()))
			h.Set("Retry-After", strconv.Itoa(secs))
			writeError(w, http.StatusTooManyRequests, "rate_limited", fmt.Sprintf("too many client registrations from this address: try again in %d s, or reuse the client_id you registered", secs))
			return
		}
	}
	if ct := req.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			writeError(w, http.StatusBadRequest, CodeInvalidMetadata, fmt.Sprintf("Content-Type: is %q; send the client metadata as application/json", excerpt(ct)))
			return
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, MaxBody))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		writeError(w, http.StatusRequestEntityTooLarge, CodeInvalidMetadata, fmt.Sprintf("body: is larger than %d bytes (64 KiB); send only the client metadata", MaxBody))
		return
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, CodeInvalidMetadata, "body: could not be read: "+err.Error())
		return
	}
	m, e := parseMetadata(body, nil)
	if e == nil {
		m, e = normalize(m, false)
	}
	if e != nil {
		writeError(w, http.StatusBadRequest, e.Code, e.Error())
		return
	}
	c, secret, err := r.create(req.Context(), store.ClientDynamic, m)
	if err != nil {
		r.log.ErrorContext(req.Context(), "client registration failed", "err", err)
		writeError(w, http.StatusInternalServerError, "server_error", "the client could not be stored: try again")
		return
	}
	r.log.InfoContext(req.Context(), "client registered", "client_id", c.ID, "name", c.Name, "auth", m.TokenEndpointAuthMethod)
	h.Set("Content-Type", "application/json")
	h.Set("Pragma", "no-cache")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(response(c, m, secret))
}

// RegistrationResponse is what /register answers (RFC 7591 §3.2.1): the
// metadata as registered, with the client ID and, for a confidential
// client, its secret (shown this once).
type RegistrationResponse struct {
	ClientID              string `json:"client_id"`
	ClientIDIssuedAt      int64  `json:"client_id_issued_at"`
	ClientSecret          string `json:"client_secret,omitempty"`
	ClientSecretExpiresAt *int64 `json:"client_secret_expires_at,omitempty"`
	Metadata
}

// response is the registration response for client c registered with m.
func response(c store.Client, m Metadata, secret string) RegistrationResponse {
	out := RegistrationResponse{ClientID: c.ID, ClientIDIssuedAt: c.CreatedAt.Unix(), Metadata: m}
	if secret != "" {
		var never int64
		out.ClientSecret, out.ClientSecretExpiresAt = secret, &never
	}
	return out
}

// create stores a client of kind with metadata m (already normalized): a
// fresh ID, and for a confidential client a fresh secret, of which only
// the hash is stored.
func (r *Registry) create(ctx context.Context, kind string, m Metadata) (store.Client, string, error) {
	return create(ctx, r.st, kind, m, r.now())
}

func create(ctx context.Context, st store.Store, kind string, m Metadata, now time.Time) (store.Client, string, error) {
	var secret, hash string
	if m.TokenEndpointAuthMethod != AuthNone {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return store.Client{}, "", err
		}
		secret = SecretPrefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
		hash = auth.HashToken(secret)
	}
	meta, err := json.Marshal(m)
	if err != nil {
		return store.Client{}, "", err
	}
	c := store.Client{
		ID: store.NewID("client"), SecretHash: hash, Name: displayName(m), RedirectURIs: m.RedirectURIs,
		GrantTypes: m.GrantTypes, Scopes: clientScopes(m), Kind: kind, Metadata: meta,
		CreatedAt: now.UTC().Truncate(time.Microsecond),
	}
	if err := st.CreateClient(ctx, c); err != nil {
		return store.Client{}, "", err
	}
	return c, secret, nil
}

func writeError(w http.ResponseWriter, status int, code, desc string) {
	if status < 500 {
		reqlog.NoteRefusal(w, reqlog.DoorOAuth, code)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
}

// limiter is a token bucket per client address (per /64 for IPv6, which
// anyone has many of), for a bounded number of addresses.
type limiter struct {
	mu    sync.Mutex
	every rate.Limit
	burst int
	addr  func(*http.Request) string
	seen  map[string]*rate.Limiter
}

// maxAddrs bounds how many addresses the limiter remembers.
const maxAddrs = 10000

func newLimiter(perHour, burst int, addr func(*http.Request) string) *limiter {
	return &limiter{every: rate.Limit(float64(perHour) / 3600), burst: burst, addr: addr, seen: map[string]*rate.Limiter{}}
}

// allow takes one registration from the request's address, or says how
// long until it may.
func (l *limiter) allow(req *http.Request, now time.Time) (time.Duration, bool) {
	key := addrKey(l.addr(req))
	l.mu.Lock()
	defer l.mu.Unlock()
	lim, ok := l.seen[key]
	if !ok {
		if len(l.seen) >= maxAddrs {
			// Forget the addresses whose bucket is full again (as if never
			// seen); if none is, any one.
			for k, v := range l.seen {
				if v.TokensAt(now) >= float64(l.burst) {
					delete(l.seen, k)
				}
			}
			for k := range l.seen {
				if len(l.seen) < maxAddrs {
					break
				}
				delete(l.seen, k)
			}
		}
		lim = rate.NewLimiter(l.every, l.burst)
		l.seen[key] = lim
	}
	res := lim.ReserveN(now, 1)
	if !res.OK() {
		return time.Hour, false
	}
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d, false
	}
	return 0, true
}

// addrKey is what an address is counted as: an IPv4 address itself, an
// IPv6 address its /64.
func addrKey(a string) string {
	ip, err := netip.ParseAddr(a)
	if err != nil {
		return a
	}
	ip = ip.WithZone("").Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// remoteHost is the host part of the request's RemoteAddr.
func remoteHost(req *http.Request) string {
	h, _, err := net.SplitHostPort(req.RemoteAddr)
	if err != nil {
		return req.RemoteAddr
	}
	return h
}
