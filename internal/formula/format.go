package formula

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// formatText is TEXT(value, format) for the common number and date formats:
// "0", "0.00", "#,##0", "#,##0.00", "0%", "0.0%", "$#,##0.00", "yyyy-mm-dd",
// "dd/mm/yyyy", "mmm d, yyyy", "dddd", "hh:mm:ss", "h:mm AM/PM", sections
// "pos;neg;zero", "General" and "@".
func formatText(v Value, format string) Value {
	switch x := v.(type) {
	case nil:
		v = 0.0
	case bool:
		return strings.ToUpper(strconv.FormatBool(x))
	case string:
		f, ok := parseNumberText(x)
		if !ok {
			return x
		}
		v = f
	}
	x := v.(float64)
	sections := splitSections(format)
	sec := sections[0]
	neg := x < 0
	switch {
	case x < 0 && len(sections) > 1:
		sec, x = sections[1], -x
		neg = false
	case x == 0 && len(sections) > 2:
		sec = sections[2]
	}
	if strings.EqualFold(strings.TrimSpace(sec), "general") || sec == "@" || sec == "" {
		return formatGeneral(x)
	}
	if isDateFormat(sec) {
		if x < 0 {
			return ErrValue
		}
		return formatDate(x, sec)
	}
	return formatNumber(x, sec, neg)
}

func splitSections(f string) []string {
	var out []string
	start, inQ := 0, false
	for i := 0; i < len(f); i++ {
		switch f[i] {
		case '"':
			inQ = !inQ
		case '\\':
			i++
		case ';':
			if !inQ {
				out = append(out, f[start:i])
				start = i + 1
			}
		}
	}
	return append(out, f[start:])
}

// literal walks a format, calling fn for each code character (c, true) or
// literal text (s, false).
func walkFormat(f string, fn func(s string, code bool)) {
	for i := 0; i < len(f); i++ {
		switch c := f[i]; c {
		case '"':
			j := strings.IndexByte(f[i+1:], '"')
			if j < 0 {
				fn(f[i+1:], false)
				return
			}
			fn(f[i+1:i+1+j], false)
			i += j + 1
		case '\\':
			if i+1 < len(f) {
				fn(f[i+1:i+2], false)
				i++
			}
		case '_':
			fn(" ", false)
			i++
		case '[':
			j := strings.IndexByte(f[i:], ']')
			if j < 0 {
				return
			}
			i += j // colors and conditions: ignored
		default:
			fn(f[i:i+1], true)
		}
	}
}

func isDateFormat(f string) bool {
	date := false
	walkFormat(f, func(s string, code bool) {
		if code && strings.ContainsAny(strings.ToLower(s), "ydhs") {
			date = true
		}
		if code && strings.ContainsAny(s, "mM") {
			date = true
		}
	})
	return date
}

func formatNumber(x float64, f string, neg bool) Value {
	var prefix, suffix strings.Builder
	intZeros, decimals, minDecimals := 0, 0, 0
	thousands, pct, seenDigit, seenDot, done := false, false, false, false, false
	walkFormat(f, func(s string, code bool) {
		c := s[0]
		if code && (c == '0' || c == '#' || c == '?' || c == '.' || c == ',' && seenDigit) && !done {
			switch c {
			case '0', '#', '?':
				seenDigit = true
				if seenDot {
					decimals++
					if c == '0' {
						minDecimals = decimals
					}
				} else if c == '0' {
					intZeros++
				}
			case '.':
				seenDot = true
			case ',':
				thousands = true
			}
			return
		}
		if code && c == '%' {
			pct = true
		}
		if seenDigit {
			done = true
			suffix.WriteString(s)
		} else {
			prefix.WriteString(s)
		}
	})
	if pct {
		x *= 100
	}
	r, ok := roundDecimal(math.Abs(x), float64(decimals), roundHalf).(float64)
	if !ok {
		return ErrNum
	}
	s := strconv.FormatFloat(r, 'f', decimals, 64)
	intPart, frac, _ := strings.Cut(s, ".")
	for len(frac) > minDecimals && strings.HasSuffix(frac, "0") {
		frac = frac[:len(frac)-1]
	}
	if intPart == "0" && intZeros == 0 {
		intPart = ""
	}
	for len(intPart) < intZeros {
		intPart = "0" + intPart
	}
	if thousands && len(intPart) > 3 {
		var b strings.Builder
		for i, c := range intPart {
			if i > 0 && (len(intPart)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(c)
		}
		intPart = b.String()
	}
	out := intPart
	if seenDot {
		out += "." + frac
	}
	if neg && r != 0 {
		out = "-" + prefix.String() + out
	} else {
		out = prefix.String() + out
	}
	return out + suffix.String()
}

var monthNames = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}

