package api

import (
	"errors"
	"net/http"

	"foundry/internal/problem"
	"foundry/internal/service"
)

// Connected: the OAuth clients connected to the workspace and its personal
// access tokens. Members see and revoke their own; the owner sees and
// revokes the workspace's.

// ConnectionList is GET /api/connections's answer, newest first.
type ConnectionList struct {
	Connections []service.Entry `json:"connections" nullable:"false"`
}

var listConnectionsDoc = doc{summary: "The connected clients and tokens the caller may see, newest first", resp: ConnectionList{}}

func (h *handler) listConnections(w http.ResponseWriter, r *http.Request, c *caller) {
	if !h.noParams(w, r) {
		return
	}
	out, err := h.svc.ListConnections(r.Context(), c.svc)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ConnectionList{Connections: out})
}

// ConnectionRequest names one connection or token.
type ConnectionRequest struct {
	ID string `path:"id" json:"-"`
}

var revokeConnectionDoc = doc{summary: "Revoke a connection or token (at once on this node)", req: ConnectionRequest{}}

func (h *handler) revokeConnection(w http.ResponseWriter, r *http.Request, c *caller) {
	in, ok := bindNoBody[ConnectionRequest](h, w, r)
	if !ok {
		return
	}
	err := h.svc.RevokeConnection(r.Context(), c.svc, in.ID)
	var pr *problem.Problem
	switch {
	case err == nil:
		w.WriteHeader(http.StatusNoContent)
	case errors.As(err, &pr) && pr.Details["revoked_at"] != nil:
		writeProblem(w, http.StatusConflict, pr)
	default:
		h.fail(w, r, err)
	}
}
