// Package strictjson reads JSON text that must mean one thing to every
// reader and every store. Both of Foundry's doors (the MCP tools'
// arguments and the REST API's bodies) read client JSON through it before
// anything else decodes it, and refuse the same bytes the same way.
//
// It refuses, as a *problem.Problem with code invalid_argument whose field
// is the JSON path of the offending value ("title", "values[0][2]",
// "slides[1].body"; for a property name, the path of that property):
//
//   - invalid UTF-8 or a lone surrogate escape ("\ud800") in a string or a
//     property name: Go's decoders turn both into U+FFFD, so the stored
//     text would not be the text sent, and two different names would be one;
//   - a NUL character, raw or escaped (\u0000), in any string: PostgreSQL
//     cannot store one and SQLite can, and both must answer alike;
//   - any other raw control character in a string (JSON requires it escaped);
//   - a property that appears twice in one object: decoders disagree on
//     which one wins;
//   - nesting deeper than MaxDepth.
//
// Text that is not JSON at all is a *SyntaxError, for the caller to word.
package strictjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"foundry/internal/problem"
)

// MaxDepth bounds nesting, as encoding/json does (and so the walk's
// recursion).
const MaxDepth = 10000

// SyntaxError: the text is not one JSON value. Offset is the byte where
// reading stopped.
type SyntaxError struct{ Offset int }

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("not valid JSON (at byte %d)", e.Offset)
}

// Check reads data as one JSON value (and nothing after it but
// whitespace). It returns nil, a *problem.Problem naming the path
// (root for the value itself), or a *SyntaxError.
func Check(data []byte, root string) error {
	s := &scanner[struct{}]{b: data, path: Path{root: root}}
	_, err := s.document(struct{}{})
	return err
}

// Hooks make Decode aware of what the caller knows about each value (its
// schema, say): S is that knowledge, handed from a value to its members
// and elements. Any hook may be nil.
type Hooks[S any] struct {
	// Member is what is known of the value of the property key.
	Member func(parent S, key string) S
	// Element is what is known of an array's elements.
	Element func(parent S) S
	// String may refuse a string value (decoded, and already within the
	// rules above).
	String func(at S, path *Path, v string) *problem.Problem
	// Number may refuse a number, or return the text it is to be read as
	// instead (rewritten in the returned bytes). Without it a number is
	// kept as sent.
	Number func(at S, path *Path, text string) (string, *problem.Problem)
}

// Decode reads data as Check does and also decodes it as json.Unmarshal
// into an any would (objects, arrays, float64 numbers, strings, booleans,
// nil), calling hooks along the way. out is data with the numbers Number
// rewrote (data itself when none was).
func Decode[S any](data []byte, root string, at S, hooks *Hooks[S]) (v any, out []byte, err error) {
	s := &scanner[S]{b: data, path: Path{root: root}, h: hooks, build: true}
	if v, err = s.document(at); err != nil {
		return nil, nil, err
	}
	if len(s.edits) == 0 {
		return v, data, nil
	}
	out = make([]byte, 0, len(data))
	last := 0
	for _, e := range s.edits {
		out = append(out, data[last:e.at]...)
		out = append(out, e.text...)
		last = e.end
	}
	return v, append(out, data[last:]...), nil
}

// Path is where the scanner is, as the segments of a JSON path; it is
// built into text only when asked.
type Path struct {
	root string
	segs []seg
}

type seg struct {
	key   string
	idx   int
	isIdx bool
}

// String is the path as a refusal's field: "slides[1].body", "values[0][2]",
// or the root's name for the value itself.
func (p *Path) String() string {
	var b strings.Builder
	for _, g := range p.segs {
		if g.isIdx {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(g.idx))
			b.WriteByte(']')
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(Key(g.key))
	}
	if b.Len() == 0 {
		return p.root
	}
	return b.String()
}

