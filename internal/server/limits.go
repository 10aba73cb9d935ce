package server

import (
	"fmt"
	"hash/maphash"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"foundry/internal/api"
	"foundry/internal/auth"
	"foundry/internal/mcpserver"
	"foundry/internal/problem"
	"foundry/internal/ratelimit"
)

// Limits keep one client from starving the rest, on /mcp and /api/: a
// token bucket per token (or browser session) and per client address, and
// a cap on a token's requests in flight at once. The zero value limits
// nothing (tests build servers with it); `foundry serve` gives the
// defaults (DefaultLimits).
type Limits struct {
	// PerToken and BurstPerToken: the requests a token (or browser
	// session) may make per second on average, and at once; zero: no limit
	// (a zero burst is twice the rate per second).
	PerToken      rate.Limit
	BurstPerToken int
	// PerAddress and BurstPerAddress: the same per client address (an IPv6
	// address counts as its /64), with or without a token.
	PerAddress      rate.Limit
	BurstPerAddress int
	// ConcurrentPerToken caps a token's requests in flight at once; long
	// polls and event streams are not counted (they have their caps,
	// Config.WaitersPerToken and StreamsPerToken). Zero: no cap.
	ConcurrentPerToken int
	// TrustedProxies are the balancers whose X-Forwarded-For names the
	// client; from any other peer the header is ignored.
	TrustedProxies []netip.Prefix
	// MaxKeys bounds the tokens and the addresses remembered, each (zero:
	// ratelimit.DefaultMaxKeys).
	MaxKeys int
}

// DefaultLimits are serve's: a person's browser or an agent rarely needs
// more than a few calls a second, a script a few dozen; an address may be
// a whole office behind one NAT, or every agent of one machine.
var DefaultLimits = Limits{
	PerToken: 50, BurstPerToken: 100,
	PerAddress: 200, BurstPerAddress: 400,
	ConcurrentPerToken: 16,
}

// The limits, as refusals and metrics name them.
const (
	limitRatePerToken   = "rate_per_token"
	limitRatePerAddress = "rate_per_address"
	limitConcurrent     = "concurrent_per_token"
)

// The doors limited.
const (
	doorMCP  = "mcp"
	doorREST = "rest"
)

// limits is the middleware of Limits.
type limits struct {
	cfg     Limits
	tokens  *ratelimit.Limiter[uint64]       // nil: none
	addrs   *ratelimit.Limiter[netip.Prefix] // nil: none
	seed    maphash.Seed
	log     *slog.Logger
	refused *prometheus.CounterVec
}

// newLimits builds the middleware of c and registers its metrics on reg.
func newLimits(c Limits, reg *prometheus.Registry, log *slog.Logger) *limits {
	l := &limits{cfg: c, seed: maphash.MakeSeed(), log: log}
	if o := (ratelimit.Options{Rate: c.PerToken, Burst: c.BurstPerToken, MaxInFlight: c.ConcurrentPerToken, MaxKeys: c.MaxKeys}); o.On() {
		l.tokens = ratelimit.New[uint64](o)
		l.cfg.BurstPerToken = l.tokens.Options().Burst
	}
	if o := (ratelimit.Options{Rate: c.PerAddress, Burst: c.BurstPerAddress, MaxKeys: c.MaxKeys}); o.On() {
		l.addrs = ratelimit.New[netip.Prefix](o)
		l.cfg.BurstPerAddress = l.addrs.Options().Burst
	}
	l.refused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "foundry_rate_limited_total",
		Help: "Requests to /mcp and /api/ refused by a rate limit or the cap of requests in flight, by door (mcp, rest) and limit (rate_per_token, rate_per_address, concurrent_per_token).",
	}, []string{"door", "limit"})
	for _, d := range []string{doorMCP, doorREST} {
		for _, n := range []string{limitRatePerToken, limitRatePerAddress, limitConcurrent} {
			l.refused.WithLabelValues(d, n)
		}
	}
	stats := func(kind string) func() ratelimit.Stats {
		return func() ratelimit.Stats {
			switch {
			case kind == "token" && l.tokens != nil:
				return l.tokens.Stats()
			case kind == "address" && l.addrs != nil:
				return l.addrs.Stats()
			}
			return ratelimit.Stats{}
		}
	}
	reg.MustRegister(l.refused)
	for _, kind := range []string{"token", "address"} {
		s := stats(kind)
		reg.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "foundry_rate_limit_keys", Help: "Tokens (or browser sessions) and client addresses the rate limits remember now (bounded; idle ones are forgotten).",
				ConstLabels: prometheus.Labels{"kind": kind},
			}, func() float64 { return float64(s().Keys) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "foundry_rate_limit_evicted_total", Help: "Tokens or addresses forgotten before their bucket was full again, because the rate limits remember at most a bounded number: a steady rise means many more clients than the bound, or one rotating keys.",
				ConstLabels: prometheus.Labels{"kind": kind},
			}, func() float64 { return float64(s().Evicted) }),
		)
	}
	tokens := stats("token")
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "foundry_rate_limit_in_flight", Help: "Requests counted now against the per-token cap of requests in flight (long polls and event streams are not).",
	}, func() float64 { return float64(tokens().InFlight) }))
	return l
}

