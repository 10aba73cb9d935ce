package parts

import (
	"math/rand"
	"testing"
	"unicode/utf8"
)

func TestSpliceApplyRoundTrips(t *testing.T) {
	cases := [][2]string{
		{"", ""}, {"", "abc"}, {"abc", ""}, {"abc", "abc"}, {"abc", "abd"}, {"abc", "xabc"},
		{"héllo wörld", "héllo wärld"}, {"日本語", "日本人"}, {"aaaa", "aaa"}, {"a,b,c", "a,,b,c"},
		{"😀😀", "😀😁"},
	}
	for _, c := range cases {
		d := Splice([]byte(c[0]), []byte(c[1]))
		got, err := Apply([]byte(c[0]), d)
		if err != nil || string(got) != c[1] {
			t.Errorf("Splice(%q,%q) = %q applies to %q, %v", c[0], c[1], d, got, err)
		}
	}
}

func TestDeltaIsValidUTF8ForText(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	alphabet := []rune("aé日😀,")
	gen := func() []byte {
		n := r.Intn(8)
		s := make([]rune, n)
		for i := range s {
			s[i] = alphabet[r.Intn(len(alphabet))]
		}
		return []byte(string(s))
	}
	for i := 0; i < 5000; i++ {
		a, b := gen(), gen()
		d := Splice(a, b)
		if !utf8.Valid(d) {
			t.Fatalf("delta %q of %q → %q is not valid UTF-8", d, a, b)
		}
		got, err := Apply(a, d)
		if err != nil || string(got) != string(b) {
			t.Fatalf("%q → %q: got %q, %v", a, b, got, err)
		}
	}
}

func TestApplyRefusesCorruptDeltas(t *testing.T) {
	for _, d := range []string{"", "1", "1,", "x,1,", "-1,0,", "0,9,", "5,0,a"} {
		if _, err := Apply([]byte("abc"), []byte(d)); err == nil {
			t.Errorf("Apply(%q) succeeded", d)
		}
	}
}
