package room

import (
	"fmt"
	"strings"
	"testing"

	"foundry/internal/problem"
)

func TestCheckRepoFiles(t *testing.T) {
	many := func(n int) map[string][]byte {
		m := make(map[string][]byte, n)
		for i := 0; i < n; i++ {
			m[fmt.Sprintf("src/f%04d.ts", i)] = []byte("x")
		}
		return m
	}
	big := func(n int) []byte { return make([]byte, n) }
	tests := []struct {
		name      string
		files     map[string][]byte
		wantCode  string
		wantField string
		wantMsg   string
	}{
		{"a large app is accepted", map[string][]byte{"src/App.tsx": big(1 << 20), "package.json": []byte("{}")}, "", "", ""},
		{"2000 files are accepted", many(2000), "", "", ""},
		{"a file of exactly 8 MiB is accepted", map[string][]byte{"a.bin": big(8 << 20)}, "", "", ""},
		{"no files are refused", map[string][]byte{}, problem.Invalid, "files", "at least one file"},
		{"2001 files are refused", many(2001), problem.Limit, "files", "at most 2000 files"},
		{"an unsafe path is refused", map[string][]byte{"src/App.tsx": nil, "../x": nil}, problem.Invalid, "files", "unsafe path '../x'"},
		{"a file over 8 MiB is refused on that file", map[string][]byte{"a.bin": big(8<<20 + 1)}, problem.Limit, `files["a.bin"]`, "8 MiB"},
		{"over 64 MiB in all is refused", func() map[string][]byte {
			m := map[string][]byte{}
			for i := 0; i < 9; i++ {
				m[fmt.Sprintf("f%d.bin", i)] = big(8 << 20)
			}
			return m
		}(), problem.Limit, "files", "64 MiB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckRepoFiles(tc.files)
			if tc.wantCode == "" {
				if err != nil {
					t.Fatalf("CheckRepoFiles = %v", err)
				}
				return
			}
			wantProblem(t, err, tc.wantCode, tc.wantField, tc.wantMsg)
		})
	}
}

func TestTreeHash(t *testing.T) {
	files := map[string][]byte{"src/App.tsx": []byte("x"), "a.txt": []byte("hello")}
	h := TreeHash(files)
	// Computed independently (Python hashlib + struct.pack(">Q", len)).
	if want := "f5db2dc4bde7f0a4bbf8be3df2d5ef466382cbb198fade675019c8597bcb1045"; h != want {
		t.Fatalf("TreeHash = %s, want %s", h, want)
	}
	if TreeHash(map[string][]byte{"ab": []byte("c")}) == TreeHash(map[string][]byte{"a": []byte("bc")}) {
		t.Fatal("concatenation collision")
	}
	files["a.txt"] = []byte("hello!")
	if TreeHash(files) == h {
		t.Fatal("changed content, same hash")
	}
}

func TestNewVersionAndFindVersion(t *testing.T) {
	files := map[string][]byte{"src/App.tsx": []byte("x"), "a.txt": []byte("hello")}
	v, err := NewVersion("ver-1", files, "user:ana", t0)
	if err != nil {
		t.Fatal(err)
	}
	if v.Files != 2 || v.Bytes != 6 || v.SHA256 != TreeHash(files) || v.PushedAt != "2026-03-01T09:00:00Z" || v.PushedBy != "user:ana" {
		t.Fatalf("version %+v", v)
	}
	if _, err := NewVersion("ver-2", map[string][]byte{"/x": nil}, "u", t0); err == nil {
		t.Fatal("NewVersion accepted an unsafe path")
	}
	r := Repository{ID: "repo-1", Versions: []Version{v}}
	if got, err := FindVersion(&r, "ver-1"); err != nil || got.ID != "ver-1" {
		t.Fatalf("FindVersion = %+v, %v", got, err)
	}
	_, err = FindVersion(&r, "ver-9")
	wantProblem(t, err, problem.NotFound, "version_id", "'ver-9'", "list the repositories to see their pinned versions")
	if !strings.Contains(err.Error(), "repo-1") {
		t.Fatalf("message should name the repository: %v", err)
	}
}
