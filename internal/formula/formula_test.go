package formula

import (
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func TestParseErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"=SUM(B2:", `formula "=SUM(B2:": missing ")" at the end`},
		{"SUM(A1)", `does not start with "="`},
		{"=", `nothing after "="`},
		{"=1+", "missing operand at the end"},
		{"=)", `unexpected ")"`},
		{"=(1", `missing ")" at the end`},
		{`="abc`, "a string is not closed"},
		{"='Sheet 1!A1", "a sheet name is not closed"},
		{"=1+#FOO", "unknown error literal"},
		{"=[1]Sheet1!A1", "not supported"},
		{"=SUM(1,,", `missing ")"`},
		{"=A1:B", "not a valid reference"},
		{"=Sheet1!", "not a valid reference"},
		{"=1e999", "out of range"},
		{"=PI(1)", "PI takes at most 0 arguments, has 1"},
		{"=IF()", "IF needs at least 1 argument"},
		{"=ROUND(1)", "ROUND needs at least 2 arguments, has 1"},
		{"=1 +* 2", `unexpected "*"`},
		{"=(1,2)", "union operator"},
		{"={1,2;3}", "differ in length"},
		{"={A1}", "array constant"},
		{"=" + strings.Repeat("(", 65) + "1" + strings.Repeat(")", 65), "nested deeper than 64"},
		{"=" + strings.Repeat("-", 70) + "1", "nested deeper than 64"},
		{"=" + strings.Repeat("1+", 4100) + "1", "longer than 8192 bytes"},
		{"=1;2", `unexpected ";"`},
	}
	for _, c := range cases {
		f, err := Parse(c.src)
		if err == nil {
			t.Errorf("Parse(%q) = %v, want an error containing %q", c.src, f, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) error %q, want it to contain %q", c.src, err, c.want)
		}
	}
	// Within the bounds is fine.
	for _, src := range []string{
		"=" + strings.Repeat("(", 60) + "1" + strings.Repeat(")", 60),
		"=" + strings.Repeat("1+", 4000) + "1",
		"=NOSUCHFUNCTION(1,2)",
		"= SUM( A1 , 2 ) ",
		"=_xlfn.CONCAT(\"a\",\"b\")",
		"=sum(a1:a3)",
		"=SUM(A1,\n\tA2)",
		"=IFERROR(#n/a,1)",
	} {
		if _, err := Parse(src); err != nil {
			t.Errorf("Parse(%.40q): %v", src, err)
		}
	}
}

func TestRefs(t *testing.T) {
	f, err := Parse("=IF(A1>0, SUM($B$2:C3), 'Data 2'!D4) + A1 + SUM(E:E) + SUM(3:4) + 'It''s'!A1")
	if err != nil {
		t.Fatal(err)
	}
	want := []Ref{
		{"", 0, 0, 0, 0},
		{"", 1, 1, 2, 2},
		{"Data 2", 3, 3, 3, 3},
		{"", 0, 4, MaxRow, 4},
		{"", 2, 0, 3, MaxCol},
		{"It's", 0, 0, 0, 0},
	}
	got := f.Refs()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Refs() = %v, want %v", got, want)
	}
	// Reversed corners are normalized.
	f, _ = Parse("=SUM(C3:A1)")
	if got := f.Refs(); !reflect.DeepEqual(got, []Ref{{"", 0, 0, 2, 2}}) {
		t.Errorf("Refs() = %v", got)
	}
	f, _ = Parse("=1+2")
	if len(f.Refs()) != 0 {
		t.Errorf("Refs() of a constant = %v", f.Refs())
	}
}

func TestVolatile(t *testing.T) {
	for src, want := range map[string]bool{
		"=TODAY()": true, "=NOW()+1": true, "=IF(A1,RAND(),0)": true, "=RANDBETWEEN(1,6)": true,
		"=SUM(A1:A3)": false, "=1": false, "=TODAYX()": false,
	} {
		f, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		if f.Volatile() != want {
			t.Errorf("%s: Volatile() = %v, want %v", src, f.Volatile(), want)
		}
	}
}

func TestPrecedenceAndOperators(t *testing.T) {
	checkEval(t, []evalCase{
		{"=1+2*3", 7.0},
		{"=(1+2)*3", 9.0},
		{"=2^3^2", 64.0},
		{"=-2^2", 4.0},
		{"=0-2^2", -4.0},
		{"=2*-3", -6.0},
		{"=200%%", 0.02},
		{"=-50%", -0.5},
		{"=1+2&3", "33"},
		{"=1+2=3", true},
		{`="a"&1=("a"&"1")`, true},
		{"=10-2-3", 5.0},
		{"=12/3/2", 2.0},
		{"=1e3", 1000.0},
		{"=12E+3", 12000.0},
		{"=1.5e-3*1000", 1.5},
		{"=+5", 5.0},
		{"=--5", 5.0},
		{"=3<>3", false},
		{"=2<=2", true},
		{"=2>=3", false},
		{"=SUM(A1:A3 A2:A5)", 5.0},
		{"=A1:A2 C1:C2", ErrNull},
		{"=0^0", 1.0},
		{"=0^-1", ErrDiv0},
		{"=(-8)^(1/3)", ErrNum},
		{"=10^400", ErrNum},
		{"=ISNUMBER(SUM(1E+308,1E+308))", false},
	})
}

