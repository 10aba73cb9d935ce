package room

import (
	"path"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// FuzzCheckPath checks that every path CheckPath accepts is one no consumer
// can read as absolute or as leaving the app's folder, and that every
// refusal is a well-formed problem.
func FuzzCheckPath(f *testing.F) {
	for _, p := range []string{"src/App.tsx", "src/styles.css", "src/main.tsx", "src/.eslintrc", "src/a:b.ts",
		"．．/x", "․․/x", "src/App.tsx.", "src/con.ts", "src/App.tsx:s", "src／x"} {
		f.Add(p)
	}
	for _, tc := range seedUnsafePaths {
		f.Add(tc.path)
	}
	f.Fuzz(func(t *testing.T, p string) {
		err := CheckPath(p)
		if err != nil {
			if !strings.Contains(err.Error(), "unsafe path '") {
				t.Fatalf("refusal of %q does not name the path: %v", p, err)
			}
			return
		}
		first, _, _ := strings.Cut(p, "/")
		switch {
		case strings.HasPrefix(p, "/"):
			t.Fatalf("accepted absolute path %q", p)
		case strings.Contains(first, ":"):
			t.Fatalf("accepted drive letter or colon in first segment %q", p)
		case path.Clean(p) != p:
			t.Fatalf("accepted %q, which cleans to %q", p, path.Clean(p))
		case strings.HasPrefix(path.Clean(p), ".."):
			t.Fatalf("accepted %q, which climbs out", p)
		case strings.Contains(p, `\`):
			t.Fatalf("accepted backslash in %q", p)
		case strings.IndexByte(p, 0) >= 0:
			t.Fatalf("accepted NUL in %q", p)
		case !filepath.IsLocal(p):
			t.Fatalf("accepted %q, which filepath.IsLocal refuses", p)
		case !utf8.ValidString(p) || len(p) > MaxPathBytes:
			t.Fatalf("accepted %q (invalid UTF-8 or too long)", p)
		case norm.NFKC.String(p) != p:
			t.Fatalf("accepted %q, which NFKC turns into %q", p, norm.NFKC.String(p))
		case strings.ContainsAny(p, `:<>"|?*`):
			t.Fatalf("accepted %q, which holds a character Windows refuses", p)
		}
		// The NFKC form is the path itself, so the climb-out checks above
		// hold for it too; and no segment aliases another name on Windows.
		for _, seg := range strings.Split(p, "/") {
			if strings.HasSuffix(seg, ".") || strings.HasSuffix(seg, " ") {
				t.Fatalf("accepted %q: segment %q ends in a dot or space", p, seg)
			}
			if reservedName(seg) {
				t.Fatalf("accepted %q: segment %q is a Windows device name", p, seg)
			}
		}
	})
}
