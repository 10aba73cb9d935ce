package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/auth"
	"foundry/internal/service"
)

// Instructions is what initialize tells every client.
const Instructions = "Foundry: Notes and Rooms shared by people and agents. Local-only data is unavailable to cloud clients. " +
	"Every write takes the version you read and an idempotency_key that names your intent; keep the key when you retry. " +
	"Address tabs by exact tab ID only."

// MaxBody bounds a request: a 1 MiB markdown text can take several MiB once
// JSON-escaped.
const MaxBody = 8 << 20

// Options configure the endpoint.
type Options struct {
	PublicURL      string   // origin clients reach, e.g. http://127.0.0.1:8080
	Path           string   // default /mcp
	Toolsets       []string // operator's choice; nil = all
	ReadOnly       bool     // operator's read-only mode
	AllowedOrigins []string // extra browser origins allowed to call
	Version        string
	Logger         *slog.Logger
}

// Handler serves /mcp.
type Handler struct {
	svc      *service.Service
	opts     Options
	all      []*Tool
	log      *slog.Logger
	mu       sync.Mutex
	variants map[string]*variant
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
	h := &Handler{svc: svc, opts: opts, all: Tools(svc), log: opts.Logger, variants: map[string]*variant{}}
	if svc != nil {
		svc.Store.OnChange(h.broadcast)
	}
	toolsets, ro := h.selection(httptest.NewRequest(http.MethodPost, opts.Path, nil))
	h.variant(toolsets, ro, false) // build the default now: a bad schema fails at start
	return h
}

// ResourceMetadataURL is the RFC 9728 document for this resource.
func (h *Handler) ResourceMetadataURL() string {
	return strings.TrimRight(h.opts.PublicURL, "/") + "/.well-known/oauth-protected-resource" + h.opts.Path
}

// ResourceMetadata serves RFC 9728 protected resource metadata.
func (h *Handler) ResourceMetadata(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"resource":                 strings.TrimRight(h.opts.PublicURL, "/") + h.opts.Path,
		"authorization_servers":    []string{strings.TrimRight(h.opts.PublicURL, "/")},
		"scopes_supported":         []string{auth.ScopeRead, auth.ScopeWrite},
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "Foundry",
	})
}

// peek is the little of a JSON-RPC message the front needs.
type peek struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name          string         `json:"name"`
		URI           string         `json:"uri"`
		Cursor        *string        `json:"cursor"`
		Meta          map[string]any `json:"_meta"`
		Notifications struct {
			ResourceSubscriptions []string `json:"resourceSubscriptions"`
		} `json:"notifications"`
	} `json:"params"`
}

