package note

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// decodeBlock decodes a stored block of cells, [[cell, …], …] with each
// cell a JSON string, number, boolean or null, exactly as json.Unmarshal
// into [][]any does, without reflection: a block is what a cold read of a
// big sheet, a restore and a read of another node's write decode, a
// thousand cells at a time. Anything it does not read as json.Marshal
// writes that shape (escapes, white space, other values, bad syntax) is
// left to json.Unmarshal, whose answer is then the answer.
func decodeBlock(data []byte) ([][]any, error) {
	if segs, ok := scanBlock(data); ok {
		return segs, nil
	}
	var segs [][]any
	err := json.Unmarshal(data, &segs)
	return segs, err
}

// blockScanner reads one block; a method answers false where json.Unmarshal
// must decide.
type blockScanner struct {
	b []byte
	i int
}

func scanBlock(data []byte) ([][]any, bool) {
	s := blockScanner{b: data}
	if s.word("null") {
		return nil, s.i == len(s.b)
	}
	if !s.byte('[') {
		return nil, false
	}
	segs := [][]any{}
	if !s.byte(']') {
		for {
			if s.word("null") {
				segs = append(segs, nil)
			} else {
				seg, ok := s.segment()
				if !ok {
					return nil, false
				}
				segs = append(segs, seg)
			}
			if s.byte(']') {
				break
			}
			if !s.byte(',') {
				return nil, false
			}
		}
	}
	return segs, s.i == len(s.b)
}

func (s *blockScanner) segment() ([]any, bool) {
	if !s.byte('[') {
		return nil, false
	}
	seg := make([]any, 0, BlockCols)
	if s.byte(']') {
		return seg, true
	}
	for {
		v, ok := s.cell()
		if !ok {
			return nil, false
		}
		seg = append(seg, v)
		if s.byte(']') {
			return seg, true
		}
		if !s.byte(',') {
			return nil, false
		}
	}
}

func (s *blockScanner) cell() (any, bool) {
	if s.i >= len(s.b) {
		return nil, false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.str()
	case c == 'n':
		return nil, s.word("null")
	case c == 't':
		return true, s.word("true")
	case c == 'f':
		return false, s.word("false")
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	return nil, false
}

// str reads a string without escapes, of valid UTF-8 and no control
// characters (what json.Unmarshal reads as it is).
func (s *blockScanner) str() (any, bool) {
	start := s.i + 1
	ascii := true
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			v := s.b[start:j]
			if !ascii && !utf8.Valid(v) {
				return nil, false
			}
			s.i = j + 1
			return string(v), true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

// number reads a number of JSON's grammar as json.Unmarshal does (a
// float64), and nothing strconv would also take (hex, "Inf", "1_0").
func (s *blockScanner) number() (any, bool) {
	start, j := s.i, s.i
	digits := func() int {
		n := 0
		for j < len(s.b) && s.b[j] >= '0' && s.b[j] <= '9' {
			j, n = j+1, n+1
		}
		return n
	}
	if j < len(s.b) && s.b[j] == '-' {
		j++
	}
	if j < len(s.b) && s.b[j] == '0' {
		j++
	} else if digits() == 0 {
		return nil, false
	}
	if j < len(s.b) && s.b[j] == '.' {
		j++
		if digits() == 0 {
			return nil, false
		}
	}
	if j < len(s.b) && (s.b[j] == 'e' || s.b[j] == 'E') {
		j++
		if j < len(s.b) && (s.b[j] == '+' || s.b[j] == '-') {
			j++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	f, err := strconv.ParseFloat(string(s.b[start:j]), 64)
	if err != nil {
		return nil, false
	}
	s.i = j
	return f, true
}

func (s *blockScanner) byte(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *blockScanner) word(w string) bool {
	if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return true
	}
	return false
}
