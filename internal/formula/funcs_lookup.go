package formula

import (
	"math"
	"strings"
)

// lookupEqual is exact-match equality for the lookup functions: same type,
// text case-insensitive and with wildcards when wild is set.
func lookupEqual(want Value, pat *wildcard, got Value) bool {
	switch w := want.(type) {
	case float64:
		g, ok := got.(float64)
		return ok && g == w
	case bool:
		g, ok := got.(bool)
		return ok && g == w
	case string:
		g, ok := got.(string)
		if !ok {
			return w == "" && got == nil
		}
		if pat != nil {
			return pat.match(g)
		}
		return strings.EqualFold(g, w)
	}
	return false
}

func sameType(a, b Value) bool { return typeRank(a) == typeRank(b) }

// search finds want in a vector of n values: exact (mode 0, wildcards when
// wild), largest ≤ want in ascending data (mode 1), smallest ≥ want in
// descending data (mode -1), scanning as Excel's approximate search would on
// sorted data. -1: not found.
func search(n int, at func(int) Value, want Value, mode int, wild bool) int {
	var pat *wildcard
	if s, ok := want.(string); ok && wild && hasWildcard(s) {
		w := compileWildcard(s)
		pat = &w
	}
	if mode == 0 {
		for i := 0; i < n; i++ {
			if lookupEqual(want, pat, at(i)) {
				return i
			}
		}
		return -1
	}
	found := -1
	for i := 0; i < n; i++ {
		v := at(i)
		if v == nil || !sameType(v, want) {
			continue
		}
		c := compare(v, want)
		if mode > 0 && c > 0 || mode < 0 && c < 0 {
			break
		}
		found = i
		if c == 0 && mode > 0 {
			// keep going: the last of equal values, as a binary search
			// over sorted data would find
			continue
		}
	}
	return found
}

func lookupFuncs() map[string]*fnDef {
	vh := func(vertical bool) func(e *evaluator, args []node) any {
		return func(e *evaluator, args []node) any {
			want := e.scalar(args[0])
			if err, ok := want.(Error); ok {
				return err
			}
			g, err := e.gridOf(e.eval(args[1]))
			if err != "" {
				return err
			}
			idx, err := e.num(args[2])
			if err != "" {
				return err
			}
			approx, err := e.optBool(args, 3, true)
			if err != "" {
				return err
			}
			k := int(math.Trunc(idx))
			width := g.cols
			if !vertical {
				width = g.rows
			}
			if k < 1 {
				return ErrValue
			}
			if k > width {
				return ErrRef
			}
			mode := 0
			if approx {
				mode = 1
			}
			var i int
			if vertical {
				i = search(g.uRows, func(i int) Value { return g.at(i, 0) }, want, mode, true)
			} else {
				i = search(g.uCols, func(j int) Value { return g.at(0, j) }, want, mode, true)
			}
			if i < 0 {
				return ErrNA
			}
			if vertical {
				return g.at(i, k-1)
			}
			return g.at(k-1, i)
		}
	}
	return map[string]*fnDef{
		"VLOOKUP": {min: 3, max: 4, call: vh(true)},
		"HLOOKUP": {min: 3, max: 4, call: vh(false)},
		"MATCH": {min: 2, max: 3, call: func(e *evaluator, args []node) any {
			want := e.scalar(args[0])
			if err, ok := want.(Error); ok {
				return err
			}
			g, err := e.gridOf(e.eval(args[1]))
			if err != "" {
				return err
			}
			mt, err := e.optNum(args, 2, 1)
			if err != "" {
				return err
			}
			mode := 0
			switch {
			case mt > 0:
				mode = 1
			case mt < 0:
				mode = -1
			}
			var i int
			switch {
			case g.cols == 1:
				i = search(g.uRows, func(i int) Value { return g.at(i, 0) }, want, mode, true)
			case g.rows == 1:
				i = search(g.uCols, func(j int) Value { return g.at(0, j) }, want, mode, true)
			default:
				return ErrNA
			}
			if i < 0 {
				return ErrNA
			}
			return float64(i + 1)
		}},
		"XLOOKUP": {min: 3, max: 6, call: xlookup},
		"INDEX": {min: 2, max: 3, call: func(e *evaluator, args []node) any {
			v := e.eval(args[0])
			g, err := e.gridOf(v)
			if err != "" {
				return err
			}
			r, err := e.optNum(args, 1, 0)
			if err != "" {
				return err
			}
			c, err := e.optNum(args, 2, 0)
			if err != "" {
				return err
			}
			ri, ci := int(math.Trunc(r)), int(math.Trunc(c))
			if !present(args, 2) && g.rows == 1 && g.cols > 1 {
				// INDEX(A1:E1, 3): one index into a row is its column.
				ri, ci = 1, ri
			}
			if ri < 0 || ci < 0 || ri > g.rows || ci > g.cols || ci == 0 && g.cols > 1 && ri == 0 {
				if ri == 0 && ci == 0 {
					return v
				}
				return ErrRef
			}
			if ci == 0 && g.cols > 1 || ri == 0 && g.rows > 1 {
				rv, ok := v.(*rangeVal)
				if !ok {
					return ErrValue
				}
				sub := *rv
				if ri > 0 {
					sub.r0, sub.r1 = rv.r0+ri-1, rv.r0+ri-1
				}
				if ci > 0 {
					sub.c0, sub.c1 = rv.c0+ci-1, rv.c0+ci-1
				}
				return &sub
			}
			ri, ci = max(ri, 1), max(ci, 1)
			if rv, ok := v.(*rangeVal); ok {
				return &rangeVal{sheet: rv.sheet, r0: rv.r0 + ri - 1, c0: rv.c0 + ci - 1, r1: rv.r0 + ri - 1, c1: rv.c0 + ci - 1}
			}
			return g.at(ri-1, ci-1)
		}},
		"ROW": {min: 0, max: 1, call: func(e *evaluator, args []node) any {
			if !present(args, 0) {
				return float64(e.row + 1)
			}
			if r, ok := e.eval(args[0]).(*rangeVal); ok {
				return float64(r.r0 + 1)
			}
			return ErrValue
		}},
		"COLUMN": {min: 0, max: 1, call: func(e *evaluator, args []node) any {
			if !present(args, 0) {
				return float64(e.col + 1)
			}
			if r, ok := e.eval(args[0]).(*rangeVal); ok {
				return float64(r.c0 + 1)
			}
			return ErrValue
		}},
		"ROWS": {min: 1, max: 1, call: func(e *evaluator, args []node) any {
			switch v := e.eval(args[0]).(type) {
			case *rangeVal:
				return float64(v.rows())
			case *arrayVal:
				return float64(v.rows)
			case Error:
				return v
			}
			return 1.0
		}},
		"COLUMNS": {min: 1, max: 1, call: func(e *evaluator, args []node) any {
			switch v := e.eval(args[0]).(type) {
			case *rangeVal:
				return float64(v.cols())
			case *arrayVal:
				return float64(v.cols)
			case Error:
				return v
			}
			return 1.0
		}},
	}
}

