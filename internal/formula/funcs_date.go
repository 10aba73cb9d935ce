package formula

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Dates are serial numbers in the 1900 system, as Excel: 1 is 1900-01-01,
// 60 is the 1900-02-29 that never was (Excel's leap-year bug, kept for
// compatibility), 61 is 1900-03-01. The fraction is the time of day.

var epoch = time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)

// serialOf is the serial number of a calendar date.
func serialOf(y int, m time.Month, d int) float64 {
	t := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	days := math.Round(t.Sub(epoch).Hours() / 24)
	if days < 61 {
		days-- // before 1900-03-01 Excel counts from 1899-12-31
	}
	return days
}

// dateOf is the calendar date of a serial number's day; ok false below 0.
func dateOf(serial float64) (y int, m time.Month, d int, ok bool) {
	if serial < 0 || serial > 2958465 || math.IsNaN(serial) {
		return 0, 0, 0, false
	}
	n := int(math.Floor(serial))
	switch {
	case n == 0:
		return 1900, 1, 0, true
	case n == 60:
		return 1900, 2, 29, true
	case n < 60:
		n++
	}
	t := epoch.AddDate(0, 0, n)
	return t.Year(), t.Month(), t.Day(), true
}

func timeSerial(t time.Time) float64 {
	day := serialOf(t.Year(), t.Month(), t.Day())
	secs := t.Hour()*3600 + t.Minute()*60 + t.Second()
	return day + (float64(secs)+float64(t.Nanosecond())/1e9)/86400
}

// parseDateTimeText reads "2024-01-15", "2024-01-15 13:30[:05]" and
// "13:30[:05]" as serial numbers.
func parseDateTimeText(s string) (float64, bool) {
	datePart, timePart := s, ""
	if i := strings.IndexByte(s, ' '); i >= 0 {
		datePart, timePart = s[:i], strings.TrimSpace(s[i+1:])
	} else if strings.Contains(s, ":") {
		datePart, timePart = "", s
	}
	serial := 0.0
	if datePart != "" {
		p := strings.Split(datePart, "-")
		if len(p) != 3 || len(p[0]) != 4 || len(p[1]) < 1 || len(p[1]) > 2 || len(p[2]) < 1 || len(p[2]) > 2 {
			return 0, false
		}
		y, e1 := strconv.Atoi(p[0])
		m, e2 := strconv.Atoi(p[1])
		d, e3 := strconv.Atoi(p[2])
		if e1 != nil || e2 != nil || e3 != nil || m < 1 || m > 12 || d < 1 || d > 31 || y < 1900 {
			return 0, false
		}
		if time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Day() != d {
			return 0, false
		}
		serial = serialOf(y, time.Month(m), d)
	}
	if timePart != "" {
		p := strings.Split(timePart, ":")
		if len(p) < 2 || len(p) > 3 {
			return 0, false
		}
		var hms [3]float64
		for i, x := range p {
			if !isDigits(x) || len(x) > 2 {
				return 0, false
			}
			hms[i], _ = strconv.ParseFloat(x, 64)
		}
		if hms[1] > 59 || hms[2] > 59 || hms[0] > 23 && datePart != "" {
			return 0, false
		}
		serial += (hms[0]*3600 + hms[1]*60 + hms[2]) / 86400
	}
	return serial, true
}

// dateArg is argument i as a serial date's calendar day.
func (e *evaluator) dateArg(n node) (int, time.Month, int, Error) {
	x, err := e.num(n)
	if err != "" {
		return 0, 0, 0, err
	}
	y, m, d, ok := dateOf(x)
	if !ok {
		return 0, 0, 0, ErrNum
	}
	return y, m, d, ""
}

// dayFraction is the seconds into the day of a serial, rounded to the
// nearest second.
func dayFraction(x float64) (int, bool) {
	if x < 0 {
		return 0, false
	}
	s := int(math.Round((x - math.Floor(x)) * 86400))
	return s % 86400, true
}

