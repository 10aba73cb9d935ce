package formula

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/xuri/efp"
)

// Limits on what Parse accepts, so that hostile input cannot make it (or
// Eval, which recurses over the tree) work without bound.
const (
	maxSource = 8192
	maxDepth  = 64
)

// Formula is a compiled formula. It is immutable after Parse and safe for
// concurrent use.
type Formula struct {
	src      string
	root     node
	refs     []Ref
	volatile bool
}

// AST nodes.
type node interface{}

type (
	numNode     struct{ v float64 }
	strNode     struct{ v string }
	boolNode    struct{ v bool }
	errNode     struct{ v Error }
	missingNode struct{} // an argument left out: IF(A1,,2)
	nameNode    struct{ name string }
	refNode     struct{ ref Ref }
	unaryNode   struct {
		op string // "-" or "%"
		x  node
	}
	binNode struct {
		op   string
		l, r node
	}
	callNode struct {
		name string // upper case, without _xlfn.
		fn   *fnDef // nil: unknown function (#NAME?)
		args []node
	}
	arrayNode struct {
		rows, cols int
		v          []Value
	}
)

// Parse compiles src, which starts with "=". Unknown function names are not
// an error: they evaluate to #NAME?.
func Parse(src string) (f *Formula, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("formula %q: cannot be read", clip(src))
		}
	}()
	fail := func(format string, a ...any) (*Formula, error) {
		return nil, fmt.Errorf("formula %q: %s", clip(src), fmt.Sprintf(format, a...))
	}
	if len(src) > maxSource {
		return fail("longer than %d bytes", maxSource)
	}
	body := strings.TrimSpace(src)
	if !strings.HasPrefix(body, "=") {
		return fail(`does not start with "="`)
	}
	if strings.TrimSpace(body[1:]) == "" {
		return fail(`nothing after "="`)
	}
	if msg := prescan(body); msg != "" {
		return fail("%s", msg)
	}
	ps := efp.ExcelParser()
	toks := mergeExponents(ps.Parse(body))
	depth := 0
	for _, t := range toks {
		switch {
		case t.TSubType == efp.TokenSubTypeStart:
			depth++
			if depth > maxDepth {
				return fail("nested deeper than %d levels", maxDepth)
			}
		case t.TSubType == efp.TokenSubTypeStop:
			depth--
			if depth < 0 {
				return fail(`unexpected ")"`)
			}
		}
	}
	if depth > 0 {
		return fail(`missing ")" at the end`)
	}
	p := &parser{toks: toks}
	root, perr := p.expr(0, 0)
	if perr == nil && p.pos < len(p.toks) {
		perr = p.unexpected()
	}
	if perr != nil {
		return fail("%s", perr.Error())
	}
	f = &Formula{src: src, root: root}
	seen := map[Ref]bool{}
	walk(root, func(n node) {
		switch n := n.(type) {
		case refNode:
			if !seen[n.ref] {
				seen[n.ref] = true
				f.refs = append(f.refs, n.ref)
			}
		case callNode:
			if n.fn != nil && n.fn.volatile {
				f.volatile = true
			}
		}
	})
	return f, nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

func walk(n node, fn func(node)) {
	fn(n)
	switch n := n.(type) {
	case unaryNode:
		walk(n.x, fn)
	case binNode:
		walk(n.l, fn)
		walk(n.r, fn)
	case callNode:
		for _, a := range n.args {
			walk(a, fn)
		}
	}
}

// Refs lists every cell rectangle the formula reads, in all branches,
// without duplicates.
func (f *Formula) Refs() []Ref { return append([]Ref(nil), f.refs...) }

// Volatile reports whether the formula calls TODAY, NOW, RAND or RANDBETWEEN.
func (f *Formula) Volatile() bool { return f.volatile }

// String is the formula's source.
func (f *Formula) String() string { return f.src }

var knownErrorLiterals = []string{"#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A", "#SPILL!", "#CALC!", "#GETTING_DATA"}

// prescan finds what the tokenizer silently drops: an unterminated string or
// sheet name, an unknown error literal, brackets.
func prescan(s string) string {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"', '\'':
			q := s[i]
			j := i + 1
			for {
				if j >= len(s) {
					if q == '"' {
						return "a string is not closed with \""
					}
					return "a sheet name is not closed with '"
				}
				if s[j] == q {
					if j+1 < len(s) && s[j+1] == q {
						j += 2
						continue
					}
					break
				}
				j++
			}
			i = j
		case '#':
			ok := false
			for _, e := range knownErrorLiterals {
				if strings.HasPrefix(s[i:], e) {
					ok = true
					i += len(e) - 1
					break
				}
			}
			if !ok {
				return fmt.Sprintf("unknown error literal at %q", clip(s[i:]))
			}
		case '[', ']':
			return "external and structured references ([...]) are not supported"
		}
	}
	return ""
}

