package formula

import (
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
)

// fnDef is a built-in function: its argument count (max -1: any) and its
// body, which evaluates its own arguments (so IF and IFERROR evaluate only
// what they need).
type fnDef struct {
	min, max int
	volatile bool
	call     func(e *evaluator, args []node) any
}

var funcs map[string]*fnDef

func init() {
	funcs = map[string]*fnDef{}
	for _, table := range []map[string]*fnDef{mathFuncs(), statFuncs(), logicFuncs(), textFuncs(), dateFuncs(), lookupFuncs(), criteriaFuncs()} {
		for name, f := range table {
			funcs[name] = f
		}
	}
}

// Argument helpers.

func (e *evaluator) num(n node) (float64, Error) { return toNum(e.scalar(n)) }

func (e *evaluator) text(n node) (string, Error) { return toText(e.scalar(n)) }

// optNum is argument i as a number, or def when it is absent or left out.
func (e *evaluator) optNum(args []node, i int, def float64) (float64, Error) {
	if i >= len(args) {
		return def, ""
	}
	if _, ok := args[i].(missingNode); ok {
		return def, ""
	}
	return e.num(args[i])
}

func (e *evaluator) optBool(args []node, i int, def bool) (bool, Error) {
	if i >= len(args) {
		return def, ""
	}
	if _, ok := args[i].(missingNode); ok {
		return def, ""
	}
	return toBool(e.scalar(args[i]))
}

func present(args []node, i int) bool {
	if i >= len(args) {
		return false
	}
	_, missing := args[i].(missingNode)
	return !missing
}

// fn1 is a function of one number.
func fn1(f func(x float64) Value) *fnDef {
	return &fnDef{min: 1, max: 1, call: func(e *evaluator, args []node) any {
		x, err := e.num(args[0])
		if err != "" {
			return err
		}
		return f(x)
	}}
}

// fn2 is a function of two numbers; the second defaults to def when optional.
func fn2(min int, def float64, f func(x, y float64) Value) *fnDef {
	return &fnDef{min: min, max: 2, call: func(e *evaluator, args []node) any {
		x, err := e.num(args[0])
		if err != "" {
			return err
		}
		y, err := e.optNum(args, 1, def)
		if err != "" {
			return err
		}
		return f(x, y)
	}}
}

// eachNumber walks the numbers of args as SUM sees them: in ranges and
// arrays only numbers count (text, logicals and empty cells are skipped;
// errors propagate); an argument given directly is converted (TRUE is 1,
// "3" is 3, "x" is #VALUE!).
func (e *evaluator) eachNumber(args []node, fn func(float64)) Error {
	for _, a := range args {
		v := e.eval(a)
		if isMulti(v) {
			var bad Error
			if err := e.each(v, func(x Value) bool {
				switch x := x.(type) {
				case float64:
					fn(x)
				case Error:
					bad = x
					return false
				}
				return true
			}); err != "" {
				return err
			}
			if bad != "" {
				return bad
			}
			continue
		}
		if _, ok := a.(missingNode); ok {
			continue
		}
		x, err := toNum(v)
		if err != "" {
			return err
		}
		fn(x)
	}
	return e.abort
}

func (e *evaluator) numberList(args []node) ([]float64, Error) {
	var xs []float64
	err := e.eachNumber(args, func(x float64) { xs = append(xs, x) })
	return xs, err
}

