package room

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"foundry/internal/problem"
)

// wantProblem fails unless err is a *problem.Problem with the code and field
// given and a message containing every one of msgParts.
func wantProblem(t *testing.T, err error, code, field string, msgParts ...string) {
	t.Helper()
	var p *problem.Problem
	if !errors.As(err, &p) {
		t.Fatalf("err = %v (%T), want *problem.Problem %s", err, err, code)
	}
	if p.Code != code || p.Field != field {
		t.Fatalf("got %s on field %q, want %s on field %q (message: %s)", p.Code, p.Field, code, field, p.Message)
	}
	for _, part := range msgParts {
		if !strings.Contains(p.Message, part) {
			t.Errorf("message %q lacks %q", p.Message, part)
		}
	}
	// The domain speaks no door's language: each door adds its next step
	// (the MCP door the tool to call, the CLI its command).
	if door := doorWords.FindString(p.Message); door != "" {
		t.Errorf("message %q names %q, a door's words", p.Message, door)
	}
}

// doorWords matches an MCP tool's name or a CLI command.
var doorWords = regexp.MustCompile(`\b(list|read|edit|create|add|propose|poll)_[a-z_]+\b|\bfoundry [a-z]+`)

// seedUnsafePaths are the refused paths of the seed article and the escapes
// around them; the fuzz target starts from them too.
var seedUnsafePaths = []struct {
	name, path, quoted, reason string
}{
	{"absolute", "/etc/hosts", `'/etc/hosts'`, "leading '/'"},
	{"dot-dot escape", "src/../../x.ts", `'src/../../x.ts'`, "'..' segment"},
	{"backslash", `src\x.ts`, `'src\\x.ts'`, "backslash"},
	{"nested escape", "a/b/../../../x", `'a/b/../../../x'`, "'..' segment"},
	{"dot-dot resolving inside is still refused", "src/../x.ts", `'src/../x.ts'`, "'..' segment"},
	{"bare dot-dot", "..", `'..'`, "'..' segment"},
	{"dot-dot last", "src/..", `'src/..'`, "'..' segment"},
	{"drive letter with slash", "C:/x", `'C:/x'`, "drive letter"},
	{"drive-relative", "c:x", `'c:x'`, "drive letter"},
	{"colon in first segment", "src:x/App.tsx", `'src:x/App.tsx'`, "drive letter"},
	{"empty segment", "a//b", `'a//b'`, "empty segment"},
	{"trailing slash", "src/", `'src/'`, "trailing '/'"},
	{"dot segment first", "./x", `'./x'`, "'.' segment"},
	{"dot segment inside", "src/./App.tsx", `'src/./App.tsx'`, "'.' segment"},
	{"lone dot", ".", `'.'`, "'.' segment"},
	{"NUL byte", "src/App.tsx\x00.png", `'src/App.tsx\x00.png'`, "NUL"},
	{"newline", "src/a\nb.ts", `'src/a\nb.ts'`, "control"},
	{"DEL", "src/a\x7f.ts", `'src/a\x7f.ts'`, "control"},
	{"bidi override", "src/gpj\u202e.ts", `'src/gpj\u202e.ts'`, "invisible"},
	{"zero width space", "src/\u200bApp.tsx", `'src/\u200bApp.tsx'`, "invisible"},
	{"invalid UTF-8", "src/\xff.ts", `'src/\xff.ts'`, "UTF-8"},
	{"triple dot", "src/.../x", `'src/.../x'`, "starting with '..'"},
	{"dot-dot prefix first", "..0", `'..0'`, "starting with '..'"},
	{"dot-dot prefix inside", "src/..config.ts", `'src/..config.ts'`, "starting with '..'"},
	{"dots and space", "src/. /x", `'src/. /x'`, "only of dots"},
	{"dot-dot with trailing space", "src/.. /x", `'src/.. /x'`, "starting with '..'"},
	{"only spaces", "src/  /x", `'src/  /x'`, "only of dots"},
	{"empty", "", `''`, "empty path"},
	{"too long", "src/" + strings.Repeat("a", 509), `'src/aaaa`, "longer than 512 bytes"},
	{"UNC", `\\server\share\x`, `'\\\\server`, "backslash"},
}