func daysInMonth(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// addMonths moves a date by n months, keeping the day or the month's last.
func addMonths(y int, m time.Month, d, n int) (int, time.Month, int) {
	total := y*12 + int(m) - 1 + n
	ny, nm := total/12, time.Month(total%12+1)
	return ny, nm, min(d, daysInMonth(ny, nm))
}

func checkSerial(x float64) Value {
	if x < 0 || x > 2958465 {
		return ErrNum
	}
	return x
}

func dateFuncs() map[string]*fnDef {
	part := func(f func(y int, m time.Month, d int) float64) *fnDef {
		return &fnDef{min: 1, max: 1, call: func(e *evaluator, args []node) any {
			y, m, d, err := e.dateArg(args[0])
			if err != "" {
				return err
			}
			return f(y, m, d)
		}}
	}
	timePart := func(f func(secs int) float64) *fnDef {
		return fn1(func(x float64) Value {
			s, ok := dayFraction(x)
			if !ok {
				return ErrNum
			}
			return f(s)
		})
	}
	return map[string]*fnDef{
		"DATE": {min: 3, max: 3, call: func(e *evaluator, args []node) any {
			var p [3]float64
			for i := range p {
				x, err := e.num(args[i])
				if err != "" {
					return err
				}
				p[i] = math.Trunc(x)
			}
			y := p[0]
			if y < 0 || y >= 10000 || math.Abs(p[1]) > 1e6 || math.Abs(p[2]) > 1e7 {
				return ErrNum
			}
			if y < 1900 {
				y += 1900
			}
			return checkSerial(serialOf(int(y), time.Month(p[1]), int(p[2])))
		}},
		"TIME": {min: 3, max: 3, call: func(e *evaluator, args []node) any {
			var p [3]float64
			for i := range p {
				x, err := e.num(args[i])
				if err != "" {
					return err
				}
				p[i] = math.Trunc(x)
			}
			secs := p[0]*3600 + p[1]*60 + p[2]
			if secs < 0 || secs > 1e12 {
				return ErrNum
			}
			return math.Mod(secs, 86400) / 86400
		}},
		"TODAY": {min: 0, max: 0, volatile: true, call: func(e *evaluator, args []node) any {
			return math.Floor(timeSerial(e.ctx.Now()))
		}},
		"NOW": {min: 0, max: 0, volatile: true, call: func(e *evaluator, args []node) any {
			return timeSerial(e.ctx.Now())
		}},
		"YEAR":  part(func(y int, m time.Month, d int) float64 { return float64(y) }),
		"MONTH": part(func(y int, m time.Month, d int) float64 { return float64(m) }),
		"DAY":   part(func(y int, m time.Month, d int) float64 { return float64(d) }),
		"WEEKDAY": {min: 1, max: 2, call: func(e *evaluator, args []node) any {
			x, err := e.num(args[0])
			if err != "" {
				return err
			}
			if x < 0 {
				return ErrNum
			}
			typ, err := e.optNum(args, 1, 1)
			if err != "" {
				return err
			}
			// Serial 0 is a Saturday to Excel, and the fake 1900-02-29 a
			// Wednesday: day n is weekday (n+6) mod 7 with 0 = Sunday
			// (from 1900-03-01 on this agrees with the calendar).
			n := int(math.Floor(x))
			sun0 := (n + 6) % 7 // 0 Sunday … 6 Saturday
			switch t := int(typ); {
			case t == 1 || t == 17:
				return float64(sun0 + 1)
			case t == 2 || t == 11:
				return float64((sun0+6)%7 + 1)
			case t == 3:
				return float64((sun0 + 6) % 7)
			case t >= 12 && t <= 16:
				// 12: Tuesday = 1 … 16: Saturday = 1.
				start := t - 10 // weekday (0 = Sunday) that counts as 1
				return float64((sun0-start+7)%7 + 1)
			}
			return ErrNum
		}},
		"EDATE": {min: 2, max: 2, call: func(e *evaluator, args []node) any {
			y, m, d, err := e.dateArg(args[0])
			if err != "" {
				return err
			}
			n, err := e.num(args[1])
			if err != "" {
				return err
			}
			if math.Abs(n) > 120000 {
				return ErrNum
			}
			ny, nm, nd := addMonths(y, m, d, int(math.Trunc(n)))
			return checkSerial(serialOf(ny, nm, nd))
		}},
		"EOMONTH": {min: 2, max: 2, call: func(e *evaluator, args []node) any {
			y, m, _, err := e.dateArg(args[0])
			if err != "" {
				return err
			}
			n, err := e.num(args[1])
			if err != "" {
				return err
			}
			if math.Abs(n) > 120000 {
				return ErrNum
			}
			ny, nm, _ := addMonths(y, m, 1, int(math.Trunc(n)))
			return checkSerial(serialOf(ny, nm, daysInMonth(ny, nm)))
		}},
		"DAYS": {min: 2, max: 2, call: func(e *evaluator, args []node) any {
			end, err := e.num(args[0])
			if err != "" {
				return err
			}
			start, err := e.num(args[1])
			if err != "" {
				return err
			}
			return math.Floor(end) - math.Floor(start)
		}},
		"DATEDIF": {min: 3, max: 3, call: datedif},
		"HOUR":    timePart(func(s int) float64 { return float64(s / 3600) }),
		"MINUTE":  timePart(func(s int) float64 { return float64(s / 60 % 60) }),
		"SECOND":  timePart(func(s int) float64 { return float64(s % 60) }),
	}
}

func datedif(e *evaluator, args []node) any {
	x, err := e.num(args[0])
	if err != "" {
		return err
	}
	z, err := e.num(args[1])
	if err != "" {
		return err
	}
	unit, err := e.text(args[2])
	if err != "" {
		return err
	}
	if z < x {
		return ErrNum
	}
	y1, m1, d1, ok1 := dateOf(x)
	y2, m2, d2, ok2 := dateOf(z)
	if !ok1 || !ok2 {
		return ErrNum
	}
	months := (y2-y1)*12 + int(m2) - int(m1)
	if d2 < d1 {
		months--
	}
	switch strings.ToUpper(unit) {
	case "D":
		return math.Floor(z) - math.Floor(x)
	case "M":
		return float64(months)
	case "Y":
		return float64(months / 12)
	case "YM":
		return float64(months % 12)
	case "MD":
		if d2 >= d1 {
			return float64(d2 - d1)
		}
		// Days from d1 in the month before the end's month.
		py, pm := y2, m2-1
		if pm < 1 {
			py, pm = y2-1, 12
		}
		return float64(daysInMonth(py, pm) - d1 + d2)
	case "YD":
		// Days from the start's anniversary on or before the end.
		ay := y2
		if m2 < m1 || m2 == m1 && d2 < d1 {
			ay--
		}
		ad := min(d1, daysInMonth(ay, m1))
		return math.Floor(z) - serialOf(ay, m1, ad)
	}
	return ErrNum
}
