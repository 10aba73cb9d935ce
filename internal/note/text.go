package note

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"foundry/internal/problem"
)

// Quote renders a value a caller sent for an error message: quoted, and cut
// to a short excerpt, so a refusal never echoes a large value back.
func Quote(s string) string {
	const show = 64
	if utf8.RuneCountInString(s) <= show {
		return strconv.Quote(s)
	}
	n, i := 0, 0
	for i = range s {
		if n == show {
			break
		}
		n++
	}
	return strconv.Quote(s[:i]) + "…"
}

// IsHiddenRune reports characters that must never appear in a name or a
// label: control characters (C0, DEL, C1), the bidi controls that reorder
// how text is shown (U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069), and
// the invisible zero-width space, word joiner, BOM and line/paragraph
// separators. Zero-width (non-)joiners stay: emoji and several scripts
// need them.
func IsHiddenRune(r rune) bool {
	switch {
	case unicode.IsControl(r):
		return true
	case r == 0x061C, r == 0x200E, r == 0x200F, r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x200B, r == 0x2060, r == 0xFEFF, r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

// checkName checks a short one-line text (a label, a sheet name, a title):
// valid UTF-8, no hidden characters, at most maxRunes characters and
// maxBytes bytes. what names it in the message ("label", "title").
func checkName(field, what, s string, maxRunes, maxBytes int) error {
	if !utf8.ValidString(s) {
		return problem.New(problem.Invalid, field, "%s is not valid UTF-8", what)
	}
	for _, r := range s {
		if IsHiddenRune(r) {
			return problem.New(problem.Invalid, field,
				"%s contains the control or bidi character %U; names and labels may not hold control, bidi or invisible characters", what, r)
		}
	}
	if n := utf8.RuneCountInString(s); n > maxRunes {
		return problem.New(problem.Limit, field, "%s is %d characters; at most %d characters (%s limit)", what, n, maxRunes, what)
	}
	if len(s) > maxBytes {
		return problem.New(problem.Limit, field, "%s is %d bytes in UTF-8; at most %d bytes (%s limit)", what, len(s), maxBytes, what)
	}
	return nil
}

// CheckTitle applies the rules of a Note's title and returns it trimmed.
func CheckTitle(title string) (string, error) {
	t := strings.TrimSpace(title)
	if t == "" {
		return "", problem.New(problem.Invalid, "title", "a Note needs a title")
	}
	if err := checkName("title", "title", t, MaxTitleRunes, MaxTitleBytes); err != nil {
		return "", err
	}
	return t, nil
}

// CheckSize refuses a Note whose stored form would be n bytes when that is
// over MaxNoteBytes and more than it was (old bytes): an edit that shrinks an
// oversized Note is always let through. field names the argument that made
// it grow.
func CheckSize(n, old int, field string) error {
	if n <= MaxNoteBytes || n <= old {
		return nil
	}
	return problem.New(problem.Limit, field,
		"the Note would be %d bytes; a Note holds at most %d bytes (16 MiB Note limit); put this in another Note or remove content first", n, MaxNoteBytes)
}
