package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"foundry/internal/auth"
)

// refToolsetOrder is the order of sections in the reference; a toolset not
// listed here follows, by name.
var refToolsetOrder = []string{ToolsetNotes, ToolsetRooms, ToolsetEvents}

// Reference renders the Markdown tool reference kept in docs/tools.md: one
// section per toolset, and per tool its scope, whether it writes, its
// description and a table of its input parameters read from the very schema
// clients receive. The output depends only on the tools, so a test can hold
// the doc to it (internal/docgen keeps it in its marked region).
func Reference(tools []*Tool) string {
	byset := map[string][]*Tool{}
	for _, t := range tools {
		byset[t.Toolset] = append(byset[t.Toolset], t)
	}
	sets := make([]string, 0, len(byset))
	for s := range byset {
		sets = append(sets, s)
	}
	sort.Slice(sets, func(i, j int) bool {
		a, b := refRank(sets[i]), refRank(sets[j])
		if a != b {
			return a < b
		}
		return sets[i] < sets[j]
	})

	var b strings.Builder
	for i, set := range sets {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "### %s (`%s`)\n", refTitle(set), set)
		for _, t := range byset[set] {
			b.WriteString("\n")
			refWriteTool(&b, t)
		}
	}
	return b.String()
}

func refRank(toolset string) int {
	if i := slices.Index(refToolsetOrder, toolset); i >= 0 {
		return i
	}
	return len(refToolsetOrder)
}

