package api

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/swaggest/jsonschema-go"
	"github.com/swaggest/openapi-go"
	"github.com/swaggest/openapi-go/openapi31"
)

// The OpenAPI 3.1 document of the API is generated from the routes' Go
// request and answer types (the same types the handlers decode and
// encode), so the document cannot say what the handlers do not. It is
// committed as openapi.json, for clients' types to be generated from, and
// TestOpenAPIDocumentIsCurrent fails when it differs
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
	ChangedTabIDs  []string       `json:"changed_tab_ids,omitempty" description:"A Note's: the tabs changed since the version the change was based on"`
	ChangedIDs     []string       `json:"changed_ids,omitempty" description:"A Room's: the apps changed since the version the change was based on"`
	Changes        []VersionEntry `json:"changes,omitempty" description:"What changed since the version the change was based on, and who changed it"`
	// insufficient_scope and limit_exceeded details; other codes add their own.
	RequiredScope string `json:"required_scope,omitempty"`
	Limit         string `json:"limit,omitempty" description:"Which limit: file_bytes, files_per_note, bytes_per_note, …"`
	Max           *int64 `json:"max,omitempty" description:"The limit's value"`
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

// problemResponse is the one response every refusal of every route refers
// to (components/responses).
const problemResponse = "#/components/responses/Problem"

// problemText is the Problem response's description: what each refusal
// status of the API means.
const problemText = `An RFC 9457 problem (application/problem+json): code says what was refused, field names the argument, header or parameter, rule the rule. By status:
400 an argument, parameter or header is invalid;
401 nobody is signed in, or the bearer token is not valid;
403 a missing CSRF token or scope, another origin, a person's act by a token, or not the Room's reviewer;
404 no such path, or nothing the caller can reach by that ID;
409 already done (a proposal decided, a source attached, a token revoked);
412 the version the change was based on is stale: current_version, changed_tab_ids and changes say what happened since;
413 over a limit (the body, a field, a file, a Note's files);
415 the body is not JSON;
422 a rule of the content refuses it, or the Idempotency-Key was used for another request;
428 the write did not say which version it was based on;
410 the stream's Last-Event-ID is older than the event feed keeps;
429 too many open streams (Retry-After);
500 Foundry failed, and logged why.`