func mathFuncs() map[string]*fnDef {
	return map[string]*fnDef{
		"SUM": {min: 1, max: -1, call: func(e *evaluator, args []node) any {
			s := 0.0
			if err := e.eachNumber(args, func(x float64) { s += x }); err != "" {
				return err
			}
			return s
		}},
		"PRODUCT": {min: 1, max: -1, call: func(e *evaluator, args []node) any {
			p, n := 1.0, 0
			if err := e.eachNumber(args, func(x float64) { p *= x; n++ }); err != "" {
				return err
			}
			if n == 0 {
				return 0.0
			}
			return p
		}},
		"SUMPRODUCT": {min: 1, max: 255, call: sumproduct},
		"ROUND":      fn2(2, 0, func(x, d float64) Value { return roundDecimal(x, d, roundHalf) }),
		"ROUNDUP":    fn2(2, 0, func(x, d float64) Value { return roundDecimal(x, d, roundUp) }),
		"ROUNDDOWN":  fn2(2, 0, func(x, d float64) Value { return roundDecimal(x, d, roundDown) }),
		"TRUNC":      fn2(1, 0, func(x, d float64) Value { return roundDecimal(x, d, roundDown) }),
		"INT":        fn1(func(x float64) Value { return math.Floor(snap(x)) }),
		"CEILING": fn2(1, 1, func(x, s float64) Value {
			if s == 0 {
				return 0.0
			}
			if x > 0 && s < 0 {
				return ErrNum
			}
			return math.Ceil(snap(x/s)) * s
		}),
		"FLOOR": fn2(1, 1, func(x, s float64) Value {
			if s == 0 {
				if x == 0 {
					return 0.0
				}
				return ErrDiv0
			}
			if x > 0 && s < 0 {
				return ErrNum
			}
			return math.Floor(snap(x/s)) * s
		}),
		"ABS":   fn1(func(x float64) Value { return math.Abs(x) }),
		"POWER": fn2(2, 0, func(x, y float64) Value { return binary("^", x, y) }),
		"SQRT": fn1(func(x float64) Value {
			if x < 0 {
				return ErrNum
			}
			return math.Sqrt(x)
		}),
		"MOD": fn2(2, 0, func(x, y float64) Value {
			if y == 0 {
				return ErrDiv0
			}
			q := math.Floor(snap(x / y))
			r := x - y*q
			if r != 0 && math.Abs(r) < math.Abs(y)*1e-15 {
				r = 0
			}
			return r
		}),
		"EXP": fn1(func(x float64) Value { return fixNum(math.Exp(x)) }),
		"LN": fn1(func(x float64) Value {
			if x <= 0 {
				return ErrNum
			}
			return math.Log(x)
		}),
		"LOG10": fn1(func(x float64) Value {
			if x <= 0 {
				return ErrNum
			}
			return math.Log10(x)
		}),
		"LOG": fn2(1, 10, func(x, b float64) Value {
			if x <= 0 || b <= 0 {
				return ErrNum
			}
			if b == 1 {
				return ErrDiv0
			}
			if b == 10 {
				return math.Log10(x)
			}
			return math.Log(x) / math.Log(b)
		}),
		"PI": {min: 0, max: 0, call: func(*evaluator, []node) any { return math.Pi }},
		"SIGN": fn1(func(x float64) Value {
			switch {
			case x > 0:
				return 1.0
			case x < 0:
				return -1.0
			}
			return 0.0
		}),
		"RAND": {min: 0, max: 0, volatile: true, call: func(*evaluator, []node) any { return rand.Float64() }},
		"RANDBETWEEN": {min: 2, max: 2, volatile: true, call: func(e *evaluator, args []node) any {
			lo, err := e.num(args[0])
			if err != "" {
				return err
			}
			hi, err := e.num(args[1])
			if err != "" {
				return err
			}
			lo, hi = math.Ceil(lo), math.Floor(hi)
			if lo > hi || hi-lo > 1e15 {
				return ErrNum
			}
			return lo + math.Floor(rand.Float64()*(hi-lo+1))
		}},
	}
}

// snap rounds x to 15 significant digits, so that 0.3/0.1 counts as 3 when
// it is floored (Excel and LibreOffice do the same).
func snap(x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	f, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 15, 64), 64)
	return f
}

const (
	roundHalf = iota // half away from zero
	roundUp          // away from zero
	roundDown        // toward zero
)

