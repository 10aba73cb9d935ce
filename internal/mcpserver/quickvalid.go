package mcpserver

import (
	"encoding/json"
	"math"
	"unicode/utf8"
)

// quickSchema is a tool's input schema compiled for the common case: a
// call whose arguments are valid. It understands the keywords Foundry's
// schemas use (schema.go) and says "valid" only when the JSON Schema
// validator would; anything else (an invalid instance, a keyword it does
// not know) is left to that validator, which words the refusal. It exists
// because the general validator walks the schema by reflection on every
// call.
type quickSchema struct {
	known    bool // every keyword of this node is understood
	typ      string
	props    map[string]*quickSchema
	required []string
	addl     *quickSchema // additionalProperties, when a schema
	noAddl   bool         // additionalProperties: false (or {"not": {}})
	minLen   int          // -1: none
	maxLen   int          // -1: none
	min, max *float64
	items    *quickSchema
	minItems int // -1: none
	maxItems int // -1: none
	enum     []string
	hasEnum  bool
	anyOf    []*quickSchema
}

// compileQuick compiles a schema as data (refs inlined, numbers as
// json.Number; see refSchema).
func compileQuick(m map[string]any) *quickSchema {
	q := &quickSchema{known: m != nil, minLen: -1, maxLen: -1, minItems: -1, maxItems: -1}
	count := func(v any) int {
		n, ok := v.(json.Number)
		i, err := n.Int64()
		if !ok || err != nil || i < 0 || i > math.MaxInt32 {
			q.known = false
			return -1
		}
		return int(i)
	}
	bound := func(v any) *float64 {
		n, ok := v.(json.Number)
		f, err := n.Float64()
		if !ok || err != nil {
			q.known = false
			return nil
		}
		return &f
	}
	for k, v := range m {
		switch k {
		case "description", "title":
		case "type":
			s, ok := v.(string)
			switch s {
			case "object", "array", "string", "integer", "number", "boolean", "null":
			default:
				ok = false
			}
			q.typ, q.known = s, q.known && ok
		case "properties":
			ps, ok := v.(map[string]any)
			q.known = q.known && ok
			q.props = map[string]*quickSchema{}
			for name, p := range ps {
				pm, _ := p.(map[string]any)
				q.props[name] = compileQuick(pm)
			}
		case "required":
			rs, ok := v.([]any)
			q.known = q.known && ok
			for _, r := range rs {
				s, ok := r.(string)
				q.known = q.known && ok
				q.required = append(q.required, s)
			}
		case "additionalProperties":
			switch a := v.(type) {
			case bool:
				q.noAddl = !a // false: no other property; true: any
			case map[string]any:
				if not, ok := a["not"].(map[string]any); ok && len(a) == 1 && len(not) == 0 {
					q.noAddl = true
				} else {
					q.addl = compileQuick(a)
				}
			default:
				q.known = false
			}
		case "minLength":
			q.minLen = count(v)
		case "maxLength":
			q.maxLen = count(v)
		case "minItems":
			q.minItems = count(v)
		case "maxItems":
			q.maxItems = count(v)
		case "minimum":
			q.min = bound(v)
		case "maximum":
			q.max = bound(v)
		case "items":
			im, ok := v.(map[string]any)
			q.known = q.known && ok
			q.items = compileQuick(im)
		case "enum":
			es, ok := v.([]any)
			q.known, q.hasEnum = q.known && ok, true
			for _, e := range es {
				s, ok := e.(string)
				q.known = q.known && ok
				q.enum = append(q.enum, s)
			}
		case "anyOf":
			as, ok := v.([]any)
			q.known = q.known && ok && len(as) > 0
			for _, a := range as {
				am, _ := a.(map[string]any)
				q.anyOf = append(q.anyOf, compileQuick(am))
			}
		default:
			q.known = false
		}
	}
	return q
}

// valid reports whether v (decoded as json.Unmarshal into an any does) is
// certainly valid; false means "ask the validator".
func (q *quickSchema) valid(v any) bool {
	if q == nil || !q.known {
		return false
	}
	if q.typ != "" && !hasType(v, q.typ) {
		return false
	}
	if q.hasEnum {
		s, ok := v.(string)
		found := false
		for _, e := range q.enum {
			found = found || (ok && s == e)
		}
		if !found {
			return false
		}
	}
	if len(q.anyOf) > 0 {
		matched := false
		for _, a := range q.anyOf {
			if a.valid(v) {
				matched = true
				break
			}
		}
		if !matched {
			return false
		}
	}
	switch x := v.(type) {
	case string:
		if q.minLen >= 0 || q.maxLen >= 0 {
			n := utf8.RuneCountInString(x)
			if (q.minLen >= 0 && n < q.minLen) || (q.maxLen >= 0 && n > q.maxLen) {
				return false
			}
		}
	case float64:
		if (q.min != nil && x < *q.min) || (q.max != nil && x > *q.max) {
			return false
		}
	case []any:
		if (q.minItems >= 0 && len(x) < q.minItems) || (q.maxItems >= 0 && len(x) > q.maxItems) {
			return false
		}
		if q.items != nil {
			for _, e := range x {
				if !q.items.valid(e) {
					return false
				}
			}
		}
	case map[string]any:
		for _, r := range q.required {
			if _, ok := x[r]; !ok {
				return false
			}
		}
		for k, e := range x {
			if p, ok := q.props[k]; ok {
				if !p.valid(e) {
					return false
				}
				continue
			}
			if q.noAddl || (q.addl != nil && !q.addl.valid(e)) {
				return false
			}
		}
	}
	return true
}

// hasType is JSON Schema's type test on a decoded value: an integer is a
// number without a fractional part.
func hasType(v any, typ string) bool {
	switch x := v.(type) {
	case nil:
		return typ == "null"
	case bool:
		return typ == "boolean"
	case string:
		return typ == "string"
	case float64:
		if typ == "number" {
			return true
		}
		_, frac := math.Modf(x)
		return typ == "integer" && frac == 0
	case []any:
		return typ == "array"
	case map[string]any:
		return typ == "object"
	}
	return false
}