// Document generates the OpenAPI 3.1 document of the routes. Schemas are
// named by their Go type alone (NoteWrite, not ApiNoteWrite) unless two
// types share a name; every member an answer always has is required, and
// a member may be null only where its JSON can be; every refusal refers
// to the one Problem response.
func Document() ([]byte, error) {
	ref := openapi31.NewReflector()
	js := ref.JSONSchemaReflector()
	js.DefaultOptions = append(js.DefaultOptions,
		jsonschema.InterceptDefName(shortNames()),
		jsonschema.InterceptProp(members),
		func(rc *jsonschema.ReflectContext) { rc.EnvelopNullability = true }, // a nullable $ref is anyOf [null, $ref]
	)
	ref.Spec.Info.WithTitle("Foundry REST API").WithVersion("1").
		WithDescription("The REST door of Foundry, for its web app and for scripts. Every mutating call on a Note or a Room carries the version it was based on (If-Match: \"<version>\", the ETag of the read, or expected_version in the body) and may carry an Idempotency-Key; a stale version answers 412 with what changed, none 428. Every refusal is an RFC 9457 problem naming the field and the rule.")
	ref.Spec.SetAPIKeySecurity("session", "foundry_session", openapi.InCookie, "A person signed in to the web app; mutating calls also send the session's CSRF token in X-CSRF-Token (GET /api/me).")
	ref.Spec.SetHTTPBearerTokenSecurity("bearer", "", "A personal access token (foundry token create); its scopes and grant apply. An OAuth access token issued for the MCP endpoint is refused (401, naming its audience).")
	if err := addProblemResponse(ref); err != nil {
		return nil, err
	}
	for _, rt := range (&handler{}).routes() {
		oc, err := ref.NewOperationContext(rt.method, rt.path)
		if err != nil {
			return nil, err
		}
		oc.SetSummary(rt.doc.summary)
		if rt.doc.description != "" {
			oc.SetDescription(rt.doc.description)
		}
		oc.SetID(operationID(rt))
		switch rt.access {
		case sessionOnly:
			oc.AddSecurity("session")
		case sessionOrToken:
			oc.AddSecurity("session")
			oc.AddSecurity("bearer", rt.scope)
		}
		if rt.doc.req != nil {
			oc.AddReqStructure(rt.doc.req)
			if rt.doc.rawBody != "" {
				oc.AddReqStructure(nil, openapi.WithContentType(rt.doc.rawBody))
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
			oc.AddRespStructure(nil, openapi.WithHTTPStatus(s), openapi.WithReference(problemResponse))
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

// addProblemResponse puts the Problem response, and its schema, in the
// document's components.
func addProblemResponse(ref *openapi31.Reflector) error {
	var resp *openapi31.Response
	err := ref.WalkResponseJSONSchemas(openapi.ContentUnit{Structure: Problem{}, ContentType: ProblemContentType, HTTPStatus: http.StatusBadRequest,
		Description: problemText},
		func(openapi.In, string, *jsonschema.SchemaOrBool, bool) error { return nil },
		func(oc openapi.OperationContext) {
			if op, ok := oc.(openapi31.OperationExposer); ok && op.Operation().Responses != nil {
				for _, r := range op.Operation().Responses.MapOfResponseOrReferenceValues {
					resp = r.Response
				}
			}
		})
	if err != nil {
		return err
	}
	if resp == nil {
		return fmt.Errorf("the Problem response was not reflected")
	}
	ref.Spec.ComponentsEns().WithResponsesItem(strings.TrimPrefix(problemResponse, "#/components/responses/"), openapi31.ResponseOrReference{Response: resp})
	return nil
}

// shortNames names a schema by its Go type's name, without the package
// the default name starts with, unless another type already has it.
func shortNames() func(t reflect.Type, defaultName string) string {
	owner := map[string]reflect.Type{}
	return func(t reflect.Type, defaultName string) string {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		name := t.Name()
		if name == "" || strings.ContainsAny(name, "[]") {
			return defaultName
		}
		if o, ok := owner[name]; ok && o != t {
			return defaultName
		}
		owner[name] = t
		return name
	}
}

// members makes a schema say what its JSON is. In an answer, a member
// without omitempty or omitzero is always there (required), and one with
// either is absent rather than null; a nullable $ref is anyOf [null, $ref]
// and nothing else. In a request, a required member is never null (bind
// refuses a null as missing).
func members(p jsonschema.InterceptPropParams) error {
	oc, ok := openapi.OperationCtx(p.Context)
	if !p.Processed || !ok {
		return nil
	}
	s := p.PropertySchema
	if !oc.IsProcessingResponse() {
		if p.Field.Tag.Get("required") == "true" {
			s.RemoveType(jsonschema.Null)
		}
		return nil
	}
	name, opts, _ := strings.Cut(p.Field.Tag.Get("json"), ",")
	if name == "-" || name == "" {
		return nil
	}
	if len(s.AnyOf) > 0 && s.Ref == nil {
		s.Type = nil
		for _, alt := range s.AnyOf {
			if alt.TypeObject != nil && alt.TypeObject.Ref != nil {
				alt.TypeObject.Type = nil
			}
		}
	}
	if o := strings.Split(opts, ","); slices.Contains(o, "omitempty") || slices.Contains(o, "omitzero") {
		s.RemoveType(jsonschema.Null)
		return nil
	}
	if !slices.Contains(p.ParentSchema.Required, p.Name) {
		p.ParentSchema.Required = append(p.ParentSchema.Required, p.Name)
	}
	return nil
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
