package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/auth"
	"foundry/internal/problem"
	"foundry/internal/service"
)

// Instructions is what initialize tells every client.
const Instructions = "Foundry: Notes and Rooms shared by people and agents. Local-only data is unavailable to cloud clients. " +
	"Every write takes the version you read and an idempotency_key that names your intent; keep the key when you retry. " +
	"Address tabs by exact tab ID only."

// MaxBody bounds a request. It is the only body limit a client meets: a
// 1 MiB markdown text written entirely as \uXXXX escapes (surrogate pairs
// for characters outside the BMP) takes up to 12 MiB, plus the other
// arguments.
const MaxBody = 16 << 20

// Options configure the endpoint.
type Options struct {
	PublicURL      string   // origin clients reach, e.g. http://127.0.0.1:8080
	Path           string   // default /mcp
	Toolsets       []string // operator's choice; nil = all
	ReadOnly       bool     // operator's read-only mode
	AllowedOrigins []string // extra browser origins allowed to call
	Version        string
	Logger         *slog.Logger
	// ReviewPage is the web app's review inbox, which proposals' next
	// steps name ("": named without its address).
	ReviewPage string
	// ListenLifetime bounds one subscriptions/listen stream; the stream
	// then ends and the client listens again. Default 10 minutes.
	ListenLifetime time.Duration
	// MaxStreamsPerToken and MaxStreamsPerNode cap concurrent
	// subscriptions/listen streams. Defaults 8 and 1024.
	MaxStreamsPerToken, MaxStreamsPerNode int
	// Verify resolves a presented bearer secret (a personal access token,
	// an OAuth access token) to its principal; auth.ErrInvalidToken for one
	// that is unknown, expired, revoked or meant for another resource.
	// Default: personal access tokens only (auth.Verify).
	Verify auth.Verifier
	// Observe, if set, hears every tool call: the tool's name, its outcome
	// (Outcome) and how long it took. It must not block.
	Observe func(tool, outcome string, d time.Duration)
}

// Handler serves /mcp.
type Handler struct {
	svc      *service.Service
	opts     Options
	all      []*Tool
	log      *slog.Logger
	mu       sync.Mutex
	variants map[string]*variant
	streams  *service.Gate
	watchers sync.Map // *mcp.ServerSession → *watcher (open listen streams)
	pub      atomic.Pointer[parsedURL]
}

// variant is one tool selection (toolsets × read-only) with its own reused
// *mcp.Server and its pre-encoded tools/list answers.
type variant struct {
	srv    *mcp.Server
	subs   bool // resources can be watched (subscriptions/listen)
	tools  map[string]*Tool
	sdk    http.Handler
	listed map[bool][]byte // new protocol? → result JSON
}

// New builds the endpoint.
func New(svc *service.Service, opts Options) *Handler {
	if opts.Path == "" {
		opts.Path = "/mcp"
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.ListenLifetime <= 0 {
		opts.ListenLifetime = 10 * time.Minute
	}
	if opts.MaxStreamsPerToken <= 0 {
		opts.MaxStreamsPerToken = 8
	}
	if opts.MaxStreamsPerNode <= 0 {
		opts.MaxStreamsPerNode = 1024
	}
	h := &Handler{svc: svc, opts: opts, all: ToolsFor(svc, opts.ReviewPage), log: opts.Logger, variants: map[string]*variant{},
		streams: service.NewGate(opts.MaxStreamsPerToken, opts.MaxStreamsPerNode)}
	for _, t := range h.all {
		t.Log = h.log // tool faults and panics go to the endpoint's logger
		t.Observe = opts.Observe
	}
	if svc != nil {
		svc.Store.OnChange(h.broadcast)
	}
	toolsets, ro, _ := h.selection(httptest.NewRequest(http.MethodPost, opts.Path, nil))
	h.variant(toolsets, ro, false) // build the default now: a bad schema fails at start
	return h
}

// verify resolves a bearer secret with Options.Verify, or as a personal
// access token.
func (h *Handler) verify(ctx context.Context, secret string) (auth.Principal, error) {
	if h.opts.Verify != nil {
		return h.opts.Verify(ctx, secret)
	}
	return auth.Verify(ctx, h.svc.Store, secret)
}

// ResourceURL is the canonical URL of this resource (RFC 8707): the
// audience an OAuth access token must carry.
func (h *Handler) ResourceURL() string {
	return strings.TrimRight(h.opts.PublicURL, "/") + h.opts.Path
}

// ResourceMetadataURL is the RFC 9728 document for this resource.
func (h *Handler) ResourceMetadataURL() string {
	return strings.TrimRight(h.opts.PublicURL, "/") + "/.well-known/oauth-protected-resource" + h.opts.Path
}

// ResourceMetadata serves RFC 9728 protected resource metadata.
func (h *Handler) ResourceMetadata(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"resource":                 h.ResourceURL(),
		"authorization_servers":    []string{strings.TrimRight(h.opts.PublicURL, "/")},
		"scopes_supported":         []string{auth.ScopeRead, auth.ScopeWrite},
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "Foundry",
	})
}

