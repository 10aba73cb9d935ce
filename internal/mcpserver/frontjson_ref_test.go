package mcpserver

// The front's JSON reading as it was before the one-pass scanner: json.Decoder
// tokens, then json.Unmarshal of the envelope. FuzzFrontScanner holds the
// scanner to exactly these answers.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// refCheckJSON walks body once, token by token.
func refCheckJSON(body []byte) error {
	if !utf8.Valid(body) {
		return &parseError{-32700, "parse error: the body is not valid UTF-8"}
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		return &parseError{-32600, errBatch.Error()}
	}
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return &parseError{-32600, "invalid request: a JSON-RPC message is a JSON object"}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := refWalkValue(dec, nil, 0); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return &parseError{-32600, "invalid request: data after the JSON-RPC message"}
	}
	return nil
}

// walkValue reads one value; path is where it is (object keys only).
func refWalkValue(dec *json.Decoder, path []string, depth int) error {
	if depth > maxDepth {
		return &parseError{-32600, fmt.Sprintf("invalid request: JSON nested deeper than %d levels", maxDepth)}
	}
	tok, err := dec.Token()
	if err != nil {
		return syntaxError()
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	switch d {
	case '{':
		seen := map[string]struct{}{}
		var folded map[string]struct{}
		if envelope(path) {
			folded = map[string]struct{}{}
		}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return syntaxError()
			}
			k, ok := kt.(string)
			if !ok {
				return syntaxError()
			}
			if _, dup := seen[k]; dup {
				return &parseError{-32600, "invalid request: duplicate key " + quoteKey(k) + where(path)}
			}
			seen[k] = struct{}{}
			if folded != nil {
				f := strings.ToLower(k)
				if _, dup := folded[f]; dup {
					return &parseError{-32600, "invalid request: keys " + quoteKey(k) + " and another differ only in case" + where(path) + "; member names are case-sensitive"}
				}
				folded[f] = struct{}{}
			}
			if len(path) < 3 {
				err = refWalkValue(dec, append(path[:len(path):len(path)], k), depth+1)
			} else {
				err = refWalkValue(dec, path, depth+1) // below the envelope only exact duplicates matter
			}
			if err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return syntaxError()
		}
	case '[':
		for dec.More() {
			// Array elements are never part of the envelope.
			p := path
			if len(p) < 3 {
				p = append(path[:len(path):len(path)], "[]")
			}
			if err := refWalkValue(dec, p, depth+1); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return syntaxError()
		}
	default:
		return syntaxError()
	}
	return nil
}

// parseMessage checks body and reads the little of it the front needs.
func refParseMessage(body []byte) (*peek, error) {
	if err := refCheckJSON(body); err != nil {
		return nil, err
	}
	m := &peek{}
	if err := json.Unmarshal(body, &m.top); err != nil {
		return nil, syntaxError()
	}
	m.ID = m.top["id"]
	if raw, ok := m.top["jsonrpc"]; ok {
		json.Unmarshal(raw, &m.Version)
	}
	if raw, ok := m.top["method"]; ok {
		m.HasMethod = true
		if err := json.Unmarshal(raw, &m.Method); err != nil {
			return nil, &parseError{-32600, "invalid request: method must be a string"}
		}
	}
	raw, ok := m.top["params"]
	if !ok || bytes.Equal(raw, []byte("null")) {
		return m, nil
	}
	if err := json.Unmarshal(raw, &m.Params.raw); err != nil {
		return m, nil // not an object: the SDK refuses it as invalid params
	}
	p := &m.Params
	json.Unmarshal(p.raw["name"], &p.Name)
	json.Unmarshal(p.raw["uri"], &p.URI)
	if c, ok := p.raw["cursor"]; ok {
		var s string
		json.Unmarshal(c, &s)
		p.Cursor = &s
	}
	json.Unmarshal(p.raw["_meta"], &p.meta)
	var n map[string]json.RawMessage
	if json.Unmarshal(p.raw["notifications"], &n) == nil {
		json.Unmarshal(n["resourceSubscriptions"], &p.ResourceSubscriptions)
	}
	return m, nil
}
