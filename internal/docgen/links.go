package docgen

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Link is one relative link of a Markdown file.
type Link struct {
	Line   int    // 1-based
	Target string // as written: a path, a path#anchor or #anchor
}

var (
	inlineLink = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refLink    = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)`)
	htmlLink   = regexp.MustCompile(`\b(?:src|href)\s*=\s*"([^"]+)"`)
	codeSpan   = regexp.MustCompile("(`+)[^`]*?(`+)")
	htmlID     = regexp.MustCompile(`\b(?:id|name)\s*=\s*"([^"]+)"`)
	heading    = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	mdLinkText = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
)

// Links lists the relative links of a Markdown document — inline, reference
// and HTML src/href — outside code blocks and code spans. Links with a
// scheme (https:, mailto:) are left out.
func Links(doc string) []Link {
	var out []Link
	eachProse(doc, func(n int, line string) {
		line = codeSpan.ReplaceAllString(line, "")
		var targets []string
		for _, re := range []*regexp.Regexp{inlineLink, refLink, htmlLink} {
			for _, m := range re.FindAllStringSubmatch(line, -1) {
				targets = append(targets, m[1])
			}
		}
		for _, t := range targets {
			if u, err := url.Parse(t); err == nil && u.Scheme != "" {
				continue
			}
			out = append(out, Link{Line: n, Target: t})
		}
	})
	return out
}

// Anchors lists the fragment IDs a Markdown document offers, as GitHub
// renders it: one per heading (its slug, -1, -2, … for repeats) and every
// HTML id or name.
func Anchors(doc string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	eachProse(doc, func(_ int, line string) {
		if m := heading.FindStringSubmatch(line); m != nil {
			s := Slug(m[2])
			if k := seen[s]; k > 0 {
				out[s+"-"+strconv.Itoa(k)] = true
			} else {
				out[s] = true
			}
			seen[s]++
		}
		for _, m := range htmlID.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
	})
	return out
}

// Slug is GitHub's anchor for a heading: its text without Markdown (code
// marks, emphasis, link targets), lower-case, with every character but
// letters, digits, '_', '-' and spaces removed and spaces made '-'.
func Slug(text string) string {
	text = mdLinkText.ReplaceAllString(text, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// eachProse calls f with every line outside fenced code blocks.
func eachProse(doc string, f func(n int, line string)) {
	fence := ""
	for i, line := range strings.Split(doc, "\n") {
		t := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]+" ") == "" {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = t[:3]
			for _, c := range t[3:] {
				if string(c) != fence[:1] {
					break
				}
				fence += fence[:1]
			}
			continue
		}
		f(i+1, line)
	}
}

// CheckLinks checks every relative link of the Markdown files (paths
// relative to root): the file or folder it names exists, and an anchor
// names a heading or id of the Markdown file it points into.
func CheckLinks(root string, files []string) []error {
	var errs []error
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := anchors[path]; ok {
			return a, nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		anchors[path] = Anchors(string(raw))
		return anchors[path], nil
	}
	for _, f := range files {
		path := filepath.Join(root, filepath.FromSlash(f))
		raw, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, l := range Links(string(raw)) {
			target, frag, _ := strings.Cut(l.Target, "#")
			where := fmt.Sprintf("%s:%d: link %q", f, l.Line, l.Target)
			if p, err := url.PathUnescape(target); err == nil {
				target = p
			}
			dest := path
			if target != "" {
				dest = filepath.Join(filepath.Dir(path), filepath.FromSlash(target))
				if _, err := os.Stat(dest); err != nil {
					errs = append(errs, fmt.Errorf("%s: %s does not exist", where, filepath.ToSlash(target)))
					continue
				}
			}
			if frag == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			a, err := anchorsOf(dest)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %v", where, err))
				continue
			}
			if !a[frag] {
				errs = append(errs, fmt.Errorf("%s: no heading or id %q in %s", where, frag, filepath.Base(dest)))
			}
		}
	}
	return errs
}