// anonymous methods answer without a token, exactly as published. Every
// other method is routed first (see serveAnonymous) and needs a token only
// if it reaches private data; initialize always needs one (see ServeHTTP).
// A token that is presented is checked whatever the method.
func anonymous(method string) bool {
	switch method {
	case "server/discover", "ping", "tools/list":
		return true
	}
	return strings.HasPrefix(method, "notifications/")
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.originAllowed(r) {
		writeRPCError(w, http.StatusForbidden, nil, -32600, "Host "+r.Host+" / Origin "+r.Header.Get("Origin")+" is not allowed to call this endpoint (set --public-url or --allowed-origins)")
		return
	}
	toolsets, ro, pr := h.selection(r)
	if pr != nil {
		writeRPCErrorData(w, http.StatusBadRequest, nil, -32602, pr.Error(), pr)
		return
	}
	v := h.variant(toolsets, ro, subscriptionsWanted(r))
	presented := len(r.Header.Values("Authorization")) > 0
	if r.Method != http.MethodPost {
		if presented {
			p, ok := h.authenticate(w, r, nil)
			if !ok {
				return
			}
			withPrincipal(p, "", v.sdk).ServeHTTP(w, r)
			return
		}
		v.sdk.ServeHTTP(w, r)
		return
	}
	if r.ContentLength > MaxBody {
		tooLarge(w)
		return
	}
	body, err := readBody(w, r)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			tooLarge(w)
			return
		}
		writeRPCError(w, http.StatusBadRequest, nil, -32700, "parse error: the request body could not be read")
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	m, err := readMessage(body)
	if err != nil {
		writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, err.Error())
		return
	}
	// A token that is presented is checked whatever the method: a wrong
	// token answers 401 everywhere, so a client never shows "Connected".
	var p auth.Principal
	if presented {
		var id json.RawMessage
		if m != nil {
			id = m.ID
		}
		var ok bool
		if p, ok = h.authenticate(w, r, id); !ok {
			return
		}
	}
	if !admitted(w, r, m, presented) { // a rate limit's refusal (limits.go)
		return
	}
	if m == nil {
		// Nothing the SDK would dispatch: it answers as it does.
		if presented {
			withPrincipal(p, bearer(r), v.sdk).ServeHTTP(w, r)
			return
		}
		v.sdk.ServeHTTP(w, r)
		return
	}
	if !presented {
		switch {
		case m.Method == "initialize" && !m.newProtocol() && r.Header.Get("Mcp-Protocol-Version") < "2026-07-28":
			// A session starts only with credentials: the 401 and its
			// resource_metadata are what sends a client into its OAuth
			// flow, or makes it show "needs authentication", instead of
			// "Connected" followed by a 401 on every tool call. Discovery
			// without a session (server/discover, tools/list) still
			// answers without a token, and the 2026-07-28 protocol's
			// initialize is the removed method it is with a token.
			h.authenticate(w, r, m.ID)
		case m.Method == "initialize" || m.Method == "server/discover":
			serveAmended(w, r, v.sdk, m)
		case cacheable(r, m):
			writeResult(w, m.ID, v.listed[m.newProtocol()])
		case anonymous(m.Method):
			v.sdk.ServeHTTP(w, r)
		default:
			// Route first: the SDK answers what it would answer anyway (an
			// unknown or removed method, bad headers or _meta); a method
			// that needs a token is refused at dispatch, answered 401 here.
			h.serveAnonymous(w, r, v.sdk, m)
		}
		return
	}
	sdk := withPrincipal(p, bearer(r), v.sdk)
	switch m.Method {
	case "tools/call":
		if t := v.tools[m.Params.Name]; t != nil && !p.Has(t.Scope) {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q, resource_metadata=%q, error_description=%q`,
				t.Scope, h.ResourceMetadataURL(), m.Params.Name+" needs the "+t.Scope+" scope"))
			writeRPCError(w, http.StatusForbidden, m.ID, -32001, fmt.Sprintf("insufficient_scope: %s needs the %s scope; this token has %s", m.Params.Name, t.Scope, strings.Join(p.Scopes, " ")))
			return
		}
		sdk.ServeHTTP(w, r)
	case "subscriptions/listen":
		if err := h.checkSubscriptions(r.Context(), p, m); err != nil {
			writeRPCError(w, http.StatusOK, m.ID, -32002, err.Error())
			return
		}
		release, retry, ok := h.streams.Acquire(streamKey(p), h.opts.ListenLifetime)
		if !ok {
			tooManyStreams(w, m.ID, retry)
			return
		}
		defer release()
		// A stream lives at most ListenLifetime (then the client
		// listens again); its writes may take that long.
		http.NewResponseController(w).SetWriteDeadline(time.Now().Add(h.opts.ListenLifetime + 30*time.Second))
		sdk.ServeHTTP(w, r)
	case "tools/list":
		if cacheable(r, m) {
			writeResult(w, m.ID, v.listed[m.newProtocol()])
			return
		}
		sdk.ServeHTTP(w, r)
	case "initialize", "server/discover":
		serveAmended(w, r, sdk, m)
	default:
		sdk.ServeHTTP(w, r)
	}
}

// readBody reads the whole body, at most MaxBody: in one buffer of the
// announced length when there is one, rather than growing it as it comes.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	rd := http.MaxBytesReader(w, r.Body, MaxBody)
	if r.ContentLength <= 0 {
		return io.ReadAll(rd)
	}
	var buf bytes.Buffer
	buf.Grow(int(r.ContentLength) + bytes.MinRead)
	_, err := buf.ReadFrom(rd)
	return buf.Bytes(), err
}

// tooLarge is the one body limit a client meets (the SDK's own is set above
// it): a JSON-RPC error that names the limit.
func tooLarge(w http.ResponseWriter) {
	writeRPCErrorData(w, http.StatusRequestEntityTooLarge, nil, -32600,
		fmt.Sprintf("request body over the %d-byte limit (%d MiB): send a smaller request (a tab's text is limited by its own rule, well below this)", MaxBody, MaxBody>>20),
		map[string]any{"error": "limit_exceeded", "field": "body", "limit_bytes": MaxBody})
}

// serveAmended serves initialize or server/discover with the capabilities
// Foundry actually serves (see amendInitialize).
func serveAmended(w http.ResponseWriter, r *http.Request, sdk http.Handler, m *peek) {
	rw := &bufferedWriter{ResponseWriter: w, status: http.StatusOK}
	sdk.ServeHTTP(rw, r)
	w.Header().Del("Content-Length")
	w.WriteHeader(rw.status)
	w.Write(amendCapabilities(rw.buf.Bytes(), m.Method == "initialize"))
}

// bufferedWriter holds a short, single-message answer so it can be amended.
type bufferedWriter struct {
	http.ResponseWriter
	buf    bytes.Buffer
	status int
}

func (b *bufferedWriter) WriteHeader(status int) { b.status = status }

func (b *bufferedWriter) Write(p []byte) (int, error) { return b.buf.Write(p) }
func (b *bufferedWriter) Flush()                      {}

// cacheable: the pre-encoded answer is exact only for a tools/list the SDK
// reads as one (a call, params it decodes, no cursor) of the protocol
// versions it was captured for, with the headers the SDK requires. Anything
// else goes to the SDK, which answers or refuses it as it would without the
// cache.
func cacheable(r *http.Request, m *peek) bool {
	if m.Method != "tools/list" || m.ID == nil || !m.Params.ok || m.Params.Cursor != "" {
		return false
	}
	if ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || ct != "application/json" {
		return false
	}
	if !acceptsBoth(r.Header.Values("Accept")) {
		return false
	}
	hv := r.Header.Get("Mcp-Protocol-Version")
	if hv != "" && !slices.Contains(mcp.SupportedProtocolVersions(), hv) {
		return false
	}
	if m.newProtocol() {
		v, _ := m.Params.Meta[mcp.MetaKeyProtocolVersion].(string)
		_, caps := m.Params.Meta["io.modelcontextprotocol/clientCapabilities"]
		return caps && hv == v && r.Header.Get("Mcp-Method") == "tools/list" && slices.Contains(mcp.SupportedProtocolVersions(), v)
	}
	return hv < "2026-07-28"
}

// acceptsBoth is the SDK's rule: Accept names JSON and an event stream.
func acceptsBoth(values []string) bool {
	var jsonOK, streamOK bool
	for _, value := range values {
		for _, raw := range strings.Split(value, ",") {
			base, _, _ := strings.Cut(strings.TrimSpace(raw), ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK && streamOK
}

// bearer is the presented secret, or "".
func bearer(r *http.Request) string {
	fields := strings.Fields(r.Header.Get("Authorization"))
	if len(fields) == 2 && strings.EqualFold(fields[0], "bearer") {
		return fields[1]
	}
	return ""
}

// authenticate answers 401 with the RFC 9728 pointer unless a valid token
// is presented. A store failure is logged and answered as a bare internal
// error: its text never reaches a client.
func (h *Handler) authenticate(w http.ResponseWriter, r *http.Request, id json.RawMessage) (auth.Principal, bool) {
	desc := "Connect Foundry to continue"
	if len(r.Header.Values("Authorization")) > 0 {
		desc = "The token is invalid, expired, revoked or meant for another server: reconnect (a client connected by URL signs in again), or create a new personal access token with foundry token create"
		if len(r.Header.Values("Authorization")) == 1 {
			if secret := bearer(r); secret != "" {
				p, err := h.verify(r.Context(), secret)
				if err == nil {
					return p, true
				}
				if !errors.Is(err, auth.ErrInvalidToken) {
					h.log.ErrorContext(r.Context(), "verify token", "err", err)
					writeRPCError(w, http.StatusInternalServerError, id, -32603, "internal error")
					return auth.Principal{}, false
				}
			} else {
				desc = "The Authorization header must be \"Bearer <token>\""
			}
		}
	}
	w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata=%q, error="invalid_token", error_description=%q`, h.ResourceMetadataURL(), desc))
	writeRPCError(w, http.StatusUnauthorized, id, -32001, "unauthorized: "+desc)
	return auth.Principal{}, false
}