// wrap limits the requests to /mcp and /api/ that next serves.
func (l *limits) wrap(next http.Handler) http.Handler {
	if l.tokens == nil && l.addrs == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		door := doorOf(r.URL.Path)
		if door == "" {
			next.ServeHTTP(w, r)
			return
		}
		now := time.Now()
		var tk ratelimit.Ticket[uint64]
		held := false
		if key, ok := l.credential(r, door); ok && l.tokens != nil {
			// An API event stream waits under its own cap; an MCP listen
			// stream or poll gives its place back at the front, once read.
			held = l.cfg.ConcurrentPerToken > 0 && !(door == doorREST && api.Stream(r))
			t, rf := l.tokens.Take(key, now, held)
			if rf.Which != ratelimit.Allowed {
				name := limitRatePerToken
				if rf.Which == ratelimit.InFlight {
					name = limitConcurrent
				}
				l.refuse(w, r, next, door, name, rf)
				return
			}
			tk = t
		}
		if l.addrs != nil {
			if _, rf := l.addrs.Take(l.clientAddr(r), now, false); rf.Which != ratelimit.Allowed {
				tk.Undo()
				l.refuse(w, r, next, door, limitRatePerAddress, rf)
				return
			}
		}
		defer tk.Done()
		if held {
			r = r.WithContext(ratelimit.WithRelease(r.Context(), tk.Done))
		}
		next.ServeHTTP(w, r)
	})
}

func doorOf(path string) string {
	switch {
	case path == "/mcp":
		return doorMCP
	case strings.HasPrefix(path, api.Prefix):
		return doorREST
	}
	return ""
}

// credential is the request's token (or, on the API, browser session), as
// a keyed hash: the secret itself is never kept. The secret is read as the
// doors read it, so that spelling "Bearer" another way is the same key.
func (l *limits) credential(r *http.Request, door string) (uint64, bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		secret := h
		if f := strings.Fields(h); len(f) == 2 && strings.EqualFold(f[0], "bearer") {
			secret = f[1]
		}
		return maphash.String(l.seed, "t:"+secret), true
	}
	if door == doorREST {
		if c, err := r.Cookie(auth.SessionCookie); err == nil && c.Value != "" {
			return maphash.String(l.seed, "s:"+c.Value), true
		}
	}
	return 0, false
}

// clientAddr is who the request is counted as: its peer, or, from a
// trusted proxy, the nearest address in X-Forwarded-For that is not one;
// an IPv4 address itself, an IPv6 address its /64 (anyone has many).
func (l *limits) clientAddr(r *http.Request) netip.Prefix {
	a := peerAddr(r.RemoteAddr)
	if len(l.cfg.TrustedProxies) > 0 && l.trusted(a) {
		var hops []string
		for _, v := range r.Header.Values("X-Forwarded-For") {
			hops = append(hops, strings.Split(v, ",")...)
		}
		for i := len(hops) - 1; i >= 0; i-- {
			h, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
			if err != nil {
				break // the rest was written by whoever sent it
			}
			a = h.Unmap()
			if !l.trusted(a) {
				break
			}
		}
	}
	bits := 32
	if a.Is6() {
		bits = 64
	}
	p, _ := a.Prefix(bits)
	return p
}

func (l *limits) trusted(a netip.Addr) bool {
	for _, p := range l.cfg.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func peerAddr(remote string) netip.Addr {
	if ap, err := netip.ParseAddrPort(remote); err == nil {
		return ap.Addr().Unmap()
	}
	a, _ := netip.ParseAddr(remote) // the zero Addr if neither: all such peers share one key
	return a.Unmap()
}

// floodStreak is how many refusals in a row a key gets in the MCP
// endpoint's words (a tools/call as a tool result, read and answered
// through the SDK, which costs about what a small read does). Past it the
// client is not reading them: it gets a plain HTTP 429 that costs the
// server nothing, so that a flood cannot buy the CPU the limit protects.
const floodStreak = 16

// refuse answers a refused request in its door's words.
func (l *limits) refuse(w http.ResponseWriter, r *http.Request, next http.Handler, door, name string, rf ratelimit.Refusal) {
	l.refused.WithLabelValues(door, name).Inc()
	secs := rf.RetrySeconds()
	var msg, flag string
	switch name {
	case limitRatePerToken:
		flag = "--rate-per-token"
		msg = fmt.Sprintf("this token (or browser session) is over its rate limit of %s (bursts of %d)", ratelimit.FormatRate(l.cfg.PerToken), l.cfg.BurstPerToken)
	case limitRatePerAddress:
		flag = "--rate-per-address"
		msg = fmt.Sprintf("this client address is over its rate limit of %s (bursts of %d)", ratelimit.FormatRate(l.cfg.PerAddress), l.cfg.BurstPerAddress)
	case limitConcurrent:
		flag = "--max-concurrent-per-token"
		msg = fmt.Sprintf("this token (or browser session) has %d requests in progress already, the most it may have at once (long polls and event streams aside)", l.cfg.ConcurrentPerToken)
	}
	msg += fmt.Sprintf("; retry after %d s", secs)
	if door == doorMCP {
		msg += ". Nothing was done: make the same call again then (a write with the same idempotency_key)"
	} else {
		msg += ". Nothing was done: send the same request again then"
	}
	msg += fmt.Sprintf(". The server's operator sets this limit with %s.", flag)
	pr := problem.New(ratelimit.Code, "", "%s", msg).With("retry_after", secs).With("limit", name).With("flag", flag).With("rule", name)
	if l.log.Enabled(r.Context(), slog.LevelDebug) {
		l.log.Debug("rate limited", "door", door, "limit", name, "path", r.URL.Path, "address", l.clientAddr(r).String(), "retry_after", secs)
	}
	switch {
	case door == doorREST:
		api.RefuseHTTP(w, http.StatusTooManyRequests, pr)
	case r.Method == http.MethodPost && rf.Streak <= floodStreak:
		// The endpoint reads the call and answers it (a tools/call as a
		// tool result the model can act on); nothing of it runs.
		next.ServeHTTP(w, r.WithContext(mcpserver.Refused(r.Context(), pr)))
	default:
		mcpserver.RefuseHTTP(w, nil, pr)
	}
}
