package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The front must read a message exactly as the SDK does, or a request could
// be authorized as one thing and dispatched as another. The SDK decodes
// JSON-RPC case-sensitively (segmentio/encoding with case-insensitive field
// matching off), lets the last of duplicate keys win and ignores whatever
// follows the first JSON value. The front therefore refuses every message
// on which two readers could disagree: invalid UTF-8, duplicate keys at any
// depth, keys that differ only in case where the envelope is read, trailing
// data, and batches. What is left has one meaning, which the front reads
// with exact key matching.

// errBatch: JSON-RPC batches are refused (MCP 2025-06-18 and later dropped
// them, and the front authorizes one message at a time).
var errBatch = errors.New("JSON-RPC batches are not supported: send one message per request")

// parseError is a body that is not one JSON value (JSON-RPC -32700), or not
// one unambiguous message (-32600).
type parseError struct {
	code int
	msg  string
}

func (e *parseError) Error() string { return e.msg }

// envelope names the objects whose keys the front or the SDK match by name:
// there, keys differing only in case are refused too.
func envelope(path []string) bool {
	switch len(path) {
	case 0:
		return true // the message
	case 1:
		return path[0] == "params"
	case 2:
		return path[0] == "params" && (path[1] == "_meta" || path[1] == "notifications" || path[1] == "arguments")
	}
	return false
}

func syntaxError() error {
	return &parseError{-32700, "parse error: the body is not valid JSON"}
}

func depthError() error {
	return &parseError{-32600, fmt.Sprintf("invalid request: JSON nested deeper than %d levels", maxDepth)}
}

// maxDepth bounds nesting, as the SDK does (and so the walk's recursion).
const maxDepth = 1000

func quoteKey(k string) string {
	if len(k) > 64 {
		k = k[:64] + "…"
	}
	b, _ := json.Marshal(k)
	return string(b)
}

func where(path []string) string {
	if len(path) == 0 {
		return " in the message"
	}
	return " in " + strings.Join(path, ".")
}

// parseMessage checks body and reads the little of it the front needs, in
// one pass over the bytes: the checks above, and where the message's
// members and its params' members are, which it then decodes (they are
// small, but for arguments, which it does not decode).
func parseMessage(body []byte) (*peek, error) {
	if !utf8.Valid(body) {
		return nil, &parseError{-32700, "parse error: the body is not valid UTF-8"}
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		return nil, &parseError{-32600, errBatch.Error()}
	}
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, &parseError{-32600, "invalid request: a JSON-RPC message is a JSON object"}
	}
	m := &peek{top: map[string]json.RawMessage{}}
	sc := &frontScanner{b: body, m: m}
	sc.path, sc.keys = sc.pathBuf[:0], sc.keysBuf[:0]
	if err := sc.value(0); err != nil {
		return nil, err
	}
	if sc.ws(); sc.i != len(sc.b) {
		return nil, &parseError{-32600, "invalid request: data after the JSON-RPC message"}
	}
	m.ID = m.top["id"]
	if raw, ok := m.top["jsonrpc"]; ok {
		decodeString(raw, &m.Version)
	}
	if raw, ok := m.top["method"]; ok {
		m.HasMethod = true
		if err := decodeString(raw, &m.Method); err != nil {
			return nil, &parseError{-32600, "invalid request: method must be a string"}
		}
	}
	if m.Params.raw == nil {
		return m, nil // absent, null, or not an object: the SDK refuses the last as invalid params
	}
	p := &m.Params
	decodeString(p.raw["name"], &p.Name)
	decodeString(p.raw["uri"], &p.URI)
	if c, ok := p.raw["cursor"]; ok {
		var s string
		decodeString(c, &s)
		p.Cursor = &s
	}
	if raw := p.raw["notifications"]; raw != nil {
		var n map[string]json.RawMessage
		if json.Unmarshal(raw, &n) == nil {
			json.Unmarshal(n["resourceSubscriptions"], &p.ResourceSubscriptions)
		}
	}
	return m, nil
}

