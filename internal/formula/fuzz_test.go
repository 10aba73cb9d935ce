package formula

import (
	"strings"
	"testing"
	"time"
)

// FuzzParse checks that Parse, Eval, Refs and Shift never panic and that
// Shift keeps a formula parseable.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"=SUM(A1:B3)*2", "=IF(A1>0,\"a\",B2)", "='Data 2'!A1+Sheet1!B$2", "={1,2;3,4}", "=A:A", "=3:4",
		"=SUMPRODUCT((A1:A5>2)*C1:C5)", `=TEXT(45306,"yyyy-mm-dd")`, "=-2^-2%", "=#N/A", "=A1 B1",
		`=COUNTIF(B1:B5,"*a?~*")`, "=VLOOKUP(1,A:C,2,FALSE)", "=1E+3", "=(((1)))", "=SUM(", `="a""b"`,
		"=XLOOKUP(1,A1:A5,B1:B5,,-1,-1)", "=DATEDIF(1,2,\"MD\")", "=INDEX(A1:C5,0,2)", "=@SUM(A1)",
	} {
		f.Add(s, 1, -1)
	}
	ctx := newCtx()
	recoverPanics = false
	f.Cleanup(func() { recoverPanics = true })
	f.Fuzz(func(t *testing.T, src string, dr, dc int) {
		fm, err := Parse(src)
		shifted := Shift(src, dr%5, dc%5)
		if err != nil {
			if shifted != src {
				t.Fatalf("Shift changed a formula that does not parse: %q → %q", src, shifted)
			}
			return
		}
		fm.Refs()
		v := fm.Eval(ctx, 3, 2)
		switch v.(type) {
		case float64, string, bool, Error:
		default:
			t.Fatalf("Eval(%q) = %#v (%T): not a scalar value", src, v, v)
		}
		if _, err := Parse(shifted); err != nil && !strings.Contains(err.Error(), "longer than") {
			t.Fatalf("Shift(%q) = %q does not parse: %v", src, shifted, err)
		}
	})
}

func BenchmarkParse(b *testing.B) {
	src := `=IF(SUM(A1:A100)>10,VLOOKUP("x",'Data 2'!A:C,3,FALSE),ROUND(AVERAGE(B1:B100)*1.2,2))&TEXT(C1,"0.00")`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(src); err != nil {
			b.Fatal(err)
		}
	}
}

// columnCtx is one sheet of one column, as a slice: the benchmark measures
// the engine, not a map lookup.
type columnCtx []Value

func (c columnCtx) Cell(sheet string, row, col int) (Value, bool) {
	if col == 0 && row < len(c) {
		return c[row], true
	}
	return nil, true
}
func (c columnCtx) Size(string) (int, int, bool) { return len(c), 1, true }
func (c columnCtx) Now() time.Time               { return time.Time{} }

// BenchmarkEvalSum10k sums a 10,000-cell column.
func BenchmarkEvalSum10k(b *testing.B) {
	ctx := make(columnCtx, 10_000)
	for i := range ctx {
		ctx[i] = float64(i)
	}
	f, err := Parse("=SUM(A:A)")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if v := f.Eval(ctx, 0, 1); v != 49995000.0 {
			b.Fatalf("SUM = %v", v)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10_000, "ns/cell")
}
