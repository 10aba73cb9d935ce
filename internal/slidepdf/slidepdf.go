// Package slidepdf draws a slides tab as a PDF on the server: one 16:9 page
// a slide, in the slide's layout and theme, as the web app's print
// stylesheet lays it out (the same proportions, colours and type sizes).
//
// It draws with the Go fonts (golang.org/x/image/font/gofont), which cover
// the Latin, Greek and Cyrillic scripts; a character they lack is drawn as
// the font's empty box, and Render reports how many there were. The web
// app's print (the browser's own fonts and shaping) covers every script.
//
// The PDF is written by codeberg.org/go-pdf/fpdf: pure Go, embeds and
// subsets TrueType fonts, and has no dependencies of its own.
package slidepdf

import (
	"bytes"
	"fmt"
	"strings"
	"time"
	"unicode"

	"codeberg.org/go-pdf/fpdf"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goitalic"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/sfnt"

	"foundry/internal/note"
)

// The page: 297 × 167 mm, the print stylesheet's @page. Sizes below are in
// hundredths of the page's width (the stylesheet's cqw), converted by cw.
const (
	pageW = 297.0
	pageH = 167.0
)

func cw(v float64) float64 { return v * pageW / 100 }

// pt is a font size given in cqw, in points.
func pt(v float64) float64 { return cw(v) / 25.4 * 72 }

type rgb struct{ r, g, b int }

func hex(s string) rgb {
	var c rgb
	fmt.Sscanf(s, "#%02x%02x%02x", &c.r, &c.g, &c.b)
	return c
}

// theme is the stylesheet's colours: background (a gradient where to is
// set), text and accent.
type theme struct{ bg, to, fg, accent rgb }

var themes = map[string]theme{
	"paper":  {bg: hex("#fdfcf8"), fg: hex("#1d2230"), accent: hex("#2852c8")},
	"ink":    {bg: hex("#15171c"), fg: hex("#f2f3f5"), accent: hex("#ffd166")},
	"ocean":  {bg: hex("#0c3d5e"), to: hex("#0f5a73"), fg: hex("#eef8ff"), accent: hex("#8fe3ff")},
	"forest": {bg: hex("#1f3a2c"), fg: hex("#f3efe0"), accent: hex("#c8e6a0")},
	"sunset": {bg: hex("#ffe1bd"), to: hex("#ffc2a8"), fg: hex("#2b1208"), accent: hex("#8a2433")},
}

// Result is a rendered deck.
type Result struct {
	PDF   []byte
	Pages int
	// Missing counts the characters of the slides' titles and bodies the
	// fonts do not have (drawn as boxes; those past a page's edge too).
	Missing int
}

// Render draws slides as a PDF titled title. modified dates the document
// (a fixed time gives the same bytes for the same deck).
func Render(title string, slides []note.Slide, modified time.Time) (res Result, err error) {
	defer func() {
		// fpdf reports through Err, but a font or layout bug must not take
		// the process down with a panic.
		if p := recover(); p != nil {
			res, err = Result{}, fmt.Errorf("drawing the PDF: %v", p)
		}
	}()
	f := fpdf.NewCustom(&fpdf.InitType{OrientationStr: "P", UnitStr: "mm", Size: fpdf.SizeType{Wd: pageW, Ht: pageH}})
	f.SetCompression(true)
	f.SetAutoPageBreak(false, 0)
	f.SetMargins(0, 0, 0)
	f.SetCellMargin(0)
	f.SetTitle(title, true)
	f.SetCreator("Foundry", true)
	f.SetProducer("Foundry", true)
	f.SetCreationDate(modified.UTC())
	f.SetModificationDate(modified.UTC())
	f.SetCatalogSort(true)
	f.AddUTF8FontFromBytes("go", "", goregular.TTF)
	f.AddUTF8FontFromBytes("go", "B", gobold.TTF)
	f.AddUTF8FontFromBytes("go", "I", goitalic.TTF)
	d := &drawer{f: f}
	for i := range slides {
		d.slide(&slides[i])
	}
	if len(slides) == 0 {
		d.slide(&note.Slide{Title: title, Body: "This deck has no slides.", Layout: "title"})
	}
	if err := f.Error(); err != nil {
		return Result{}, err
	}
	var buf bytes.Buffer
	if err := f.Output(&buf); err != nil {
		return Result{}, err
	}
	lacking := 0
	for _, s := range slides {
		lacking += missing(s.Title) + missing(s.Body)
	}
	return Result{PDF: buf.Bytes(), Pages: f.PageCount(), Missing: lacking}, nil
}

type drawer struct{ f *fpdf.Fpdf }

func (d *drawer) color(c rgb) { d.f.SetTextColor(c.r, c.g, c.b) }

// The frame: 6cqw above and below, 7cqw either side; 3cqw between the
// title and the body.
var (
	frameX = cw(7)
	frameY = cw(6)
	frameW = pageW - 2*cw(7)
	frameH = pageH - 2*cw(6)
	gap    = cw(3)
)

