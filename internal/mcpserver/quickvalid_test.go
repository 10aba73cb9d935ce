package mcpserver

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestQuickValidationNeverAcceptsWhatTheValidatorRefuses: over random
// instances shaped after every tool's input schema (right and wrong types,
// lengths, bounds, missing and extra properties), a "valid" from the quick
// check is always a pass of the JSON Schema validator; and the quick check
// does say valid for well-formed calls, so they skip the validator.
func TestQuickValidationNeverAcceptsWhatTheValidatorRefuses(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tl := range Tools(nil) {
		if !tl.quick.known {
			t.Errorf("%s: the quick check does not understand the schema", tl.Def.Name)
		}
		quick := 0
		const n = 3000
		for range n {
			v := genValue(r, tl.raw, 0)
			// The instance as a call's arguments would decode it.
			b, _ := json.Marshal(v)
			var inst any
			json.Unmarshal(b, &inst)
			if tl.quick.valid(inst) {
				quick++
				if err := tl.schema.Validate(inst); err != nil {
					t.Fatalf("%s: quick check accepts %s; the validator: %v", tl.Def.Name, b, err)
				}
			}
		}
		if quick == 0 {
			t.Errorf("%s: no generated instance passed the quick check", tl.Def.Name)
		}
	}
	for name, args := range map[string]string{
		"read_note_tab": `{"note_id":"n1","tab_id":"markdown"}`,
		"edit_note_tab": `{"note_id":"n1","tab_id":"markdown","expected_version":3,"idempotency_key":"key-0001","operation":"replace_text","text":"# Hi\n"}`,
		"list_notes":    `{}`,
	} {
		for _, tl := range Tools(nil) {
			if tl.Def.Name != name {
				continue
			}
			var inst any
			json.Unmarshal([]byte(args), &inst)
			if !tl.quick.valid(inst) {
				t.Errorf("%s %s: the quick check leaves a valid call to the validator", name, args)
			}
		}
	}
}

func genValue(r *rand.Rand, s map[string]any, depth int) any {
	if r.IntN(8) == 0 || depth > 6 {
		return genAny(r)
	}
	if as, ok := s["anyOf"].([]any); ok {
		m, _ := as[r.IntN(len(as))].(map[string]any)
		return genValue(r, m, depth+1)
	}
	if es, ok := s["enum"].([]any); ok {
		if r.IntN(4) == 0 {
			return "other"
		}
		return es[r.IntN(len(es))]
	}
	num := func(k string, def float64) float64 {
		if n, ok := s[k].(json.Number); ok {
			f, _ := n.Float64()
			return f
		}
		return def
	}
	switch s["type"] {
	case "string":
		n := int(num("minLength", 0)) + r.IntN(3) - 1
		if r.IntN(3) == 0 {
			n = int(num("maxLength", 10)) + r.IntN(3) - 1
		}
		if n < 0 || n > 1<<16 {
			n = 0
		}
		return strings.Repeat([]string{"a", "é", "😀"}[r.IntN(3)], n)
	case "integer", "number":
		lo, hi := num("minimum", -5), num("maximum", 1e6)
		switch r.IntN(5) {
		case 0:
			return lo - 1
		case 1:
			return hi + 1
		case 2:
			return lo + 0.5
		}
		return lo + float64(r.IntN(3))
	case "boolean":
		return r.IntN(2) == 0
	case "null":
		return nil
	case "array":
		items, _ := s["items"].(map[string]any)
		n := int(num("minItems", 0)) + r.IntN(3) - 1
		if r.IntN(3) == 0 {
			n = int(num("maxItems", 3)) + r.IntN(3) - 1
		}
		if n < 0 || n > 30 {
			n = r.IntN(3)
		}
		out := []any{}
		for range n {
			out = append(out, genValue(r, items, depth+1))
		}
		return out
	case "object":
		props, _ := s["properties"].(map[string]any)
		req := map[string]bool{}
		if rs, ok := s["required"].([]any); ok {
			for _, x := range rs {
				req[x.(string)] = true
			}
		}
		out := map[string]any{}
		for k, p := range props {
			if (req[k] && r.IntN(20) != 0) || r.IntN(4) == 0 {
				pm, _ := p.(map[string]any)
				out[k] = genValue(r, pm, depth+1)
			}
		}
		if r.IntN(10) == 0 {
			out["extra"] = genAny(r)
		}
		return out
	}
	return genAny(r)
}

func genAny(r *rand.Rand) any {
	switch r.IntN(7) {
	case 0:
		return nil
	case 1:
		return true
	case 2:
		return 1.5
	case 3:
		return 7.0
	case 4:
		return "s"
	case 5:
		return []any{1.0}
	}
	return map[string]any{"k": "v"}
}

// TestSDKHoldsEncodedSchemas: the tool the SDK serves carries its schemas
// as JSON (so the SDK's per-call look at the input schema costs a copy,
// not a reflective encoding) and encodes exactly as the definition does.
func TestSDKHoldsEncodedSchemas(t *testing.T) {
	for _, tl := range Tools(nil) {
		d := tl.sdkDef()
		if _, ok := d.InputSchema.(json.RawMessage); !ok {
			t.Errorf("%s: the SDK gets an input schema of type %T", tl.Def.Name, d.InputSchema)
		}
		want, err1 := json.Marshal(tl.Def)
		got, err2 := json.Marshal(d)
		if err1 != nil || err2 != nil || string(got) != string(want) {
			t.Errorf("%s: the SDK's copy encodes as\n%s\nthe definition as\n%s", tl.Def.Name, got, want)
		}
	}
}
