package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"strings"

	"foundry/internal/auth"
	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/reqlog"
	"foundry/internal/service"
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
	CodeMethodNotAllowed = "method_not_allowed"
	CodeUnauthenticated  = "unauthenticated"
	CodeCrossOrigin      = "cross_origin"
	CodeCSRFMissing      = "csrf_missing"
	CodeCSRFInvalid      = "csrf_invalid"
	CodeUnsupportedMedia = "unsupported_media_type"
	// CodeSourceExists is the answer to adding a page already attached.
	CodeSourceExists = "source_exists"
)

// SourceExistsDetail is what a person sees when the page is already there.
const SourceExistsDetail = "This source is already attached"

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
	case problem.Scope, service.PersonOnly, service.NotReviewer, service.OwnerOnly, CodeCrossOrigin, CodeCSRFMissing, CodeCSRFInvalid:
		return http.StatusForbidden
	case service.AlreadyDecided, CodeSourceExists, service.LastOwner, service.EmailTaken:
		return http.StatusConflict
	case service.TooManyWaiters:
		return http.StatusTooManyRequests
	case service.CursorExpired:
		return http.StatusGone
	case service.PreconditionRequired:
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
	problem.Invalid:              "Invalid argument",
	problem.NotFound:             "Not found",
	problem.Limit:                "Too large",
	problem.Conflict:             "The Note changed since the version this change was based on",
	problem.KeyReused:            "Idempotency key reused for a different request",
	problem.Scope:                "The token lacks a scope",
	problem.Internal:             "Internal error",
	service.PersonOnly:           "Only a person may do this",
	service.OwnerOnly:            "Only a workspace owner may do this",
	service.LastOwner:            "The workspace needs an owner",
	service.EmailTaken:           "Already exists",
	service.PreconditionRequired: "Precondition required",
	CodeMethodNotAllowed:         "Method not allowed",
	CodeUnauthenticated:          "Sign-in required",
	CodeCrossOrigin:              "Cross-origin request refused",
	CodeCSRFMissing:              "CSRF token missing",
	CodeCSRFInvalid:              "CSRF token invalid",
	CodeUnsupportedMedia:         "Unsupported media type",
	service.CursorExpired:        "The event feed no longer holds that cursor",
	service.UnsupportedTopic:     "The stream follows no such topic",
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
	case service.PreconditionRequired:
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
	if status < 500 {
		reqlog.NoteRefusal(w, reqlog.DoorREST, p.Code)
	}
	w.Header().Set("Content-Type", ProblemContentType)
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// fail answers err: a problem in this door's words (see inRESTWords) and
// its status, anything else as a logged 500.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	var pr *problem.Problem
	if errors.As(err, &pr) {
		p := h.inRESTWords(r, pr)
		if s, ok := p.Details["retry_after"].(int); ok {
			w.Header().Set("Retry-After", strconv.Itoa(s))
		}
		writeProblem(w, 0, p)
		return
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		writeProblem(w, http.StatusRequestEntityTooLarge, problem.New(problem.Limit, "body", "the request body is over %d bytes, the most this call takes", mbe.Limit))
		return
	}
	h.internal(w, r, err)
}

// inRESTWords is p as this door says it: the service names the arguments
// of an act (expected_version, idempotency_key, content_type); here they
// come as headers, and what to do next names a route. Code and details
// stay; a copy is changed, never p.
func (h *handler) inRESTWords(r *http.Request, p *problem.Problem) *problem.Problem {
	c := *p
	c.Details = maps.Clone(p.Details)
	switch c.Field {
	case "expected_version":
		if len(r.Header.Values("If-Match")) > 0 || c.Code == service.PreconditionRequired {
			c.Field = "If-Match"
		}
	case "idempotency_key":
		c.Field = HeaderKey
		if c.Code == problem.KeyReused {
			c.Message = fmt.Sprintf("this Idempotency-Key was already used for a different request here (%s). Use a fresh key for a different change; resend the same key only with the same request.", problem.Excerpt(r.Header.Get(HeaderKey)))
		}
	case "content_type":
		c.Field = "Content-Type"
	case "tab_type":
		c.Field = "type"
	case "cursor":
		switch routeOf(r) {
		case "/api/events":
			c.Field = "Last-Event-ID"
		case "/api/live":
			c.Field = "after"
			if r.Header.Get("Last-Event-ID") != "" {
				c.Field = "Last-Event-ID"
			}
		}
	case "":
		if c.Code == problem.Scope || c.Code == service.PersonOnly {
			c.Field = "Authorization"
		}
	}
	noteID, roomID := r.PathValue("note_id"), r.PathValue("room_id")
	switch c.Code {
	case service.PreconditionRequired:
		c.Message += `: send If-Match: "<version>" (the ETag of the GET it was based on) or expected_version in the body`
	case problem.Conflict:
		if cur, ok := c.Details["current_version"].(int64); ok {
			if roomID != "" {
				c.Message += fmt.Sprintf(": read the Room again (GET /api/rooms/%s) and redo the change on version %d", problem.Excerpt(roomID), cur)
			} else {
				c.Message += fmt.Sprintf(": read it again (GET /api/notes/%s) and redo the change on version %d", problem.Excerpt(noteID), cur)
			}
		}
		if since, ok := c.Details["expected_version"].(int64); ok && noteID != "" {
			if cl, ok := r.Context().Value(callerKey{}).(*caller); ok {
				if changes, err := h.svc.ChangesSince(r.Context(), cl.svc, noteID, since); err == nil {
					c.Details["changes"] = versionEntries(changes)
				} else if r.Context().Err() == nil && !errors.As(err, new(*problem.Problem)) {
					// A refusal (the Note is in the trash) says nothing changed to list.
					h.log.ErrorContext(r.Context(), "api: reading what changed for a conflict", "path", r.URL.Path, "cause", err)
				}
			}
		}
	case problem.NotFound:
		switch c.Field {
		case "note_id":
			if c.Details["in_trash"] == true {
				c.Message += fmt.Sprintf(" (here: POST /api/notes/%s/untrash; GET /api/trash lists the trash)", problem.Excerpt(noteID))
			} else {
				c.Message += ": list the Notes you can open with GET /api/notes"
			}
		case "room_id":
			c.Message += ": GET /api/rooms lists them"
		case "file_id":
			c.Message += fmt.Sprintf(" (GET /api/notes/%s/tabs/files)", problem.Excerpt(noteID))
		case "source_id":
			c.Message += fmt.Sprintf(" (GET /api/notes/%s/tabs/sources)", problem.Excerpt(noteID))
		}
	case service.CursorExpired:
		if c.Field == "Last-Event-ID" {
			c.Message += ": here, GET the Note again and reconnect without Last-Event-ID"
		}
	case note.CodeUnknownTab:
		c.Message += fmt.Sprintf(" GET /api/notes/%s lists them.", problem.Excerpt(noteID))
	case problem.Scope:
		c.Message += fmt.Sprintf("; create a token with it (`foundry token create --scopes %s,%s`)", auth.ScopeRead, auth.ScopeWrite)
	case service.AlreadyDecided:
		delete(c.Details, "decided_by_actor")
	}
	return &c
}
