package mcpserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"foundry/internal/problem"
	"foundry/internal/service"
	"foundry/internal/strictjson"
)

// prepare reads a call's raw arguments the way the handlers will, before
// the schema sees them, and refuses by argument path what Go's decoder
// would otherwise get wrong silently or answer with its own text:
//
//   - what strictjson refuses at both doors: invalid UTF-8 or a lone
//     surrogate escape, a NUL in any string, a property sent twice;
//   - an identifier (a property named *_id, idempotency_key, cursor) with a
//     character service.CheckID refuses;
//   - a number no float64 holds (-1e400), or, where the schema says
//     integer, one that is not an integer an int64 holds (2^63, 1e308).
//
// An integer written as a float ("limit": 10.0, 1e1) is an integer (JSON
// Schema: a number with a zero fractional part); it is rewritten in place as
// an integer so typed decoding takes it. The rest of the bytes are kept.
//
// The same pass decodes the arguments as json.Unmarshal into an any would,
// which is what the schema validates: the text is not decoded a second time
// for it.
func (t *Tool) prepare(args json.RawMessage) (json.RawMessage, any, *problem.Problem) {
	inst, out, err := strictjson.Decode(args, "arguments", argAt{schema: t.raw}, argHooks)
	if err != nil {
		var p *problem.Problem
		if errors.As(err, &p) {
			return nil, nil, p
		}
		return nil, nil, errNotJSON
	}
	return out, inst, nil
}

var errNotJSON = problem.New(problem.Invalid, "arguments", "are not valid JSON; send one JSON object")

// argAt is what the input schema says of the value being read: its schema
// (nil: unknown) and its declared property name ("" for items and map
// entries).
type argAt struct {
	schema map[string]any
	name   string
}

var argHooks = &strictjson.Hooks[argAt]{
	Member: func(parent argAt, key string) argAt {
		props, _ := parent.schema["properties"].(map[string]any)
		if c, ok := props[key].(map[string]any); ok {
			return argAt{c, key}
		}
		extra, _ := parent.schema["additionalProperties"].(map[string]any)
		return argAt{extra, ""}
	},
	Element: func(parent argAt) argAt {
		items, _ := parent.schema["items"].(map[string]any)
		return argAt{items, ""}
	},
	String: func(at argAt, path *strictjson.Path, v string) *problem.Problem {
		if isIdentifier(at.name) {
			if err := service.CheckID(path.String(), v); err != nil {
				return err.(*problem.Problem)
			}
		}
		return nil
	},
	Number: func(at argAt, path *strictjson.Path, text string) (string, *problem.Problem) {
		return checkNumber(path.String, text, at.schema)
	},
}

// isIdentifier: the arguments CheckID guards, by property name.
func isIdentifier(name string) bool {
	return strings.HasSuffix(name, "_id") || name == "idempotency_key" || name == "cursor"
}

// fieldName is a property name as it may appear in a refusal's field.
func fieldName(k string) string { return strictjson.Key(k) }

const two63 = 1 << 63

// checkNumber refuses a number no float64 holds, and where schema s says
// integer, one that is not an integer an int64 holds; it returns the number
// as typed decoding takes it (an integral 10.0 as 10).
func checkNumber(at func() string, text string, s map[string]any) (string, *problem.Problem) {
	if !wantsInteger(s) {
		if _, err := strconv.ParseFloat(text, 64); err != nil {
			return "", problem.New(problem.Invalid, at(), "%s is out of range: a number takes at most ±1.7976931348623157e308", problem.Excerpt(text))
		}
		return text, nil
	}
	if _, err := strconv.ParseInt(text, 10, 64); err == nil {
		return text, nil
	}
	f, err := strconv.ParseFloat(text, 64)
	integral := err == nil && f == math.Trunc(f) && f >= -two63 && f < two63
	if integral && f == 0 && strings.ContainsAny(mantissa(text), "123456789") {
		integral = false // 1e-400: not zero, only too small for a float64
	}
	if !integral {
		lo, hi := bound(s, "minimum", math.MinInt64), bound(s, "maximum", math.MaxInt64)
		return "", problem.New(problem.Invalid, at(), "must be an integer between %s and %s (got %s)", lo, hi, problem.Excerpt(text))
	}
	return strconv.FormatInt(int64(f), 10), nil
}

func mantissa(text string) string {
	if i := strings.IndexAny(text, "eE"); i >= 0 {
		return text[:i]
	}
	return text
}

// wantsInteger: the schema's type is integer (and not also number).
func wantsInteger(s map[string]any) bool {
	switch ty := s["type"].(type) {
	case string:
		return ty == "integer"
	case []any:
		in, num := false, false
		for _, x := range ty {
			in = in || x == "integer"
			num = num || x == "number"
		}
		return in && !num
	}
	return false
}

func bound(s map[string]any, k string, def int64) string {
	if v, ok := s[k]; ok {
		return fmt.Sprint(v)
	}
	return strconv.FormatInt(def, 10)
}