var mantissaE = regexp.MustCompile(`^([0-9]+\.?[0-9]*|\.[0-9]+)[eE]$`)

// mergeExponents joins "12E" "+" "3" back into the number 12E+3 (the
// tokenizer only keeps one-digit mantissas together).
func mergeExponents(in []efp.Token) []efp.Token {
	out := make([]efp.Token, 0, len(in))
	for i := 0; i < len(in); i++ {
		t := in[i]
		if t.TType == efp.TokenTypeOperand && mantissaE.MatchString(t.TValue) && i+2 < len(in) &&
			in[i+1].TType == efp.TokenTypeOperatorInfix && (in[i+1].TValue == "+" || in[i+1].TValue == "-") &&
			in[i+2].TType == efp.TokenTypeOperand && isDigits(in[i+2].TValue) {
			out = append(out, efp.Token{TValue: t.TValue + in[i+1].TValue + in[i+2].TValue, TType: efp.TokenTypeOperand, TSubType: efp.TokenSubTypeNumber})
			i += 2
			continue
		}
		out = append(out, t)
	}
	return out
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

var numberLiteral = regexp.MustCompile(`^([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)
var nameLiteral = regexp.MustCompile(`^[A-Za-z_\\][A-Za-z0-9_.]*$`)

type parser struct {
	toks []efp.Token
	pos  int
}

func (p *parser) peek() *efp.Token {
	if p.pos < len(p.toks) {
		return &p.toks[p.pos]
	}
	return nil
}

func describe(t efp.Token) string {
	switch {
	case t.TType == efp.TokenTypeFunction && t.TSubType == efp.TokenSubTypeStart:
		if t.TValue == "ARRAY" || t.TValue == "ARRAYROW" {
			return `"{"`
		}
		return strconv.Quote(t.TValue + "(")
	case t.TSubType == efp.TokenSubTypeStop:
		return `")"`
	case t.TType == efp.TokenTypeSubexpression:
		return `"("`
	case t.TType == efp.TokenTypeOperand && t.TSubType == efp.TokenSubTypeText:
		return strconv.Quote(`"` + t.TValue + `"`)
	case t.TType == efp.TokenTypeOperatorInfix && t.TSubType == efp.TokenSubTypeIntersection:
		return "a space"
	}
	return strconv.Quote(t.TValue)
}

func (p *parser) unexpected() error {
	if p.pos >= len(p.toks) {
		return fmt.Errorf("missing operand at the end")
	}
	t := p.toks[p.pos]
	if p.pos == 0 {
		return fmt.Errorf("unexpected %s at the start", describe(t))
	}
	return fmt.Errorf("unexpected %s after %s", describe(t), describe(p.toks[p.pos-1]))
}

func binPrec(t *efp.Token) int {
	if t == nil || t.TType != efp.TokenTypeOperatorInfix {
		return -1
	}
	switch t.TValue {
	case "=", "<>", "<", "<=", ">", ">=":
		return 1
	case "&":
		return 2
	case "+", "-":
		return 3
	case "*", "/":
		return 4
	case "^":
		return 5
	}
	return -1
}

// expr parses operators of precedence minPrec and above (precedence
// climbing, all left-associative as in Excel: 2^3^2 = 64).
func (p *parser) expr(minPrec, depth int) (node, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxDepth)
	}
	left, err := p.unary(depth + 1)
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		prec := binPrec(t)
		if prec < 0 || prec < minPrec {
			if t != nil && t.TType == efp.TokenTypeOperatorInfix && t.TSubType == efp.TokenSubTypeUnion {
				return nil, fmt.Errorf(`the union operator "," is not supported outside function arguments`)
			}
			return left, nil
		}
		p.pos++
		right, err := p.expr(prec+1, depth+1)
		if err != nil {
			return nil, err
		}
		left = binNode{op: t.TValue, l: left, r: right}
	}
}

// unary parses prefix minus (which binds tighter than ^: -2^2 = 4), a
// primary, intersections and postfix %.
func (p *parser) unary(depth int) (node, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxDepth)
	}
	t := p.peek()
	if t != nil && t.TType == efp.TokenTypeOperatorPrefix {
		p.pos++
		x, err := p.unary(depth + 1)
		if err != nil {
			return nil, err
		}
		if t.TValue == "-" {
			return unaryNode{op: "-", x: x}, nil
		}
		return x, nil
	}
	x, err := p.primary(depth + 1)
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t == nil {
			return x, nil
		}
		switch {
		case t.TType == efp.TokenTypeOperatorInfix && t.TSubType == efp.TokenSubTypeIntersection:
			p.pos++
			y, err := p.primary(depth + 1)
			if err != nil {
				return nil, err
			}
			x = binNode{op: " ", l: x, r: y}
		case t.TType == efp.TokenTypeOperatorPostfix:
			p.pos++
			x = unaryNode{op: "%", x: x}
		default:
			return x, nil
		}
	}
}

func (p *parser) primary(depth int) (node, error) {
	t := p.peek()
	if t == nil {
		return nil, p.unexpected()
	}
	switch t.TType {
	case efp.TokenTypeOperand:
		p.pos++
		return operand(*t)
	case efp.TokenTypeSubexpression:
		if t.TSubType != efp.TokenSubTypeStart {
			return nil, p.unexpected()
		}
		p.pos++
		x, err := p.expr(0, depth+1)
		if err != nil {
			return nil, err
		}
		c := p.peek()
		if c == nil || c.TType != efp.TokenTypeSubexpression || c.TSubType != efp.TokenSubTypeStop {
			return nil, p.unexpected()
		}
		p.pos++
		return x, nil
	case efp.TokenTypeFunction:
		if t.TSubType != efp.TokenSubTypeStart {
			return nil, p.unexpected()
		}
		if t.TValue == "ARRAY" && p.pos+1 < len(p.toks) && p.toks[p.pos+1].TValue == "ARRAYROW" {
			return p.array()
		}
		return p.call(depth)
	}
	return nil, p.unexpected()
}

// args parses the arguments after a function's start token, up to and
// including its stop token.
func (p *parser) args(depth int) ([]node, error) {
	var args []node
	if t := p.peek(); t != nil && t.TType == efp.TokenTypeFunction && t.TSubType == efp.TokenSubTypeStop {
		p.pos++
		return nil, nil
	}
	for {
		t := p.peek()
		var a node = missingNode{}
		if t != nil && !(t.TType == efp.TokenTypeArgument || t.TType == efp.TokenTypeFunction && t.TSubType == efp.TokenSubTypeStop) {
			var err error
			if a, err = p.expr(0, depth+1); err != nil {
				return nil, err
			}
		}
		args = append(args, a)
		if len(args) > 255 {
			return nil, fmt.Errorf("more than 255 arguments")
		}
		t = p.peek()
		switch {
		case t != nil && t.TType == efp.TokenTypeArgument:
			p.pos++
		case t != nil && t.TType == efp.TokenTypeFunction && t.TSubType == efp.TokenSubTypeStop:
			p.pos++
			return args, nil
		default:
			return nil, p.unexpected()
		}
	}
}

func (p *parser) call(depth int) (node, error) {
	t := p.toks[p.pos]
	raw := t.TValue
	name := strings.ToUpper(raw)
	for _, prefix := range []string{"_XLFN._XLWS.", "_XLFN.", "_XLWS."} {
		name = strings.TrimPrefix(name, prefix)
	}
	if !nameLiteral.MatchString(name) {
		return nil, fmt.Errorf("%q is not a function name", raw)
	}
	p.pos++
	args, err := p.args(depth)
	if err != nil {
		return nil, err
	}
	fn := funcs[name]
	if fn != nil {
		if len(args) < fn.min {
			return nil, fmt.Errorf("%s needs at least %d argument%s, has %d", name, fn.min, plural(fn.min), len(args))
		}
		if fn.max >= 0 && len(args) > fn.max {
			return nil, fmt.Errorf("%s takes at most %d argument%s, has %d", name, fn.max, plural(fn.max), len(args))
		}
		// "=PI()" has no arguments; "=SUM()" is one missing argument to
		// Excel, which SUM reads as nothing.
	}
	return callNode{name: name, fn: fn, args: args}, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// array parses an array constant {1,2;3,4}: only literals inside.
func (p *parser) array() (node, error) {
	p.pos++ // ARRAY
	a := arrayNode{}
	for {
		t := p.peek()
		if t == nil || t.TValue != "ARRAYROW" || t.TSubType != efp.TokenSubTypeStart {
			return nil, p.unexpected()
		}
		p.pos++
		var row []Value
		for {
			t := p.peek()
			if t == nil {
				return nil, p.unexpected()
			}
			neg := false
			if t.TType == efp.TokenTypeOperatorPrefix && t.TValue == "-" {
				neg = true
				p.pos++
				t = p.peek()
				if t == nil {
					return nil, p.unexpected()
				}
			}
			if t.TType != efp.TokenTypeOperand {
				return nil, fmt.Errorf("an array constant holds only numbers, text, TRUE/FALSE and errors")
			}
			n, err := operand(*t)
			if err != nil {
				return nil, err
			}
			p.pos++
			var v Value
			switch n := n.(type) {
			case numNode:
				v = n.v
				if neg {
					v = -n.v
				}
			case strNode:
				v = n.v
			case boolNode:
				v = n.v
			case errNode:
				v = n.v
			default:
				return nil, fmt.Errorf("an array constant holds only numbers, text, TRUE/FALSE and errors")
			}
			if neg {
				if _, ok := v.(float64); !ok {
					return nil, fmt.Errorf("an array constant holds only numbers, text, TRUE/FALSE and errors")
				}
			}
			row = append(row, v)
			t = p.peek()
			if t != nil && t.TType == efp.TokenTypeArgument {
				p.pos++
				continue
			}
			if t != nil && t.TSubType == efp.TokenSubTypeStop {
				p.pos++
				break
			}
			return nil, p.unexpected()
		}
		if a.rows == 0 {
			a.cols = len(row)
		} else if len(row) != a.cols {
			return nil, fmt.Errorf("the rows of an array constant differ in length")
		}
		a.rows++
		a.v = append(a.v, row...)
		t = p.peek()
		if t != nil && t.TType == efp.TokenTypeArgument {
			p.pos++
			continue
		}
		if t != nil && t.TSubType == efp.TokenSubTypeStop {
			p.pos++
			return a, nil
		}
		return nil, p.unexpected()
	}
}

func operand(t efp.Token) (node, error) {
	v := t.TValue
	switch t.TSubType {
	case efp.TokenSubTypeText:
		return strNode{v}, nil
	case efp.TokenSubTypeError:
		return errNode{Error(v)}, nil
	}
	if numberLiteral.MatchString(v) {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, fmt.Errorf("number %q is out of range", v)
		}
		return numNode{f}, nil
	}
	switch strings.ToUpper(v) {
	case "TRUE":
		return boolNode{true}, nil
	case "FALSE":
		return boolNode{false}, nil
	}
	if r, _, ok := parseRef(v); ok {
		return refNode{r}, nil
	}
	if strings.ContainsAny(v, "!:") {
		return nil, fmt.Errorf("%q is not a valid reference", v)
	}
	if nameLiteral.MatchString(v) {
		return nameNode{v}, nil
	}
	return nil, fmt.Errorf("%q is not a number, reference or name", v)
}

// parseRef parses a reference as the tokenizer gives it: an optional sheet
// (its quotes already removed) and "!", then A1, A1:B3, A:C or 2:5.
func parseRef(s string) (Ref, [2]endpoint, bool) {
	var r Ref
	var eps [2]endpoint
	if i := strings.LastIndexByte(s, '!'); i >= 0 {
		r.Sheet = s[:i]
		s = s[i+1:]
		if r.Sheet == "" || strings.ContainsAny(r.Sheet, "!:[]*?/\\") {
			return r, eps, false
		}
	}
	a, b, isRange := strings.Cut(s, ":")
	p, ok := parseEndpoint(a)
	if !ok {
		return r, eps, false
	}
	q := p
	if isRange {
		if q, ok = parseEndpoint(b); !ok || q.kind != p.kind {
			return r, eps, false
		}
	} else if p.kind != epCell {
		return r, eps, false
	}
	eps = [2]endpoint{p, q}
	switch p.kind {
	case epCell:
		r.R0, r.C0, r.R1, r.C1 = p.row, p.col, q.row, q.col
	case epCol:
		r.R0, r.C0, r.R1, r.C1 = 0, p.col, MaxRow, q.col
	case epRow:
		r.R0, r.C0, r.R1, r.C1 = p.row, 0, q.row, MaxCol
	}
	if r.R0 > r.R1 {
		r.R0, r.R1 = r.R1, r.R0
	}
	if r.C0 > r.C1 {
		r.C0, r.C1 = r.C1, r.C0
	}
	return r, eps, true
}
