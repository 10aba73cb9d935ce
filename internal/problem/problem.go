// Package problem is the error a caller can act on: which field, which rule,
// and what to do next. Tools turn it into an isError result, REST into a 4xx
// body. Programming faults stay plain Go errors.
package problem

import (
	"encoding/json"
	"fmt"
)

// Problem is a refusal that names the field and the rule. It is written as
// one flat JSON object, {"error", "field", "message", …details}, so that a
// client finds e.g. current_version where it finds error.
type Problem struct {
	Code    string // stable machine code, e.g. "unknown_tab"
	Field   string // JSON path of the offending argument, e.g. "slides[0].title"
	Message string // the rule and the next step, for a model or a person
	// Details carries structured extras (e.g. current_version, the list of
	// current tabs); they are written beside error, field and message.
	Details map[string]any
}

// MarshalJSON writes the problem flat.
func (p *Problem) MarshalJSON() ([]byte, error) {
	m := make(map[string]any, len(p.Details)+3)
	for k, v := range p.Details {
		m[k] = v
	}
	m["error"], m["message"] = p.Code, p.Message
	if p.Field != "" {
		m["field"] = p.Field
	}
	return json.Marshal(m)
}

func (p *Problem) Error() string {
	if p.Field != "" {
		return fmt.Sprintf("%s: %s: %s", p.Code, p.Field, p.Message)
	}
	return p.Code + ": " + p.Message
}

// New builds a Problem; msg is formatted with args.
func New(code, field, msg string, args ...any) *Problem {
	if len(args) > 0 {
		msg = fmt.Sprintf(msg, args...)
	}
	return &Problem{Code: code, Field: field, Message: msg}
}

// With returns p with one detail added.
func (p *Problem) With(key string, v any) *Problem {
	if p.Details == nil {
		p.Details = map[string]any{}
	}
	p.Details[key] = v
	return p
}

// Common codes.
const (
	Invalid   = "invalid_argument" // fails a schema or server rule
	NotFound  = "not_found"
	Limit     = "limit_exceeded"
	Conflict  = "version_conflict"
	KeyReused = "idempotency_key_reused"
)

// More codes.
const (
	Scope    = "insufficient_scope" // the token lacks the scope the call needs
	Internal = "internal_error"     // a fault on Foundry's side; details are logged, never sent
)

// ExcerptRunes is how much of a client's value a refusal may quote.
const ExcerptRunes = 64

// Excerpt is s cut to at most ExcerptRunes characters (with "…" when cut),
// for quoting a client's value in a refusal: a message never echoes a large
// value back.
func Excerpt(s string) string { return Clip(s, ExcerptRunes) }

// Clip is s cut to at most n characters, with "…" when cut.
func Clip(s string, n int) string {
	i := 0
	for at := range s {
		if i == n {
			return s[:at] + "…"
		}
		i++
	}
	return s
}