func TestCoercion(t *testing.T) {
	checkEval(t, []evalCase{
		{`="3"+1`, 4.0},
		{`="1,000"+1`, 1001.0},
		{`="50%"*2`, 1.0},
		{`="2024-01-15"+0`, 45306.0},
		{`="12:00"*2`, 1.0},
		{`="x"+1`, ErrValue},
		{"=B4+1", 4.0}, // text "3" in a cell
		{"=B1+1", ErrValue},
		{"=TRUE+TRUE", 2.0},
		{"=B5*2", 2.0},  // TRUE in a cell
		{"=Z99+1", 1.0}, // empty is 0
		{`=Z99&"x"`, "x"},
		{"=Z99", 0.0},
		{"=D2", ""},
		{`=1&TRUE`, "1TRUE"},
		{`=0.1+0.2&""`, "0.3"},
		{`=1/3&""`, "0.333333333333333"},
		{`=1E+20&""`, "1E+20"},
		{`=123456789012&""`, "123456789012"},
		{`=LEN(REPT("é",30000)&REPT("a",2767))`, 32767.0},
		{`=REPT("a",30000)&REPT("a",2768)`, ErrValue},
		{`="a"="A"`, true},
		{`="a"<"B"`, true},
		{`=1<"a"`, true},
		{`="z"<TRUE`, true},
		{"=TRUE>1", true},
		{"=Z99=0", true},
		{`=Z99=""`, true},
		{"=Z99=FALSE", true},
		{"=D1+1", ErrDiv0},
		{"=1+D1", ErrDiv0},
		{"=D1=1", ErrDiv0},
	})
}

func TestReferences(t *testing.T) {
	checkEval(t, []evalCase{
		{"=A1", 1.0},
		{"=$A$2", 2.0},
		{"=a$3+$A4", 7.0},
		{"=SUM(A:A)", 15.0},
		{"=SUM(2:2)", 22.0},
		{"='Data 2'!A1", 100.0},
		{"='data 2'!A1+'Data 2'!A2", 300.0},
		{"=SUM('Data 2'!A:A)", 300.0},
		{"=Nope!A1", ErrRef},
		{"=SUM(Nope!A1:A3)", ErrRef},
		{"=A1:A3", 1.0},       // a range result is its top-left value
		{"=ABS(A1:A20)", 0.0}, // implicit intersection with row 10 (empty)
		{"=ROWS(A:A)", float64(MaxRow + 1)},
		{"=COLUMNS(1:1)", float64(MaxCol + 1)},
		{"=undefinedname", ErrName},
		{"=NOSUCH(1)", ErrName},
		{"=ROW()", 10.0},
		{"=COLUMN()", 2.0},
	})
}

func TestMathFunctions(t *testing.T) {
	checkEval(t, []evalCase{
		{"=SUM(1,2,3)", 6.0},
		{`=SUM(A1:A3,"4",TRUE)`, 11.0},
		{"=SUM(B1:B5)", 0.0}, // text and logicals in ranges are ignored
		{"=SUM(A1,D1)", ErrDiv0},
		{`=SUM("x")`, ErrValue},
		{"=PRODUCT(A1:A4)", 24.0},
		{"=PRODUCT(B1:B3)", 0.0},
		{"=ROUND(2.675,2)", 2.68},
		{"=ROUND(-2.5,0)", -3.0},
		{"=ROUND(1234.5,-2)", 1200.0},
		{"=ROUNDUP(3.001,2)", 3.01},
		{"=ROUNDUP(-3.001,0)", -4.0},
		{"=ROUNDDOWN(-3.999,1)", -3.9},
		{"=TRUNC(3.999)", 3.0},
		{"=INT(-3.5)", -4.0},
		{"=CEILING(4.3,0.5)", 4.5},
		{"=CEILING(-4.3,-1)", -5.0},
		{"=CEILING(4,-1)", ErrNum},
		{"=FLOOR(0.3,0.1)", 0.3},
		{"=FLOOR(5,0)", ErrDiv0},
		{"=ABS(-2)", 2.0},
		{"=POWER(2,0.5)", 1.4142135623730951},
		{"=SQRT(-1)", ErrNum},
		{"=MOD(-10,3)", 2.0},
		{"=MOD(10,-3)", -2.0},
		{"=MOD(1,0)", ErrDiv0},
		{"=EXP(0)", 1.0},
		{"=LN(0)", ErrNum},
		{"=LOG(8,2)", 3.0},
		{"=LOG(10,1)", ErrDiv0},
		{"=LOG10(1000)", 3.0},
		{"=SIGN(-0.5)", -1.0},
		{"=RANDBETWEEN(3,3)", 3.0},
		{"=RANDBETWEEN(5,3)", ErrNum},
		{"=SUMPRODUCT(A1:A3,C1:C3)", 140.0},
		{"=SUMPRODUCT((A1:A5>2)*C1:C5)", 120.0},
		{"=SUMPRODUCT(A1:A3,C1:C2)", ErrValue},
		{"=SUMPRODUCT({1,2;3,4},{1,1;1,1})", 10.0},
		{"=SUMPRODUCT(B1:B3)", 0.0},
	})
	ctx := newCtx()
	for i := 0; i < 50; i++ {
		v := evalStr(t, ctx, "=RAND()")
		if x, ok := v.(float64); !ok || x < 0 || x >= 1 {
			t.Fatalf("RAND() = %v", v)
		}
		v = evalStr(t, ctx, "=RANDBETWEEN(1,6)")
		if x, ok := v.(float64); !ok || x < 1 || x > 6 || x != float64(int(x)) {
			t.Fatalf("RANDBETWEEN(1,6) = %v", v)
		}
	}
}

