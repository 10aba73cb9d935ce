package changeset

import (
	"math/rand/v2"
	"testing"
)

// TestDiffTurnsOneTextIntoTheOther: Diff(a, b) applied to a is b, for
// random texts that share a prefix and a suffix, astral characters
// included, and it replaces no more than lies between them.
func TestDiffTurnsOneTextIntoTheOther(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 9))
	alphabet := []string{"a", "b", "\n", "é", "🙂", "😀", "中"}
	word := func(n int) string {
		s := ""
		for range n {
			s += alphabet[rnd.IntN(len(alphabet))]
		}
		return s
	}
	for i := range 3000 {
		pre, suf := word(rnd.IntN(5)), word(rnd.IntN(5))
		a, b := pre+word(rnd.IntN(4))+suf, pre+word(rnd.IntN(4))+suf
		d, err := Diff(a, b)
		if err != nil {
			t.Fatalf("case %d: Diff(%q, %q): %v", i, a, b, err)
		}
		got, err := d.Apply(a)
		if err != nil || got != b {
			t.Fatalf("case %d: Diff(%q, %q) = %v applies to %q (%v)", i, a, b, d, got, err)
		}
		if a == b && !d.IsEmpty() {
			t.Fatalf("case %d: Diff of equal texts is %v", i, d)
		}
		for _, r := range d.Changes() {
			if r.FromA < Len16(pre) {
				t.Fatalf("case %d: Diff(%q, %q) replaces from %d, inside the common prefix %q", i, a, b, r.FromA, pre)
			}
		}
	}
}
