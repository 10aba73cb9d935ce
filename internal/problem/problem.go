// Package problem is the error a caller can act on: which field, which rule,
// and what to do next. Tools turn it into an isError result, REST into a 4xx
// body. Programming faults stay plain Go errors.
package problem

import "fmt"

// Problem is a refusal that names the field and the rule.
type Problem struct {
	Code    string `json:"error"`           // stable machine code, e.g. "unknown_tab"
	Field   string `json:"field,omitempty"` // JSON path of the offending argument, e.g. "slides[0].title"
	Message string `json:"message"`         // the rule and the next step, for a model or a person
	// Details carries structured extras (e.g. the list of current tabs).
	Details map[string]any `json:"details,omitempty"`
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