func TestStatFunctions(t *testing.T) {
	checkEval(t, []evalCase{
		{"=AVERAGE(A1:A5)", 3.0},
		{"=AVERAGE(B1:B3)", ErrDiv0},
		{"=AVERAGE(1,TRUE)", 1.0},
		{"=COUNT(A1:B5)", 5.0},
		{`=COUNT(1,"2","x",TRUE)`, 3.0},
		{"=COUNTA(A1:B5)", 10.0},
		{"=COUNTA(D1:D2)", 2.0}, // an error and an empty text count
		{"=COUNTBLANK(D1:D3)", 2.0},
		{"=COUNTBLANK(A:A)", float64(MaxRow + 1 - 5)},
		{"=MIN(A1:A5,-1)", -1.0},
		{"=MAX(C:C)", 50.0},
		{"=MAX(B1:B3)", 0.0},
		{"=MEDIAN(A1:A4)", 2.5},
		{"=MEDIAN(B1:B2)", ErrNum},
		{"=LARGE(A1:A5,1)", 5.0},
		{"=SMALL(A1:A5,2)", 2.0},
		{"=LARGE(A1:A5,6)", ErrNum},
		{"=RANK(4,A1:A5)", 2.0},
		{"=RANK(4,A1:A5,1)", 4.0},
		{"=RANK(9,A1:A5)", ErrNA},
		{"=STDEV(A1:A5)", 1.5811388300841898},
		{"=VAR(A1:A5)", 2.5},
		{"=STDEVP(A1:A5)", 1.4142135623730951},
		{"=VAR.P(A1:A5)", 2.0},
		{"=VAR(1)", ErrDiv0},
	})
}

func TestLogicFunctions(t *testing.T) {
	checkEval(t, []evalCase{
		{`=IF(A1>0,"pos","neg")`, "pos"},
		{"=IF(0,1)", false},
		{"=IF(1,,2)", 0.0},
		{"=IF(1)", true},
		{"=IF(D1,1,2)", ErrDiv0},
		{`=IF("x",1,2)`, ErrValue},
		{"=IF(TRUE,1,1/0)", 1.0}, // the other branch is not evaluated
		{"=SUM(IF(TRUE,A1:A3,C1:C3))", 6.0},
		{`=IFS(A1>5,"a",A1>0,"b")`, "b"},
		{`=IFS(FALSE,"a")`, ErrNA},
		{`=IFERROR(1/0,"e")`, "e"},
		{`=IFERROR(D1,"e")`, "e"},
		{`=IFERROR(A1,"e")`, 1.0},
		{`=IFNA(NA(),"n")`, "n"},
		{`=IFNA(1/0,"n")`, ErrDiv0},
		{"=AND(A1:A3)", true},
		{"=AND(TRUE,0)", false},
		{"=AND(B1:B3)", ErrValue},
		{"=OR(0,A1)", true},
		{"=XOR(TRUE,TRUE)", false},
		{"=XOR(1,0,0)", true},
		{"=NOT(A1)", false},
		{`=SWITCH(A2,1,"one",2,"two")`, "two"},
		{`=SWITCH(9,1,"one","other")`, "other"},
		{`=SWITCH(9,1,"one")`, ErrNA},
		{`=CHOOSE(3,"a","b","c")`, "c"},
		{`=CHOOSE(0,"a")`, ErrValue},
		{"=SUM(CHOOSE(2,A1:A2,C1:C2))", 30.0},
		{"=TRUE()", true},
		{"=FALSE()", false},
	})
}

