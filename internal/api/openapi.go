package api

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/swaggest/openapi-go"
	"github.com/swaggest/openapi-go/openapi31"
)

// The OpenAPI 3.1 document of the API is generated from the routes' Go
// request and answer types (the same types the handlers decode and
// encode), so the document cannot say what the handlers do not. It is
// committed as openapi.json — the web app's TypeScript types are generated
// from that file — and TestOpenAPIDocumentIsCurrent fails when it differs
// from what the routes generate (regenerate it with go generate
// ./internal/api).
//
//go:generate go run ./openapigen openapi.json

// OpenAPI is the committed document, served at GET /api/openapi.json.
//
//go:embed openapi.json
var OpenAPI []byte

var openapiDoc = doc{summary: "This document", media: "application/json"}

func (h *handler) openapi(w http.ResponseWriter, r *http.Request, _ *caller) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(OpenAPI)
}

// Problem is the RFC 9457 document every refusal of the API answers
// (application/problem+json).
type Problem struct {
	Type   string `json:"type" description:"https://foundry.dev/problems/<code>"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail" description:"What was wrong, and what to do next"`
	Code   string `json:"code" description:"A stable machine code, e.g. version_conflict"`
	Field  string `json:"field,omitempty" description:"The offending argument, header or parameter"`
	Rule   string `json:"rule,omitempty"`
	// The earlier shape's names of code and detail.
	Error   string `json:"error"`
	Message string `json:"message"`
	// version_conflict details.
	CurrentVersion *int64         `json:"current_version,omitempty"`
	ChangedTabIDs  []string       `json:"changed_tab_ids,omitempty"`
	Changes        []VersionEntry `json:"changes,omitempty" description:"What changed since the version the change was based on, and who changed it"`
}

// refusals are the statuses a route may refuse with.
func refusals(rt route) []int {
	out := []int{http.StatusBadRequest, http.StatusNotFound, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity, http.StatusInternalServerError}
	if rt.access != public {
		out = append(out, http.StatusUnauthorized, http.StatusForbidden)
	}
	if rt.method != http.MethodGet {
		out = append(out, http.StatusUnsupportedMediaType, http.StatusConflict)
	}
	if rt.doc.write {
		out = append(out, http.StatusPreconditionFailed, http.StatusPreconditionRequired)
	}
	if rt.doc.media == "text/event-stream" {
		out = append(out, http.StatusTooManyRequests, http.StatusGone)
	}
	return out
}

// Document generates the OpenAPI 3.1 document of the routes.
func Document() ([]byte, error) {
	ref := openapi31.NewReflector()
	ref.Spec.Info.WithTitle("Foundry REST API").WithVersion("1").
		WithDescription("The REST door of Foundry, for its web app and for scripts. Every mutating call on a Note or a Room carries the version it was based on (If-Match: \"<version>\", the ETag of the read, or expected_version in the body) and may carry an Idempotency-Key; a stale version answers 412 with what changed, none 428. Every refusal is an RFC 9457 problem naming the field and the rule.")
	ref.Spec.SetAPIKeySecurity("session", "foundry_session", openapi.InCookie, "A person signed in to the web app; mutating calls also send the session's CSRF token in X-CSRF-Token (GET /api/me).")
	ref.Spec.SetHTTPBearerTokenSecurity("bearer", "", "A personal access token (foundry token create) or an OAuth access token; its scopes and grant apply.")
	for _, rt := range (&handler{}).routes() {
		oc, err := ref.NewOperationContext(rt.method, rt.path)
		if err != nil {
			return nil, err
		}
		oc.SetSummary(rt.doc.summary)
		oc.SetID(operationID(rt))
		switch rt.access {
		case sessionOnly:
			oc.AddSecurity("session")
		case sessionOrToken:
			oc.AddSecurity("session")
			oc.AddSecurity("bearer", rt.scope)
		}
		if rt.doc.req != nil {
			if rt.doc.rawBody != "" {
				oc.AddReqStructure(rt.doc.req)
				oc.AddReqStructure(nil, openapi.WithContentType(rt.doc.rawBody))
			} else {
				oc.AddReqStructure(rt.doc.req)
			}
		}
		status := rt.doc.status
		switch {
		case status == 0 && rt.doc.resp == nil && rt.doc.media == "":
			status = http.StatusNoContent
		case status == 0:
			status = http.StatusOK
		}
		switch {
		case rt.doc.media == "application/json":
			oc.AddRespStructure(map[string]any{}, openapi.WithHTTPStatus(status))
		case rt.doc.media != "":
			oc.AddRespStructure(rt.doc.resp, openapi.WithHTTPStatus(status), openapi.WithContentType(rt.doc.media))
		case rt.doc.resp != nil:
			oc.AddRespStructure(rt.doc.resp, openapi.WithHTTPStatus(status))
		default:
			oc.AddRespStructure(nil, openapi.WithHTTPStatus(status))
		}
		for _, s := range refusals(rt) {
			oc.AddRespStructure(Problem{}, openapi.WithHTTPStatus(s), openapi.WithContentType(ProblemContentType))
		}
		if err := ref.AddOperation(oc); err != nil {
			return nil, fmt.Errorf("%s %s: %w", rt.method, rt.path, err)
		}
	}
	raw, err := json.Marshal(ref.Spec)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// operationID names a route's operation by its method and path
// ("getNotesNoteIdTabsTabId").
func operationID(rt route) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(rt.method))
	for _, seg := range strings.Split(strings.TrimPrefix(rt.path, Prefix), "/") {
		seg = strings.Trim(seg, "{}")
		for _, part := range strings.FieldsFunc(seg, func(r rune) bool { return r == '_' || r == '.' }) {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"internal_error","message":"the answer could not be encoded"}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
