package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/auth"
	"foundry/internal/problem"
	"foundry/internal/service"
	"foundry/internal/store"
)

// Subscriptions (MCP 2026-07-28 subscriptions/listen): a client watching a
// Note or Room is pushed notifications/resources/updated when it changes on
// any node. They are opt-in per connection (X-MCP-Subscriptions: true or
// ?subscriptions=1) so the default initialize stays exactly the published
// one. Every revision can long-poll with poll_resource_events instead.

const (
	noteURIPrefix = "foundry://notes/"
	roomURIPrefix = "foundry://rooms/"
)

// ResourceURI names a Note or Room for subscriptions and resources/read.
func ResourceURI(typ, id string) string {
	if typ == store.TypeRoom {
		return roomURIPrefix + id
	}
	return noteURIPrefix + id
}

func parseURI(uri string) (typ, id string, ok bool) {
	switch {
	case strings.HasPrefix(uri, noteURIPrefix):
		typ, id = store.TypeNote, strings.TrimPrefix(uri, noteURIPrefix)
	case strings.HasPrefix(uri, roomURIPrefix):
		typ, id = store.TypeRoom, strings.TrimPrefix(uri, roomURIPrefix)
	default:
		return "", "", false
	}
	return typ, id, id != "" && !strings.Contains(id, "/")
}

// addSubscriptions gives a server the resources that can be watched.
func (h *Handler) addSubscriptions(srv *mcp.Server) {
	srv.AddReceivingMiddleware(h.guardListen)
	srv.AddSendingMiddleware(h.guardPush)
	read := func(ctx context.Context, req *mcp.ReadResourceRequest) (_ *mcp.ReadResourceResult, err error) {
		defer h.recoverTo(ctx, &err, "resources/read")
		typ, id, ok := parseURI(req.Params.URI)
		if !ok {
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		}
		p, ok := principalFromExtra(req.Extra)
		if !ok {
			return nil, errNeedToken
		}
		var v any
		if typ == store.TypeNote {
			v, err = h.svc.ListNoteTabs(ctx, service.Agent(p), id)
		} else {
			v, err = h.svc.ReadRoom(ctx, service.Agent(p), id)
		}
		if err != nil {
			var pr *problem.Problem
			if !errors.As(err, &pr) {
				h.log.ErrorContext(ctx, "resources/read", "uri", req.Params.URI, "err", err)
			}
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		}
		b, _ := json.Marshal(v)
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}}, nil
	}
	srv.AddResourceTemplate(&mcp.ResourceTemplate{Name: "note", URITemplate: noteURIPrefix + "{note_id}", MIMEType: "application/json",
		Description: "A Note's version and tab strip; subscribe to be told when it changes."}, read)
	srv.AddResourceTemplate(&mcp.ResourceTemplate{Name: "room", URITemplate: roomURIPrefix + "{room_id}", MIMEType: "application/json",
		Description: "A cloud Room's version and launcher; subscribe to be told when it changes."}, read)
}

// broadcast pushes a change to every subscribed session of every server.
func (h *Handler) broadcast(typ, id string) {
	h.mu.Lock()
	var srvs []*mcp.Server
	for _, v := range h.variants {
		if v.subs {
			srvs = append(srvs, v.srv)
		}
	}
	h.mu.Unlock()
	if len(srvs) == 0 {
		return
	}
	uri := ResourceURI(typ, id)
	go func() {
		defer h.recoverTo(context.Background(), nil, "broadcast "+uri)
		for _, s := range srvs {
			s.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri})
		}
	}()
}

// checkSubscriptions refuses a listen for a resource the principal can't
// reach (not found, as everywhere), before the SDK records it.
func (h *Handler) checkSubscriptions(ctx context.Context, p auth.Principal, m *peek) error {
	for _, uri := range m.Params.ResourceSubscriptions {
		if err := h.canSee(ctx, p, uri); err != nil {
			return err
		}
	}
	return nil
}

func subscriptionsWanted(r *http.Request) bool {
	v := r.Header.Get("X-MCP-Subscriptions")
	if q := r.URL.Query().Get("subscriptions"); q != "" {
		v = q
	}
	return v == "1" || strings.EqualFold(v, "true")
}

func principalFromExtra(x *mcp.RequestExtra) (auth.Principal, bool) {
	if x == nil || x.TokenInfo == nil {
		return auth.Principal{}, false
	}
	p, ok := x.TokenInfo.Extra[principalKey].(auth.Principal)
	return p, ok
}