func TestCriteriaFunctions(t *testing.T) {
	checkEval(t, []evalCase{
		{`=COUNTIF(A1:A5,">2")`, 3.0},
		{`=COUNTIF(A1:A5,">=2")`, 4.0},
		{`=COUNTIF(A1:A5,"<>3")`, 4.0},
		{"=COUNTIF(A1:A5,3)", 1.0},
		{`=COUNTIF(A1:B5,"3")`, 2.0}, // the number 3 and the text "3"
		{`=COUNTIF(B1:B5,"apple")`, 1.0},
		{`=COUNTIF(B1:B5,"APPLE")`, 1.0},
		{`=COUNTIF(B1:B5,"*an*")`, 1.0},
		{`=COUNTIF(B1:B5,"?pple")`, 1.0},
		{`=COUNTIF(B1:B5,"<>apple")`, 4.0},
		{`=COUNTIF(B1:B5,">b")`, 2.0},
		{`=COUNTIF(B1:B5,TRUE)`, 1.0},
		{`=COUNTIF(D1:D3,"")`, 2.0},
		{`=COUNTIF(D1:D3,"<>")`, 1.0},
		{`=COUNTIF(D1:D3,"#DIV/0!")`, 1.0},
		{`=COUNTIF(A:A,"")`, float64(MaxRow + 1 - 5)},
		{`=SUMIF(A1:A5,">2")`, 12.0},
		{`=SUMIF(A1:A5,">2",C1:C5)`, 120.0},
		{`=SUMIF(A1:A5,">2",C1)`, 120.0}, // the sum range takes the criteria range's shape
		{`=SUMIF(B1:B5,"*e*",C1:C5)`, 40.0},
		{`=AVERAGEIF(A1:A5,">3",C1:C5)`, 45.0},
		{`=AVERAGEIF(A1:A5,">9")`, ErrDiv0},
		{`=SUMIFS(C1:C5,A1:A5,">1",A1:A5,"<5")`, 90.0},
		{`=SUMIFS(C1:C5,A1:A5,">1",A1:A4,"<5")`, ErrValue},
		{`=COUNTIFS(A1:A5,">1",C1:C5,"<50")`, 3.0},
		{`=COUNTIFS(A:A,"",C:C,"")`, float64(MaxRow + 1 - 5)},
		{`=AVERAGEIFS(C1:C5,A1:A5,"<3")`, 15.0},
		{`=COUNTIF('Data 2'!B:B,"x")`, 1.0},
		{`=COUNTIF(B1:B5,"~*")`, 0.0},
	})
}

func TestLookupFunctions(t *testing.T) {
	checkEval(t, []evalCase{
		{"=VLOOKUP(3,A1:C5,3,FALSE)", 30.0},
		{"=VLOOKUP(3.5,A1:C5,3)", 30.0},
		{"=VLOOKUP(0,A1:C5,3)", ErrNA},
		{"=VLOOKUP(9,A1:C5,3,FALSE)", ErrNA},
		{"=VLOOKUP(3,A1:C5,4,FALSE)", ErrRef},
		{"=VLOOKUP(3,A1:C5,0,FALSE)", ErrValue},
		{`=VLOOKUP("BAN*",B1:C5,2,FALSE)`, 20.0},
		{"=VLOOKUP(3,A:C,3,FALSE)", 30.0},
		{`=HLOOKUP(2,A1:E3,2,FALSE)`, ErrNA},
		{`=HLOOKUP("x",'Data 2'!B1:B2,2,FALSE)`, "y"},
		{"=MATCH(4,A1:A5,0)", 4.0},
		{"=MATCH(4.5,A1:A5)", 4.0},
		{"=MATCH(4.5,A1:A5,1)", 4.0},
		{"=MATCH(9,A1:A5,0)", ErrNA},
		{"=MATCH(35,{50,40,30,20},-1)", 2.0},
		{`=MATCH("cherry",B1:B5,0)`, 3.0},
		{"=MATCH(1,A1:C5,0)", ErrNA},
		{"=INDEX(A1:C5,2,3)", 20.0},
		{"=INDEX(A1:A5,4)", 4.0},
		{"=INDEX(A1:C1,3)", 10.0},
		{"=INDEX(A1:C5,6,1)", ErrRef},
		{"=SUM(INDEX(A1:C5,0,3))", 150.0},
		{"=SUM(INDEX(A1:C5,2,0))", 22.0},
		{"=INDEX({1,2;3,4},2,1)", 3.0},
		{`=XLOOKUP("cherry",B1:B5,C1:C5)`, 30.0},
		{`=XLOOKUP("zzz",B1:B5,C1:C5)`, ErrNA},
		{`=XLOOKUP("zzz",B1:B5,C1:C5,"none")`, "none"},
		{`=XLOOKUP(3.5,A1:A5,C1:C5,,-1)`, 30.0},
		{`=XLOOKUP(3.5,A1:A5,C1:C5,,1)`, 40.0},
		{`=XLOOKUP("b*",B1:B5,C1:C5,,2)`, 20.0},
		{`=XLOOKUP(TRUE,A1:A5>2,C1:C5,,0,-1)`, 50.0},
		{`=XLOOKUP(3,A1:A5,C1:C4)`, ErrValue},
		{"=ROW(C7)", 7.0},
		{"=COLUMN(C7)", 3.0},
		{"=ROWS(A1:C5)", 5.0},
		{"=COLUMNS(A1:C5)", 3.0},
		{"=ROWS({1;2;3})", 3.0},
	})
}