// roundDecimal rounds x to d decimal places (d may be negative), on the
// number's 15-significant-digit decimal form, so that ROUND(2.675, 2) is
// 2.68 as the user sees it.
func roundDecimal(x, df float64, mode int) Value {
	if math.IsNaN(df) || math.IsInf(df, 0) {
		return ErrNum
	}
	d := int(math.Trunc(df))
	if d > 300 || d < -300 || x == 0 {
		return x
	}
	neg := x < 0
	s := strconv.FormatFloat(math.Abs(x), 'e', 14, 64) // d.dddddddddddddde±XX
	mant, expStr, _ := cut(s, 'e')
	exp, _ := strconv.Atoi(expStr)
	digits := mant[:1] + mant[2:] // 15 digits: value = 0.digits × 10^(exp+1)
	keep := exp + 1 + d
	var n int64
	switch {
	case keep >= len(digits):
		return x
	case keep < 0:
		if mode == roundUp {
			n = 1
		}
	default:
		n, _ = strconv.ParseInt("0"+digits[:keep], 10, 64)
		rest := digits[keep:]
		switch mode {
		case roundHalf:
			if rest[0] >= '5' {
				n++
			}
		case roundUp:
			for i := 0; i < len(rest); i++ {
				if rest[i] != '0' {
					n++
					break
				}
			}
		}
	}
	r, err := strconv.ParseFloat(strconv.FormatInt(n, 10)+"e"+strconv.Itoa(-d), 64)
	if err != nil {
		return ErrNum
	}
	if neg {
		r = -r
	}
	return fixNum(r)
}

func cut(s string, c byte) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func sumproduct(e *evaluator, args []node) any {
	var arrays []*arrayVal
	for _, a := range args {
		arr, err := e.toArray(e.eval(a))
		if err != "" {
			return err
		}
		if len(arrays) > 0 && (arr.rows != arrays[0].rows || arr.cols != arrays[0].cols) {
			return ErrValue
		}
		arrays = append(arrays, arr)
	}
	sum := 0.0
	for i := range arrays[0].v {
		p := 1.0
		for _, a := range arrays {
			switch x := a.v[i].(type) {
			case float64:
				p *= x
			case Error:
				return x
			default:
				p = 0
			}
		}
		sum += p
	}
	return sum
}

