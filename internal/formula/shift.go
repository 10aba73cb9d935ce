package formula

import (
	"strconv"
	"strings"
)

// Shift is the fill handle: src with every relative row reference moved by
// dr and every relative column reference by dc ($-absolute parts stay). A
// reference moved off the grid becomes #REF!. Everything else in the text
// stays as typed. src is returned unchanged when it does not parse.
func Shift(src string, dr, dc int) string {
	if _, err := Parse(src); err != nil || dr == 0 && dc == 0 {
		return src
	}
	var b strings.Builder
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '"':
			j := skipQuoted(src, i, '"')
			b.WriteString(src[i:j])
			i = j
		case c == '#':
			j := i + 1
			for _, e := range knownErrorLiterals {
				if strings.HasPrefix(src[i:], e) {
					j = i + len(e)
					break
				}
			}
			b.WriteString(src[i:j])
			i = j
		case isDelim(c):
			b.WriteByte(c)
			i++
		default:
			j := i
			if c == '\'' {
				j = skipQuoted(src, i, '\'')
			}
			for j < len(src) && !isDelim(src[j]) && src[j] != '"' && src[j] != '\'' && src[j] != '#' {
				j++
			}
			run := src[i:j]
			if j < len(src) && src[j] == '(' {
				b.WriteString(run) // a function name
			} else if s, ok := shiftRef(run, dr, dc); ok {
				b.WriteString(s)
			} else {
				b.WriteString(run)
			}
			i = j
		}
	}
	return b.String()
}

func isDelim(c byte) bool { return strings.IndexByte("+-*/^&=<>%(),;{} \t\r\n", c) >= 0 }

// skipQuoted returns the index after the quoted text starting at i (a
// doubled quote is an escaped one).
func skipQuoted(s string, i int, q byte) int {
	j := i + 1
	for j < len(s) {
		if s[j] == q {
			if j+1 < len(s) && s[j+1] == q {
				j += 2
				continue
			}
			return j + 1
		}
		j++
	}
	return j
}

// shiftRef moves one reference as written (with its sheet prefix, quoted or
// not); ok false when run is not a reference.
func shiftRef(run string, dr, dc int) (string, bool) {
	prefix, rest := "", run
	if strings.HasPrefix(run, "'") {
		j := skipQuoted(run, 0, '\'')
		if j >= len(run) || run[j] != '!' {
			return "", false
		}
		prefix, rest = run[:j+1], run[j+1:]
	} else if k := strings.LastIndexByte(run, '!'); k >= 0 {
		prefix, rest = run[:k+1], run[k+1:]
	}
	if _, _, ok := parseRef(strings.ReplaceAll(strings.Trim(prefix, "'!"), "''", "'") + "!" + rest); prefix != "" && !ok {
		return "", false
	}
	a, bPart, isRange := strings.Cut(rest, ":")
	p, ok := parseEndpoint(a)
	if !ok {
		return "", false
	}
	parts := []endpoint{p}
	if isRange {
		q, ok := parseEndpoint(bPart)
		if !ok || q.kind != p.kind {
			return "", false
		}
		parts = append(parts, q)
	} else if p.kind != epCell {
		return "", false
	}
	var out []string
	for _, e := range parts {
		if e.kind != epCol && !e.absRow {
			e.row += dr
		}
		if e.kind != epRow && !e.absCol {
			e.col += dc
		}
		if e.kind != epCol && (e.row < 0 || e.row > MaxRow) || e.kind != epRow && (e.col < 0 || e.col > MaxCol) {
			return string(ErrRef), true
		}
		out = append(out, renderEndpoint(e))
	}
	return prefix + strings.Join(out, ":"), true
}

func renderEndpoint(e endpoint) string {
	var b strings.Builder
	if e.kind != epRow {
		if e.absCol {
			b.WriteByte('$')
		}
		b.WriteString(colName(e.col))
	}
	if e.kind != epCol {
		if e.absRow {
			b.WriteByte('$')
		}
		b.WriteString(strconv.Itoa(e.row + 1))
	}
	return b.String()
}
