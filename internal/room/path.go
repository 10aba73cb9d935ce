package room

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"foundry/internal/problem"
)

// MaxPathBytes is the longest file path a snippet or a repository may use.
const MaxPathBytes = 512

// CheckPath reports whether p is a safe relative path for a snippet or
// repository file: slash-separated, relative, every segment a plain name.
//
// It refuses rather than normalizes: "src/../x" is refused even though it
// would resolve inside the snippet, because a path we store is then exactly
// the path every consumer (browser sandbox, CLI checkout, review card) sees.
// An accepted path p always satisfies path.Clean(p) == p and
// filepath.IsLocal(p).
//
// The error is a *problem.Problem with Code problem.Invalid and Field "files".
func CheckPath(p string) error {
	if reason := pathReason(p); reason != "" {
		return problem.New(problem.Invalid, "files",
			"unsafe path %s: %s; use a relative path like %s", quotePath(p), reason, EntryPoint)
	}
	return nil
}

// pathReason returns why p is unsafe, or "" when it is safe.
func pathReason(p string) string {
	switch {
	case p == "":
		return "empty path"
	case len(p) > MaxPathBytes:
		return "longer than " + strconv.Itoa(MaxPathBytes) + " bytes"
	case !utf8.ValidString(p):
		return "not valid UTF-8"
	case strings.IndexByte(p, 0) >= 0:
		return "contains a NUL byte"
	case strings.IndexFunc(p, invisible) >= 0:
		return "contains a control or invisible character"
	case strings.IndexByte(p, '\\') >= 0:
		return "contains a backslash (separate segments with '/')"
	case p[0] == '/':
		return "absolute path (leading '/')"
	}
	segs := strings.Split(p, "/")
	if strings.IndexByte(segs[0], ':') >= 0 {
		return "drive letter or ':' in the first segment"
	}
	for i, s := range segs {
		switch {
		case s == "" && i == len(segs)-1:
			return "trailing '/'"
		case s == "":
			return "empty segment ('//')"
		case s == ".":
			return "'.' segment"
		case s == "..":
			return "'..' segment (a path may not climb out of the app)"
		case strings.HasPrefix(s, ".."):
			// "..x" is a legal name, but it reads like ".." on a review
			// card and trips checks that look at prefixes.
			return "segment starting with '..'"
		case strings.Trim(s, ". ") == "":
			// "...", ". ", " ": Windows strips trailing dots and spaces,
			// which turns these into "", "." or "..".
			return "segment made only of dots or spaces"
		}
	}
	return ""
}

// invisible reports characters a reviewer can't see or that change how a
// path is displayed: C0/C1 controls, DEL, format characters (bidi overrides,
// zero-width characters, BOM) and line/paragraph separators.
func invisible(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// quotePath renders p for an error message: in single quotes, with
// backslashes doubled and unprintable or invalid bytes escaped, so the
// message itself stays one readable line. Long paths are shortened.
func quotePath(p string) string {
	const show = 96
	cut := false
	if len(p) > show {
		n := show
		for n > 0 && !utf8.RuneStart(p[n]) {
			n--
		}
		p, cut = p[:n], true
	}
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRuneInString(p[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(p[i])|0x100, 16)[1:])
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\'':
			b.WriteString(`\'`)
		case invisible(r) || !unicode.IsPrint(r) && r != ' ':
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
		i += size
	}
	b.WriteByte('\'')
	if cut {
		b.WriteString("…")
	}
	return b.String()
}
