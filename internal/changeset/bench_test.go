package changeset

import (
	"strings"
	"testing"
)

// BenchmarkTypistRebase measures what the server does per keystroke of one
// person while another's change arrived first: map the keystroke over the
// other change and compose it onto the history, in a Note's tab of about
// 100,000 characters.
func BenchmarkTypistRebase(b *testing.B) {
	_, key := keystroke(b)
	n := key.Len()
	other, err := Of([]Change{{From: n / 3, To: n / 3, Insert: "x"}}, n)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m, err := key.Map(other, false)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := other.Compose(m); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "µs/keystroke")
}

// BenchmarkApply measures applying one keystroke to that tab.
func BenchmarkApply(b *testing.B) {
	doc, key := keystroke(b)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := key.Apply(doc); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "µs/apply")
}

// keystroke is a tab of about 100,000 characters and one character typed
// in its middle.
func keystroke(b *testing.B) (string, ChangeSet) {
	b.Helper()
	doc := strings.Repeat("A paragraph of a Note that people write together.\n", 2000)
	n := len(encode(doc))
	key, err := Of([]Change{{From: n / 2, To: n / 2, Insert: "y"}}, n)
	if err != nil {
		b.Fatal(err)
	}
	return doc, key
}
