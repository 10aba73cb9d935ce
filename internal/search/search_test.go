package search

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func words(s string) []string {
	var out []string
	Words(s, func(w Word) bool { out = append(out, w.Text); return true })
	return out
}

func TestWords(t *testing.T) {
	cases := map[string]string{
		"Ärger über Straße":    "arger uber strasse",
		"CAFÉ café cafe\u0301": "cafe cafe cafe",
		"北京大学":                 "北 京 大 学",
		"iPhone手机":             "iphone 手 机",
		"नमस्ते":               "नमस्ते",
		"شُكْرًا":              "شكرا",
		"❤️ 🚀launch":           "❤ 🚀 launch",
		"e-mail, don't; x_y":   "e mail don t x y",
		"ﬁne ＡＢＣ ²":            "fine abc 2",
		"ΟΔΟΣ":                 "οδοσ",
		"a\x00b \xff c":        "a b c",
		"ｶﾞｷﾞ":                 "ガ ギ",
	}
	for in, want := range cases {
		if got := strings.Join(words(in), " "); got != want {
			t.Errorf("Words(%q) = %q, want %q", in, got, want)
		}
	}
	// Each word's span is where it is in the text.
	text := "Hello, Wörld!"
	var spans []string
	Words(text, func(w Word) bool { spans = append(spans, text[w.Start:w.End]); return true })
	if strings.Join(spans, "|") != "Hello|Wörld" {
		t.Errorf("spans %q", spans)
	}
	if n := len(words(strings.Repeat("x", 100))[0]); n != MaxWordRunes {
		t.Errorf("a 100-letter word is indexed as %d letters, want %d", n, MaxWordRunes)
	}
	if n := len(strings.Fields(Terms(strings.Repeat("w ", MaxUnitWords+50)))); n != MaxUnitWords {
		t.Errorf("Terms keeps %d words, want %d", n, MaxUnitWords)
	}
}

func TestParse(t *testing.T) {
	q, err := Parse(`Q3 "quarterly budget" budg* e-mail 北京 a* q3`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tm := range q.Terms {
		s := strings.Join(tm.Words, " ")
		if tm.Prefix {
			s += "*"
		}
		got = append(got, s)
	}
	if want := "q3|quarterly budget|budg*|e mail|北 京|a"; strings.Join(got, "|") != want {
		t.Errorf("terms %q, want %q", strings.Join(got, "|"), want)
	}
	for _, bad := range []string{"", "***", `""`, "   ", "-- !!", "\x00"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) found words", bad)
		}
	}
	many := ""
	for i := range 17 {
		many += string(rune('a'+i)) + "x "
	}
	if _, err := Parse(many); err == nil || !strings.Contains(err.Error(), "at most 16") {
		t.Errorf("17 terms: %v", err)
	}
	if _, err := Parse(strings.Repeat("é", 201)); err == nil || !strings.Contains(err.Error(), "200") {
		t.Errorf("201 characters: %v", err)
	}
}

func TestFindAndSnippet(t *testing.T) {
	q, _ := Parse(`"quarterly budget" zanzi*`)
	text := strings.Repeat("filler words here ", 20) + "the Zanzibar QUARTERLY budget is here " + strings.Repeat("and more after ", 20)
	m := q.Find(text)
	if m.Found != 2 || len(m.Spans) != 2 {
		t.Fatalf("Find: %+v", m)
	}
	s := Snippet(text, m.Spans)
	if utf8.RuneCountInString(s) > MaxSnippetRunes || !strings.Contains(s, "«Zanzibar» «QUARTERLY budget»") || !strings.HasPrefix(s, "…") || !strings.HasSuffix(s, "…") {
		t.Errorf("snippet %q", s)
	}
	if m := q.Find("budget quarterly zanzibar"); m.Found != 1 {
		t.Errorf("a phrase out of order was found: %+v", m)
	}
}