// Key is a property name as it appears in a path: valid UTF-8, cut to an
// excerpt.
func Key(k string) string {
	return problem.Excerpt(strings.ToValidUTF8(k, "\uFFFD"))
}

func (p *Path) refuse(format string, args ...any) *problem.Problem {
	return problem.New(problem.Invalid, p.String(), format, args...)
}

type edit struct {
	at, end int
	text    string
}

type scanner[S any] struct {
	b     []byte
	i     int
	path  Path
	h     *Hooks[S]
	build bool
	edits []edit
	keys  []string // the keys of the open objects, innermost last
}

func (s *scanner[S]) syntax() error { return &SyntaxError{Offset: s.i} }

func (s *scanner[S]) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner[S]) document(at S) (any, error) {
	v, err := s.value(at, 0)
	if err != nil {
		return nil, err
	}
	if s.ws(); s.i != len(s.b) {
		return nil, s.syntax()
	}
	return v, nil
}

func (s *scanner[S]) value(at S, depth int) (any, error) {
	if depth >= MaxDepth {
		return nil, problem.New(problem.Invalid, problem.Excerpt(s.path.String()), "nests deeper than %d levels; send flatter JSON", MaxDepth)
	}
	s.ws()
	if s.i >= len(s.b) {
		return nil, s.syntax()
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.object(at, depth)
	case c == '[':
		return s.array(at, depth)
	case c == '"':
		start := s.i
		escaped, rule, err := s.str()
		if err != nil {
			return nil, err
		}
		if rule != "" {
			return nil, s.path.refuse("a string %s", rule)
		}
		if !s.build && (s.h == nil || s.h.String == nil) {
			return nil, nil
		}
		v := unquote(s.b[start:s.i], escaped)
		if s.h != nil && s.h.String != nil {
			if p := s.h.String(at, &s.path, v); p != nil {
				return nil, p
			}
		}
		return v, nil
	case c == '-' || ('0' <= c && c <= '9'):
		return s.number(at)
	}
	for _, lit := range literals {
		if bytes.HasPrefix(s.b[s.i:], lit.text) {
			s.i += len(lit.text)
			return lit.v, nil
		}
	}
	return nil, s.syntax()
}

var literals = []struct {
	text []byte
	v    any
}{{[]byte("true"), true}, {[]byte("false"), false}, {[]byte("null"), nil}}

// bigObject is where the duplicate check moves from the key stack to a map.
const bigObject = 16

func (s *scanner[S]) object(at S, depth int) (any, error) {
	s.i++ // {
	var obj map[string]any
	if s.build {
		obj = map[string]any{}
	}
	base := len(s.keys)
	defer func() { s.keys = s.keys[:base] }()
	var seen map[string]struct{}
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return obj, nil
	}
	for {
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return nil, s.syntax()
		}
		start := s.i
		escaped, rule, err := s.str()
		if err != nil {
			return nil, err
		}
		key := unquote(s.b[start:s.i], escaped)
		s.path.segs = append(s.path.segs, seg{key: key})
		if rule != "" {
			return nil, s.path.refuse("a property name %s", rule)
		}
		dup := false
		if seen == nil {
			for _, k := range s.keys[base:] {
				if k == key {
					dup = true
					break
				}
			}
			s.keys = append(s.keys, key)
			if len(s.keys)-base > bigObject {
				seen = make(map[string]struct{}, 4*bigObject)
				for _, k := range s.keys[base:] {
					seen[k] = struct{}{}
				}
				s.keys = s.keys[:base]
			}
		} else {
			_, dup = seen[key]
			seen[key] = struct{}{}
		}
		if dup {
			return nil, s.path.refuse("appears twice in one object; send each property once")
		}
		if s.ws(); s.i >= len(s.b) || s.b[s.i] != ':' {
			return nil, s.syntax()
		}
		s.i++
		child := at
		if s.h != nil && s.h.Member != nil {
			child = s.h.Member(at, key)
		}
		v, err := s.value(child, depth+1)
		if err != nil {
			return nil, err
		}
		if obj != nil {
			obj[key] = v
		}
		s.path.segs = s.path.segs[:len(s.path.segs)-1]
		if done, err := s.after('}'); err != nil {
			return nil, err
		} else if done {
			return obj, nil
		}
	}
}