// decodeString is json.Unmarshal into a string, without the decoder for a
// plain one (no escapes).
func decodeString(raw json.RawMessage, s *string) error {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && bytes.IndexByte(raw[1:n-1], '\\') < 0 && bytes.IndexByte(raw[1:n-1], '"') < 0 {
		*s = string(raw[1 : n-1])
		return nil
	}
	return json.Unmarshal(raw, s)
}

// frontScanner walks a body once, checking what the front refuses and
// noting where the members of the message and of its params are. The keys
// of the open objects are kept on one stack, as the bytes of the body
// (decoded only when escaped), to find a duplicate without a map for the
// small objects messages are made of.
type frontScanner struct {
	b    []byte
	i    int
	m    *peek
	path [][]byte // the envelope path of the value being read: object keys, "[]" for elements, at most 3 deep
	keys [][]byte // keys of the open objects, innermost last

	pathBuf [3][]byte
	keysBuf [32][]byte
}

func (s *frontScanner) ws() { s.i = skipSpace(s.b, s.i) }

// skipSpace is the index of the first byte at or after i in b that is not
// JSON whitespace.
func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// value reads one value at s.path.
func (s *frontScanner) value(depth int) error {
	if depth > maxDepth {
		return depthError()
	}
	s.ws()
	if s.i >= len(s.b) {
		return syntaxError()
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.object(depth)
	case c == '[':
		return s.array(depth)
	case c == '"':
		_, err := s.str()
		return err
	case c == '-' || ('0' <= c && c <= '9'):
		return s.number()
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	}
	return syntaxError()
}

func (s *frontScanner) lit(l string) error {
	if !bytes.HasPrefix(s.b[s.i:], []byte(l)) {
		return syntaxError()
	}
	s.i += len(l)
	return nil
}

// collect says where the members of the object at path go: the message's
// into top, its params' into params.
func (s *frontScanner) collect() map[string]json.RawMessage {
	switch {
	case len(s.path) == 0:
		return s.m.top
	case len(s.path) == 1 && string(s.path[0]) == "params":
		if s.m.Params.raw == nil {
			s.m.Params.raw = map[string]json.RawMessage{}
		}
		return s.m.Params.raw
	}
	return nil
}

var elemSeg = []byte("[]")

// envelopeAt is envelope for a path of key bytes.
func envelopeAt(path [][]byte) bool {
	switch len(path) {
	case 0:
		return true
	case 1:
		return string(path[0]) == "params"
	case 2:
		k := string(path[1])
		return string(path[0]) == "params" && (k == "_meta" || k == "notifications" || k == "arguments")
	}
	return false
}

// whereAt is where for a path of key bytes.
func whereAt(path [][]byte) string {
	p := make([]string, len(path))
	for i, k := range path {
		p[i] = string(k)
	}
	return where(p)
}

// foldEqual: strings.ToLower(a) == strings.ToLower(b), without building
// either when both are ASCII.
func foldEqual(a, b []byte) bool {
	ascii := func(k []byte) bool {
		for _, c := range k {
			if c >= utf8.RuneSelf {
				return false
			}
		}
		return true
	}
	if ascii(a) && ascii(b) {
		return bytes.EqualFold(a, b)
	}
	//lint:ignore SA6005 the rule is lowering, as the SDK-facing check has always been; EqualFold folds differently (ſ, K)
	return strings.ToLower(string(a)) == strings.ToLower(string(b))
}

// bigObject is where the duplicate check moves from the key stack to a map.
const bigObject = 32

