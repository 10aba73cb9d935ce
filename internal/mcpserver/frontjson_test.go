package mcpserver

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// frontSeeds are messages the front meets, well-formed or not.
var frontSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"name":"read_note_tab","arguments":{"note_id":"n1","tab_id":"markdown"},` + newMeta + `}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"edit_note_tab","arguments":{"values":[[1,2.5e3,-0,"x",null,true,false]],"data":{"a":{"b":[{}]}}}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{` + newMeta + `,"notifications":{"resourceSubscriptions":["foundry://notes/n1"]}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"cursor":"c\u0031"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools\/list","extra":{"a":1,"A":2}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[1]}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":"x"}`,
	`{"jsonrpc":2,"id":null,"method":null}`,
	`{"jsonrpc":"2.0","method":["tools/list"]}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/list","id":2}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/list","meth\u006fd":"x"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","Name":"y"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"limit":1,"LIMIT":2}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"data":{"a":{"b":1,"b":2}}}}}`,
	`{"a":{"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k18":18,"k19":19,"k20":20,"k21":21,"k22":22,"k23":23,"k24":24,"k25":25,"k26":26,"k27":27,"k28":28,"k29":29,"k30":30,"k31":31,"k32":32,"k33":33,"k34":34,"k3":0}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/list"} {"x":1}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/list"}x`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/list"}  ` + "\n",
	`[{"jsonrpc":"2.0"}]`,
	` "x"`,
	``,
	"{\"a\":\"\xff\"}",
	`{"a":"\ud800","\ud800":1,"\ufffd":2}`,
	`{"a":"\x"}`,
	"{\"a\":\"\t\"}",
	`{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":1e}`, `{"a":.5}`, `{"a":tru}`, `{"a":nul}`, `{"a":truex}`,
	`{"a":1,}`, `{"a":[1,]}`, `{"a":[}`, `{"a" 1}`, `{1:2}`, `{"a":1 "b":2}`, `{"a":[1 2]}`, `{"a":]}`,
	`{"a":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}`,
	`{"a":` + strings.Repeat("[", 998) + strings.Repeat("]", 998) + `}`,
	`{"a":` + strings.Repeat("[", 999) + "1" + strings.Repeat("]", 999) + `}`,
	`{"a":` + strings.Repeat("[", 999) + `{"b" 1}` + strings.Repeat("]", 999) + `}`,
	`{"a":` + strings.Repeat("[", 999) + `{"b":1}` + strings.Repeat("]", 999) + `}`,
	`{"a":` + strings.Repeat("[", 1000) + `}`,
	`{"a":` + strings.Repeat(`{"a":`, 999) + "1" + strings.Repeat("}", 999) + `}`,
	`{"a":` + strings.Repeat(`{"a":`, 1000) + "1" + strings.Repeat("}", 1000) + `}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k18":18,"k19":19,"k20":20,"k21":21,"k22":22,"k23":23,"k24":24,"k25":25,"k26":26,"k27":27,"k28":28,"k29":29,"k30":30,"k31":31,"k32":32,"k33":33,"k34":34,"k35":35,"k36":36,"k37":37,"k38":38,"k39":39}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k18":18,"k19":19,"k20":20,"k21":21,"k22":22,"k23":23,"k24":24,"k25":25,"k26":26,"k27":27,"k28":28,"k29":29,"k30":30,"k31":31,"k32":32,"k33":33,"k34":34,"k35":35,"k36":36,"k37":37,"k38":38,"k39":39,"K39":1}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k18":18,"k19":19,"k20":20,"k21":21,"k22":22,"k23":23,"k24":24,"k25":25,"k26":26,"k27":27,"k28":28,"k29":29,"k30":30,"k31":31,"k32":32,"k33":33,"k34":34,"k35":35,"k36":36,"k37":37,"k38":38,"k39":39,"k39":1}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k18":18,"k19":19,"k20":20,"k21":21,"k22":22,"k23":23,"k24":24,"k25":25,"k26":26,"k27":27,"k28":28,"k29":29,"k30":30,"k31":31,"k32":32,"k33":33,"k34":34,"k35":35,"k36":36,"k37":37,"k38":38,"k39":39,"K5":1}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"K":1,"k":2}}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"ſ":1,"s":2}}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"Ä":1,"ä":2}}`,
}

// checkFront holds parseMessage to the reading it replaced: the same
// refusal, or the same peek.
func checkFront(t *testing.T, body []byte) {
	t.Helper()
	want, werr := refParseMessage(body)
	got, gerr := parseMessage(body)
	var wp, gp *parseError
	errors.As(werr, &wp)
	errors.As(gerr, &gp)
	if (werr == nil) != (gerr == nil) || (wp != nil) != (gp != nil) || (wp != nil && *wp != *gp) {
		t.Fatalf("%.300q:\nscanner %v\ndecoder %v", body, gerr, werr)
	}
	if werr != nil {
		return
	}
	got.Meta() // decoded when asked for; the reference decodes it at once
	want.Params.metaRead = true
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("%.300q:\nscanner %+v\ndecoder %+v", body, got, want)
	}
}

func TestFrontScannerReadsAsTheDecoder(t *testing.T) {
	for _, b := range frontSeeds {
		checkFront(t, []byte(b))
	}
}

func FuzzFrontScanner(f *testing.F) {
	for _, b := range frontSeeds {
		if len(b) < 4096 {
			f.Add([]byte(b))
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkFront(t, body) })
}
