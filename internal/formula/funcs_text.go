package formula

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxText is the longest text a function builds (Excel's cell limit).
const maxText = 32767

func textResult(s string) Value {
	if utf8.RuneCountInString(s) > maxText {
		return ErrValue
	}
	return s
}

// textFn is a function of text arguments: n required, up to m.
func textFn(n, m int, f func(e *evaluator, s []string, args []node) Value) *fnDef {
	return &fnDef{min: n, max: m, call: func(e *evaluator, args []node) any {
		s := make([]string, len(args))
		for i := range args {
			if i >= n {
				break // optional arguments are read by f
			}
			t, err := e.text(args[i])
			if err != "" {
				return err
			}
			s[i] = t
		}
		return f(e, s, args)
	}}
}

// count is an optional character count argument (default def; < 0 is
// #VALUE!).
func (e *evaluator) count(args []node, i int, def float64) (int, Error) {
	x, err := e.optNum(args, i, def)
	if err != "" {
		return 0, err
	}
	if x < 0 {
		return 0, ErrValue
	}
	if x > maxText*4 {
		x = maxText * 4
	}
	return int(math.Trunc(x)), ""
}

func textFuncs() map[string]*fnDef {
	return map[string]*fnDef{
		"CONCAT": {min: 1, max: 255, call: func(e *evaluator, args []node) any {
			var b strings.Builder
			for _, a := range args {
				var bad Error
				if err := e.each(e.eval(a), func(v Value) bool {
					s, err := toText(v)
					if err != "" {
						bad = err
						return false
					}
					b.WriteString(s)
					return b.Len() <= maxText*4
				}); err != "" {
					return err
				}
				if bad != "" {
					return bad
				}
			}
			return textResult(b.String())
		}},
		"CONCATENATE": {min: 1, max: 255, call: func(e *evaluator, args []node) any {
			var b strings.Builder
			for _, a := range args {
				s, err := e.text(a)
				if err != "" {
					return err
				}
				b.WriteString(s)
				if b.Len() > maxText*4 {
					return ErrValue
				}
			}
			return textResult(b.String())
		}},
		"TEXTJOIN": {min: 3, max: 255, call: func(e *evaluator, args []node) any {
			delim, err := e.text(args[0])
			if err != "" {
				return err
			}
			skip, err := toBool(e.scalar(args[1]))
			if err != "" {
				return err
			}
			var parts []string
			size := 0
			for _, a := range args[2:] {
				var bad Error
				if err := e.each(e.eval(a), func(v Value) bool {
					s, err := toText(v)
					if err != "" {
						bad = err
						return false
					}
					if s == "" && skip {
						return true
					}
					parts = append(parts, s)
					size += len(s) + len(delim)
					return size <= maxText*4
				}); err != "" {
					return err
				}
				if bad != "" {
					return bad
				}
			}
			return textResult(strings.Join(parts, delim))
		}},
		"LEFT": textFn(1, 2, func(e *evaluator, s []string, args []node) Value {
			n, err := e.count(args, 1, 1)
			if err != "" {
				return err
			}
			r := []rune(s[0])
			return string(r[:min(n, len(r))])
		}),
		"RIGHT": textFn(1, 2, func(e *evaluator, s []string, args []node) Value {
			n, err := e.count(args, 1, 1)
			if err != "" {
				return err
			}
			r := []rune(s[0])
			return string(r[len(r)-min(n, len(r)):])
		}),
		"MID": textFn(3, 3, func(e *evaluator, s []string, args []node) Value {
			start, err := e.num(args[1])
			if err != "" {
				return err
			}
			if start < 1 {
				return ErrValue
			}
			n, err := e.count(args, 2, 0)
			if err != "" {
				return err
			}
			r := []rune(s[0])
			i := int(math.Min(math.Trunc(start), float64(len(r)+1))) - 1
			return string(r[i:min(i+n, len(r))])
		}),
		"LEN": textFn(1, 1, func(e *evaluator, s []string, args []node) Value {
			return float64(utf8.RuneCountInString(s[0]))
		}),
		"TRIM": textFn(1, 1, func(e *evaluator, s []string, args []node) Value {
			return strings.Join(strings.FieldsFunc(s[0], func(r rune) bool { return r == ' ' }), " ")
		}),
		"UPPER": textFn(1, 1, func(e *evaluator, s []string, args []node) Value { return strings.ToUpper(s[0]) }),
		"LOWER": textFn(1, 1, func(e *evaluator, s []string, args []node) Value { return strings.ToLower(s[0]) }),
		"PROPER": textFn(1, 1, func(e *evaluator, s []string, args []node) Value {
			r := []rune(s[0])
			prevLetter := false
			for i, c := range r {
				if prevLetter {
					r[i] = unicode.ToLower(c)
				} else {
					r[i] = unicode.ToUpper(c)
				}
				prevLetter = unicode.IsLetter(c)
			}
			return string(r)
		}),
		"SUBSTITUTE": textFn(3, 4, func(e *evaluator, s []string, args []node) Value {
			text, old, repl := s[0], s[1], s[2]
			if old == "" {
				return text
			}
			if !present(args, 3) {
				if strings.Count(text, old)*(len(repl)-len(old)) > maxText*4 {
					return ErrValue
				}
				return textResult(strings.ReplaceAll(text, old, repl))
			}
			nth, err := e.num(args[3])
			if err != "" {
				return err
			}
			if nth < 1 {
				return ErrValue
			}
			k := int(math.Min(math.Trunc(nth), 1e9))
			pos := 0
			for i := 1; ; i++ {
				j := strings.Index(text[pos:], old)
				if j < 0 {
					return text
				}
				if i == k {
					return textResult(text[:pos+j] + repl + text[pos+j+len(old):])
				}
				pos += j + len(old)
			}
		}),
		"REPLACE": textFn(4, 4, func(e *evaluator, s []string, args []node) Value {
			start, err := e.num(args[1])
			if err != "" {
				return err
			}
			if start < 1 {
				return ErrValue
			}
			n, err := e.count(args, 2, 0)
			if err != "" {
				return err
			}
			repl, err := e.text(args[3])
			if err != "" {
				return err
			}
			r := []rune(s[0])
			i := int(math.Min(math.Trunc(start), float64(len(r)+1))) - 1
			j := min(i+n, len(r))
			return textResult(string(r[:i]) + repl + string(r[j:]))
		}),
		"FIND":   textFn(2, 3, func(e *evaluator, s []string, args []node) Value { return find(e, s, args, false) }),
		"SEARCH": textFn(2, 3, func(e *evaluator, s []string, args []node) Value { return find(e, s, args, true) }),
		"REPT": textFn(2, 2, func(e *evaluator, s []string, args []node) Value {
			n, err := e.num(args[1])
			if err != "" {
				return err
			}
			if n < 0 {
				return ErrValue
			}
			if float64(utf8.RuneCountInString(s[0]))*math.Trunc(n) > maxText {
				return ErrValue
			}
			return strings.Repeat(s[0], int(n))
		}),
		"EXACT": textFn(2, 2, func(e *evaluator, s []string, args []node) Value { return s[0] == s[1] }),
		"TEXT": {min: 2, max: 2, call: func(e *evaluator, args []node) any {
			v := e.scalar(args[0])
			if err, ok := v.(Error); ok {
				return err
			}
			format, err := e.text(args[1])
			if err != "" {
				return err
			}
			return formatText(v, format)
		}},
		"VALUE": {min: 1, max: 1, call: func(e *evaluator, args []node) any {
			switch v := e.scalar(args[0]).(type) {
			case nil:
				return 0.0
			case float64:
				return v
			case Error:
				return v
			case string:
				if f, ok := parseNumberText(v); ok {
					return f
				}
			}
			return ErrValue
		}},
		"CHAR": fn1(func(x float64) Value {
			if x < 1 || x > 255 {
				return ErrValue
			}
			return string(rune(int(x)))
		}),
		"CODE": textFn(1, 1, func(e *evaluator, s []string, args []node) Value {
			if s[0] == "" {
				return ErrValue
			}
			r, _ := utf8.DecodeRuneInString(s[0])
			return float64(r)
		}),
		"ISBLANK":   isFn(func(v Value) bool { return v == nil }),
		"ISNUMBER":  isFn(func(v Value) bool { _, ok := v.(float64); return ok }),
		"ISTEXT":    isFn(func(v Value) bool { _, ok := v.(string); return ok }),
		"ISNONTEXT": isFn(func(v Value) bool { _, ok := v.(string); return !ok }),
		"ISLOGICAL": isFn(func(v Value) bool { _, ok := v.(bool); return ok }),
		"ISERROR":   isFn(func(v Value) bool { _, ok := v.(Error); return ok }),
		"ISERR":     isFn(func(v Value) bool { e, ok := v.(Error); return ok && e != ErrNA }),
		"ISNA":      isFn(func(v Value) bool { return v == ErrNA }),
		"NA":        {min: 0, max: 0, call: func(*evaluator, []node) any { return ErrNA }},
	}
}

func isFn(f func(Value) bool) *fnDef {
	return &fnDef{min: 1, max: 1, call: func(e *evaluator, args []node) any { return f(e.scalar(args[0])) }}
}

// find is FIND (case-sensitive, no wildcards) and SEARCH (case-insensitive,
// wildcards * ? ~).
func find(e *evaluator, s []string, args []node, search bool) Value {
	needle, hay := s[0], s[1]
	start, err := e.optNum(args, 2, 1)
	if err != "" {
		return err
	}
	h := []rune(hay)
	if start < 1 || start > float64(len(h)+1) {
		return ErrValue
	}
	i0 := int(start) - 1
	if needle == "" {
		return float64(i0 + 1)
	}
	if !search {
		j := strings.Index(string(h[i0:]), needle)
		if j < 0 {
			return ErrValue
		}
		return float64(i0 + utf8.RuneCountInString(string(h[i0:])[:j]) + 1)
	}
	pat := compileWildcard(needle)
	for i := i0; i < len(h); i++ {
		if pat.matchPrefix(h[i:]) {
			return float64(i + 1)
		}
	}
	return ErrValue
}

// wildcard is a pattern with * (any run), ? (one character) and ~ (take the
// next character literally), matched case-insensitively.
type wildcard struct {
	toks []wtok
}

type wtok struct {
	kind byte // 'c' literal, '?' one, '*' any
	r    rune
}

func compileWildcard(p string) wildcard {
	var w wildcard
	r := []rune(strings.ToLower(p))
	for i := 0; i < len(r); i++ {
		switch r[i] {
		case '~':
			if i+1 < len(r) && (r[i+1] == '*' || r[i+1] == '?' || r[i+1] == '~') {
				i++
			}
			w.toks = append(w.toks, wtok{'c', r[i]})
		case '*':
			if len(w.toks) == 0 || w.toks[len(w.toks)-1].kind != '*' {
				w.toks = append(w.toks, wtok{kind: '*'})
			}
		case '?':
			w.toks = append(w.toks, wtok{kind: '?'})
		default:
			w.toks = append(w.toks, wtok{'c', r[i]})
		}
	}
	return w
}

func hasWildcard(p string) bool { return strings.ContainsAny(p, "*?~") }

// match reports whether the whole of s matches (iterative, with one
// backtrack point per star: linear in practice).
func (w wildcard) match(s string) bool { return w.run([]rune(strings.ToLower(s)), false) }

// matchPrefix reports whether some prefix of s matches.
func (w wildcard) matchPrefix(s []rune) bool {
	return w.run([]rune(strings.ToLower(string(s))), true)
}

func (w wildcard) run(s []rune, prefix bool) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for {
		if prefix && p == len(w.toks) {
			return true
		}
		if i == len(s) {
			break
		}
		if p < len(w.toks) && (w.toks[p].kind == '?' || w.toks[p].kind == 'c' && w.toks[p].r == s[i]) {
			p++
			i++
			continue
		}
		if p < len(w.toks) && w.toks[p].kind == '*' {
			star, mark = p, i
			p++
			continue
		}
		if star >= 0 {
			p = star + 1
			mark++
			i = mark
			continue
		}
		return false
	}
	for p < len(w.toks) && w.toks[p].kind == '*' {
		p++
	}
	return p == len(w.toks)
}