func statFuncs() map[string]*fnDef {
	variance := func(sample bool) func(e *evaluator, args []node) any {
		return func(e *evaluator, args []node) any {
			xs, err := e.numberList(args)
			if err != "" {
				return err
			}
			n := float64(len(xs))
			if n == 0 || sample && n < 2 {
				return ErrDiv0
			}
			mean := 0.0
			for _, x := range xs {
				mean += x
			}
			mean /= n
			ss := 0.0
			for _, x := range xs {
				ss += (x - mean) * (x - mean)
			}
			if sample {
				return ss / (n - 1)
			}
			return ss / n
		}
	}
	stdev := func(sample bool) func(e *evaluator, args []node) any {
		v := variance(sample)
		return func(e *evaluator, args []node) any {
			r := v(e, args)
			if x, ok := r.(float64); ok {
				return math.Sqrt(x)
			}
			return r
		}
	}
	kth := func(largest bool) func(e *evaluator, args []node) any {
		return func(e *evaluator, args []node) any {
			xs, err := e.numberList(args[:1])
			if err != "" {
				return err
			}
			k, err := e.num(args[1])
			if err != "" {
				return err
			}
			k = math.Ceil(k)
			if k < 1 || int(k) > len(xs) {
				return ErrNum
			}
			sort.Float64s(xs)
			if largest {
				return xs[len(xs)-int(k)]
			}
			return xs[int(k)-1]
		}
	}
	minmax := func(isMax bool) func(e *evaluator, args []node) any {
		return func(e *evaluator, args []node) any {
			r, any := 0.0, false
			if err := e.eachNumber(args, func(x float64) {
				if !any || isMax && x > r || !isMax && x < r {
					r = x
				}
				any = true
			}); err != "" {
				return err
			}
			return r
		}
	}
	rank := func(e *evaluator, args []node) any {
		x, err := e.num(args[0])
		if err != "" {
			return err
		}
		xs, err := e.numberList(args[1:2])
		if err != "" {
			return err
		}
		asc, err := e.optNum(args, 2, 0)
		if err != "" {
			return err
		}
		r, found := 1, false
		for _, y := range xs {
			if y == x {
				found = true
			} else if asc == 0 && y > x || asc != 0 && y < x {
				r++
			}
		}
		if !found {
			return ErrNA
		}
		return float64(r)
	}
	return map[string]*fnDef{
		"AVERAGE": {min: 1, max: -1, call: func(e *evaluator, args []node) any {
			s, n := 0.0, 0
			if err := e.eachNumber(args, func(x float64) { s += x; n++ }); err != "" {
				return err
			}
			if n == 0 {
				return ErrDiv0
			}
			return s / float64(n)
		}},
		"COUNT": {min: 1, max: -1, call: func(e *evaluator, args []node) any {
			n := 0
			for _, a := range args {
				v := e.eval(a)
				if isMulti(v) {
					if err := e.each(v, func(x Value) bool {
						if _, ok := x.(float64); ok {
							n++
						}
						return true
					}); err == ErrNum {
						return err
					}
					continue
				}
				if _, ok := a.(missingNode); ok {
					continue
				}
				if _, err := toNum(v); err == "" && v != nil {
					n++
				}
			}
			return float64(n)
		}},
		"COUNTA": {min: 1, max: -1, call: func(e *evaluator, args []node) any {
			n := 0
			for _, a := range args {
				v := e.eval(a)
				if isMulti(v) {
					if err := e.each(v, func(x Value) bool {
						if x != nil {
							n++
						}
						return true
					}); err == ErrNum {
						return err
					}
					continue
				}
				if _, ok := a.(missingNode); !ok || len(args) > 1 {
					n++
				}
			}
			return float64(n)
		}},
		"COUNTBLANK": {min: 1, max: 1, call: func(e *evaluator, args []node) any {
			v := e.eval(args[0])
			r, ok := v.(*rangeVal)
			if !ok {
				if err, ok := v.(Error); ok {
					return err
				}
				return ErrValue
			}
			ur, uc, ok := e.used(r)
			if !ok {
				return ErrRef
			}
			// The cells outside the used extent are all blank.
			blank := r.rows()*r.cols() - ur*uc
			if err := e.each(r, func(x Value) bool {
				if x == nil || x == "" {
					blank++
				}
				return true
			}); err != "" {
				return err
			}
			return float64(blank)
		}},
		"MIN": {min: 1, max: -1, call: minmax(false)},
		"MAX": {min: 1, max: -1, call: minmax(true)},
		"MEDIAN": {min: 1, max: -1, call: func(e *evaluator, args []node) any {
			xs, err := e.numberList(args)
			if err != "" {
				return err
			}
			if len(xs) == 0 {
				return ErrNum
			}
			sort.Float64s(xs)
			m := len(xs) / 2
			if len(xs)%2 == 1 {
				return xs[m]
			}
			return (xs[m-1] + xs[m]) / 2
		}},
		"LARGE":   {min: 2, max: 2, call: kth(true)},
		"SMALL":   {min: 2, max: 2, call: kth(false)},
		"RANK":    {min: 2, max: 3, call: rank},
		"RANK.EQ": {min: 2, max: 3, call: rank},
		"STDEV":   {min: 1, max: -1, call: stdev(true)},
		"STDEV.S": {min: 1, max: -1, call: stdev(true)},
		"STDEVP":  {min: 1, max: -1, call: stdev(false)},
		"STDEV.P": {min: 1, max: -1, call: stdev(false)},
		"VAR":     {min: 1, max: -1, call: variance(true)},
		"VAR.S":   {min: 1, max: -1, call: variance(true)},
		"VARP":    {min: 1, max: -1, call: variance(false)},
		"VAR.P":   {min: 1, max: -1, call: variance(false)},
	}
}

