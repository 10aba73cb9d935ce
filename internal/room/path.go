package room

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

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
// filepath.IsLocal(p), is in Unicode NFKC form (so no compatibility
// spelling such as "．．" can turn into ".." later), and names the same
// file on every file system a checkout may land on: no segment ends in '.'
// or ' ', none is a Windows device name (CON, NUL, COM1, …), and none holds
// a character Windows refuses or reads as a stream (':').
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
	case !norm.NFKC.IsNormalString(p):
		// "．．/x" (full-width dots), "․․/x" (one-dot leaders), "‥": such
		// characters become '.' or '/' once anything normalizes the path.
		return "not in Unicode NFKC form (it holds a compatibility character, such as a full-width or leader dot, that stands for another character); write it with plain characters"
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
		case strings.HasSuffix(s, ".") || strings.HasSuffix(s, " "):
			return "segment ending in '.' or ' ' (Windows drops them, so it names another file)"
		case strings.ContainsAny(s, windowsForbidden):
			return "segment holding one of " + windowsForbidden + " (Windows refuses them in a name; ':' opens an alternate data stream)"
		case reservedName(s):
			return "segment that is a Windows device name (CON, PRN, AUX, NUL, COM0–COM9, LPT0–LPT9, with or without an extension)"
		}
	}
	return ""
}

// windowsForbidden are the printable characters Windows refuses in a name.
const windowsForbidden = `<>:"|?*`

// reservedName reports a Windows device name: the part before the first dot,
// without trailing spaces, is CON, PRN, AUX, NUL, COM0–9, LPT0–9 (any case),
// or one of the console and clock devices.
func reservedName(seg string) bool {
	base, _, _ := strings.Cut(seg, ".")
	base = strings.ToUpper(strings.TrimRight(base, " "))
	switch base {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$", "CLOCK$":
		return true
	}
	if len(base) == 4 && (strings.HasPrefix(base, "COM") || strings.HasPrefix(base, "LPT")) && base[3] >= '0' && base[3] <= '9' {
		return true
	}
	return false
}

// foldPath is the spelling of p that a case-insensitive file system sees.
func foldPath(p string) string { return cases.Fold().String(norm.NFKC.String(p)) }

// CheckPathSet refuses paths of one snippet or repository version that name
// one file, or one folder, on a case-insensitive file system (macOS,
// Windows): "src/APP.TSX" beside "src/App.tsx", "src/Lib/a.ts" beside
// "src/lib/b.ts", and a file that is also a folder ("src/a" beside
// "src/a/b.ts"). Each path must already have passed CheckPath. The error is a
// *problem.Problem with Code problem.Invalid and Field "files".
func CheckPathSet(paths []string) error {
	files := make(map[string]string, len(paths)) // folded → path
	dirs := map[string]string{}                  // folded → spelling
	for _, p := range paths {
		f := foldPath(p)
		if q, ok := files[f]; ok {
			return aliasProblem(q, p, "differ only in case")
		}
		files[f] = p
	}
	for _, p := range paths {
		for i := 0; i < len(p); i++ {
			if p[i] != '/' {
				continue
			}
			dir := p[:i]
			f := foldPath(dir)
			if q, ok := files[f]; ok {
				return aliasProblem(q, p, "make "+quotePath(q)+" both a file and a folder")
			}
			if spelled, ok := dirs[f]; ok && spelled != dir {
				return aliasProblem(spelled+"/", dir+"/", "are one folder spelled in two cases")
			}
			dirs[f] = dir
		}
	}
	return nil
}

func aliasProblem(a, b, how string) error {
	return problem.New(problem.Invalid, "files",
		"paths %s and %s %s; on a case-insensitive file system (macOS, Windows) they collide: spell each file and folder one way",
		quotePath(a), quotePath(b), how)
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