func (p *peek) newProtocol() bool {
	v, _ := p.Params.Meta[mcp.MetaKeyProtocolVersion].(string)
	return v >= "2026-07-28"
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.originAllowed(r) {
		writeRPCError(w, http.StatusForbidden, nil, -32600, "Host "+r.Host+" / Origin "+r.Header.Get("Origin")+" is not allowed to call this endpoint (set --public-url or --allowed-origins)")
		return
	}
	toolsets, ro := h.selection(r)
	v := h.variant(toolsets, ro, subscriptionsWanted(r))
	if r.Method != http.MethodPost {
		v.sdk.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		writeRPCError(w, http.StatusRequestEntityTooLarge, nil, -32600, fmt.Sprintf("request body over %d bytes", MaxBody))
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var m peek
	if err := json.Unmarshal(body, &m); err != nil {
		v.sdk.ServeHTTP(w, r) // batches and garbage: the SDK answers them
		return
	}
	switch m.Method {
	case "tools/call":
		p, ok := h.authenticate(w, r, m.ID)
		if !ok {
			return
		}
		if t := v.tools[m.Params.Name]; t != nil && !p.Has(t.Scope) {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q, resource_metadata=%q, error_description=%q`,
				t.Scope, h.ResourceMetadataURL(), m.Params.Name+" needs the "+t.Scope+" scope"))
			writeRPCError(w, http.StatusForbidden, m.ID, -32001, fmt.Sprintf("insufficient_scope: %s needs the %s scope; this token has %s", m.Params.Name, t.Scope, strings.Join(p.Scopes, " ")))
			return
		}
		withPrincipal(p, v.sdk).ServeHTTP(w, r)
	case "resources/read", "resources/subscribe", "subscriptions/listen":
		p, ok := h.authenticate(w, r, m.ID)
		if !ok {
			return
		}
		if m.Method != "resources/read" {
			if err := h.checkSubscriptions(r.Context(), p, &m); err != nil {
				writeRPCError(w, http.StatusOK, m.ID, -32002, err.Error())
				return
			}
		}
		withPrincipal(p, v.sdk).ServeHTTP(w, r)
	case "tools/list":
		if m.Params.Cursor == nil && cacheable(r, &m) {
			writeResult(w, m.ID, v.listed[m.newProtocol()])
			return
		}
		v.sdk.ServeHTTP(w, r)
	case "initialize", "server/discover":
		// The SDK omits "listChanged": false; the published contract states it.
		rw := &bufferedWriter{ResponseWriter: w, status: http.StatusOK}
		v.sdk.ServeHTTP(rw, r)
		w.Header().Del("Content-Length")
		w.WriteHeader(rw.status)
		w.Write(bytes.Replace(rw.buf.Bytes(), []byte(`"tools":{}`), []byte(`"tools":{"listChanged":false}`), 1))
	default:
		v.sdk.ServeHTTP(w, r)
	}
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

// cacheable: the pre-encoded answer is exact only for the protocol versions
// it was captured for; anything else goes to the SDK, which refuses it properly.
func cacheable(r *http.Request, m *peek) bool {
	hv := r.Header.Get("Mcp-Protocol-Version")
	if hv != "" && !slices.Contains(mcp.SupportedProtocolVersions(), hv) {
		return false
	}
	if m.newProtocol() {
		v, _ := m.Params.Meta[mcp.MetaKeyProtocolVersion].(string)
		_, caps := m.Params.Meta["io.modelcontextprotocol/clientCapabilities"]
		return caps && hv == v && r.Header.Get("Mcp-Method") == "tools/list" && slices.Contains(mcp.SupportedProtocolVersions(), v)
	}
	return true
}

// authenticate answers 401 with the RFC 9728 pointer unless a valid token
// is presented.
func (h *Handler) authenticate(w http.ResponseWriter, r *http.Request, id json.RawMessage) (auth.Principal, bool) {
	fields := strings.Fields(r.Header.Get("Authorization"))
	desc := "Connect Foundry to continue"
	if len(fields) == 2 && strings.EqualFold(fields[0], "bearer") {
		p, err := auth.Verify(r.Context(), h.svc.Store, fields[1])
		if err == nil {
			return p, true
		}
		if err != auth.ErrInvalidToken {
			h.log.Error("verify token", "err", err)
			writeRPCError(w, http.StatusInternalServerError, id, -32603, "could not verify the token")
			return auth.Principal{}, false
		}
		desc = "The token is invalid or revoked; create a new one with foundry token create"
	}
	w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata=%q, error="invalid_token", error_description=%q`, h.ResourceMetadataURL(), desc))
	writeRPCError(w, http.StatusUnauthorized, id, -32001, "unauthorized: "+desc)
	return auth.Principal{}, false
}

// withPrincipal hands the verified principal to the SDK, which passes it to
// tool handlers as req.Extra.TokenInfo.
func withPrincipal(p auth.Principal, next http.Handler) http.Handler {
	info := &sdkauth.TokenInfo{Scopes: p.Scopes, UserID: p.User, Expiration: time.Now().Add(time.Hour), Extra: map[string]any{principalKey: p}}
	return sdkauth.RequireBearerToken(func(context.Context, string, *http.Request) (*sdkauth.TokenInfo, error) { return info, nil }, nil)(next)
}

// originAllowed guards against DNS rebinding and cross-site calls: the Host
// must be the public host (or loopback), and a browser Origin must be the
// public origin, a configured one, or loopback when Foundry itself is.
func (h *Handler) originAllowed(r *http.Request) bool {
	pub, _ := url.Parse(h.opts.PublicURL)
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

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// selection is the connection's choice of toolsets and read-only mode
// (header X-MCP-Toolsets / X-MCP-Readonly, or query toolsets= / readonly=),
// narrowed by the operator's.
func (h *Handler) selection(r *http.Request) (toolsets []string, readOnly bool) {
	want := r.Header.Get("X-MCP-Toolsets")
	if q := r.URL.Query().Get("toolsets"); q != "" {
		want = q
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
	return toolsets, h.opts.ReadOnly || ro == "1" || strings.EqualFold(ro, "true")
}

func (h *Handler) variant(toolsets []string, readOnly, subs bool) *variant {
	k := fmt.Sprint(toolsets, readOnly, subs)
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
		opts.SubscribeHandler = func(ctx context.Context, req *mcp.SubscribeRequest) error {
			// Without sessions a 2025-11-25 resources/subscribe has no stream
			// to deliver on; say what works instead.
			if ip := req.Session.InitializeParams(); ip == nil || ip.ProtocolVersion < "2026-07-28" {
				return errors.New("resource subscriptions need MCP 2026-07-28 (subscriptions/listen); on older revisions long-poll poll_resource_events")
			}
			return nil
		}
		opts.UnsubscribeHandler = func(context.Context, *mcp.UnsubscribeRequest) error { return nil }
	}
	srv := mcp.NewServer(impl, opts)
	v := &variant{srv: srv, subs: subs, tools: map[string]*Tool{}, listed: map[bool][]byte{}}
	if subs {
		h.addSubscriptions(srv)
	}
	for _, t := range h.all {
		if !slices.Contains(toolsets, t.Toolset) || (readOnly && !t.ReadOnly()) {
			continue
		}
		srv.AddTool(t.Def, t.call)
		v.tools[t.Def.Name] = t
	}
	v.sdk = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless: true, Logger: sdkLogger(h.log), DisableLocalhostProtection: true,
	})
	capture := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless: true, JSONResponse: true, DisableLocalhostProtection: true,
	})
	for _, newProto := range []bool{false, true} {
		v.listed[newProto] = h.captureList(capture, v, newProto)
	}
	return v
}

// captureList asks the SDK for tools/list once and adds the top-level
// securitySchemes field, which the SDK's Tool type has no room for.
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
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	w.Write(append(b, '\n'))
}

// sdkLogger keeps the SDK at Warn: its per-request Info logs cost CPU on the
// hot path and say nothing an operator needs.
func sdkLogger(l *slog.Logger) *slog.Logger {
	return slog.New(levelFloor{l.Handler(), slog.LevelWarn})
}

type levelFloor struct {
	slog.Handler
	min slog.Level
}

func (f levelFloor) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= f.min && f.Handler.Enabled(ctx, l)
}
func (f levelFloor) WithAttrs(a []slog.Attr) slog.Handler {
	return levelFloor{f.Handler.WithAttrs(a), f.min}
}
func (f levelFloor) WithGroup(n string) slog.Handler {
	return levelFloor{f.Handler.WithGroup(n), f.min}
}

// Tools lists every tool this endpoint can serve (before selection).
func (h *Handler) Tools() []*Tool { return h.all }
