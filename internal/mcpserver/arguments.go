package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
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
//   - a property sent twice in one object (decoders disagree on which wins);
//   - a number no float64 holds (-1e400), or, where the schema says
//     integer, one that is not an integer an int64 holds (2^63, 1e308).
//
// An integer written as a float ("limit": 10.0, 1e1) is an integer (JSON
// Schema: a number with a zero fractional part); it is rewritten in place as
// an integer so typed decoding takes it. The rest of the bytes are kept.
//
// The same pass decodes the arguments as json.Unmarshal into an any would
// (objects, arrays, float64 numbers, strings, booleans, nil), which is what
// the schema validates: the text is not decoded a second time for it.
func (t *Tool) prepare(args json.RawMessage) (json.RawMessage, any, *problem.Problem) {
	sc := &argScanner{b: args}
	inst, p := sc.value(t.raw, "")
	if p != nil {
		return nil, nil, p
	}
	if sc.ws(); sc.i != len(sc.b) {
		return nil, nil, errNotJSON
	}
	if len(sc.edits) == 0 {
		return args, inst, nil
	}
	out := make([]byte, 0, len(args))
	last := 0
	for _, e := range sc.edits {
		out = append(out, args[last:e.at]...)
		out = append(out, e.text...)
		last = e.end
	}
	return append(out, args[last:]...), inst, nil
}

var errNotJSON = problem.New(problem.Invalid, "arguments", "are not valid JSON; send one JSON object")

// argScanner walks JSON text once, along the tool's input schema, keeping
// the argument path as segments (built into text only for a refusal).
type argScanner struct {
	b     []byte
	i     int
	segs  []pathSeg
	edits []numEdit
}

type pathSeg struct {
	key   string
	idx   int
	isIdx bool
}

type numEdit struct {
	at, end int
	text    string
}

func (s *argScanner) path() string {
	var b strings.Builder
	for _, g := range s.segs {
		if g.isIdx {
			fmt.Fprintf(&b, "[%d]", g.idx)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(fieldName(g.key))
	}
	if b.Len() == 0 {
		return "arguments"
	}
	return b.String()
}

func (s *argScanner) ws() { s.i = skipSpace(s.b, s.i) }

// value reads one value whose schema is schema (nil: unknown) and whose
// declared property name is name ("" for items and map entries).
func (s *argScanner) value(schema map[string]any, name string) (any, *problem.Problem) {
	s.ws()
	if s.i >= len(s.b) {
		return nil, errNotJSON
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.object(schema)
	case c == '[':
		return s.array(schema)
	case c == '"':
		start := s.i
		escaped, rule := s.str(false)
		if rule != "" {
			return nil, problem.New(problem.Invalid, s.path(), "a string %s", rule)
		}
		v := unquote(s.b[start:s.i], escaped)
		if isIdentifier(name) {
			if err := service.CheckID(s.path(), v); err != nil {
				return nil, err.(*problem.Problem)
			}
		}
		return v, nil
	case c == '-' || ('0' <= c && c <= '9'):
		return s.number(schema)
	default:
		for _, lit := range literals {
			if bytes.HasPrefix(s.b[s.i:], lit.text) {
				s.i += len(lit.text)
				return lit.v, nil
			}
		}
		return nil, errNotJSON
	}
}

var literals = []struct {
	text []byte
	v    any
}{{[]byte("true"), true}, {[]byte("false"), false}, {[]byte("null"), nil}}

func (s *argScanner) object(schema map[string]any) (any, *problem.Problem) {
	s.i++ // {
	s.ws()
	obj := map[string]any{}
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return obj, nil
	}
	props, _ := schema["properties"].(map[string]any)
	extra, _ := schema["additionalProperties"].(map[string]any)
	for {
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return nil, errNotJSON
		}
		start := s.i
		// NUL in a property name (a file path) is the domain's to refuse,
		// as an unsafe path; what the decoder would change silently is
		// refused here.
		escaped, rule := s.str(true)
		key := unquote(s.b[start:s.i], escaped)
		s.segs = append(s.segs, pathSeg{key: key})
		if rule != "" {
			return nil, problem.New(problem.Invalid, s.path(), "a property name %s", rule)
		}
		if _, dup := obj[key]; dup {
			// Decoders disagree on which one wins; say which to send.
			return nil, problem.New(problem.Invalid, s.path(), "appears twice in one object; send each property once")
		}
		if s.ws(); s.i >= len(s.b) || s.b[s.i] != ':' {
			return nil, errNotJSON
		}
		s.i++
		child, name := extra, ""
		if c, ok := props[key].(map[string]any); ok {
			child, name = c, key
		}
		v, p := s.value(child, name)
		if p != nil {
			return nil, p
		}
		obj[key] = v
		s.segs = s.segs[:len(s.segs)-1]
		s.ws()
		if s.i >= len(s.b) {
			return nil, errNotJSON
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return obj, nil
		default:
			return nil, errNotJSON
		}
	}
}