func xlookup(e *evaluator, args []node) any {
	want := e.scalar(args[0])
	if err, ok := want.(Error); ok {
		return err
	}
	lv := e.eval(args[1])
	look, err := e.gridOf(lv)
	if err != "" {
		return err
	}
	rv := e.eval(args[2])
	ret, err := e.gridOf(rv)
	if err != "" {
		return err
	}
	mm, err := e.optNum(args, 4, 0)
	if err != "" {
		return err
	}
	sm, err := e.optNum(args, 5, 1)
	if err != "" {
		return err
	}
	vertical := look.cols == 1
	if !vertical && look.rows != 1 {
		return ErrValue
	}
	n, used := look.rows, look.uRows
	at := func(i int) Value { return look.at(i, 0) }
	if !vertical {
		n, used = look.cols, look.uCols
		at = func(i int) Value { return look.at(0, i) }
	}
	if vertical && ret.rows != n || !vertical && ret.cols != n {
		return ErrValue
	}
	var pat *wildcard
	if s, ok := want.(string); ok && mm == 2 {
		w := compileWildcard(s)
		pat = &w
	}
	best := -1
	order := func(k int) int { return k }
	if sm < 0 {
		order = func(k int) int { return used - 1 - k }
	}
	for k := 0; k < used; k++ {
		i := order(k)
		v := at(i)
		if lookupEqual(want, pat, v) {
			best = i
			break
		}
		if mm == -1 || mm == 1 {
			if v == nil || !sameType(v, want) {
				continue
			}
			c := compare(v, want)
			if mm == -1 && c < 0 && (best < 0 || compare(v, at(best)) > 0) ||
				mm == 1 && c > 0 && (best < 0 || compare(v, at(best)) < 0) {
				best = i
			}
		}
	}
	if best < 0 {
		if present(args, 3) {
			return branch(e, args[3])
		}
		return ErrNA
	}
	if r, ok := rv.(*rangeVal); ok {
		out := *r
		if vertical {
			out.r0, out.r1 = r.r0+best, r.r0+best
		} else {
			out.c0, out.c1 = r.c0+best, r.c0+best
		}
		return &out
	}
	if vertical {
		return ret.at(best, 0)
	}
	return ret.at(0, best)
}