func refTitle(s string) string {
	if s == "" {
		return "Other"
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func refWriteTool(b *strings.Builder, t *Tool) {
	kind := "read-only"
	if t.Scope == auth.ScopeWrite {
		kind = "write"
		if a := t.Def.Annotations; a != nil && a.DestructiveHint != nil && *a.DestructiveHint {
			kind = "write (destructive)"
		}
	}
	fmt.Fprintf(b, "#### `%s`\n\n", t.Def.Name)
	fmt.Fprintf(b, "Scope `%s` · %s\n\n", t.Scope, kind)
	if d := strings.TrimSpace(t.Def.Description); d != "" {
		b.WriteString(d + "\n\n")
	}
	schema := refSchema(t.Def.InputSchema)
	var rows []refParam
	refCollectParams(schema, "", &rows)
	if len(rows) == 0 {
		b.WriteString("No parameters.\n")
		return
	}
	b.WriteString("| Parameter | Type | Required | Constraints |\n|---|---|---|---|\n")
	for _, r := range rows {
		req := ""
		if r.required {
			req = "yes"
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", r.name, refCell(r.typ), req, refCell(r.constraints))
	}
}

// refSchema turns whatever form the definition holds (raw JSON, a map, a
// *jsonschema.Schema) into plain data, keeping numbers exact.
func refSchema(s any) map[string]any {
	var raw []byte
	switch v := s.(type) {
	case json.RawMessage:
		raw = v
	case []byte:
		raw = v
	default:
		var err error
		if raw, err = json.Marshal(v); err != nil {
			return nil
		}
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var m map[string]any
	if d.Decode(&m) != nil {
		return nil
	}
	defs, _ := m["$defs"].(map[string]any)
	delete(m, "$defs")
	return refInline(m, defs).(map[string]any)
}

// refInline replaces local references ("#/$defs/x") with what they name, so
// the reference documents shared pieces where they are used.
func refInline(v any, defs map[string]any) any {
	switch x := v.(type) {
	case map[string]any:
		if r, ok := x["$ref"].(string); ok && strings.HasPrefix(r, "#/$defs/") {
			if d, ok := defs[strings.TrimPrefix(r, "#/$defs/")]; ok {
				return refInline(d, defs)
			}
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = refInline(e, defs)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = refInline(e, defs)
		}
		return out
	}
	return v
}

type refParam struct {
	name        string
	typ         string
	required    bool
	constraints string
}

// refCollectParams lists an object schema's properties (required first,
// then by name) and descends into nested objects and arrays of objects with
// dotted names (slides[].title), so every field a caller can send has a row.
// A nested field's "required" is within its parent: each slide needs a title.
func refCollectParams(s map[string]any, prefix string, rows *[]refParam) {
	props, _ := s["properties"].(map[string]any)
	required := map[string]bool{}
	if rs, ok := s["required"].([]any); ok {
		for _, r := range rs {
			if name, ok := r.(string); ok {
				required[name] = true
			}
		}
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	// Required first, then the rest, each by name: the table reads as
	// "what you must send, then what you may".
	sort.Slice(names, func(i, j int) bool {
		if required[names[i]] != required[names[j]] {
			return required[names[i]]
		}
		return names[i] < names[j]
	})
	for _, n := range names {
		p, _ := props[n].(map[string]any)
		name := prefix + n
		*rows = append(*rows, refParam{name: name, typ: refType(p), required: required[n], constraints: refConstraints(p)})
		// Descend through arrays (of arrays) to the objects they hold.
		inner, suffix := p, ""
		for {
			items, ok := inner["items"].(map[string]any)
			if !ok {
				break
			}
			inner, suffix = items, suffix+"[]"
		}
		if _, ok := inner["properties"].(map[string]any); ok {
			refCollectParams(inner, name+suffix+".", rows)
		}
	}
}

// refType renders a schema's type: "string", "integer", "one of `a`, `b`",
// "array of object", "object (string → string)".
func refType(s map[string]any) string {
	if s == nil {
		return "any"
	}
	if e, ok := s["enum"].([]any); ok {
		vals := make([]string, len(e))
		for i, v := range e {
			vals[i] = "`" + refLiteral(v) + "`"
		}
		return "one of " + strings.Join(vals, ", ")
	}
	if c, ok := s["const"]; ok {
		return "`" + refLiteral(c) + "`"
	}
	if alts, ok := s["anyOf"].([]any); ok && s["type"] == nil {
		// One of several schemas (a cell: string, number, boolean or
		// null), rendered as the type array it stands for.
		var types []string
		for _, a := range alts {
			m, _ := a.(map[string]any)
			types = append(types, refType(m))
		}
		return strings.Join(types, " or ")
	}
	var types []string
	switch v := s["type"].(type) {
	case string:
		types = []string{v}
	case []any:
		for _, x := range v {
			types = append(types, fmt.Sprint(x))
		}
	}
	if len(types) == 0 {
		return "any"
	}
	t := strings.Join(types, " or ")
	switch {
	case len(types) == 1 && types[0] == "array":
		if items, ok := s["items"].(map[string]any); ok {
			it := refType(items)
			if ts, ok := items["type"].([]any); ok && len(ts) > 1 && items["enum"] == nil {
				it = "(" + it + ")"
			} else if alts, ok := items["anyOf"].([]any); ok && len(alts) > 1 {
				it = "(" + it + ")"
			}
			return "array of " + it
		}
	case len(types) == 1 && types[0] == "object":
		if ap, ok := s["additionalProperties"].(map[string]any); ok {
			return "object (string → " + refType(ap) + ")"
		}
	}
	return t
}

// refConstraints renders the bounds a caller must respect.
func refConstraints(s map[string]any) string {
	if s == nil {
		return ""
	}
	var out []string
	if r := refBounds(s["minLength"], s["maxLength"]); r != "" {
		out = append(out, "length "+r)
	}
	if r := refBounds(s["minimum"], s["maximum"]); r != "" {
		out = append(out, "value "+r)
	}
	if v, ok := s["exclusiveMinimum"]; ok {
		out = append(out, "> "+refLiteral(v))
	}
	if v, ok := s["exclusiveMaximum"]; ok {
		out = append(out, "< "+refLiteral(v))
	}
	if r := refBounds(s["minItems"], s["maxItems"]); r != "" {
		out = append(out, "items "+r)
	}
	// Bounds on an array's items, unless the items are objects whose fields
	// get rows of their own.
	if items, ok := s["items"].(map[string]any); ok && items["properties"] == nil {
		if c := refConstraints(items); c != "" {
			out = append(out, "each: "+c)
		}
	}
	if ap, ok := s["additionalProperties"].(map[string]any); ok && ap["properties"] == nil {
		if c := refConstraints(ap); c != "" {
			out = append(out, "each value: "+c)
		}
	}
	if r := refBounds(s["minProperties"], s["maxProperties"]); r != "" {
		out = append(out, "entries "+r)
	}
	if u, ok := s["uniqueItems"].(bool); ok && u {
		out = append(out, "unique items")
	}
	if v, ok := s["pattern"].(string); ok {
		out = append(out, "pattern `"+v+"`")
	}
	if v, ok := s["format"].(string); ok {
		out = append(out, "format "+v)
	}
	if v, ok := s["default"]; ok {
		out = append(out, "default `"+refLiteral(v)+"`")
	}
	return strings.Join(out, "; ")
}

func refBounds(lo, hi any) string {
	switch {
	case lo != nil && hi != nil:
		return refLiteral(lo) + "–" + refLiteral(hi)
	case lo != nil:
		return "≥ " + refLiteral(lo)
	case hi != nil:
		return "≤ " + refLiteral(hi)
	}
	return ""
}

func refLiteral(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// refCell keeps a value inside its Markdown table cell.
func refCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
