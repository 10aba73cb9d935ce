package sim

import (
	"encoding/csv"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"
)

// writeMarkdownTable prints t as a Markdown table with padded columns.
func writeMarkdownTable(w io.Writer, t Table) {
	if len(t.Header) == 0 {
		return
	}
	width := make([]int, len(t.Header))
	for i, h := range t.Header {
		width[i] = max(3, utf8.RuneCountInString(h))
	}
	for _, r := range t.Rows {
		for i := range min(len(r), len(width)) {
			width[i] = max(width[i], utf8.RuneCountInString(r[i]))
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		b.WriteString("|")
		for i := range width {
			c := ""
			if i < len(cells) {
				c = strings.ReplaceAll(cells[i], "|", `\|`)
			}
			b.WriteString(" " + c + strings.Repeat(" ", max(0, width[i]-utf8.RuneCountInString(c))) + " |")
		}
		fmt.Fprintln(w, b.String())
	}
	line(t.Header)
	sep := make([]string, len(width))
	for i := range sep {
		sep[i] = strings.Repeat("-", width[i])
	}
	line(sep)
	for _, r := range t.Rows {
		line(r)
	}
}

func writeCSV(path string, rows [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	cw := csv.NewWriter(f)
	if err := cw.WriteAll(rows); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// commas formats 5400 as "5,400", like the seeds' tables.
func commas(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

// pct formats a share as "83.7%" (and exactly 1 as "100%", as the seed does).
func pct(num, den int) string {
	if den == 0 {
		return "–"
	}
	if num == den {
		return "100%"
	}
	return strconv.FormatFloat(100*float64(num)/float64(den), 'f', 1, 64) + "%"
}

func ftoa(f float64, prec int) string { return strconv.FormatFloat(f, 'f', prec, 64) }

func itoa(n int) string { return strconv.Itoa(n) }

// fmtSeconds renders seconds the way the seed's tables do ("2.4s").
func fmtSeconds(s float64) string { return ftoa(s, 1) + "s" }

// barSeries is one colour of a grouped bar chart.
type barSeries struct {
	Name   string
	Color  string
	Values []float64 // one per category
}

// barChartSVG draws a grouped bar chart: categories along x, one bar per
// series in each, value labels on top. Hand-written SVG, no dependency.
func barChartSVG(title, yLabel string, categories []string, series []barSeries, yMax float64, unit string) []byte {
	const (
		W, H                    = 880, 420
		left, right, top, lower = 70, 20, 50, 90
	)
	plotW, plotH := float64(W-left-right), float64(H-top-lower)
	if yMax <= 0 {
		for _, s := range series {
			for _, v := range s.Values {
				yMax = math.Max(yMax, v)
			}
		}
		yMax = niceCeil(yMax * 1.1)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="12">`+"\n", W, H, W, H)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#fff"/>`+"\n", W, H)
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="15" font-weight="600">%s</text>`+"\n", left, html.EscapeString(title))
	// y axis with 5 ticks
	for i := 0; i <= 5; i++ {
		v := yMax * float64(i) / 5
		y := float64(top) + plotH - plotH*float64(i)/5
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#e5e5e5"/>`+"\n", left, W-right, y, y)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" fill="#555">%s%s</text>`+"\n", left-6, y+4, trimFloat(v), unit)
	}
	fmt.Fprintf(&b, `<text transform="translate(16 %d) rotate(-90)" text-anchor="middle" fill="#333">%s</text>`+"\n", top+int(plotH/2), html.EscapeString(yLabel))
	n := len(categories)
	if n == 0 {
		n = 1
	}
	groupW := plotW / float64(n)
	barW := math.Min(40, groupW*0.8/float64(max(1, len(series))))
	for ci, c := range categories {
		gx := float64(left) + groupW*float64(ci)
		start := gx + (groupW-barW*float64(len(series)))/2
		for si, s := range series {
			if ci >= len(s.Values) || math.IsNaN(s.Values[ci]) {
				continue
			}
			v := s.Values[ci]
			h := plotH * math.Min(v, yMax) / yMax
			x := start + barW*float64(si)
			y := float64(top) + plotH - h
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s — %s: %s%s</title></rect>`+"\n",
				x, y, barW-2, h, s.Color, html.EscapeString(c), html.EscapeString(s.Name), trimFloat(v), unit)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="10" fill="#333">%s</text>`+"\n", x+(barW-2)/2, y-3, trimFloat(v))
		}
		lines := strings.Split(c, "\n")
		for li, l := range lines {
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#333">%s</text>`+"\n", gx+groupW/2, H-lower+16+14*li, html.EscapeString(l))
		}
	}
	fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#333"/>`+"\n", left, W-right, float64(top)+plotH, float64(top)+plotH)
	// legend
	lx := left
	for _, s := range series {
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d" fill="#333">%s</text>`+"\n", lx, H-24, s.Color, lx+16, H-14, html.EscapeString(s.Name))
		lx += 24 + 7*utf8.RuneCountInString(s.Name)
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func trimFloat(v float64) string {
	if v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	if math.Abs(v) >= 10 {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// Colours of the charts: ours, the seed's, and a simulated scheme.
const (
	colorFoundry = "#2b6cb0"
	colorSeed    = "#a0aec0"
	colorSim     = "#dd6b20"
	colorBad     = "#c53030"
	colorGood    = "#2f855a"
)

// plural is "1 run", "3 runs".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return commas(n) + " " + word + "s"
}

// seedsPhrase is "Seed 1" or "Seeds 1–5" (consecutive) or "Seeds 1 / 4".
func seedsPhrase(seeds []int64) string {
	switch {
	case len(seeds) == 0:
		return "No seeds"
	case len(seeds) == 1:
		return fmt.Sprintf("Seed %d", seeds[0])
	}
	consecutive := true
	for i := 1; i < len(seeds); i++ {
		consecutive = consecutive && seeds[i] == seeds[i-1]+1
	}
	if consecutive {
		return fmt.Sprintf("Seeds %d–%d", seeds[0], seeds[len(seeds)-1])
	}
	return "Seeds " + seedRange(seeds)
}