func TestTextFunctions(t *testing.T) {
	checkEval(t, []evalCase{
		{`=CONCAT("a",A1:A3,"b")`, "a123b"},
		{`=CONCATENATE("a",1,TRUE)`, "a1TRUE"},
		{`=TEXTJOIN("-",TRUE,"a","",B1:B2)`, "a-apple-Banana"},
		{`=TEXTJOIN("-",FALSE,"a","","b")`, "a--b"},
		{`=LEFT("héllo",2)`, "hé"},
		{`=LEFT("abc")`, "a"},
		{`=LEFT("abc",-1)`, ErrValue},
		{`=RIGHT("héllo",3)`, "llo"},
		{`=RIGHT("ab",5)`, "ab"},
		{`=MID("héllo",2,3)`, "éll"},
		{`=MID("abc",5,1)`, ""},
		{`=MID("abc",0,1)`, ErrValue},
		{`=LEN("日本語")`, 3.0},
		{`=LEN(A1)`, 1.0},
		{`=TRIM("  a   b  ")`, "a b"},
		{`=UPPER("café")`, "CAFÉ"},
		{`=LOWER("ÀB")`, "àb"},
		{`=PROPER("hello wORLD 2nd-place o'neil")`, "Hello World 2Nd-Place O'Neil"},
		{`=SUBSTITUTE("a-b-c","-","+")`, "a+b+c"},
		{`=SUBSTITUTE("a-b-c","-","+",2)`, "a-b+c"},
		{`=SUBSTITUTE("a-b-c","-","+",3)`, "a-b-c"},
		{`=SUBSTITUTE("abc","","x")`, "abc"},
		{`=REPLACE("abcdef",2,3,"X")`, "aXef"},
		{`=REPLACE("abc",9,1,"X")`, "abcX"},
		{`=FIND("b","abcb")`, 2.0},
		{`=FIND("b","abcb",3)`, 4.0},
		{`=FIND("B","abc")`, ErrValue},
		{`=FIND("","abc")`, 1.0},
		{`=FIND("é","café")`, 4.0},
		{`=SEARCH("B","abc")`, 2.0},
		{`=SEARCH("c?e","abcdef")`, 3.0},
		{`=SEARCH("c?x","abcdef")`, ErrValue},
		{`=SEARCH("c*f","abcdef")`, 3.0},
		{`=SEARCH("~*","a*b")`, 2.0},
		{`=REPT("ab",3)`, "ababab"},
		{`=REPT("ab",-1)`, ErrValue},
		{`=REPT("ab",20000)`, ErrValue},
		{`=EXACT("a","A")`, false},
		{`=EXACT("a","a")`, true},
		{`=VALUE("1.5e2")`, 150.0},
		{`=VALUE("abc")`, ErrValue},
		{`=VALUE("13:30")`, 0.5625},
		{`=CHAR(65)&CODE("a")`, "A97"},
		{"=ISBLANK(Z99)", true},
		{"=ISBLANK(D2)", false},
		{"=ISNUMBER(B4)", false},
		{"=ISTEXT(B4)", true},
		{"=ISLOGICAL(B5)", true},
		{"=ISERROR(D1)", true},
		{"=ISERR(NA())", false},
		{"=ISNA(NA())", true},
		{"=NA()", ErrNA},
	})
}

func TestTextFormat(t *testing.T) {
	checkEval(t, []evalCase{
		{`=TEXT(3.14159,"0")`, "3"},
		{`=TEXT(3.5,"0")`, "4"},
		{`=TEXT(3.14159,"0.00")`, "3.14"},
		{`=TEXT(1234567.891,"#,##0")`, "1,234,568"},
		{`=TEXT(1234.5,"#,##0.00")`, "1,234.50"},
		{`=TEXT(-1234.5,"#,##0.00")`, "-1,234.50"},
		{`=TEXT(0.125,"0%")`, "13%"},
		{`=TEXT(0.125,"0.0%")`, "12.5%"},
		{`=TEXT(5,"000")`, "005"},
		{`=TEXT(0.5,"#.00")`, ".50"},
		{`=TEXT(1.5,"0.##")`, "1.5"},
		{`=TEXT(1234.5,"$#,##0.00")`, "$1,234.50"},
		{`=TEXT(-5,"0;(0)")`, "(5)"},
		{`=TEXT(0,"0;-0;""zero""")`, "zero"},
		{`=TEXT(45306,"yyyy-mm-dd")`, "2024-01-15"},
		{`=TEXT(45306,"dd/mm/yy")`, "15/01/24"},
		{`=TEXT(45306,"mmm d, yyyy")`, "Jan 15, 2024"},
		{`=TEXT(45306,"mmmm")`, "January"},
		{`=TEXT(45306,"dddd")`, "Monday"},
		{`=TEXT(45306.5625,"hh:mm")`, "13:30"},
		{`=TEXT(45306.5625,"h:mm AM/PM")`, "1:30 PM"},
		{`=TEXT(0.75,"hh:mm:ss")`, "18:00:00"},
		{`=TEXT(45306,"yyyy-mm-dd hh:mm")`, "2024-01-15 00:00"},
		{`=TEXT(1.5,"General")`, "1.5"},
		{`=TEXT("abc","0.00")`, "abc"},
		{`=TEXT("2","0.00")`, "2.00"},
		{`=TEXT(1/0,"0")`, ErrDiv0},
		{`=TEXT(12345.678,"0.00E+00")`, "1.23E+04"},
		{`=TEXT(-0.000123,"0.0E+0")`, "-1.2E-4"},
		{`=TEXT(9.999,"0.00E+00")`, "1.00E+01"},
		{`=TEXT(0,"0.00E+00")`, "0.00E+00"},
	})
}