func (d *drawer) slide(s *note.Slide) {
	f := d.f
	f.AddPage()
	th, ok := themes[s.Theme]
	if !ok {
		th = themes[note.SlideThemeDefault]
	}
	if th.to != (rgb{}) {
		// 140deg: from the top left towards the bottom right.
		f.LinearGradient(0, 0, pageW, pageH, th.bg.r, th.bg.g, th.bg.b, th.to.r, th.to.g, th.to.b, 0, 1, 1, 0)
	} else {
		f.SetFillColor(th.bg.r, th.bg.g, th.bg.b)
		f.Rect(0, 0, pageW, pageH, "F")
	}
	title := strings.TrimSpace(s.Title)
	if title == "" {
		title = "Untitled slide"
	}
	body := strings.TrimSpace(s.Body)
	switch s.Layout {
	case "title":
		d.centered(title, body, 7.5, th.accent, "", 3.4, th.fg, frameX, frameW, "C")
	case "section":
		// A bar in the accent colour down the left of the centred block.
		bar := cw(1.6)
		x, w := frameX+bar+cw(4), frameW-bar-cw(4)
		top, h := d.centered(title, body, 7, th.fg, "B", 3, th.accent, x, w, "L")
		f.SetFillColor(th.accent.r, th.accent.g, th.accent.b)
		f.Rect(frameX, top, bar, h, "F")
	case "two-column":
		y := d.text(title, "B", 5.6, frameX, frameY, frameW, 1.15, th.accent, "L") + gap
		a, b := Columns(s.Body)
		colW := (frameW - cw(5)) / 2
		d.blocks(a, "", 3, frameX, y, colW, th.fg, "L")
		x2 := frameX + colW + cw(5)
		f.SetDrawColor(mix(th.fg, th.bg, 0.25))
		f.SetLineWidth(cw(0.3))
		f.Line(x2, y, x2, frameY+frameH)
		d.blocks(b, "", 3, x2+cw(4), y, colW-cw(4), th.fg, "L")
	case "quote":
		quote, caption := body, title
		if quote == "" {
			quote, caption = title, ""
		}
		w := frameW - cw(6)
		hq := d.blocksHeight(quote, "I", 4.6, w)
		hc := 0.0
		if caption != "" {
			hc = cw(2) + d.height("— "+caption, "B", 2.8, w, 1.45)
		}
		top := frameY + (frameH-hq-hc)/2
		f.SetFont("go", "", pt(11))
		d.color(th.accent)
		f.Text(frameX, top+cw(11)*0.75-cw(2), "“")
		y := d.blocks(quote, "I", 4.6, frameX+cw(6), top, w, th.fg, "L")
		if caption != "" {
			d.text("— "+caption, "B", 2.8, frameX+cw(6), y+cw(2), w, 1.45, th.accent, "L")
		}
	default:
		y := d.text(title, "B", 5.6, frameX, frameY, frameW, 1.15, th.accent, "L") + gap
		d.blocks(s.Body, "", 3, frameX, y, frameW, th.fg, "L")
	}
}

// centered draws a title and, under it, the body (its style, size and
// colour given) as a block centred in the frame's height, and answers the
// block's top and height.
func (d *drawer) centered(title, body string, size float64, tc rgb, subStyle string, subSize float64, sc rgb, x, w float64, align string) (float64, float64) {
	h := d.height(title, "B", size, w, 1.15)
	if body != "" {
		h += cw(2.5) + d.blocksHeight(body, subStyle, subSize, w)
	}
	top := frameY + (frameH-h)/2
	y := d.text(title, "B", size, x, top, w, 1.15, tc, align)
	if body != "" {
		d.blocks(body, subStyle, subSize, x, y+cw(2.5), w, sc, align)
	}
	return top, h
}

func mix(a, b rgb, t float64) (int, int, int) {
	m := func(x, y int) int { return int(float64(x)*t + float64(y)*(1-t) + 0.5) }
	return m(a.r, b.r), m(a.g, b.g), m(a.b, b.b)
}

// lines wraps text at width w in the given style and size (cqw).
func (d *drawer) lines(text, style string, size, w float64) []string {
	d.f.SetFont("go", style, pt(size))
	var out []string
	for _, para := range strings.Split(text, "\n") {
		if strings.TrimSpace(para) == "" {
			out = append(out, "")
			continue
		}
		out = append(out, d.f.SplitText(para, w)...)
	}
	return out
}

func (d *drawer) height(text, style string, size, w, lh float64) float64 {
	return float64(len(d.lines(text, style, size, w))) * cw(size) * lh
}

// text draws wrapped text from (x, y) and answers where it ends, never
// below the frame: what does not fit is cut, as overflow: hidden does.
func (d *drawer) text(text, style string, size, x, y, w, lh float64, c rgb, align string) float64 {
	lineH := cw(size) * lh
	d.color(c)
	for _, l := range d.lines(text, style, size, w) {
		if y+lineH > frameY+frameH+0.01 {
			break
		}
		d.f.SetXY(x, y)
		d.f.CellFormat(w, lineH, l, "", 0, align, false, 0, "")
		y += lineH
	}
	return y
}

