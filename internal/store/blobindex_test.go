package store

import (
	"strings"
	"testing"
)

func TestHexRuns(t *testing.T) {
	a := strings.Repeat("ab", 32)
	b := strings.Repeat("0f", 32)
	c := strings.Repeat("c1", 32)
	d := strings.Repeat("d2", 32)
	shas := map[string]bool{a: false, b: false, c: false, d: false}
	text := `{"files":[{"sha256":"` + a + `"}],"x":"` + "9" + b + "e" + `","y":"` + strings.ToUpper(c) + `","z":"` + d[:63] + `"}`
	hexRuns([]byte(text), shas)
	if !shas[a] || !shas[b] || shas[c] || shas[d] {
		t.Fatalf("found %v; want a (whole) and b (inside a longer run), not c (upper case) nor d (cut)", shas)
	}
}