func TestDateFunctions(t *testing.T) {
	checkEval(t, []evalCase{
		{"=DATE(2024,1,15)", 45306.0},
		{"=DATE(1900,1,1)", 1.0},
		{"=DATE(1900,2,28)", 59.0},
		{"=DATE(1900,3,1)", 61.0},
		{"=DATE(2024,14,1)", 45689.0},
		{"=DATE(124,1,15)", 45306.0},
		{"=DATE(-1,1,1)", ErrNum},
		{"=YEAR(60)&\"-\"&MONTH(60)&\"-\"&DAY(60)", "1900-2-29"},
		{"=DAY(59)", 28.0},
		{"=DAY(61)", 1.0},
		{"=YEAR(E1)", 2024.0},
		{"=MONTH(E1)", 1.0},
		{"=DAY(E1)", 15.0},
		{"=YEAR(-1)", ErrNum},
		{"=WEEKDAY(E1)", 2.0},
		{"=WEEKDAY(E1,2)", 1.0},
		{"=WEEKDAY(E1,3)", 0.0},
		{"=WEEKDAY(E1,16)", 3.0},
		{"=WEEKDAY(1)", 1.0},
		{"=WEEKDAY(E1,9)", ErrNum},
		{"=EDATE(DATE(2024,1,31),1)", 45351.0},
		{"=EDATE(DATE(2024,3,31),-1)", 45351.0},
		{"=EOMONTH(DATE(2024,2,10),0)", 45351.0},
		{"=EOMONTH(DATE(2024,2,10),-2)", 45291.0},
		{"=DAYS(DATE(2024,3,1),DATE(2024,2,1))", 29.0},
		{`=DAYS("2024-03-01","2024-02-01")`, 29.0},
		{`=DATEDIF(DATE(2020,2,29),DATE(2024,2,28),"Y")`, 3.0},
		{`=DATEDIF(DATE(2024,1,31),DATE(2024,3,1),"M")`, 1.0},
		{`=DATEDIF(DATE(2024,1,31),DATE(2024,3,1),"MD")`, -1.0}, // as LibreOffice
		{`=DATEDIF(DATE(2023,6,15),DATE(2024,3,10),"YM")`, 8.0},
		{`=DATEDIF(DATE(2023,6,15),DATE(2024,3,10),"YD")`, 269.0},
		{`=DATEDIF(DATE(2024,1,1),DATE(2024,3,1),"D")`, 60.0},
		{`=DATEDIF(DATE(2024,3,1),DATE(2024,1,1),"D")`, ErrNum},
		{`=DATEDIF(1,2,"X")`, ErrNum},
		{"=TIME(13,30,0)", 0.5625},
		{"=TIME(24,0,0)", 0.0},
		{"=HOUR(0.5625)", 13.0},
		{"=MINUTE(0.5625)", 30.0},
		{"=SECOND(TIME(1,2,3))", 3.0},
		{"=HOUR(-1)", ErrNum},
		{"=TODAY()", 45366.0},
		{"=NOW()", 45366.5625},
	})
}

func TestErrorsPropagate(t *testing.T) {
	checkEval(t, []evalCase{
		{"=1/0", ErrDiv0},
		{"=#N/A", ErrNA},
		{"=#REF!+1", ErrRef},
		{"=#NULL!", ErrNull},
		{"=#n/a", ErrNA},
		{"=SUM(A1,\r\nA2)", 3.0},
		{`=#DIV/0!&"x"`, ErrDiv0},
		{"=-D1", ErrDiv0},
		{"=D1%", ErrDiv0},
		{"=SUM(D1:D3)", ErrDiv0},
		{"=MAX(D1:D3)", ErrDiv0},
		{"=LEN(D1)", ErrDiv0},
		{"=ROUND(D1,1)", ErrDiv0},
		{"=VLOOKUP(D1,A1:B2,2)", ErrDiv0},
		{"=ISERROR(#NUM!)", true},
		{"=IFERROR(#NUM!,7)", 7.0},
	})
	// #CYCLE! from the caller propagates like any error.
	ctx := newCtx()
	ctx.sheets["Sheet1"]["F1"] = ErrCycle
	for src, want := range map[string]Value{"=F1+1": ErrCycle, "=SUM(F1:F2)": ErrCycle, "=ISERROR(F1)": true, "=IFERROR(F1,0)": 0.0} {
		if got := evalStr(t, ctx, src); got != want {
			t.Errorf("%s = %#v, want %#v", src, got, want)
		}
	}
}