// Block is a paragraph or a bullet list of a slide's body.
type Block struct {
	Bullets bool
	Lines   []string
}

// Blocks splits a body as the web app's SlideView does: a line that starts
// with "- ", "* " or "• " is a bullet; a blank line ends a paragraph.
func Blocks(text string) []Block {
	var out []Block
	var para, bullets []string
	flush := func() {
		if len(para) > 0 {
			out = append(out, Block{Lines: para})
		}
		if len(bullets) > 0 {
			out = append(out, Block{Bullets: true, Lines: bullets})
		}
		para, bullets = nil, nil
	}
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeftFunc(line, unicode.IsSpace)
		if item, ok := bullet(trimmed); ok {
			if len(para) > 0 {
				b := bullets
				bullets = nil
				flush()
				bullets = b
			}
			bullets = append(bullets, item)
		} else if strings.TrimSpace(line) == "" {
			flush()
		} else {
			if len(bullets) > 0 {
				flush()
			}
			para = append(para, line)
		}
	}
	flush()
	return out
}

func bullet(s string) (string, bool) {
	for _, m := range []string{"-", "*", "•"} {
		if rest, ok := strings.CutPrefix(s, m); ok && rest != "" && unicode.IsSpace([]rune(rest)[0]) {
			return strings.TrimLeftFunc(rest, unicode.IsSpace), true
		}
	}
	return "", false
}

// Columns splits a two-column body at a line "---", or else in half at a
// blank line (SlideView's columns).
func Columns(body string) (string, string) {
	lines := strings.Split(body, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == "---" {
			return strings.Join(lines[:i], "\n"), strings.Join(lines[i+1:], "\n")
		}
	}
	paras := splitParas(body)
	if len(paras) < 2 {
		return body, ""
	}
	half := (len(paras) + 1) / 2
	return strings.Join(paras[:half], "\n\n"), strings.Join(paras[half:], "\n\n")
}

func splitParas(body string) []string {
	var out []string
	cur := []string{}
	for _, l := range strings.Split(body, "\n") {
		if strings.TrimSpace(l) == "" {
			if len(cur) > 0 {
				out = append(out, strings.Join(cur, "\n"))
			}
			cur = cur[:0:0]
			continue
		}
		cur = append(cur, l)
	}
	if len(cur) > 0 {
		out = append(out, strings.Join(cur, "\n"))
	}
	return out
}

// The body's type: line height 1.45, 1.2cqw below a block, 0.6cqw below a
// bullet, bullets indented 4cqw.
const (
	bodyLH    = 1.45
	blockGap  = 1.2
	bulletGap = 0.6
	indent    = 4.0
)

func (d *drawer) blocksHeight(text, style string, size, w float64) float64 {
	h := 0.0
	for _, b := range Blocks(text) {
		if b.Bullets {
			for _, item := range b.Lines {
				h += d.height(item, style, size, w-cw(indent), bodyLH) + cw(bulletGap)
			}
		} else {
			h += d.height(strings.Join(b.Lines, "\n"), style, size, w, bodyLH)
		}
		h += cw(blockGap)
	}
	return h
}

// blocks draws a body from (x, y) and answers where it ends.
func (d *drawer) blocks(text, style string, size, x, y, w float64, c rgb, align string) float64 {
	bottom := frameY + frameH
	for _, b := range Blocks(text) {
		if y >= bottom {
			break
		}
		if !b.Bullets {
			y = d.text(strings.Join(b.Lines, "\n"), style, size, x, y, w, bodyLH, c, align) + cw(blockGap)
			continue
		}
		for _, item := range b.Lines {
			if y+cw(size)*bodyLH > bottom+0.01 {
				break
			}
			if align == "C" {
				y = d.text("• "+item, style, size, x, y, w, bodyLH, c, align) + cw(bulletGap)
				continue
			}
			d.f.SetFont("go", style, pt(size))
			d.color(c)
			d.f.SetXY(x+cw(indent)-cw(2.4), y)
			d.f.CellFormat(cw(2.4), cw(size)*bodyLH, "•", "", 0, "L", false, 0, "")
			y = d.text(item, style, size, x+cw(indent), y, w-cw(indent), bodyLH, c, align) + cw(bulletGap)
		}
		y += cw(blockGap)
	}
	return y
}

// fonts is the Go regular font, parsed once, to count characters it lacks.
var fonts = func() *sfnt.Font {
	f, err := sfnt.Parse(goregular.TTF)
	if err != nil {
		panic(err)
	}
	return f
}()

func missing(s string) int {
	var buf sfnt.Buffer
	n := 0
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			continue
		}
		if g, err := fonts.GlyphIndex(&buf, r); err != nil || g == 0 {
			n++
		}
	}
	return n
}
