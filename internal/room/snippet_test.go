package room

import (
	"fmt"
	"strings"
	"testing"

	"foundry/internal/problem"
)

const appTSX = "export default function App() { return <div>standup timer</div> }\n"

func kib(n int) string { return strings.Repeat("x", n<<10) }

func TestCheckSnippet(t *testing.T) {
	manyFiles := func(n int) map[string]string {
		m := map[string]string{EntryPoint: appTSX}
		for i := 1; len(m) < n; i++ {
			m[fmt.Sprintf("src/c%02d.tsx", i)] = "export const x = 1\n"
		}
		return m
	}
	tests := []struct {
		name      string
		appName   string
		files     map[string]string
		wantCode  string // "" means accepted
		wantField string
		wantMsg   []string
	}{
		{
			name:    "seed app with entry point and stylesheet is accepted",
			appName: "Standup timer",
			files:   map[string]string{"src/App.tsx": appTSX, "src/styles.css": "body{margin:0}\n"},
		},
		{
			name:    "exactly 20 files is accepted",
			appName: "Twenty",
			files:   manyFiles(20),
		},
		{
			name:    "one file of exactly 128 KiB and 256 KiB in all is accepted",
			appName: "Big but fine",
			files:   map[string]string{EntryPoint: kib(128), "src/b.ts": kib(128)},
		},
		{
			name:      "missing entry point is refused",
			appName:   "No App",
			files:     map[string]string{"src/main.tsx": appTSX},
			wantCode:  problem.Invalid,
			wantField: "files",
			wantMsg:   []string{"src/App.tsx missing: a snippet's entry point is src/App.tsx (export default a React component)"},
		},
		{
			name:      "absolute path is refused with the path",
			appName:   "Abs",
			files:     map[string]string{EntryPoint: appTSX, "/etc/hosts": "x"},
			wantCode:  problem.Invalid,
			wantField: "files",
			wantMsg:   []string{"unsafe path '/etc/hosts'"},
		},
		{
			name:      "dot-dot path is refused with the path",
			appName:   "Dots",
			files:     map[string]string{EntryPoint: appTSX, "src/../../x.ts": "x"},
			wantCode:  problem.Invalid,
			wantField: "files",
			wantMsg:   []string{"unsafe path 'src/../../x.ts'"},
		},
		{
			name:      "backslash path is refused with the path",
			appName:   "Slash",
			files:     map[string]string{EntryPoint: appTSX, `src\x.ts`: "x"},
			wantCode:  problem.Invalid,
			wantField: "files",
			wantMsg:   []string{`unsafe path 'src\\x.ts'`},
		},
		{
			name:      "unsafe path is reported before a missing entry point",
			appName:   "Both",
			files:     map[string]string{"../App.tsx": appTSX},
			wantCode:  problem.Invalid,
			wantField: "files",
			wantMsg:   []string{"unsafe path '../App.tsx'"},
		},
		{
			name:      "the first unsafe path in sorted order is the one reported",
			appName:   "Two bad",
			files:     map[string]string{EntryPoint: appTSX, "z/../x": "", "a//b": "", "m\\n": ""},
			wantCode:  problem.Invalid,
			wantField: "files",
			wantMsg:   []string{"unsafe path 'a//b'"},
		},
		{
			name:      "129 KiB file is refused on that file, pointing to repository apps",
			appName:   "Fat",
			files:     map[string]string{EntryPoint: appTSX, "src/data.json": kib(129)},
			wantCode:  problem.Limit,
			wantField: `files["src/data.json"]`,
			wantMsg:   []string{"132096 bytes", "128 KiB", "push a repository and propose a pinned version of it"},
		},
		{
			name:      "three files of 100 KiB exceed 256 KiB in all, pointing to repository apps",
			appName:   "Sum",
			files:     map[string]string{EntryPoint: kib(100), "src/a.ts": kib(100), "src/b.ts": kib(100)},
			wantCode:  problem.Limit,
			wantField: "files",
			wantMsg:   []string{"307200 bytes", "256 KiB", "in all", "push a repository and propose a pinned version of it"},
		},
		{
			name:      "21 files are refused, pointing to repository apps",
			appName:   "Many",
			files:     manyFiles(21),
			wantCode:  problem.Limit,
			wantField: "files",
			wantMsg:   []string{"21 files", "at most 20", "push a repository and propose a pinned version of it"},
		},
		{
			name:      "no files are refused",
			appName:   "Empty",
			files:     map[string]string{},
			wantCode:  problem.Invalid,
			wantField: "files",
			wantMsg:   []string{"src/App.tsx"},
		},
		{
			name:      "blank name is refused",
			appName:   " \t ",
			files:     map[string]string{EntryPoint: appTSX},
			wantCode:  problem.Invalid,
			wantField: "name",
			wantMsg:   []string{"name is empty"},
		},
		{
			name:      "201-character name is refused",
			appName:   strings.Repeat("n", 201),
			files:     map[string]string{EntryPoint: appTSX},
			wantCode:  problem.Limit,
			wantField: "name",
			wantMsg:   []string{"201", "at most 200"},
		},
		{
			name:    "200-rune name of multibyte characters is accepted",
			appName: strings.Repeat("é", 200),
			files:   map[string]string{EntryPoint: appTSX},
		},
		{
			name:      "name is checked before files",
			appName:   "",
			files:     map[string]string{"/etc/hosts": ""},
			wantCode:  problem.Invalid,
			wantField: "name",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckSnippet(tc.appName, tc.files)
			if tc.wantCode == "" {
				if err != nil {
					t.Fatalf("CheckSnippet = %v, want nil", err)
				}
				return
			}
			wantProblem(t, err, tc.wantCode, tc.wantField, tc.wantMsg...)
		})
	}
}

