package note

import (
	"encoding/json"
	"math/rand"
	"reflect"
	"testing"
)

// decodeBlock answers what json.Unmarshal into [][]any answers, value and
// error alike, on blocks as they are stored and on bytes that are not.
func TestDecodeBlockIsJSONUnmarshal(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	cell := func() any {
		switch r.Intn(8) {
		case 0:
			return nil
		case 1:
			return r.Intn(2) == 0
		case 2:
			return []string{"", "a", "é日😀", "quote \" and \\ back", "tab\tnew\nline", "<html>&", "\u2028", "=SUM(A1:B2)"}[r.Intn(8)]
		case 3:
			return r.NormFloat64() * 1e6
		case 4:
			return []float64{0, -0.5, 1e21, 1e-7, 123456789, -3, 5e-324, 1.7976931348623157e308}[r.Intn(8)]
		default:
			return float64(r.Intn(100000))
		}
	}
	check := func(data []byte) {
		t.Helper()
		var want [][]any
		werr := json.Unmarshal(data, &want)
		got, gerr := decodeBlock(data)
		if (werr == nil) != (gerr == nil) || (werr == nil && !reflect.DeepEqual(got, want)) {
			t.Fatalf("%q: decodeBlock = %#v, %v; json.Unmarshal = %#v, %v", data, got, gerr, want, werr)
		}
	}
	for i := 0; i < 3000; i++ {
		segs := make([][]any, r.Intn(BlockRows+1))
		for j := range segs {
			if r.Intn(10) == 0 {
				continue // a null row
			}
			segs[j] = make([]any, r.Intn(BlockCols+1))
			for k := range segs[j] {
				segs[j][k] = cell()
			}
		}
		data, err := json.Marshal(segs)
		if err != nil {
			t.Fatal(err)
		}
		check(data)
		// The same bytes cut, or one byte changed: both must agree.
		if len(data) > 2 {
			check(data[:r.Intn(len(data))])
			bad := append([]byte(nil), data...)
			bad[r.Intn(len(bad))] = "[]{},:\"\\0-e.tx \x01\xff"[r.Intn(17)]
			check(bad)
		}
	}
	for _, s := range []string{"null", " [ ] ", "[[]]", "[null]", "[[1,2],[\"a\"]]", "[[01]]", "[[1.]]", "[[-]]", "[[1e]]", "[[1e400]]", "[[Infinity]]", "[[0x10]]",
		"[[\"\\u00e9\"]]", "[[\"\xff\"]]", "[[{\"a\":1}]]", "[[[1]]]", "[[1]],", "[[1]]x", "[[nul]]", "[[truex]]", "[1]", "{}", "", "[[ 1 , 2 ]]\n", "[[1_0]]", "[[-0]]", "[[1E+2]]"} {
		check([]byte(s))
	}
}

func FuzzDecodeBlock(f *testing.F) {
	for _, s := range []string{"[[1,\"a\",true,null]]", "[null,[]]", "[[\"\\n\"]]", "[[1e5]]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want [][]any
		werr := json.Unmarshal(data, &want)
		got, gerr := decodeBlock(data)
		if (werr == nil) != (gerr == nil) || (werr == nil && !reflect.DeepEqual(got, want)) {
			t.Fatalf("%q: decodeBlock = %#v, %v; json.Unmarshal = %#v, %v", data, got, gerr, want, werr)
		}
	})
}
