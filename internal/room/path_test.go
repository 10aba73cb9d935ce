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
		"src/.eslintrc",     // a dotfile is a name, not a "." segment
		"src/ünïcödé/日本.ts", // printable Unicode is fine
		"src/with space.ts", // so are inner spaces
		"src/ a.ts",         // and a leading one
		"src/CONSOLE.ts",    // only the exact device names are reserved
		"src/com10.ts",
		"src/aux-data.ts",
		"src/é.ts",               // NFC é is NFKC-stable
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

// Compatibility spellings and names that alias another file on Windows or
// on a case-insensitive file system are refused, each with its reason.
func TestCheckPath_RefusesAliasingSpellings(t *testing.T) {
	tests := []struct{ name, path, reason string }{
		{"full-width dots", "．．/x", "NFKC"},
		{"full-width dots inside", "src/．．/x", "NFKC"},
		{"one-dot leaders", "․․/x", "NFKC"},
		{"two-dot leader", "‥/x", "NFKC"},
		{"ellipsis", "src/…/x", "NFKC"},
		{"small full stop", "﹒﹒/x", "NFKC"},
		{"full-width solidus", "src／..／x", "NFKC"},
		{"full-width letters", "ｓｒｃ/App.tsx", "NFKC"},
		{"ligature", "src/ﬁle.ts", "NFKC"},
		{"decomposed accent", "src/e\u0301.ts", "NFKC"},
		{"superscript device", "src/COM¹", "NFKC"},
		{"trailing dot", "src/App.tsx.", "ending in '.'"},
		{"trailing dot on a folder", "src./App.tsx", "ending in '.'"},
		{"trailing space", "src/App.tsx ", "ending in '.' or ' '"},
		{"trailing space on a folder", "src /App.tsx", "ending in '.' or ' '"},
		{"colon stream", "src/App.tsx:evil", "alternate data stream"},
		{"colon stream with type", "src/a.ts::$DATA", "alternate data stream"},
		{"less than", "src/a<b.ts", "Windows refuses"},
		{"pipe", "src/a|b.ts", "Windows refuses"},
		{"question mark", "src/a?.ts", "Windows refuses"},
		{"star", "src/*.ts", "Windows refuses"},
		{"double quote", `src/a"b.ts`, "Windows refuses"},
		{"CON", "src/CON", "device name"},
		{"con with extension", "src/con.tsx", "device name"},
		{"NUL folder", "nul/App.tsx", "device name"},
		{"aux double extension", "src/Aux.tar.gz", "device name"},
		{"COM1", "src/com1.ts", "device name"},
		{"LPT9", "LPT9", "device name"},
		{"PRN with space before the dot", "src/PRN .ts", "device name"},
		{"CONOUT$", "src/conout$", "device name"},
		{"backslash segment", `src\..\x`, "backslash"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantProblem(t, CheckPath(tt.path), problem.Invalid, "files", "unsafe path '", tt.reason)
		})
	}
}

func TestCheckPathSet_RefusesCaseAliases(t *testing.T) {
	tests := []struct {
		name  string
		paths []string
	}{
		{"case-only file names", []string{"src/App.tsx", "src/APP.TSX"}},
		{"case-only folder names", []string{"src/App.tsx", "SRC/App.tsx"}},
		{"folder spelled two ways", []string{"src/Lib/a.ts", "src/lib/b.ts"}},
		{"full case folding", []string{"src/straße.ts", "src/STRASSE.ts"}},
		{"Kelvin sign folds to k", []string{"src/k.ts", "src/\u212a.ts"}},
		{"file is a folder too", []string{"src/a", "src/a/b.ts"}},
		{"file is a folder in another case", []string{"src/A", "src/a/b.ts"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantProblem(t, CheckPathSet(tt.paths), problem.Invalid, "files", "case-insensitive")
		})
	}
	if err := CheckPathSet([]string{"src/App.tsx", "src/app.css", "src/lib/a.ts", "src/lib/b.ts", "README.md"}); err != nil {
		t.Errorf("distinct paths refused: %v", err)
	}
}
