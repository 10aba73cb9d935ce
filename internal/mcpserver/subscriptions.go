package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/auth"
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
	read := func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		p, ok := principalFromExtra(req.Extra)
		if !ok {
			return nil, errors.New("resources/read needs a bearer token")
		}
		typ, id, ok := parseURI(req.Params.URI)
		if !ok {
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		}
		var v map[string]any
		var err error
		if typ == store.TypeNote {
			v, err = h.svc.ListNoteTabs(ctx, p, id)
		} else {
			v, err = h.svc.ReadRoom(ctx, p, id)
		}
		if err != nil {
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
		for _, s := range srvs {
			s.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri})
		}
	}()
}

// checkSubscriptions refuses a listen for a resource the principal can't
// reach (not found, as everywhere), before the SDK records it.
func (h *Handler) checkSubscriptions(ctx context.Context, p auth.Principal, m *peek) error {
	uris := m.Params.Notifications.ResourceSubscriptions
	if m.Params.URI != "" {
		uris = append(uris, m.Params.URI)
	}
	for _, uri := range uris {
		typ, id, ok := parseURI(uri)
		if !ok {
			return errors.New("resource " + uri + " is not a Foundry Note or Room URI (foundry://notes/ID, foundry://rooms/ID)")
		}
		var err error
		if typ == store.TypeNote {
			_, err = h.svc.ListNoteTabs(ctx, p, id)
		} else {
			_, err = h.svc.ReadRoom(ctx, p, id)
		}
		if err != nil {
			return errors.New("resource " + uri + " was not found")
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