func (s *argScanner) array(schema map[string]any) (any, *problem.Problem) {
	s.i++ // [
	s.ws()
	arr := []any{}
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return arr, nil
	}
	items, _ := schema["items"].(map[string]any)
	s.segs = append(s.segs, pathSeg{isIdx: true})
	for n := 0; ; n++ {
		s.segs[len(s.segs)-1].idx = n
		v, p := s.value(items, "")
		if p != nil {
			return nil, p
		}
		arr = append(arr, v)
		s.ws()
		if s.i >= len(s.b) {
			return nil, errNotJSON
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			s.segs = s.segs[:len(s.segs)-1]
			return arr, nil
		default:
			return nil, errNotJSON
		}
	}
}

// str reads a string token and returns whether it has escapes, and the
// rule it breaks ("" if none): what a decoder would change silently (a
// lone surrogate escape, invalid UTF-8), a raw control character, and,
// unless allowNUL, a NUL.
func (s *argScanner) str(allowNUL bool) (escaped bool, rule string) {
	start := s.i
	s.i++ // "
	// The first rule broken is kept, and the scan goes on to the end of
	// the token, so a refused key can still be named.
	broke := func(r string) {
		if rule == "" {
			rule = r
		}
	}
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			if !utf8.Valid(s.b[start:s.i]) {
				broke("contains invalid UTF-8; send text as UTF-8")
			}
			return escaped, rule
		case c == '\\':
			escaped = true
			r, ok := hex4(s.b, s.i)
			if !ok {
				s.i += 2 // a two-character escape such as \\ or \"
				continue
			}
			switch {
			case r == 0 && !allowNUL:
				broke("contains a NUL character (U+0000); Foundry stores no NUL: remove it")
			case r >= 0xD800 && r <= 0xDBFF:
				if lo, ok := hex4(s.b, s.i+6); ok && lo >= 0xDC00 && lo <= 0xDFFF {
					s.i += 12
					continue
				}
				broke(loneRule(s.b[s.i : s.i+6]))
			case r >= 0xDC00 && r <= 0xDFFF:
				broke(loneRule(s.b[s.i : s.i+6]))
			}
			s.i += 6
		case c < 0x20:
			broke(fmt.Sprintf("contains a raw control character (U+%04X); JSON escapes it, and only text characters belong here", c))
			s.i++
		default:
			s.i++
		}
	}
	return escaped, "is not terminated"
}

func loneRule(esc []byte) string {
	return fmt.Sprintf("contains a lone surrogate escape (%s): a \\uD800–\\uDBFF escape must be followed by a \\uDC00–\\uDFFF one; send the character itself or a valid pair", esc)
}

// unquote decodes a string token already checked by str.
func unquote(tok []byte, escaped bool) string {
	if !escaped {
		return string(tok[1 : len(tok)-1])
	}
	var v string
	json.Unmarshal(tok, &v)
	return v
}

func hex4(b []byte, i int) (rune, bool) {
	if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range b[i+2 : i+6] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

func (s *argScanner) number(schema map[string]any) (any, *problem.Problem) {
	start := s.i
	digits := func() int {
		n := 0
		for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.b[s.i] == '-' {
		s.i++
	}
	if digits() == 0 {
		return nil, errNotJSON
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return nil, errNotJSON
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return nil, errNotJSON
		}
	}
	text := string(s.b[start:s.i])
	norm, p := checkNumber(s.path, text, schema)
	if p != nil {
		return nil, p
	}
	if norm != text {
		s.edits = append(s.edits, numEdit{start, s.i, norm})
	}
	f, err := strconv.ParseFloat(norm, 64)
	if err != nil {
		return nil, errNotJSON // checkNumber refused what no float64 holds
	}
	return f, nil
}

// isIdentifier: the arguments CheckID guards, by property name.
func isIdentifier(name string) bool {
	return strings.HasSuffix(name, "_id") || name == "idempotency_key" || name == "cursor"
}

// fieldName is a property name as it may appear in a refusal's field.
func fieldName(k string) string { return problem.Excerpt(k) }

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
