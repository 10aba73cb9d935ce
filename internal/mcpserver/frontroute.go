package mcpserver

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/problem"
)

// Route first, then authenticate. A request without a token for a method
// that needs one is handed to the SDK all the same: the SDK validates it
// (headers, _meta, protocol version, params) and routes it exactly as a
// bare server would, so a removed or unknown method answers 404/-32601 and
// a malformed request 400, with or without a token. Only when it is about
// to dispatch a method that needs a token does needToken refuse it, and the
// front turns that refusal into the HTTP 401 with the RFC 9728 pointer.

// errNeedToken marks the refusal at dispatch; its message is what the front
// looks for in the buffered answer.
const needTokenMarker = "unauthorized: this method needs a bearer token"

var errNeedToken = &jsonrpc.Error{Code: -32001, Message: needTokenMarker}

// needToken refuses, at dispatch, a method that reaches private data when
// the request carries no principal. A subscriptions/listen that names no
// resource is acknowledged (with the empty set Foundry agrees to honour
// for it): nothing private is asked for. A resources/read of a URI that is
// not a Foundry Note or Room is answered "not found" (-32602, the URI in
// data) whoever asks.
func (h *Handler) needToken(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if _, ok := principalFromExtra(req.GetExtra()); ok || anonymous(method) {
			return next(ctx, method, req)
		}
		switch method {
		case "subscriptions/listen":
			if lp, ok := req.GetParams().(*mcp.SubscriptionsListenParams); ok && (lp.Notifications == nil || len(lp.Notifications.ResourceSubscriptions) == 0) {
				return next(ctx, method, req)
			}
		case "resources/read":
			if rp, ok := req.GetParams().(*mcp.ReadResourceParams); ok {
				if _, _, ok := parseURI(rp.URI); !ok {
					return nil, mcp.ResourceNotFoundError(rp.URI)
				}
			}
		case "resources/list", "resources/templates/list":
			return next(ctx, method, req) // nothing private: the two templates
		}
		return nil, errNeedToken
	}
}

// undeclared answers -32601 (Method not found) for every method whose
// capability this endpoint does not declare: the SDK would otherwise answer
// prompts/list, completion/complete, logging/setLevel… with empty results
// while initialize and server/discover declare no such capability. A
// 2025-11-25 resources/subscribe is never declared (a stateless endpoint has
// no stream to deliver its updates on); 2026-07-28 clients subscribe with
// subscriptions/listen.
func (h *Handler) undeclared(resources bool) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			served := true
			switch method {
			case "prompts/list", "prompts/get", "completion/complete", "logging/setLevel",
				"resources/subscribe", "resources/unsubscribe":
				served = false
			case "resources/list", "resources/templates/list":
				served = resources
			}
			if !served && (method == "resources/subscribe" || method == "resources/unsubscribe") {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method %q is not served: on MCP 2026-07-28 subscribe with subscriptions/listen; on older revisions long-poll poll_resource_events", method)}
			}
			if !served {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method %q is not served by this endpoint (see the capabilities initialize or server/discover declares)", method)}
			}
			return next(ctx, method, req)
		}
	}
}

// captureWriter holds the SDK's whole answer (headers included) to a
// request without a token, so the front can still answer 401 instead.
type captureWriter struct {
	header http.Header
	status int
	buf    bytes.Buffer
}

func (c *captureWriter) Header() http.Header { return c.header }
func (c *captureWriter) WriteHeader(status int) {
	if c.status == 0 {
		c.status = status
	}
}
func (c *captureWriter) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	return c.buf.Write(p)
}
func (c *captureWriter) Flush() {}

// serveAnonymous routes a request that carries no token through the SDK and
// answers 401 when the SDK would dispatch it to a method that needs one.
func (h *Handler) serveAnonymous(w http.ResponseWriter, r *http.Request, sdk http.Handler, m *peek) {
	cw := &captureWriter{header: http.Header{}}
	sdk.ServeHTTP(cw, r)
	if bytes.Contains(cw.buf.Bytes(), []byte(needTokenMarker)) {
		h.authenticate(w, r, m.ID) // no token: the 401 with its pointer
		return
	}
	for k, v := range cw.header {
		w.Header()[k] = v
	}
	if cw.status == 0 {
		cw.status = http.StatusOK
	}
	w.Header().Del("Content-Length")
	w.WriteHeader(cw.status)
	w.Write(cw.buf.Bytes())
}

// amendCapabilities states "listChanged": false (the SDK omits it; the
// published contract states it) and, on the 2025-11-25 initialize, never
// declares resources.subscribe: resources/subscribe is not served there
// (a stateless endpoint has no stream for its updates); 2026-07-28 clients
// subscribe with subscriptions/listen, which server/discover declares.
func amendCapabilities(b []byte, initialize bool) []byte {
	b = bytes.Replace(b, []byte(`"tools":{}`), []byte(`"tools":{"listChanged":false}`), 1)
	if initialize {
		b = bytes.Replace(b, []byte(`"resources":{"subscribe":true}`), []byte(`"resources":{}`), 1)
	}
	return b
}

// Toolset names a client or the operator may select.
var Toolsets = []string{ToolsetNotes, ToolsetRooms, ToolsetEvents}

// CheckToolsets refuses a list naming a toolset that does not exist (a typo
// would otherwise serve no tools without a word); the error is a
// *problem.Problem (field "toolsets") naming the unknown and the valid
// names. Entries are trimmed; empty ones are ignored.
func CheckToolsets(list []string) error {
	if pr := checkToolsets(list, "toolsets"); pr != nil {
		return pr
	}
	return nil
}

func checkToolsets(list []string, field string) *problem.Problem {
	var unknown []string
	for _, t := range list {
		if t = strings.TrimSpace(t); t != "" && !slices.Contains(Toolsets, t) && !slices.Contains(unknown, t) {
			unknown = append(unknown, t)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	quoted := make([]string, len(unknown))
	for i, u := range unknown {
		quoted[i] = short(u)
	}
	noun := "toolset"
	if len(unknown) > 1 {
		noun = "toolsets"
	}
	return problem.New(problem.Invalid, field, "unknown %s %s: the toolsets are %s (comma-separated, e.g. notes,rooms)",
		noun, strings.Join(quoted, ", "), strings.Join(Toolsets, ", ")).With("unknown", unknown).With("valid", Toolsets)
}
