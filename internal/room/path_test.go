package room

import (
	"strings"
	"testing"

	"foundry/internal/problem"
)

func TestCheckPath_AcceptsPlainRelativePaths(t *testing.T) {
	for _, p := range []string{
		"src/App.tsx",
		"src/styles.css",
		"README.md",
		"src/components/Timer.tsx",
		"src/.eslintrc",          // a dotfile is a name, not a "." segment
		"src/a:b.ts",             // ':' only matters in the first segment
		"src/ünïcödé/日本.ts",      // printable Unicode is fine
		"src/with space.ts",      // so are inner spaces
		strings.Repeat("a", 512), // exactly the limit
	} {
		if err := CheckPath(p); err != nil {
			t.Errorf("CheckPath(%q) = %v, want nil", p, err)
		}
	}
}

func TestCheckPath_RefusesUnsafePathsNamingPathAndReason(t *testing.T) {
	for _, tc := range seedUnsafePaths {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckPath(tc.path)
			wantProblem(t, err, problem.Invalid, "files",
				"unsafe path "+tc.quoted, tc.reason, "use a relative path like src/App.tsx")
		})
	}
}

func TestCheckPath_MessageIsOneShortPrintableLine(t *testing.T) {
	long := strings.Repeat("\u202e", 4000)
	err := CheckPath(long)
	if err == nil {
		t.Fatal("accepted a 12000-byte path")
	}
	msg := err.Error()
	if len(msg) > 1000 {
		t.Errorf("message is %d bytes, want it shortened", len(msg))
	}
	for _, r := range msg {
		if invisible(r) {
			t.Fatalf("message carries invisible rune %U: %q", r, msg)
		}
	}
}