func formatDate(x float64, f string) Value {
	y, m, d, ok := dateOf(x)
	if !ok {
		return ErrValue
	}
	secs, _ := dayFraction(x)
	if secs == 0 && x-math.Floor(x) > 0.5 {
		// rounded up to the next day
		y, m, d, _ = dateOf(x + 0.5)
	}
	hh, mi, ss := secs/3600, secs/60%60, secs%60
	weekday := time.Weekday((int(math.Floor(x)) + 6) % 7)
	// Tokens: runs of the same letter.
	var toks []fmtTok
	walkFormat(f, func(s string, code bool) {
		if code && len(toks) > 0 && toks[len(toks)-1].code && strings.EqualFold(toks[len(toks)-1].s[:1], s) && isDateLetter(s[0]) {
			toks[len(toks)-1].s += s
			return
		}
		toks = append(toks, fmtTok{s, code})
	})
	ampm := false
	for i := range toks {
		if toks[i].code && strings.EqualFold(toks[i].s, "A") && i+4 < len(toks) {
			joined := ""
			for _, t := range toks[i : i+5] {
				joined += t.s
			}
			if strings.EqualFold(joined, "AM/PM") {
				ampm = true
			}
		}
	}
	var b strings.Builder
	lastWasHour := false
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if !t.code || !isDateLetter(t.s[0]) {
			if t.code && strings.EqualFold(t.s, "A") && i+4 < len(toks) && ampm {
				if hh < 12 {
					b.WriteString("AM")
				} else {
					b.WriteString("PM")
				}
				i += 4
				continue
			}
			b.WriteString(t.s)
			continue
		}
		l := strings.ToLower(t.s)
		n := len(l)
		switch l[0] {
		case 'y':
			if n <= 2 {
				b.WriteString(pad2(y % 100))
			} else {
				b.WriteString(strconv.Itoa(y))
			}
		case 'm':
			minutes := lastWasHour || nextIsSecond(toks, i)
			switch {
			case minutes && n <= 2:
				if n == 2 {
					b.WriteString(pad2(mi))
				} else {
					b.WriteString(strconv.Itoa(mi))
				}
			case n == 1:
				b.WriteString(strconv.Itoa(int(m)))
			case n == 2:
				b.WriteString(pad2(int(m)))
			case n == 3:
				b.WriteString(monthNames[m-1][:3])
			case n == 5:
				b.WriteString(monthNames[m-1][:1])
			default:
				b.WriteString(monthNames[m-1])
			}
		case 'd':
			switch {
			case n == 1:
				b.WriteString(strconv.Itoa(d))
			case n == 2:
				b.WriteString(pad2(d))
			case n == 3:
				b.WriteString(weekday.String()[:3])
			default:
				b.WriteString(weekday.String())
			}
		case 'h':
			h := hh
			if ampm {
				h = hh % 12
				if h == 0 {
					h = 12
				}
			}
			if n >= 2 {
				b.WriteString(pad2(h))
			} else {
				b.WriteString(strconv.Itoa(h))
			}
		case 's':
			if n >= 2 {
				b.WriteString(pad2(ss))
			} else {
				b.WriteString(strconv.Itoa(ss))
			}
		}
		lastWasHour = l[0] == 'h'
		if l[0] != 'h' && l[0] != 'm' {
			lastWasHour = false
		}
	}
	return b.String()
}

type fmtTok struct {
	s    string
	code bool
}

func isDateLetter(c byte) bool {
	switch c | 0x20 {
	case 'y', 'm', 'd', 'h', 's':
		return true
	}
	return false
}

// nextIsSecond: whether the next date code after toks[i] is seconds (so
// "mm" in "mm:ss" is minutes).
func nextIsSecond(toks []fmtTok, i int) bool {
	for _, t := range toks[i+1:] {
		if t.code && isDateLetter(t.s[0]) {
			return t.s[0]|0x20 == 's'
		}
	}
	return false
}

func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}
