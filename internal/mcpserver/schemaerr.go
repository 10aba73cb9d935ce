package mcpserver

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"foundry/internal/problem"
)

// The validator reports where in the *schema* a rule failed, e.g.
// `validating /properties/slides/items: unexpected additional properties ["bullets"]`.
// A model needs the place in its *arguments* ("slides[0].bullets"), so we
// walk the arguments along that schema path and find the value that fails.

var (
	reNames = regexp.MustCompile(`\["([^"]+)"`)
	// The validator prints bounds as rationals ("100/1", "50.000000").
	reRational = regexp.MustCompile(`\b(-?\d+)(/1|\.0+)\b`)
)

func (t *Tool) schemaProblem(err error, inst any) *problem.Problem {
	msg := err.Error()
	ptr := ""
	// The message is "validating <schema path>: " repeated, outermost
	// first, then the rule. Only that prefix is read for paths: the rule
	// may quote the client's value, which may say anything.
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			break
		}
		i := strings.Index(rest, ": ")
		if i < 0 {
			break
		}
		// The place in the arguments is the innermost path outside $defs;
		// a shared definition ($ref) says what failed, not where.
		if p := rest[:i]; p != "root" && !strings.Contains(p, "$defs") {
			ptr = p
		}
		msg = rest[i+2:]
	}
	field := t.locate(ptr, inst)
	rule := msg
	switch {
	case strings.HasPrefix(msg, "unexpected additional properties"):
		if n := reNames.FindStringSubmatch(msg); n != nil {
			field = join(field, fieldName(n[1]))
		}
		rule = "unexpected property: the tool does not take it; remove it"
	case strings.HasPrefix(msg, "required: missing properties"):
		if n := reNames.FindStringSubmatch(msg); n != nil {
			field = join(field, n[1])
		}
		rule = "required: the field is missing"
	case strings.HasPrefix(msg, "enum:"):
		v, set := cutLast(strings.TrimPrefix(msg, "enum: "), " does not equal any of: ")
		rule = "not in enum: " + problem.Excerpt(v) + " does not equal any of: " + set
	default:
		rule = reRational.ReplaceAllString(quietRule(msg), "$1")
	}
	if field == "" {
		field = "arguments"
	}
	return problem.New(problem.Invalid, field, "%s (see the tool's input schema)", clip(rule, maxRule))
}

var (
	reLength = regexp.MustCompile(`^(maxLength|minLength): (?s:.*) contains (\d+) Unicode code points, (more|fewer) than (\d+)$`)
	reType   = regexp.MustCompile(`^type: (?s:(.*)) has type ("[a-z]+"), want (.*)$`)
)

// quietRule rewrites the validator's rules that quote the client's value
// whole (a 1 MiB text, a whole object) so that they quote an excerpt.
func quietRule(msg string) string {
	if m := reLength.FindStringSubmatch(msg); m != nil {
		limit := "at most"
		if m[1] == "minLength" {
			limit = "at least"
		}
		return fmt.Sprintf("%s: takes %s %s characters (Unicode code points), got %s", m[1], limit, m[4], m[2])
	}
	if m := reType.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("type: %s has type %s, want %s", problem.Excerpt(m[1]), m[2], m[3])
	}
	for _, sep := range []string{" does not match regular expression ", " does not equal "} {
		if v, rest, ok := strings.Cut(msg, sep); ok {
			if name, val, ok := strings.Cut(v, ": "); ok {
				return name + ": " + problem.Excerpt(val) + sep + rest
			}
		}
	}
	return msg
}

// maxRule bounds a rule's text whatever the validator said.
const maxRule = 400

// clip cuts s to n characters, with "…" when cut.
func clip(s string, n int) string {
	i := 0
	for at := range s {
		if i == n {
			return s[:at] + "…"
		}
		i++
	}
	return s
}

func cutLast(s, sep string) (string, string) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):]
	}
	return s, ""
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

// locate returns the argument path of the first value at schema pointer ptr
// that fails that sub-schema, e.g. "slides[0]" or "values[3][2]".
func (t *Tool) locate(ptr string, inst any) string {
	if ptr == "" {
		return ""
	}
	parts := strings.Split(strings.Trim(ptr, "/"), "/")
	type cand struct {
		path string
		v    any
	}
	cands := []cand{{"", inst}}
	var schema any = t.raw
	for i := 0; i < len(parts); i++ {
		sm, _ := schema.(map[string]any)
		switch parts[i] {
		case "properties":
			if i+1 >= len(parts) {
				return ""
			}
			i++
			name := parts[i]
			props, _ := sm["properties"].(map[string]any)
			schema = props[name]
			var next []cand
			for _, c := range cands {
				if m, ok := c.v.(map[string]any); ok {
					if v, ok := m[name]; ok {
						next = append(next, cand{join(c.path, name), v})
					}
				}
			}
			cands = next
		case "items":
			schema = sm["items"]
			var next []cand
			for _, c := range cands {
				if a, ok := c.v.([]any); ok {
					for j, v := range a {
						next = append(next, cand{fmt.Sprintf("%s[%d]", c.path, j), v})
					}
				}
			}
			cands = next
		case "additionalProperties":
			schema = sm["additionalProperties"]
			var next []cand
			for _, c := range cands {
				if m, ok := c.v.(map[string]any); ok {
					for _, k := range sortedKeys(m) {
						next = append(next, cand{join(c.path, fieldName(k)), m[k]})
					}
				}
			}
			cands = next
		default:
			return ""
		}
	}
	sub := t.subSchema(ptr, schema)
	for _, c := range cands {
		if sub == nil || sub.Validate(c.v) != nil {
			return c.path
		}
	}
	return ""
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (t *Tool) subSchema(ptr string, schema any) *jsonschema.Resolved {
	if r, ok := t.subs.Load(ptr); ok {
		return r.(*jsonschema.Resolved)
	}
	b, _ := json.Marshal(schema)
	var s jsonschema.Schema
	if json.Unmarshal(b, &s) != nil {
		return nil
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return nil
	}
	t.subs.Store(ptr, r)
	return r
}
