package formula

import (
	"strings"
)

// criterion is a SUMIF/COUNTIF condition: ">5", "<>x", "=abc", "a*", 7.
type criterion struct {
	op    string // = <> < <= > >=
	value Value  // float64, string, bool or Error
	pat   *wildcard
}

func parseCriterion(v Value) criterion {
	switch x := v.(type) {
	case nil:
		return criterion{op: "=", value: 0.0}
	case float64, bool, Error:
		return criterion{op: "=", value: x}
	}
	s := v.(string)
	op := "="
	for _, p := range []string{"<=", ">=", "<>", "<", ">", "="} {
		if strings.HasPrefix(s, p) {
			op, s = p, s[len(p):]
			break
		}
	}
	c := criterion{op: op, value: s}
	if f, ok := parseNumberText(s); ok {
		c.value = f
	} else if b, ok := map[string]bool{"TRUE": true, "FALSE": false}[strings.ToUpper(s)]; ok {
		c.value = b
	} else if e, ok := ParseError(s); ok {
		c.value = e
	} else if (op == "=" || op == "<>") && hasWildcard(s) {
		w := compileWildcard(s)
		c.pat = &w
	}
	return c
}

func (c criterion) match(v Value) bool {
	if s, ok := c.value.(string); ok && s == "" {
		empty := v == nil || v == ""
		switch c.op {
		case "=":
			return empty
		case "<>":
			return !empty
		}
		return false
	}
	var eq bool
	switch c.op {
	case "=", "<>":
		switch w := c.value.(type) {
		case float64:
			switch g := v.(type) {
			case float64:
				eq = g == w
			case string:
				// Text that reads as the number matches it too ("3" = 3),
				// as in Excel and LibreOffice.
				f, ok := parseNumberText(g)
				eq = ok && f == w
			}
		case bool:
			g, ok := v.(bool)
			eq = ok && g == w
		case Error:
			eq = v == w
		case string:
			g, ok := v.(string)
			if ok {
				if c.pat != nil {
					eq = c.pat.match(g)
				} else {
					eq = strings.EqualFold(g, w)
				}
			}
		}
		if c.op == "=" {
			return eq
		}
		return !eq
	}
	if v == nil || !sameType(v, c.value) {
		return false
	}
	r := compare(v, c.value)
	switch c.op {
	case "<":
		return r < 0
	case "<=":
		return r <= 0
	case ">":
		return r > 0
	}
	return r >= 0
}

// ifsScan walks the cells of criteria ranges (and the range summed or
// averaged, target, which may be nil) in step. It calls fn with the target's
// value for every position where all criteria hold, and returns how many
// positions outside every range's used extent match too (all empty there).
func (e *evaluator) ifsScan(target node, pairs []node, fn func(v Value)) (float64, Error) {
	type crange struct {
		g grid
		c criterion
	}
	var cs []crange
	rows, cols := -1, -1
	uRows, uCols := 0, 0
	for i := 0; i+1 < len(pairs); i += 2 {
		v := e.eval(pairs[i])
		if !isMulti(v) {
			if err, ok := v.(Error); ok {
				return 0, err
			}
			return 0, ErrValue
		}
		g, err := e.gridOf(v)
		if err != "" {
			return 0, err
		}
		crit := e.scalar(pairs[i+1])
		if rows < 0 {
			rows, cols = g.rows, g.cols
		} else if g.rows != rows || g.cols != cols {
			return 0, ErrValue
		}
		uRows, uCols = max(uRows, g.uRows), max(uCols, g.uCols)
		cs = append(cs, crange{g, parseCriterion(crit)})
	}
	var tg grid
	if target != nil {
		v := e.eval(target)
		if !isMulti(v) {
			if err, ok := v.(Error); ok {
				return 0, err
			}
			return 0, ErrValue
		}
		if r, ok := v.(*rangeVal); ok {
			// The target takes the criteria range's shape from its top-left.
			r2 := *r
			r2.r1, r2.c1 = r.r0+rows-1, r.c0+cols-1
			v = &r2
		}
		var err Error
		if tg, err = e.gridOf(v); err != "" {
			return 0, err
		}
		if tg.rows < rows || tg.cols < cols {
			return 0, ErrValue
		}
		uRows, uCols = max(uRows, min(tg.uRows, rows)), max(uCols, min(tg.uCols, cols))
	}
	uRows, uCols = min(uRows, rows), min(uCols, cols)
	for i := 0; i < uRows; i++ {
		for j := 0; j < uCols; j++ {
			ok := true
			for _, c := range cs {
				if !c.c.match(c.g.at(i, j)) {
					ok = false
					break
				}
			}
			if ok {
				if target != nil {
					fn(tg.at(i, j))
				} else {
					fn(nil)
				}
			}
		}
	}
	rest := float64(rows*cols - uRows*uCols)
	if rest > 0 {
		for _, c := range cs {
			if !c.c.match(nil) {
				return 0, e.abort
			}
		}
	}
	return rest, e.abort
}

func criteriaFuncs() map[string]*fnDef {
	sumIfs := func(target node, pairs []node, e *evaluator, avg bool) any {
		s, n := 0.0, 0
		var bad Error
		if _, err := e.ifsScan(target, pairs, func(v Value) {
			switch x := v.(type) {
			case float64:
				s += x
				n++
			case Error:
				if bad == "" {
					bad = x
				}
			}
		}); err != "" {
			return err
		}
		if bad != "" {
			return bad
		}
		if avg {
			if n == 0 {
				return ErrDiv0
			}
			return s / float64(n)
		}
		return s
	}
	countIfs := func(e *evaluator, pairs []node) any {
		n := 0.0
		rest, err := e.ifsScan(nil, pairs, func(Value) { n++ })
		if err != "" {
			return err
		}
		return n + rest
	}
	ifTarget := func(args []node) node {
		if present(args, 2) {
			return args[2]
		}
		return args[0]
	}
	return map[string]*fnDef{
		"SUMIF": {min: 2, max: 3, call: func(e *evaluator, args []node) any {
			return sumIfs(ifTarget(args), args[:2], e, false)
		}},
		"AVERAGEIF": {min: 2, max: 3, call: func(e *evaluator, args []node) any {
			return sumIfs(ifTarget(args), args[:2], e, true)
		}},
		"COUNTIF": {min: 2, max: 2, call: func(e *evaluator, args []node) any {
			return countIfs(e, args)
		}},
		"SUMIFS": {min: 3, max: 255, call: func(e *evaluator, args []node) any {
			if len(args)%2 == 0 {
				return ErrValue
			}
			return sumIfs(args[0], args[1:], e, false)
		}},
		"AVERAGEIFS": {min: 3, max: 255, call: func(e *evaluator, args []node) any {
			if len(args)%2 == 0 {
				return ErrValue
			}
			return sumIfs(args[0], args[1:], e, true)
		}},
		"COUNTIFS": {min: 2, max: 255, call: func(e *evaluator, args []node) any {
			if len(args)%2 != 0 {
				return ErrValue
			}
			return countIfs(e, args)
		}},
	}
}