func TestSnippetKey(t *testing.T) {
	base := func() map[string]string {
		return map[string]string{"src/App.tsx": appTSX, "src/styles.css": "body{}", "src/a.ts": "a", "src/b.ts": "b"}
	}
	k := SnippetKey("room-1", "Timer", base())

	t.Run("has the published shape", func(t *testing.T) {
		if !strings.HasPrefix(k, "snip-") || len(k) != 5+32 || strings.Trim(k[5:], "0123456789abcdef") != "" {
			t.Fatalf("key %q is not snip- + 32 hex", k)
		}
	})
	t.Run("is stable under map order", func(t *testing.T) {
		for i := 0; i < 50; i++ {
			// Build the map in a different insertion order each time; Go
			// also randomizes iteration.
			m := map[string]string{}
			b := base()
			keys := sortedKeys(b)
			for j := range keys {
				p := keys[(i+j)%len(keys)]
				m[p] = b[p]
			}
			if got := SnippetKey("room-1", "Timer", m); got != k {
				t.Fatalf("key changed with map order: %s vs %s", got, k)
			}
		}
	})
	t.Run("matches the documented derivation", func(t *testing.T) {
		// sha256 over 8-byte big-endian length-prefixed parts: room, name, then path, content.
		got := SnippetKey("r", "n", map[string]string{"p": "c"})
		// Computed independently (Python hashlib + struct.pack(">Q", len)).
		if want := "snip-2b44ea6179bd52c1c89c12ca7d3fe961"; got != want {
			t.Fatalf("SnippetKey = %s, want %s", got, want)
		}
	})
	changed := []struct {
		name        string
		room, title string
		files       map[string]string
	}{
		{"changed file content", "room-1", "Timer", func() map[string]string { m := base(); m["src/a.ts"] = "a2"; return m }()},
		{"added file", "room-1", "Timer", func() map[string]string { m := base(); m["src/c.ts"] = ""; return m }()},
		{"renamed file", "room-1", "Timer", func() map[string]string { m := base(); m["src/z.ts"] = m["src/a.ts"]; delete(m, "src/a.ts"); return m }()},
		{"other name", "room-1", "Timer 2", base()},
		{"other room", "room-2", "Timer", base()},
	}
	for _, tc := range changed {
		t.Run("differs for "+tc.name, func(t *testing.T) {
			if got := SnippetKey(tc.room, tc.title, tc.files); got == k {
				t.Fatalf("same key %s for a different snippet", got)
			}
		})
	}
	t.Run("length prefixes keep concatenations apart", func(t *testing.T) {
		pairs := [][2]string{
			{SnippetKey("ab", "c", nil), SnippetKey("a", "bc", nil)},
			{SnippetKey("r", "n", map[string]string{"ab": "c"}), SnippetKey("r", "n", map[string]string{"a": "bc"})},
			{SnippetKey("r", "n", map[string]string{"a": "", "b": ""}), SnippetKey("r", "n", map[string]string{"a": "b"})},
		}
		for i, p := range pairs {
			if p[0] == p[1] {
				t.Errorf("pair %d collides: %s", i, p[0])
			}
		}
	})
}

// Names refuse control and bidi characters, as paths do, and count
// characters, not bytes.
func TestCheckNameRefusesHiddenCharacters(t *testing.T) {
	for _, name := range []string{
		"Timer\u202e", "Ti\u202amer", "Tim\u2066er", "\u2069Timer", "Ti\u200emer", "Ti\u200fmer", "Ti\u061cmer",
		"Ti\x00mer", "Ti\nmer", "Ti\x1bmer", "Ti\u0085mer", "Ti\u200bmer", "Ti\ufeffmer", "Ti\u2028mer",
	} {
		_, err := CheckName(name)
		wantProblem(t, err, problem.Invalid, "name", "control or bidi")
	}
	for _, name := range []string{"Standup timer", "👨‍👩‍👧 family", "שלום", strings.Repeat("ü", MaxNameRunes)} {
		if _, err := CheckName(name); err != nil {
			t.Errorf("CheckName(%q) = %v; want accepted", name, err)
		}
	}
	_, err := CheckName(strings.Repeat("ü", MaxNameRunes+1))
	wantProblem(t, err, problem.Limit, "name", "201 characters")
}

// A snippet whose paths collide on a case-insensitive file system is
// refused as a whole.
func TestCheckSnippetRefusesCaseAliases(t *testing.T) {
	for _, files := range []map[string]string{
		{EntryPoint: appTSX, "src/APP.TSX": appTSX},
		{EntryPoint: appTSX, "src/app.tsx": appTSX},
		{EntryPoint: appTSX, "SRC/x.ts": "x"},
		{EntryPoint: appTSX, "src/App.tsx/x.ts": "x"},
	} {
		wantProblem(t, CheckSnippet("Aliases", files), problem.Invalid, "files", "case-insensitive")
	}
	for _, files := range []map[string]string{
		{EntryPoint: appTSX, "．．/x": "x"},
		{EntryPoint: appTSX, "src/x.ts.": "x"},
		{EntryPoint: appTSX, "src/nul.ts": "x"},
	} {
		wantProblem(t, CheckSnippet("Spellings", files), problem.Invalid, "files", "unsafe path")
	}
}