// withPrincipal hands the verified principal (and the secret, so a
// subscription can re-check it before every push) to the SDK, which passes
// them to handlers as req.Extra.TokenInfo.
func withPrincipal(p auth.Principal, secret string, next http.Handler) http.Handler {
	info := &sdkauth.TokenInfo{Scopes: p.Scopes, UserID: p.User, Expiration: time.Now().Add(time.Hour), Extra: map[string]any{principalKey: p, secretKey: secret}}
	return sdkauth.RequireBearerToken(func(context.Context, string, *http.Request) (*sdkauth.TokenInfo, error) { return info, nil }, nil)(next)
}

const secretKey = "foundry.secret"

// originAllowed guards against DNS rebinding and cross-site calls: the Host
// must be the public host (or loopback), and a browser Origin must be the
// public origin, a configured one, or loopback when Foundry itself is.
func (h *Handler) originAllowed(r *http.Request) bool {
	pub := h.publicURL()
	pubLoopback := pub == nil || isLoopback(pub.Hostname())
	reqHost := r.Host
	if hh, _, err := net.SplitHostPort(reqHost); err == nil {
		reqHost = hh
	}
	// Listening on every interface with no public URL set (0.0.0.0): any
	// Host may reach it, so only browser Origins are checked.
	anyHost := pub != nil && net.ParseIP(pub.Hostname()) != nil && net.ParseIP(pub.Hostname()).IsUnspecified()
	if !anyHost && !isLoopback(reqHost) && (pub == nil || !strings.EqualFold(r.Host, pub.Host)) {
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return true // not a browser
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" {
		return false
	}
	switch {
	case pub != nil && strings.EqualFold(u.Scheme+"://"+u.Host, pub.Scheme+"://"+pub.Host):
		return true
	case pubLoopback && isLoopback(u.Hostname()):
		return true
	}
	return slices.Contains(h.opts.AllowedOrigins, strings.TrimRight(o, "/"))
}

