package room

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"foundry/internal/note"
	"foundry/internal/problem"
)

// Snippet limits (SPEC §7). Errors that enforce them name the limit.
const (
	MaxNameRunes  = 200
	MaxFiles      = 20
	MaxFileBytes  = 128 << 10
	MaxTotalBytes = 256 << 10
	// EntryPoint is the file the Room runtime renders: it must export default
	// a React component.
	EntryPoint = "src/App.tsx"
)

// toRepo is the next step every size error gives.
const toRepo = "for larger apps, push a repository and propose a pinned version of it"

// CheckName applies the name rule shared by both kinds of proposal: trimmed,
// not empty, no control, bidi or invisible characters (note.IsHiddenRune),
// at most MaxNameRunes characters (so at most 4 × MaxNameRunes bytes). It
// returns the trimmed name.
func CheckName(name string) (string, error) {
	return checkName(name, "app", "give the app a short name for its launcher tab")
}

// CheckRoomName is CheckName for a Room's own name.
func CheckRoomName(name string) (string, error) {
	return checkName(name, "Room", "give the Room a name")
}

func checkName(name, what, give string) (string, error) {
	t := strings.TrimSpace(name)
	switch {
	case !utf8.ValidString(name):
		return "", problem.New(problem.Invalid, "name", "name is not valid UTF-8")
	case t == "":
		return "", problem.New(problem.Invalid, "name", "name is empty: %s", give)
	case utf8.RuneCountInString(t) > MaxNameRunes:
		return "", problem.New(problem.Limit, "name",
			"name is %d characters; a%s %s name may be at most %d characters", utf8.RuneCountInString(t), article(what), what, MaxNameRunes)
	}
	if i := strings.IndexFunc(t, note.IsHiddenRune); i >= 0 {
		r, _ := utf8.DecodeRuneInString(t[i:])
		return "", problem.New(problem.Invalid, "name",
			"name contains the control or bidi character %U; a%s %s name may not hold control, bidi or invisible characters", r, article(what), what)
	}
	return t, nil
}

// article is what follows "a" before what: "n" for "app".
func article(what string) string {
	if strings.ContainsRune("aeiouAEIOU", rune(what[0])) {
		return "n"
	}
	return ""
}

// CheckSnippet applies every server rule for a snippet that the JSON Schema
// can't say, in this order: the name; 1..MaxFiles files; every path safe
// (CheckPath); EntryPoint present; each file at most MaxFileBytes and all of
// them at most MaxTotalBytes. Paths are visited in sorted order, so the same
// input always gives the same error.
func CheckSnippet(name string, files map[string]string) error {
	if _, err := CheckName(name); err != nil {
		return err
	}
	if len(files) == 0 {
		return problem.New(problem.Invalid, "files",
			"files is empty: a snippet needs at least %s (export default a React component)", EntryPoint)
	}
	if len(files) > MaxFiles {
		return problem.New(problem.Limit, "files",
			"%d files; a snippet may have at most %d files; %s", len(files), MaxFiles, toRepo)
	}
	paths := sortedKeys(files)
	for _, p := range paths {
		if err := CheckPath(p); err != nil {
			return err
		}
	}
	if err := CheckPathSet(paths); err != nil {
		return err
	}
	if _, ok := files[EntryPoint]; !ok {
		return problem.New(problem.Invalid, "files",
			"%s missing: a snippet's entry point is %s (export default a React component)", EntryPoint, EntryPoint)
	}
	total := 0
	for _, p := range paths {
		n := len(files[p])
		if n > MaxFileBytes {
			return problem.New(problem.Limit, "files["+strconv.Quote(p)+"]",
				"file is %d bytes; a snippet file may be at most 128 KiB (%d bytes); %s", n, MaxFileBytes, toRepo)
		}
		total += n
	}
	if total > MaxTotalBytes {
		return problem.New(problem.Limit, "files",
			"files total %d bytes; a snippet may be at most 256 KiB (%d bytes) in all; %s", total, MaxTotalBytes, toRepo)
	}
	return nil
}

// SnippetKey is the idempotency key we tell agents to derive from content:
// "snip-" + the first 32 hex characters of SHA-256 over the room ID, the name
// and every file (path, then content; paths in sorted order). Each part is
// preceded by its length as an 8-byte big-endian integer, so no two different
// inputs hash the same bytes. A retry carries the same key; a real edit gets
// a new one.
func SnippetKey(roomID, name string, files map[string]string) string {
	h := sha256.New()
	writePart(h, roomID)
	writePart(h, name)
	for _, p := range sortedKeys(files) {
		writePart(h, p)
		writePart(h, files[p])
	}
	return "snip-" + hex.EncodeToString(h.Sum(nil))[:32]
}

// writePart writes one length-prefixed part.
func writePart[S ~string | ~[]byte](h hash.Hash, s S) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(s)))
	h.Write(n[:])
	h.Write([]byte(s))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