func TestParseError(t *testing.T) {
	for _, e := range allErrors {
		got, ok := ParseError(string(e))
		if !ok || got != e {
			t.Errorf("ParseError(%q) = %q, %v", e, got, ok)
		}
	}
	if got, ok := ParseError("#n/a"); !ok || got != ErrNA {
		t.Errorf("ParseError(#n/a) = %q, %v", got, ok)
	}
	for _, s := range []string{"", "#SPILL!", "DIV/0", "#DIV/0! "} {
		if _, ok := ParseError(s); ok {
			t.Errorf("ParseError(%q) ok", s)
		}
	}
	if ErrDiv0.Error() != "#DIV/0!" {
		t.Errorf("Error() = %q", ErrDiv0.Error())
	}
}

func TestCellNames(t *testing.T) {
	for _, c := range []struct {
		row, col int
		name     string
	}{{0, 0, "A1"}, {0, 25, "Z1"}, {0, 27, "AB1"}, {9, 1, "B10"}, {0, 701, "ZZ1"}, {0, 702, "AAA1"}, {MaxRow, MaxCol, "XFD1048576"}} {
		if got := CellName(c.row, c.col); got != c.name {
			t.Errorf("CellName(%d, %d) = %q, want %q", c.row, c.col, got, c.name)
		}
		r, col, ok := ParseCell(c.name)
		if !ok || r != c.row || col != c.col {
			t.Errorf("ParseCell(%q) = %d, %d, %v", c.name, r, col, ok)
		}
	}
	if CellName(-1, 0) != "#REF!" || CellName(0, MaxCol+1) != "#REF!" {
		t.Error("CellName off the grid is not #REF!")
	}
	for s, want := range map[string][2]int{"b10": {9, 1}, "$B$10": {9, 1}, "$b10": {9, 1}, "B$10": {9, 1}} {
		r, c, ok := ParseCell(s)
		if !ok || r != want[0] || c != want[1] {
			t.Errorf("ParseCell(%q) = %d, %d, %v", s, r, c, ok)
		}
	}
	for _, s := range []string{"", "A", "10", "A0", "XFE1", "A1048577", "1A", "A1B", "$$A1", "A$", "AAAA1", " A1"} {
		if _, _, ok := ParseCell(s); ok {
			t.Errorf("ParseCell(%q) ok", s)
		}
	}
}

func TestShift(t *testing.T) {
	cases := []struct {
		src    string
		dr, dc int
		want   string
	}{
		{"=A1+$B$2+B$3+$C4", 1, 1, "=B2+$B$2+C$3+$C5"},
		{"=SUM(A1:B2)*2", 2, 0, "=SUM(A3:B4)*2"},
		{"=sum( a1 , 'Data 2'!B2 )", 1, 0, "=sum( A2 , 'Data 2'!B3 )"},
		{"=SUM(A:A)+SUM(3:4)", 1, 1, "=SUM(B:B)+SUM(4:5)"},
		{"=SUM($A:A)+SUM($3:4)", 1, 1, "=SUM($A:B)+SUM($3:5)"},
		{`="A1"&A1`, 1, 0, `="A1"&A2`},
		{"=A1", -1, 0, "=#REF!"},
		{"=SUM(A1:A5)", 0, -1, "=SUM(#REF!)"},
		{"=$A$1", -5, -5, "=$A$1"},
		{"=LOG10(A1)", 1, 0, "=LOG10(A2)"},
		{"=Sheet2!A1+'It''s'!B1", 0, 1, "=Sheet2!B1+'It''s'!C1"},
		{"=A1048576", 1, 0, "=#REF!"},
		{"=XFD1", 0, 1, "=#REF!"},
		{"=IFERROR(A1,#N/A)+TRUE", 1, 0, "=IFERROR(A2,#N/A)+TRUE"},
		{"=1E+3+A1", 1, 0, "=1E+3+A2"},
		{"=A1", 0, 0, "=A1"},
		{"=IF(#n/a,\nA1)", 1, 0, "=IF(#n/a,\nA2)"},
		{"=SUM(B2:", 1, 1, "=SUM(B2:"}, // does not parse: unchanged
		{"not a formula", 1, 1, "not a formula"},
	}
	for _, c := range cases {
		if got := Shift(c.src, c.dr, c.dc); got != c.want {
			t.Errorf("Shift(%q, %d, %d) = %q, want %q", c.src, c.dr, c.dc, got, c.want)
		}
	}
	// The shifted formula reads the shifted cells.
	f, err := Parse(Shift("=SUM(A1:A2)+$C$1", 2, 0))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Eval(newCtx(), 0, 0); got != 17.0 {
		t.Errorf("shifted formula = %v, want 17", got)
	}
}