// publicURL is opts.PublicURL parsed (nil if it does not parse), once per
// value rather than on every request.
func (h *Handler) publicURL() *url.URL {
	raw := h.opts.PublicURL
	if p := h.pub.Load(); p != nil && p.raw == raw {
		return p.u
	}
	u, err := url.Parse(raw)
	if err != nil {
		u = nil
	}
	h.pub.Store(&parsedURL{raw, u})
	return u
}

type parsedURL struct {
	raw string
	u   *url.URL
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// selection is the connection's choice of toolsets and read-only mode
// (header X-MCP-Toolsets / X-MCP-Readonly, or query toolsets= / readonly=),
// narrowed by the operator's. A name that is no toolset is refused (a typo
// would otherwise serve no tools without a word).
func (h *Handler) selection(r *http.Request) (toolsets []string, readOnly bool, pr *problem.Problem) {
	want, field := r.Header.Get("X-MCP-Toolsets"), "X-MCP-Toolsets"
	if q := r.URL.Query().Get("toolsets"); q != "" {
		want, field = q, "toolsets"
	}
	if want != "" {
		if pr := checkToolsets(strings.Split(want, ","), field); pr != nil {
			return nil, false, pr
		}
	}
	all := []string{ToolsetNotes, ToolsetRooms, ToolsetEvents}
	if h.opts.Toolsets != nil {
		all = h.opts.Toolsets
	}
	if want == "" {
		toolsets = all
	} else {
		for _, t := range strings.Split(want, ",") {
			if t = strings.TrimSpace(t); slices.Contains(all, t) && !slices.Contains(toolsets, t) {
				toolsets = append(toolsets, t)
			}
		}
	}
	sort.Strings(toolsets)
	ro := r.Header.Get("X-MCP-Readonly")
	if q := r.URL.Query().Get("readonly"); q != "" {
		ro = q
	}
	return toolsets, h.opts.ReadOnly || ro == "1" || strings.EqualFold(ro, "true"), nil
}

func (h *Handler) variant(toolsets []string, readOnly, subs bool) *variant {
	k := strings.Join(toolsets, ",") // toolset names have no comma or bar
	if readOnly {
		k += "|ro"
	}
	if subs {
		k += "|subs"
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if v := h.variants[k]; v != nil {
		return v
	}
	v := h.build(toolsets, readOnly, subs)
	h.variants[k] = v
	return v
}

// build makes one reused *mcp.Server (never one per request) and captures
// its tools/list answers once.
func (h *Handler) build(toolsets []string, readOnly, subs bool) *variant {
	impl := &mcp.Implementation{Name: "foundry", Title: "Foundry", Version: h.opts.Version}
	opts := &mcp.ServerOptions{
		Instructions: Instructions,
		Logger:       sdkLogger(h.log),
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: false}},
		PageSize:     1000,
	}
	if subs {
		opts.Capabilities.Resources = &mcp.ResourceCapabilities{Subscribe: true}
		opts.SubscribeHandler = func(ctx context.Context, req *mcp.SubscribeRequest) (err error) {
			defer h.recoverTo(ctx, &err, "resources/subscribe")
			// Without sessions a 2025-11-25 resources/subscribe has no stream
			// to deliver on; say what works instead.
			if ip := req.Session.InitializeParams(); ip == nil || ip.ProtocolVersion < "2026-07-28" {
				return errors.New("resource subscriptions need MCP 2026-07-28 (subscriptions/listen); on older revisions long-poll poll_resource_events")
			}
			// Whatever the front saw, the grant is checked where the SDK
			// records the subscription.
			p, ok := principalFromExtra(req.Extra)
			if !ok {
				if wt := h.watcherOf(req.Session); wt != nil {
					p, ok = wt.p, true
				}
			}
			if !ok {
				return errors.New("resource subscriptions need a bearer token")
			}
			return h.canSee(ctx, p, req.Params.URI)
		}
		opts.UnsubscribeHandler = func(context.Context, *mcp.UnsubscribeRequest) error { return nil }
	}
	srv := mcp.NewServer(impl, opts)
	v := &variant{srv: srv, subs: subs, tools: map[string]*Tool{}, listed: map[bool][]byte{}}
	if subs {
		h.addSubscriptions(srv)
	}
	// Runs before the handlers above: a method needing a token is refused
	// at dispatch (after the SDK validated and routed it); a method whose
	// capability is not declared is not served.
	srv.AddReceivingMiddleware(h.needToken)
	srv.AddReceivingMiddleware(h.undeclared(subs))
	// Last added runs first: a panic anywhere below (a handler, another
	// middleware) is one call's internal error.
	srv.AddReceivingMiddleware(h.recoverMiddleware)
	for _, t := range h.all {
		if !slices.Contains(toolsets, t.Toolset) || (readOnly && !t.ReadOnly()) {
			continue
		}
		srv.AddTool(t.sdkDef(), t.call)
		v.tools[t.Def.Name] = t
	}
	v.sdk = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless: true, Logger: sdkLogger(h.log), DisableLocalhostProtection: true,
		MaxRequestBodyBytes: MaxBody, // the front has bounded the body already
	})
	capture := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless: true, JSONResponse: true, DisableLocalhostProtection: true, MaxRequestBodyBytes: MaxBody,
	})
	for _, newProto := range []bool{false, true} {
		v.listed[newProto] = h.captureList(capture, v, newProto)
	}
	return v
}

