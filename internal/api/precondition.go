package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"foundry/internal/problem"
	"foundry/internal/service"
	"foundry/internal/strictjson"
)

// Every mutating call on a Note says which version it was based on, in
// If-Match: "<version>" (the ETag of what it read) or in the body's
// expected_version; both, when they differ, is a 400 naming both; neither
// is a 428. An optional Idempotency-Key (8–128 characters) makes a resend
// answer the first result (Idempotency-Replayed: true).

// HeaderReplayed marks a replayed answer.
const HeaderReplayed = "Idempotency-Replayed"

// HeaderKey is the idempotency key's header.
const HeaderKey = "Idempotency-Key"

// etag is the entity tag of a Note version.
func etag(v int64) string { return `"` + strconv.FormatInt(v, 10) + `"` }

// ifMatch is the version in r's If-Match, 0 when there is none.
func ifMatch(r *http.Request) (int64, error) {
	vs := r.Header.Values("If-Match")
	if len(vs) == 0 {
		return 0, nil
	}
	v := strings.TrimSpace(strings.Join(vs, ","))
	bad := func() error {
		return problem.New(problem.Invalid, "If-Match", "%q is not a version: send If-Match: \"<version>\" with the ETag of the Note you read (one version, in double quotes)", problem.Excerpt(v))
	}
	if len(v) < 3 || v[0] != '"' || v[len(v)-1] != '"' {
		return 0, bad()
	}
	digits := v[1 : len(v)-1]
	if digits == "" || len(digits) > 18 || strings.Trim(digits, "0123456789") != "" || (len(digits) > 1 && digits[0] == '0') {
		return 0, bad()
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n < 1 {
		return 0, bad()
	}
	return n, nil
}

// Precondition is what every write request carries besides its own
// fields: the version it was based on (If-Match or expected_version) and an
// optional idempotency key.
type Precondition struct {
	HeaderPrecondition
	ExpectedVersion *int64 `json:"expected_version,omitempty" minimum:"1" description:"The version the change is based on, if not in If-Match (both: they must agree)."`
}

// HeaderPrecondition is the precondition of a write whose body is not a
// JSON object (an upload's body is the file): If-Match, required, and the
// idempotency key, both headers.
type HeaderPrecondition struct {
	IfMatch        string `header:"If-Match" json:"-" description:"The version the change is based on, as the ETag of the read it was based on: \"<version>\". Required unless a JSON body gives expected_version."`
	IdempotencyKey string `header:"Idempotency-Key" json:"-" minLength:"8" maxLength:"128" description:"Names this change: a resend with the same key and request answers the first result (Idempotency-Replayed: true)."`
}

// guard is the service's Guard of a write: its version, from If-Match
// and/or expected_version, and its key.
func (p *Precondition) guard(r *http.Request) (service.Guard, error) {
	hv, err := ifMatch(r)
	if err != nil {
		return service.Guard{}, err
	}
	body := p.ExpectedVersion
	if body != nil && *body < 1 {
		return service.Guard{}, problem.New(problem.Invalid, "expected_version", "must be the version the change is based on (≥ 1); got %d", *body)
	}
	g := service.Guard{IdempotencyKey: p.IdempotencyKey}
	switch {
	case body != nil && hv != 0 && *body != hv:
		return service.Guard{}, problem.New(problem.Invalid, "If-Match", "If-Match says version %d and expected_version says %d: send one of them, or both the same", hv, *body).
			With("if_match", hv).With("expected_version", *body)
	case hv != 0:
		g.ExpectedVersion = hv
	case body != nil:
		g.ExpectedVersion = *body
	}
	return g, nil
}

// decodeBody reads r's JSON object into v: unknown members, a second value,
// a wrong type or malformed JSON are refused naming the member. Before
// encoding/json sees it, the body is held to strictjson's rules, the MCP
// tools' too (encoding/json would store invalid UTF-8 and lone surrogates as
// U+FFFD, keep a NUL that PostgreSQL cannot store, and let the last of a
// member sent twice win). An empty body decodes as {} when optional.
func decodeBody(r *http.Request, v any, optional bool) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return problem.New(CodeUnsupportedMedia, "Content-Type", "%q is not JSON: send Content-Type: application/json", problem.Excerpt(ct))
		}
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return problem.New(problem.Limit, "body", "the request body is over %d bytes, the most this call takes", mbe.Limit)
		}
		return problem.New(problem.Invalid, "body", "the request body could not be read: send it again")
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		if optional {
			return nil
		}
		return problem.New(problem.Invalid, "body", "is empty: send a JSON object")
	}
	// What is not JSON at all, encoding/json words below.
	var syntax *strictjson.SyntaxError
	if err := strictjson.Check(raw, "body"); err != nil && !errors.As(err, &syntax) {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonProblem(err)
	}
	if dec.More() {
		return problem.New(problem.Invalid, "body", "holds more than one JSON value: send one object")
	}
	if syntax != nil { // e.g. a stray "]" after the object, which More does not see
		return problem.New(problem.Invalid, "body", "is not valid JSON (at byte %d): send one object", syntax.Offset)
	}
	return nil
}

func jsonProblem(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			return problem.New(problem.Invalid, "body", "must be a JSON object, not %s", te.Value)
		}
		return problem.New(problem.Invalid, field, "must be %s, not %s", jsonKind(te.Type.Kind().String()), te.Value)
	case errors.As(err, &se):
		return problem.New(problem.Invalid, "body", "is not valid JSON (at byte %d): %s", se.Offset, se.Error())
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name, _ := strconv.Unquote(strings.TrimPrefix(err.Error(), "json: unknown field "))
		return problem.New(problem.Invalid, name, "is not a member of this request: see GET /api/openapi.json for what it takes")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return problem.New(problem.Invalid, "body", "ends in the middle of a JSON value: send a complete object")
	}
	return problem.New(problem.Invalid, "body", "is not a JSON object this call takes: %s", problem.Excerpt(err.Error()))
}

func jsonKind(k string) string {
	switch k {
	case "int64", "int", "int32":
		return "an integer"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "ptr":
		return "a value of the right type"
	}
	return fmt.Sprintf("a %s", k)
}
