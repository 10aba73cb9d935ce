package store

import "testing"

// TestFTSWindows: the FTS5 narrowing of a title query looks up as few
// trigram windows as cover the query (at most three, first and last
// included), each in every spelling its runes' case allows beyond ASCII,
// and none for a query an index cannot narrow.
func TestFTSWindows(t *testing.T) {
	for q, want := range map[string]string{
		"ab":                      "",
		"abc":                     `"abc"`,
		"Zeph":                    `"zep" AND "eph"`,
		"zephyr":                  `"zep" AND "hyr"`,
		"weekly z":                "\"wee\" AND (\"ekl\" OR \"e\u212Al\") AND \"y z\"", // U+212A KELVIN SIGN lowers to k
		"planning 0":              `"pla" AND ("nni" OR "nnİ") AND "g 0"`,
		"a very long title query": `"a v" AND "g t" AND "ery"`,
		`say "hi"`:                `"say" AND "y """ AND ("hi""" OR "hİ""")`,
		"ärg":                     `("ärg" OR "Ärg")`,
		"ı s":                     `"ı s"`,
	} {
		if got := newTitleMatch(q).fts(); got != want {
			t.Errorf("fts(%q) = %s, want %s", q, got, want)
		}
	}
}