// canSee: the principal may read the resource (refused as not found, as
// everywhere, when it may not).
func (h *Handler) canSee(ctx context.Context, p auth.Principal, uri string) error {
	typ, id, ok := parseURI(uri)
	if !ok {
		return errors.New("resource " + short(uri) + " is not a Foundry Note or Room URI (foundry://notes/ID, foundry://rooms/ID)")
	}
	var err error
	if typ == store.TypeNote {
		_, err = h.svc.ListNoteTabs(ctx, service.Agent(p), id)
	} else {
		_, err = h.svc.ReadRoom(ctx, service.Agent(p), id)
	}
	if err != nil {
		var pr *problem.Problem
		if !errors.As(err, &pr) {
			h.log.ErrorContext(ctx, "subscription check", "uri", short(uri), "err", err)
		}
		return errors.New("resource " + short(uri) + " was not found")
	}
	return nil
}

// short keeps a client's value short enough to quote back.
func short(s string) string {
	if len(s) <= 120 {
		return strconv.Quote(s)
	}
	r := []rune(s[:120])
	return strconv.Quote(string(r[:len(r)-1])+"…") + fmt.Sprintf(" (%d bytes)", len(s))
}

// watcher is one open subscriptions/listen stream: who listens, with which
// token, and how to end it.
type watcher struct {
	p      auth.Principal
	secret string
	stop   context.CancelFunc
}

func (h *Handler) watcherOf(s mcp.Session) *watcher {
	ss, ok := s.(*mcp.ServerSession)
	if !ok {
		return nil
	}
	if w, ok := h.watchers.Load(ss); ok {
		return w.(*watcher)
	}
	return nil
}

// guardListen checks a listen where the SDK dispatches it (token and grant,
// whatever the front saw), bounds its life, and records it so every push
// can be checked again.
func (h *Handler) guardListen(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "subscriptions/listen" {
			return next(ctx, method, req)
		}
		p, ok := principalFromExtra(req.GetExtra())
		if !ok {
			// Nothing private asked for (needToken let it through): the
			// SDK acknowledges the empty set Foundry honours for it.
			return next(ctx, method, req)
		}
		if lp, ok := req.GetParams().(*mcp.SubscriptionsListenParams); ok && lp.Notifications != nil {
			for _, uri := range lp.Notifications.ResourceSubscriptions {
				if err := h.canSee(ctx, p, uri); err != nil {
					return nil, &jsonrpc.Error{Code: -32002, Message: err.Error()}
				}
			}
		}
		secret, _ := req.GetExtra().TokenInfo.Extra[secretKey].(string)
		ctx, cancel := context.WithTimeout(ctx, h.opts.ListenLifetime)
		defer cancel()
		// A shutdown ends the stream as its lifetime does: the client
		// listens again, on another node behind a balancer.
		if h.svc != nil {
			defer context.AfterFunc(h.svc.StoppingContext(), cancel)()
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if ss != nil {
			h.watchers.Store(ss, &watcher{p: p, secret: secret, stop: cancel})
			defer h.watchers.Delete(ss)
		}
		return next(ctx, method, req)
	}
}

// guardPush re-checks, before every notifications/resources/updated, that
// the stream's token is still valid (a revoked or expired token ends the
// stream) and that it may still see the resource (else the push is
// dropped).
func (h *Handler) guardPush(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		if method != "notifications/resources/updated" {
			return next(ctx, method, req)
		}
		defer h.recoverTo(ctx, &err, method)
		wt := h.watcherOf(req.GetSession())
		up, _ := req.GetParams().(*mcp.ResourceUpdatedNotificationParams)
		if wt == nil || up == nil {
			return nil, nil // not a listen stream Foundry opened: nothing to push to
		}
		if _, err := h.verify(ctx, wt.secret); err != nil {
			if errors.Is(err, auth.ErrInvalidToken) {
				wt.stop() // the token is gone: so is its stream
			} else {
				h.log.ErrorContext(ctx, "re-check a subscription's token", "err", err)
			}
			return nil, nil
		}
		if h.canSee(ctx, wt.p, up.URI) != nil {
			return nil, nil
		}
		return next(ctx, method, req)
	}
}

// tooManyStreams refuses a listen over its cap.
func tooManyStreams(w http.ResponseWriter, id json.RawMessage, retry int) {
	w.Header().Set("Retry-After", strconv.Itoa(retry))
	pr := problem.New(service.TooManyWaiters, "subscriptions/listen",
		"too many subscription streams are open already for this token or on this server; retry after %d s, or long-poll poll_resource_events", retry).With("retry_after", retry)
	writeRPCErrorData(w, http.StatusTooManyRequests, id, -32000, pr.Error(), pr)
}

func streamKey(p auth.Principal) string {
	if p.TokenID != "" {
		return "t:" + p.TokenID
	}
	return "u:" + p.Workspace + "/" + p.User
}

// OpenStreams is how many subscriptions/listen streams are open now.
func (h *Handler) OpenStreams() int { return h.streams.Held() }
