package service

import "testing"

// Excel writes its newer functions with a prefix (_xlfn.XLOOKUP): an
// import takes it away and an export puts it back, outside strings only.
func TestXlfnPrefixes(t *testing.T) {
	for _, c := range []struct{ file, foundry string }{
		{`_xlfn.XLOOKUP(A1,B:B,C:C)+SUM(D1:D3)`, `XLOOKUP(A1,B:B,C:C)+SUM(D1:D3)`},
		{`_xlfn.IFS(A1>1,"_xlfn.IFS(",TRUE,_xlfn.CONCAT("a",B1))`, `IFS(A1>1,"_xlfn.IFS(",TRUE,CONCAT("a",B1))`},
		{`_xlfn.STDEV.S(A1:A9)/'Data 2'!B1`, `STDEV.S(A1:A9)/'Data 2'!B1`},
		{`VLOOKUP(A1,Sheet2!A:B,2,FALSE)`, `VLOOKUP(A1,Sheet2!A:B,2,FALSE)`},
	} {
		if got := xlfn(c.file, false); got != c.foundry {
			t.Errorf("read %q: %q, want %q", c.file, got, c.foundry)
		}
		if got := xlfn(c.foundry, true); got != c.file {
			t.Errorf("write %q: %q, want %q", c.foundry, got, c.file)
		}
	}
	if got := xlfn(`_xlws.SORT(A1:A3)`, false); got != `SORT(A1:A3)` {
		t.Errorf("_xlws.: %q", got)
	}
}
