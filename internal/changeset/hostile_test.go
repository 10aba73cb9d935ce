package changeset

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestRefusesWhatTheEditorCouldNotSend(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{}`, "not a change set"},
		{`[-1]`, "a length is a whole number"},
		{`[1.5]`, "a length is a whole number"},
		{`[99999999999]`, "a length is a whole number"},
		{`[[]]`, "a replacement is [length, line…]"},
		{`[[1, 2]]`, "line 1 is not a string"},
		{`[[0, "a\nb"]]`, "holds a line break"},
		{`[[0, "a\rb"]]`, "holds a line break"},
		{`["3"]`, "a length is a whole number"},
		{`[268435456, 268435456]`, "longer than"},
	} {
		_, err := Parse([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%s) = %v, want an error saying %q", tc.in, err, tc.want)
		}
	}
}

func TestLengthsAndCharacters(t *testing.T) {
	c, err := Parse([]byte(`[1,[1,"x"],1]`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Apply("ab"); !errors.Is(err, ErrMismatchedLength) {
		t.Errorf("Apply to a shorter document: %v, want ErrMismatchedLength", err)
	}
	// "a😀" is three UTF-16 units: replacing the second one alone would
	// split the emoji.
	if _, err := c.Apply("a😀"); err == nil || !strings.Contains(err.Error(), "splits a character") {
		t.Errorf("Apply across a surrogate pair: %v, want a refusal", err)
	}
	if got, err := c.Apply("a中b"); err != nil || got != "axb" {
		t.Errorf("Apply = %q, %v; want axb", got, err)
	}
	other, _ := Parse([]byte(`[4]`))
	if _, err := c.Compose(other); !errors.Is(err, ErrMismatchedLength) {
		t.Errorf("Compose with a change set for another length: %v", err)
	}
	if _, err := c.Map(other, false); !errors.Is(err, ErrMismatchedLength) {
		t.Errorf("Map over a change set for another length: %v", err)
	}
	if _, _, err := c.MapPos(4, -1, Simple); err == nil {
		t.Error("MapPos past the end: no error")
	}
	if _, err := Of([]Change{{From: 2, To: 1}}, 3); err == nil {
		t.Error("Of with from > to: no error")
	}
	rs := c.Changes()
	if len(rs) != 1 || rs[0] != (Range{FromA: 1, ToA: 2, FromB: 1, ToB: 2, Text: "x"}) {
		t.Errorf("Changes = %+v", rs)
	}
	if !c.TouchesRange(2, 3) || c.TouchesRange(3, 3) {
		t.Error("TouchesRange: wrong")
	}
}

// FuzzOperations feeds hostile change sets to every operation: none may
// panic or loop, and what succeeds keeps the lengths consistent.
func FuzzOperations(f *testing.F) {
	f.Add([]byte(`[1,[1,"x"],1]`), []byte(`[[0,"a"],3]`), "abc", false)
	f.Add([]byte(`[[3]]`), []byte(`[3]`), "a😀", true)
	f.Add([]byte(`[0,0,[0],2]`), []byte(`[[2,"",""]]`), "ab", false)
	f.Fuzz(func(t *testing.T, ja, jb []byte, doc string, before bool) {
		a, err := Parse(ja)
		if err != nil {
			return
		}
		b, err := Parse(jb)
		if err != nil {
			return
		}
		if a.Len() > 1<<12 || b.Len() > 1<<12 || a.NewLen() > 1<<12 || b.NewLen() > 1<<12 {
			return
		}
		if m, err := a.Map(b, before); err == nil && (m.Len() != b.NewLen()) {
			t.Fatalf("a.Map(b) has length %d, want b's new length %d", m.Len(), b.NewLen())
		}
		if c, err := a.Compose(b); err == nil && (c.Len() != a.Len() || c.NewLen() != b.NewLen()) {
			t.Fatalf("a.Compose(b) goes %d→%d, want %d→%d", c.Len(), c.NewLen(), a.Len(), b.NewLen())
		}
		if out, err := a.Apply(doc); err == nil && len(encode(out)) != a.NewLen() {
			t.Fatalf("Apply made length %d, want %d", len(encode(out)), a.NewLen())
		}
		if inv, err := a.Invert(doc); err == nil && (inv.Len() != a.NewLen() || inv.NewLen() != a.Len()) {
			t.Fatalf("Invert goes %d→%d", inv.Len(), inv.NewLen())
		}
		for p := 0; p <= a.Len() && p < 64; p++ {
			if _, _, err := a.MapPos(p, -1, TrackDel); err != nil {
				t.Fatalf("MapPos(%d) within the length: %v", p, err)
			}
		}
		if out, err := json.Marshal(a); err != nil {
			t.Fatal(err)
		} else if back, err := Parse(out); err != nil || back.Len() != a.Len() || back.NewLen() != a.NewLen() {
			t.Fatalf("%s does not read back: %v", out, err)
		}
	})
}
