package parts

import (
	"math/rand"
	"strings"
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

func TestCommonPrefixAndSuffix(t *testing.T) {
	long := strings.Repeat("0123456789", 300)
	for _, c := range []struct {
		a, b         string
		prefix, suff int
	}{
		{"", "", 0, 0}, {"abc", "abd", 2, 0}, {"xbc", "abc", 0, 2}, {"abc", "abc", 3, 3},
		{long + "X" + long, long + "Y" + long, len(long), len(long)},
		{long, long + "tail", len(long), 0},
	} {
		if p, s := CommonPrefix(c.a, c.b), CommonSuffix(c.a, c.b); p != c.prefix || s != c.suff {
			t.Errorf("%.20q/%.20q: prefix %d suffix %d, want %d %d", c.a, c.b, p, s, c.prefix, c.suff)
		}
		if p := CommonPrefix([]byte(c.a), []byte(c.b)); p != c.prefix {
			t.Errorf("bytes: prefix %d, want %d", p, c.prefix)
		}
	}
	a, b := []byte(long+"X"), []byte(long+"Y")
	if n := testing.AllocsPerRun(10, func() { CommonPrefix(a, b); CommonSuffix(a, b) }); n != 0 {
		t.Errorf("comparing bytes allocates %v times", n)
	}
}

// A chain of splices replayed in two buffers that take turns gives each
// text of the chain, and a delta that does not fit its text is refused.
func TestApplyToReplaysAChainInTwoBuffers(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	texts := []string{"alpha"}
	for i := 0; i < 200; i++ {
		prev := texts[len(texts)-1]
		at := r.Intn(len(prev) + 1)
		cut := min(len(prev)-at, r.Intn(4))
		texts = append(texts, prev[:at]+strings.Repeat("xé", r.Intn(3))+prev[at+cut:])
	}
	data, spare := []byte(texts[0]), []byte(nil)
	for i := 1; i < len(texts); i++ {
		next, err := ApplyTo(spare, data, Splice([]byte(texts[i-1]), []byte(texts[i])))
		if err != nil || string(next) != texts[i] {
			t.Fatalf("step %d: %q, %v; want %q", i, next, err, texts[i])
		}
		data, spare = next, data
	}
	for _, d := range []string{"", "x", "1", "1,2", "a,0,", "0,b,", "-1,0,", "0,-1,", "6,0,", "0,6,", "3,3,"} {
		if _, err := ApplyTo(nil, []byte("alpha"), []byte(d)); err != ErrCorrupt {
			t.Errorf("delta %q on %q: %v; want ErrCorrupt", d, "alpha", err)
		}
	}
}
