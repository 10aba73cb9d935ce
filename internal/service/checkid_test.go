package service

import (
	"errors"
	"strings"
	"testing"

	"foundry/internal/problem"
)

// TestCheckIDRefusesInvisibleCharacters: the one character rule every door
// applies to IDs, keys and cursors.
func TestCheckIDRefusesInvisibleCharacters(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"note_abc123", "sheet-2-mx4i7vl7", "ZTo1", "clé-de-l'été", "日本語のキー", "😀-key"} {
		if err := CheckID("note_id", ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"\x00b", "\x01", "\x1f", "\x7f", "\u0085", "\u009b", "\u202e", "\u202a", "\u2066", "\u2069",
		"\u200e", "\u200f", "\u061c", "\u200b", "\u200d", "\ufeff", "\u2028", "\u2029", "\ufffd", "\xffb", "\xed\xa0\x80", "\ufdd0", "\U0010FFFF"} {
		err := CheckID("tab_id", "x"+bad)
		var p *problem.Problem
		if !errors.As(err, &p) || p.Code != problem.Invalid || p.Field != "tab_id" || !strings.Contains(p.Message, "character 2") {
			t.Errorf("%q: got %v, want invalid_argument on tab_id at character 2", bad, err)
		}
	}
}

// TestKeyLengthIsInCharacters: 8–128 characters, as the message says, not
// bytes.
func TestKeyLengthIsInCharacters(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		key string
		ok  bool
	}{
		{strings.Repeat("é", 8), true},
		{strings.Repeat("é", 128), true},
		{strings.Repeat("😀", 128), true},
		{strings.Repeat("é", 7), false},
		{strings.Repeat("é", 129), false},
		{"12345678\x00", false},
	} {
		if err := checkKey(c.key); (err == nil) != c.ok {
			t.Errorf("key of %d characters (%d bytes): %v, want ok=%v", len([]rune(c.key)), len(c.key), err, c.ok)
		}
	}
}