// captureList asks the SDK for tools/list once and adds the top-level
// securitySchemes field, which the SDK's Tool type has no room for. A read
// tool's idempotentHint is left out: MCP gives it meaning only when
// readOnlyHint is false, and the SDK writes it on every tool, so it would
// cost every client's context bytes that say nothing.
func (h *Handler) captureList(sdk http.Handler, v *variant, newProto bool) []byte {
	params := `{}`
	if newProto {
		params = `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`
	}
	req := httptest.NewRequest(http.MethodPost, h.opts.Path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":`+params+`}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if newProto {
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/list")
	}
	rec := httptest.NewRecorder()
	sdk.ServeHTTP(rec, req)
	var resp struct {
		Result map[string]json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || resp.Result == nil {
		panic(fmt.Sprintf("capture tools/list: %v: %s", err, rec.Body.String()))
	}
	var tools []map[string]json.RawMessage
	if err := json.Unmarshal(resp.Result["tools"], &tools); err != nil {
		panic(err)
	}
	for _, t := range tools {
		var name string
		json.Unmarshal(t["name"], &name)
		t["securitySchemes"], _ = json.Marshal(securitySchemes(v.tools[name].Scope))
		if v.tools[name].ReadOnly() {
			var ann map[string]json.RawMessage
			if json.Unmarshal(t["annotations"], &ann) == nil && string(ann["idempotentHint"]) == "false" {
				delete(ann, "idempotentHint")
				t["annotations"], _ = json.Marshal(ann)
			}
		}
	}
	resp.Result["tools"], _ = json.Marshal(tools)
	b, _ := json.Marshal(resp.Result)
	return b
}

func writeResult(w http.ResponseWriter, id json.RawMessage, result []byte) {
	w.Header().Set("Content-Type", "application/json")
	var b bytes.Buffer
	b.Grow(len(result) + 48)
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	b.WriteString(`,"result":`)
	b.Write(result)
	b.WriteString("}\n")
	w.Write(b.Bytes())
}

func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	writeRPCErrorData(w, status, id, code, msg, nil)
}