func TestFunctions(t *testing.T) {
	names := Functions()
	if !sort.StringsAreSorted(names) {
		t.Error("Functions() is not sorted")
	}
	required := strings.Fields(`SUM AVERAGE COUNT COUNTA COUNTBLANK MIN MAX MEDIAN PRODUCT ROUND ROUNDUP
		ROUNDDOWN INT TRUNC CEILING FLOOR ABS POWER SQRT MOD EXP LN LOG LOG10 PI SIGN RAND RANDBETWEEN IF
		IFS IFERROR IFNA AND OR NOT XOR SWITCH CHOOSE SUMIF SUMIFS COUNTIF COUNTIFS AVERAGEIF AVERAGEIFS
		SUMPRODUCT VLOOKUP HLOOKUP XLOOKUP INDEX MATCH ROW COLUMN ROWS COLUMNS CONCAT CONCATENATE TEXTJOIN
		LEFT RIGHT MID LEN TRIM UPPER LOWER PROPER SUBSTITUTE REPLACE FIND SEARCH REPT EXACT TEXT VALUE
		ISBLANK ISNUMBER ISTEXT ISERROR ISNA NA DATE TODAY NOW YEAR MONTH DAY WEEKDAY EDATE EOMONTH DAYS
		DATEDIF HOUR MINUTE SECOND TIME LARGE SMALL RANK STDEV VAR`)
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	for _, n := range required {
		if !have[n] {
			t.Errorf("function %s is missing", n)
		}
	}
}

// bigCtx claims a huge used extent, to check the bounds on one evaluation.
type bigCtx struct{ mapCtx }

func (bigCtx) Size(string) (int, int, bool)        { return MaxRow + 1, MaxCol + 1, true }
func (bigCtx) Cell(string, int, int) (Value, bool) { return 1.0, true }

func TestEvalBounds(t *testing.T) {
	ctx := &bigCtx{}
	for src, want := range map[string]Value{
		"=SUM(A:A)":                        float64(MaxRow + 1), // a million cells is fine
		"=SUM(A:Z)":                        ErrNum,              // 27 million cells: over the bound
		"=SUMPRODUCT(A:A,B:B)":             float64(MaxRow + 1),
		"=SUMPRODUCT(A:A,B:B,C:C,D:D,E:E)": ErrNum, // arrays over the bound
		"=SUM(1:1)":                        float64(MaxCol + 1),
		"=COUNTIF(A:Z,1)":                  ErrNum,
	} {
		f, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Eval(ctx, 0, 0); got != want {
			t.Errorf("%s = %#v, want %#v", src, got, want)
		}
	}
}

func TestConcurrentEval(t *testing.T) {
	f, err := Parse(`=SUM(A1:C5)+COUNTIF(B1:B5,"*a*")`)
	if err != nil {
		t.Fatal(err)
	}
	ctx := newCtx()
	var wg sync.WaitGroup
	results := make([]Value, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = f.Eval(ctx, 0, 0)
		}()
	}
	wg.Wait()
	for _, r := range results {
		if r != 167.0 {
			t.Errorf("concurrent Eval = %v, want 167", r)
		}
	}
}

type badCtx struct{ mapCtx }

func (badCtx) Cell(string, int, int) (Value, bool) { return struct{}{}, true }
func (badCtx) Size(string) (int, int, bool)        { return 3, 3, true }

func TestOddContextValues(t *testing.T) {
	f, _ := Parse("=A1+1")
	if got := f.Eval(&badCtx{}, 0, 0); got != ErrValue {
		t.Errorf("a value of an unknown type = %#v, want #VALUE!", got)
	}
	ctx := newCtx()
	ctx.sheets["Sheet1"]["F1"] = 7 // an int
	if got := evalStr(t, ctx, "=F1*2"); got != 14.0 {
		t.Errorf("an int cell = %#v, want 14", got)
	}
}

func TestSignificant(t *testing.T) {
	for _, c := range [][2]float64{
		{300.5 * 1.2, 360.6}, {0.1 + 0.2, 0.3}, {1.0 / 3, 0.333333333333333}, {123456789012345678, 123456789012346000},
		{-2.5e-300 * 1.0000000000000002, -2.5e-300}, {0, 0}, {42, 42},
	} {
		if got := Significant(c[0]); got != c[1] {
			t.Errorf("Significant(%v) = %v, want %v", c[0], got, c[1])
		}
	}
	if got := Significant(math.Inf(1)); !math.IsInf(got, 1) {
		t.Errorf("Significant(+Inf) = %v", got)
	}
}

// The scaled rounding agrees with formatting to 15 digits and parsing,
// near-ties at the 15th digit (6.379175377052815e-06) included.
func TestSignificantAgreesWithStrconv(t *testing.T) {
	seed := uint64(1)
	for i := 0; i < 400_000; i++ {
		seed = seed*6364136223846793005 + 1442695040888963407
		n := math.Float64frombits(seed>>1 | 0x3000000000000000) // magnitudes near 1e-77..1e77
		switch i % 4 {
		case 0:
			n = float64(int64(seed>>20)) / 1000
		case 1:
			n = 6.379175377052815e-06 * (1 + float64(i)*1e-16)
		}
		if math.IsNaN(n) || math.IsInf(n, 0) {
			continue
		}
		want, _ := strconv.ParseFloat(strconv.FormatFloat(n, 'g', 15, 64), 64)
		if got := Significant(n); got != want {
			t.Fatalf("Significant(%v) = %v, strconv gives %v", n, got, want)
		}
	}
}

func BenchmarkSignificant(b *testing.B) {
	n := 360.59999999999997
	for b.Loop() {
		n = Significant(n) + 1e-13
	}
}