func (s *frontScanner) object(depth int) error {
	s.i++ // {
	path := s.path
	into := s.collect()
	folded := envelopeAt(path)
	base := len(s.keys)
	defer func() { s.keys = s.keys[:base] }()
	var big map[string]struct{}
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return nil
	}
	for {
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return syntaxError()
		}
		start := s.i
		escaped, err := s.str()
		if err != nil {
			return err
		}
		key := s.b[start+1 : s.i-1]
		if escaped {
			var k string
			if json.Unmarshal(s.b[start:s.i], &k) != nil {
				return syntaxError()
			}
			key = []byte(k)
		}
		dup, stacked := false, big == nil
		if big != nil {
			_, dup = big[string(key)]
			big[string(key)] = struct{}{}
		} else {
			for _, k := range s.keys[base:] {
				if bytes.Equal(k, key) {
					dup = true
					break
				}
			}
			s.keys = append(s.keys, key)
			if len(s.keys)-base > bigObject {
				big = make(map[string]struct{}, 2*bigObject)
				for _, k := range s.keys[base:] {
					big[string(k)] = struct{}{}
				}
			}
		}
		if dup {
			return &parseError{-32600, "invalid request: duplicate key " + quoteKey(string(key)) + whereAt(path)}
		}
		if folded {
			// An envelope object is small: compare with each earlier key.
			earlier := s.keys[base:]
			if stacked {
				earlier = earlier[:len(earlier)-1] // this key itself
			}
			for _, k := range earlier {
				if foldEqual(k, key) {
					return &parseError{-32600, "invalid request: keys " + quoteKey(string(key)) + " and another differ only in case" + whereAt(path) + "; member names are case-sensitive"}
				}
			}
			if !stacked {
				s.keys = append(s.keys, key) // past bigObject the stack keeps only envelope keys
			}
		}
		if depth+1 > maxDepth {
			return depthError() // before the colon, as json.Decoder's order has it
		}
		if s.ws(); s.i >= len(s.b) || s.b[s.i] != ':' {
			return syntaxError()
		}
		s.i++
		if len(path) < 3 {
			s.path = append(path, key)
		}
		s.ws()
		vstart := s.i
		err = s.value(depth + 1)
		s.path = path // below the envelope only exact duplicates matter
		if err != nil {
			return err
		}
		if into != nil {
			into[string(key)] = s.b[vstart:s.i]
		}
		s.ws()
		if s.i >= len(s.b) {
			return syntaxError()
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return syntaxError()
		}
	}
}

func (s *frontScanner) array(depth int) error {
	s.i++ // [
	path := s.path
	defer func() { s.path = path }()
	if len(path) < 3 {
		// Array elements are never part of the envelope.
		s.path = append(path, elemSeg)
	}
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return nil
	}
	for {
		// No element where one must be is a syntax error, whatever the depth.
		if s.ws(); s.i >= len(s.b) || s.b[s.i] == ']' || s.b[s.i] == '}' {
			return syntaxError()
		}
		if err := s.value(depth + 1); err != nil {
			return err
		}
		s.ws()
		if s.i >= len(s.b) {
			return syntaxError()
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return syntaxError()
		}
	}
}

// str reads a string token (the body is valid UTF-8 already) and says
// whether it has escapes.
func (s *frontScanner) str() (escaped bool, err error) {
	s.i++ // "
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return escaped, nil
		case c == '\\':
			escaped = true
			if s.i+1 >= len(s.b) {
				return escaped, syntaxError()
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if _, ok := hex4(s.b, s.i); !ok {
					return escaped, syntaxError()
				}
				s.i += 6
			default:
				return escaped, syntaxError()
			}
		case c < 0x20:
			return escaped, syntaxError()
		default:
			s.i++
		}
	}
	return escaped, syntaxError()
}

func (s *frontScanner) number() error {
	if s.b[s.i] == '-' {
		s.i++
	}
	digits := func() int {
		n := 0
		for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.i < len(s.b) && s.b[s.i] == '0' {
		s.i++
	} else if digits() == 0 {
		return syntaxError()
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return syntaxError()
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return syntaxError()
		}
	}
	return nil
}