// writeRPCErrorData is a JSON-RPC error; data, when set, is the problem
// (error code, field, details) behind it. The id is the request's as the
// SDK writes it (see readMessage), or null when there is none or it is too
// large to echo.
func writeRPCErrorData(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string, data any) {
	if len(id) == 0 || len(id) > 256 {
		id = json.RawMessage("null")
	}
	e := map[string]any{"code": code, "message": msg}
	if data != nil {
		e["data"] = data
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
	w.Write(append(b, '\n'))
}

// sdkLogger keeps the SDK at Warn: its per-request Info logs cost CPU on the
// hot path and say nothing an operator needs. A client's protocol mistake,
// which the SDK logs as an error, is logged at Warn: nothing is wrong with
// the server.
func sdkLogger(l *slog.Logger) *slog.Logger {
	return slog.New(levelFloor{l.Handler(), slog.LevelWarn})
}

// clientMistakes are the SDK's Error messages that report what a client
// sent (go-sdk v1.8.0), not a fault of the server.
var clientMistakes = map[string]bool{
	"method removed in the new protocol":   true,
	"method invalid during initialization": true,
	"initialized before initialize":        true,
	"duplicate initialized notification":   true,
	"duplicate initialize request":         true,
}

type levelFloor struct {
	slog.Handler
	min slog.Level
}

func (f levelFloor) Enabled(ctx context.Context, l slog.Level) bool {
	// An Error may be demoted to Warn: ask for the lower of the two.
	if l == slog.LevelError {
		return l >= f.min && (f.Handler.Enabled(ctx, slog.LevelWarn) || f.Handler.Enabled(ctx, l))
	}
	return l >= f.min && f.Handler.Enabled(ctx, l)
}

func (f levelFloor) Handle(ctx context.Context, rec slog.Record) error {
	if rec.Level == slog.LevelError && clientMistakes[rec.Message] {
		rec.Level = slog.LevelWarn
		rec.AddAttrs(slog.String("cause", "client"))
	}
	if !f.Handler.Enabled(ctx, rec.Level) {
		return nil
	}
	return f.Handler.Handle(ctx, rec)
}
func (f levelFloor) WithAttrs(a []slog.Attr) slog.Handler {
	return levelFloor{f.Handler.WithAttrs(a), f.min}
}
func (f levelFloor) WithGroup(n string) slog.Handler {
	return levelFloor{f.Handler.WithGroup(n), f.min}
}

// Tools lists every tool this endpoint can serve (before selection).
func (h *Handler) Tools() []*Tool { return h.all }
