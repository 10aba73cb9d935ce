package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"foundry/internal/problem"
	"foundry/internal/service"
	"foundry/internal/store"
)

// Every error of /api/ is an RFC 9457 problem document
// (application/problem+json):
//
//	{"type": "https://foundry.dev/problems/<code>", "title", "status",
//	 "detail", "code", "field"?, "rule"?, …details}
//
// For the clients written against the earlier shape, each also carries
// "error" (= code) and "message" (= detail).

// ProblemType is the prefix of every problem's type URI.
const ProblemType = "https://foundry.dev/problems/"

// ProblemContentType is the media type of every error body.
const ProblemContentType = "application/problem+json"

// Codes this door adds to package problem's.
const (
	CodePreconditionRequired = "precondition_required"
	CodeMethodNotAllowed     = "method_not_allowed"
	CodeUnauthenticated      = "unauthenticated"
	CodeCrossOrigin          = "cross_origin"
	CodeCSRFMissing          = "csrf_missing"
	CodeCSRFInvalid          = "csrf_invalid"
	CodeUnsupportedMedia     = "unsupported_media_type"
)

// statusOf is the HTTP status of a problem code.
func statusOf(code string) int {
	switch code {
	case problem.Invalid:
		return http.StatusBadRequest
	case problem.NotFound, "unknown_tab":
		return http.StatusNotFound
	case problem.Limit:
		return http.StatusRequestEntityTooLarge
	case problem.Conflict:
		return http.StatusPreconditionFailed
	case problem.KeyReused:
		return http.StatusUnprocessableEntity
	case problem.Scope, service.PersonOnly, CodeCrossOrigin, CodeCSRFMissing, CodeCSRFInvalid:
		return http.StatusForbidden
	case CodePreconditionRequired:
		return http.StatusPreconditionRequired
	case CodeMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case CodeUnauthenticated:
		return http.StatusUnauthorized
	case CodeUnsupportedMedia:
		return http.StatusUnsupportedMediaType
	case problem.Internal:
		return http.StatusInternalServerError
	}
	if strings.HasPrefix(code, "unknown_") || strings.HasPrefix(code, "invalid_") {
		return http.StatusBadRequest
	}
	return http.StatusUnprocessableEntity // a rule of the content (e.g. wrong_tab_type)
}

// titles are the short, fixed summaries of the codes (RFC 9457 "title").
var titles = map[string]string{
	problem.Invalid:          "Invalid argument",
	problem.NotFound:         "Not found",
	problem.Limit:            "Too large",
	problem.Conflict:         "The Note changed since the version this change was based on",
	problem.KeyReused:        "Idempotency key reused for a different request",
	problem.Scope:            "The token lacks a scope",
	problem.Internal:         "Internal error",
	service.PersonOnly:       "Only a person may do this",
	CodePreconditionRequired: "Precondition required",
	CodeMethodNotAllowed:     "Method not allowed",
	CodeUnauthenticated:      "Sign-in required",
	CodeCrossOrigin:          "Cross-origin request refused",
	CodeCSRFMissing:          "CSRF token missing",
	CodeCSRFInvalid:          "CSRF token invalid",
	CodeUnsupportedMedia:     "Unsupported media type",
}

// problemBody is the RFC 9457 document of p answered with status.
func problemBody(status int, p *problem.Problem) map[string]any {
	m := make(map[string]any, len(p.Details)+9)
	for k, v := range p.Details {
		m[k] = v
	}
	title := titles[p.Code]
	if title == "" {
		title = http.StatusText(status)
	}
	m["type"] = ProblemType + p.Code
	m["title"] = title
	m["status"] = status
	m["detail"] = p.Message
	m["code"] = p.Code
	m["error"], m["message"] = p.Code, p.Message
	if p.Field != "" {
		m["field"] = p.Field
	}
	if _, ok := m["rule"]; !ok {
		if rule := ruleOf(p); rule != "" {
			m["rule"] = rule
		}
	}
	return m
}

// ruleOf names the rule a refusal is about, when the code says it.
func ruleOf(p *problem.Problem) string {
	switch p.Code {
	case problem.Limit:
		return "size"
	case problem.Conflict:
		return "version"
	case CodePreconditionRequired:
		return "precondition"
	case problem.KeyReused:
		return "idempotency"
	case problem.Scope:
		return "scope"
	}
	return ""
}

// writeProblem answers p with status (0: the status of its code).
func writeProblem(w http.ResponseWriter, status int, p *problem.Problem) {
	if status == 0 {
		status = statusOf(p.Code)
	}
	b, err := json.Marshal(problemBody(status, p))
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"type":"`+ProblemType+`internal_error","title":"Internal error","status":500,"code":"internal_error","error":"internal_error","detail":"the answer could not be encoded","message":"the answer could not be encoded"}`)
	}
	w.Header().Set("Content-Type", ProblemContentType)
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// fail answers err: a problem as its status, anything else as a logged 500.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	var pr *problem.Problem
	if errors.As(err, &pr) {
		if pr.Code == problem.Conflict {
			// What to do next is this door's to say.
			if r.Header.Get("If-Match") != "" {
				pr.Field = "If-Match"
			}
			if cur, ok := pr.Details["current_version"].(int64); ok {
				pr.Message += fmt.Sprintf(": read it again (GET /api/notes/%s) and redo the change on version %d", problem.Excerpt(r.PathValue("id")), cur)
			}
			if since, ok := pr.Details["expected_version"].(int64); ok {
				if changes, err := h.changesSince(r, r.PathValue("id"), since); err == nil {
					pr.With("changes", changes)
				} else if r.Context().Err() == nil {
					h.log.Error("api: reading what changed for a conflict", "path", r.URL.Path, "cause", err)
				}
			}
		}
		writeProblem(w, 0, pr)
		return
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		writeProblem(w, http.StatusRequestEntityTooLarge, problem.New(problem.Limit, "body", "the request body is over %d bytes, the most this call takes", mbe.Limit))
		return
	}
	h.internal(w, r, err)
}

// MaxConflictChanges bounds the versions a conflict lists.
const MaxConflictChanges = 50

// changesSince is what changed a Note after version since, and who changed
// it, newest last (at most MaxConflictChanges versions, the newest ones),
// for a person to see what they conflict with.
func (h *handler) changesSince(r *http.Request, id string, since int64) ([]VersionEntry, error) {
	c, _ := r.Context().Value(callerKey{}).(*caller)
	if c == nil || id == "" {
		return []VersionEntry{}, nil
	}
	// The conflict came from the write, which checked c's reach.
	vs, err := h.st.History(r.Context(), store.TypeNote, id)
	if err != nil {
		return nil, err
	}
	names, err := h.actors(r, c.ws)
	if err != nil {
		return nil, err
	}
	out := []VersionEntry{}
	for _, v := range vs {
		if v.Version > since {
			out = append(out, versionEntry(v, names))
		}
	}
	if len(out) > MaxConflictChanges {
		out = out[len(out)-MaxConflictChanges:]
	}
	return out, nil
}