// after reads what follows a member or an element: a comma (more to come)
// or the closing delimiter (done).
func (s *scanner[S]) after(closing byte) (done bool, err error) {
	s.ws()
	switch {
	case s.i >= len(s.b):
		return false, s.syntax()
	case s.b[s.i] == ',':
		s.i++
		return false, nil
	case s.b[s.i] == closing:
		s.i++
		return true, nil
	}
	return false, s.syntax()
}

func (s *scanner[S]) array(at S, depth int) (any, error) {
	s.i++ // [
	var arr []any
	if s.build {
		arr = []any{}
	}
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return arr, nil
	}
	elem := at
	if s.h != nil && s.h.Element != nil {
		elem = s.h.Element(at)
	}
	s.path.segs = append(s.path.segs, seg{isIdx: true})
	for n := 0; ; n++ {
		s.path.segs[len(s.path.segs)-1].idx = n
		v, err := s.value(elem, depth+1)
		if err != nil {
			return nil, err
		}
		if s.build {
			arr = append(arr, v)
		}
		if done, err := s.after(']'); err != nil {
			return nil, err
		} else if done {
			s.path.segs = s.path.segs[:len(s.path.segs)-1]
			return arr, nil
		}
	}
}

// str reads a string token: whether it has escapes, and the first rule it
// breaks ("" if none). The token is read to its end whatever it breaks, so
// a refused property name can still be named; text that is no string
// token is a syntax error.
func (s *scanner[S]) str() (escaped bool, rule string, err error) {
	start := s.i
	s.i++ // "
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
			return escaped, rule, nil
		case c == '\\':
			escaped = true
			if s.i+1 >= len(s.b) {
				return escaped, rule, s.syntax()
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
				continue
			case 'u':
			default:
				return escaped, rule, s.syntax()
			}
			r, ok := hex4(s.b, s.i)
			if !ok {
				return escaped, rule, s.syntax()
			}
			switch {
			case r == 0:
				broke(nulRule)
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
		case c == 0:
			broke(nulRule)
			s.i++
		case c < 0x20:
			broke(fmt.Sprintf("contains a raw control character (U+%04X); JSON escapes it, and only text characters belong here", c))
			s.i++
		default:
			s.i++
		}
	}
	return escaped, rule, s.syntax()
}

const nulRule = "contains a NUL character (U+0000); Foundry stores no NUL: remove it"

func loneRule(esc []byte) string {
	return fmt.Sprintf("contains a lone surrogate escape (%s): a \\uD800–\\uDBFF escape must be followed by a \\uDC00–\\uDFFF one; send the character itself or a valid pair", esc)
}

// unquote decodes a string token already read by str.
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

// number reads a number token (JSON's grammar: no leading zeros, no bare
// dot or exponent).
func (s *scanner[S]) number(at S) (any, error) {
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
	if s.i < len(s.b) && s.b[s.i] == '0' {
		s.i++
	} else if digits() == 0 {
		return nil, s.syntax()
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return nil, s.syntax()
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return nil, s.syntax()
		}
	}
	if !s.build && (s.h == nil || s.h.Number == nil) {
		return nil, nil
	}
	text := string(s.b[start:s.i])
	if s.h != nil && s.h.Number != nil {
		norm, p := s.h.Number(at, &s.path, text)
		if p != nil {
			return nil, p
		}
		if norm != text {
			s.edits = append(s.edits, edit{start, s.i, norm})
			text = norm
		}
	}
	f, _ := strconv.ParseFloat(text, 64) // out of range: ±Inf, for Number to refuse
	return f, nil
}
