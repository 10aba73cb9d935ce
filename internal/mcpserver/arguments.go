package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"foundry/internal/problem"
	"foundry/internal/service"
)

// prepare reads a call's raw arguments the way the handlers will, before
// the schema sees them, and refuses by argument path what Go's decoder
// would otherwise get wrong silently or answer with its own text:
//
//   - a lone surrogate escape ("\ud800") or invalid UTF-8 in a string or a
//     key: Go decodes both to U+FFFD, so two different keys would be one;
//   - a NUL character in any string: PostgreSQL cannot store one, SQLite
//     can; both stores must give the same answer;
//   - an identifier (a property named *_id, idempotency_key, cursor) with a
//     character service.CheckID refuses;
//   - a number no float64 holds (-1e400), or, where the schema says
//     integer, one that is not an integer an int64 holds (2^63, 1e308).
//
// An integer written as a float ("limit": 10.0, 1e1) is an integer (JSON
// Schema: a number with a zero fractional part); it is rewritten in place as
// an integer so typed decoding takes it. The rest of the bytes are kept.
func (t *Tool) prepare(args json.RawMessage) (json.RawMessage, *problem.Problem) {
	type frame struct {
		obj     bool
		wantKey bool
		key     string // current key (objects)
		named   bool   // key is a declared property (not a map entry)
		idx     int    // current index (arrays)
		path    string
		schema  map[string]any
	}
	type edit struct {
		at, end int
		text    string
	}
	var (
		stack []frame
		edits []edit
		prev  int
		seen  bool // a complete top-level value was read
	)
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	// current returns the path, schema and property name of the value the
	// next token starts.
	current := func() (string, map[string]any, string) {
		if len(stack) == 0 {
			return "", t.raw, ""
		}
		f := &stack[len(stack)-1]
		if f.obj {
			path := join(f.path, fieldName(f.key))
			props, _ := f.schema["properties"].(map[string]any)
			if s, ok := props[f.key].(map[string]any); ok {
				return path, s, f.key
			}
			s, _ := f.schema["additionalProperties"].(map[string]any)
			return path, s, ""
		}
		s, _ := f.schema["items"].(map[string]any)
		return fmt.Sprintf("%s[%d]", f.path, f.idx), s, ""
	}
	done := func() {
		if len(stack) == 0 {
			seen = true
			return
		}
		f := &stack[len(stack)-1]
		if f.obj {
			f.wantKey = true
		} else {
			f.idx++
		}
	}
	invalid := problem.New(problem.Invalid, "arguments", "are not valid JSON; send one JSON object")
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil || (seen && len(stack) == 0) {
			return nil, invalid
		}
		end := int(dec.InputOffset())
		span := args[prev:end]
		prev = end
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				path, s, _ := current()
				stack = append(stack, frame{obj: v == '{', wantKey: true, path: path, schema: s})
			default:
				stack = stack[:len(stack)-1]
				done()
			}
		case string:
			if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].wantKey {
				f := &stack[n-1]
				path := join(f.path, fieldName(v))
				// NUL in a property name (a file path) is the domain's to
				// refuse, as an unsafe path; the decoder's silent changes are
				// refused here.
				if p := checkString(path, span, strings.ReplaceAll(v, "\x00", ""), "a property name"); p != nil {
					return nil, p
				}
				f.key, f.wantKey = v, false
				continue
			}
			path, _, name := current()
			if p := checkString(path, span, v, "a string"); p != nil {
				return nil, p
			}
			if isIdentifier(name) {
				if err := service.CheckID(path, v); err != nil {
					return nil, err.(*problem.Problem)
				}
			}
			done()
		case json.Number:
			path, s, _ := current()
			text := v.String()
			at := end - len(text)
			if at < 0 || string(args[at:end]) != text {
				return nil, invalid // cannot happen: a number token is its text
			}
			norm, p := checkNumber(path, text, s)
			if p != nil {
				return nil, p
			}
			if norm != text {
				edits = append(edits, edit{at, end, norm})
			}
			done()
		default: // bool, null
			done()
		}
	}
	if !seen {
		return nil, invalid
	}
	if len(edits) == 0 {
		return args, nil
	}
	out := make([]byte, 0, len(args))
	last := 0
	for _, e := range edits {
		out = append(out, args[last:e.at]...)
		out = append(out, e.text...)
		last = e.end
	}
	return append(out, args[last:]...), nil
}

// isIdentifier: the arguments CheckID guards, by property name.
func isIdentifier(name string) bool {
	return strings.HasSuffix(name, "_id") || name == "idempotency_key" || name == "cursor"
}

// fieldName is a property name as it may appear in a refusal's field.
func fieldName(k string) string { return problem.Excerpt(k) }

// checkString refuses what the decoder would silently change in raw, the
// JSON text of one string token (with the separators before it), and NUL
// in its decoded value s.
func checkString(path string, raw []byte, s, what string) *problem.Problem {
	if path == "" {
		path = "arguments"
	}
	if !utf8.Valid(raw) {
		return problem.New(problem.Invalid, path, "%s contains invalid UTF-8; send text as UTF-8", what)
	}
	if i := loneSurrogate(raw); i >= 0 {
		return problem.New(problem.Invalid, path, "%s contains a lone surrogate escape (%s): a \\uD800–\\uDBFF escape must be followed by a \\uDC00–\\uDFFF one; send the character itself or a valid pair", what, raw[i:i+6])
	}
	if i := strings.IndexByte(s, 0); i >= 0 {
		return problem.New(problem.Invalid, path, "%s contains a NUL character (U+0000) at character %d; Foundry stores no NUL: remove it", what, utf8.RuneCountInString(s[:i])+1)
	}
	return nil
}

// loneSurrogate returns the offset of the first \u escape in raw that is a
// surrogate not part of a high-low pair, or -1.
func loneSurrogate(raw []byte) int {
	hex4 := func(i int) (rune, bool) {
		if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
			return 0, false
		}
		n, err := strconv.ParseUint(string(raw[i+2:i+6]), 16, 32)
		return rune(n), err == nil
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		r, ok := hex4(i)
		if !ok {
			i++ // a two-character escape such as \\ or \"
			continue
		}
		switch {
		case r >= 0xD800 && r <= 0xDBFF:
			if lo, ok := hex4(i + 6); ok && lo >= 0xDC00 && lo <= 0xDFFF {
				i += 11
				continue
			}
			return i
		case r >= 0xDC00 && r <= 0xDFFF:
			return i
		}
		i += 5
	}
	return -1
}

const two63 = 1 << 63

// checkNumber refuses a number no float64 holds, and where schema s says
// integer, one that is not an integer an int64 holds; it returns the number
// as typed decoding takes it (an integral 10.0 as 10).
func checkNumber(path, text string, s map[string]any) (string, *problem.Problem) {
	if path == "" {
		path = "arguments"
	}
	if !wantsInteger(s) {
		if _, err := strconv.ParseFloat(text, 64); err != nil {
			return "", problem.New(problem.Invalid, path, "%s is out of range: a number takes at most ±1.7976931348623157e308", problem.Excerpt(text))
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
		return "", problem.New(problem.Invalid, path, "must be an integer between %s and %s (got %s)", lo, hi, problem.Excerpt(text))
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