func logicFuncs() map[string]*fnDef {
	logical := func(op string) func(e *evaluator, args []node) any {
		return func(e *evaluator, args []node) any {
			count, trues := 0, 0
			for _, a := range args {
				v := e.eval(a)
				if isMulti(v) {
					var bad Error
					if err := e.each(v, func(x Value) bool {
						switch x := x.(type) {
						case float64:
							count++
							if x != 0 {
								trues++
							}
						case bool:
							count++
							if x {
								trues++
							}
						case Error:
							bad = x
							return false
						}
						return true
					}); err != "" {
						return err
					}
					if bad != "" {
						return bad
					}
					continue
				}
				if _, ok := a.(missingNode); ok {
					continue
				}
				b, err := toBool(v)
				if err != "" {
					return err
				}
				count++
				if b {
					trues++
				}
			}
			if count == 0 {
				return ErrValue
			}
			switch op {
			case "AND":
				return trues == count
			case "OR":
				return trues > 0
			}
			return trues%2 == 1
		}
	}
	return map[string]*fnDef{
		"IF": {min: 1, max: 3, call: func(e *evaluator, args []node) any {
			c, err := toBool(e.scalar(args[0]))
			if err != "" {
				return err
			}
			if c {
				if len(args) < 2 {
					return true
				}
				return branch(e, args[1])
			}
			if len(args) < 3 {
				return false
			}
			return branch(e, args[2])
		}},
		"IFS": {min: 2, max: 254, call: func(e *evaluator, args []node) any {
			if len(args)%2 != 0 {
				return ErrNA
			}
			for i := 0; i < len(args); i += 2 {
				c, err := toBool(e.scalar(args[i]))
				if err != "" {
					return err
				}
				if c {
					return branch(e, args[i+1])
				}
			}
			return ErrNA
		}},
		"IFERROR": {min: 2, max: 2, call: func(e *evaluator, args []node) any {
			v := e.eval(args[0])
			if _, ok := e.scalarOf(v).(Error); ok {
				return branch(e, args[1])
			}
			return v
		}},
		"IFNA": {min: 2, max: 2, call: func(e *evaluator, args []node) any {
			v := e.eval(args[0])
			if s := e.scalarOf(v); s == ErrNA {
				return branch(e, args[1])
			}
			return v
		}},
		"AND": {min: 1, max: -1, call: logical("AND")},
		"OR":  {min: 1, max: -1, call: logical("OR")},
		"XOR": {min: 1, max: -1, call: logical("XOR")},
		"NOT": {min: 1, max: 1, call: func(e *evaluator, args []node) any {
			b, err := toBool(e.scalar(args[0]))
			if err != "" {
				return err
			}
			return !b
		}},
		"TRUE":  {min: 0, max: 0, call: func(*evaluator, []node) any { return true }},
		"FALSE": {min: 0, max: 0, call: func(*evaluator, []node) any { return false }},
		"SWITCH": {min: 3, max: 254, call: func(e *evaluator, args []node) any {
			x := e.scalar(args[0])
			if err, ok := x.(Error); ok {
				return err
			}
			i := 1
			for ; i+1 < len(args); i += 2 {
				y := e.scalar(args[i])
				if err, ok := y.(Error); ok {
					return err
				}
				if compare(x, y) == 0 {
					return branch(e, args[i+1])
				}
			}
			if i < len(args) {
				return branch(e, args[i])
			}
			return ErrNA
		}},
		"CHOOSE": {min: 2, max: 255, call: func(e *evaluator, args []node) any {
			x, err := e.num(args[0])
			if err != "" {
				return err
			}
			i := int(math.Trunc(x))
			if i < 1 || i >= len(args) {
				return ErrValue
			}
			return branch(e, args[i])
		}},
	}
}

// branch is a chosen argument's value: a reference stays a reference (so
// SUM(IF(A1, B1:B3, C1:C3)) sums a range), a left-out argument is 0.
func branch(e *evaluator, n node) any {
	if _, ok := n.(missingNode); ok {
		return 0.0
	}
	return e.eval(n)
}
