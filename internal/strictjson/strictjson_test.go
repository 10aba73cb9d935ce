package strictjson_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"foundry/internal/problem"
	"foundry/internal/strictjson"
	"foundry/internal/strictjson/strictjsontest"
)

// TestSharedRefusals: every body of the shared table is refused with
// invalid_argument naming its field, by Check and by Decode alike.
func TestSharedRefusals(t *testing.T) {
	for _, c := range strictjsontest.Cases {
		for name, err := range map[string]error{
			"Check":  strictjson.Check([]byte(c.Body), "body"),
			"Decode": decodeErr(c.Body),
		} {
			var p *problem.Problem
			if !errors.As(err, &p) || p.Code != problem.Invalid || p.Field != c.Field {
				t.Errorf("%s: %s %q: got %v, want invalid_argument on %q", c.What, name, c.Body, err, c.Field)
				continue
			}
			// The wording is the package's: no door's vocabulary.
			for _, w := range []string{"header", "/api", "/mcp", "tool", "argument"} {
				if strings.Contains(strings.ToLower(p.Message), w) {
					t.Errorf("%s: the message names %q: %s", c.What, w, p.Message)
				}
			}
		}
	}
}

func decodeErr(body string) error {
	_, _, err := strictjson.Decode([]byte(body), "body", 0, &strictjson.Hooks[int]{})
	return err
}

func TestRootAndFirstRefusal(t *testing.T) {
	for _, c := range []struct{ in, field string }{
		{`"\ud800"`, "arguments"},
		{`["ok","\u0000"]`, "[1]"},
		{`{"a":{"b":[{"c":"x","c":"y"}]}}`, "a.b[0].c"},
		// The first refusal in the text is the one named.
		{`{"b":"\u0000","a":1,"a":2}`, "b"},
		{`{"a":1,"a":"\u0000"}`, "a"},
		// Past the point where the duplicate check moves to a map.
		{`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k3":0}`, "k3"},
		{`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k17":0}`, "k17"},
		{`{"` + strings.Repeat("k", 300) + `":1,"` + strings.Repeat("k", 300) + `":2}`, strings.Repeat("k", problem.ExcerptRunes) + "…"},
		{strings.Repeat("[", strictjson.MaxDepth+1) + strings.Repeat("]", strictjson.MaxDepth+1), problem.Excerpt(strings.Repeat("[0]", strictjson.MaxDepth))},
	} {
		err := strictjson.Check([]byte(c.in), "arguments")
		var p *problem.Problem
		if !errors.As(err, &p) || p.Field != c.field {
			t.Errorf("%.80q: got %.200v, want a refusal on %.80q", c.in, err, c.field)
		}
	}
}

// TestAcceptsWhatMeansOneThing: what every reader reads alike passes, and
// Decode gives what json.Unmarshal gives.
func TestAcceptsWhatMeansOneThing(t *testing.T) {
	for _, in := range []string{
		`{}`, `[]`, `""`, `0`, `-0.5e+3`, `true`, `null`,
		`{"a":"\ud83d\ude00","b":"😀","c":"\ufffd","d":"\u0001\u001f\t\n","e":"\\ud800"}`,
		`{"a":1,"A":2,"b":{"a":1},"c":[{"a":1},{"a":2}]}`,
		`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k18":{"k0":1}}`,
		" \t\r\n{\"a\" : [ 1 , 2 ] }\n",
		strings.Repeat("[", strictjson.MaxDepth) + strings.Repeat("]", strictjson.MaxDepth),
	} {
		if err := strictjson.Check([]byte(in), "body"); err != nil {
			t.Errorf("%.80q: refused %v", in, err)
			continue
		}
		got, out, err := strictjson.Decode([]byte(in), "body", 0, &strictjson.Hooks[int]{})
		var want any
		json.Unmarshal([]byte(in), &want)
		if err != nil || string(out) != in || !reflect.DeepEqual(got, want) {
			t.Errorf("%.80q: Decode %#v %v, json.Unmarshal %#v", in, got, err, want)
		}
	}
}

func TestSyntaxErrors(t *testing.T) {
	for _, in := range []string{``, ` `, `{`, `{"a":}`, `{"a":1,}`, `{"a" 1}`, `[1,]`, `{"a":1}{}`, `{"a":1} x`,
		`{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":1e}`, `{"a":.5}`, `{"a":tru}`, `{"a":"x}`, `{'a':1}`, `{"a":nul}`,
		`{"a":"\x"}`, `{"a":"\u12"}`, `{"a":"\u12g4"}`, `{1:2}`, `{"a":1 "b":2}`, `[1 2]`, `]`, `"\`} {
		err := strictjson.Check([]byte(in), "body")
		var se *strictjson.SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: got %v, want a syntax error", in, err)
		}
		if json.Valid([]byte(in)) {
			t.Errorf("%q: encoding/json takes it", in)
		}
	}
}

// TestHooks: a hook sees what its parent knew, refuses by path, and a
// rewritten number is rewritten in the text.
func TestHooks(t *testing.T) {
	hooks := &strictjson.Hooks[string]{
		Member:  func(parent, key string) string { return parent + "/" + key },
		Element: func(parent string) string { return parent + "/*" },
		String: func(at string, path *strictjson.Path, v string) *problem.Problem {
			if v == "bad" {
				return problem.New("custom", path.String(), "%s", at)
			}
			return nil
		},
		Number: func(at string, path *strictjson.Path, text string) (string, *problem.Problem) {
			if text == "10.0" {
				return "10", nil
			}
			return text, nil
		},
	}
	v, out, err := strictjson.Decode([]byte(`{"a":[10.0, 2], "b": 10.0}`), "args", "", hooks)
	if err != nil || string(out) != `{"a":[10, 2], "b": 10}` || !reflect.DeepEqual(v, map[string]any{"a": []any{10.0, 2.0}, "b": 10.0}) {
		t.Fatalf("rewrite: %#v %q %v", v, out, err)
	}
	_, _, err = strictjson.Decode([]byte(`{"a":[{"b":"ok"},{"b":"bad"}]}`), "args", "", hooks)
	var p *problem.Problem
	if !errors.As(err, &p) || p.Code != "custom" || p.Field != "a[1].b" || p.Message != "/a/*/b" {
		t.Fatalf("hook refusal: %v", err)
	}
}

// FuzzCheck: what Check accepts, encoding/json accepts and Decode reads
// exactly as json.Unmarshal; what encoding/json refuses as JSON, Check
// refuses; and a refusal names a path that is valid UTF-8.
func FuzzCheck(f *testing.F) {
	for _, c := range strictjsontest.Cases {
		f.Add([]byte(c.Body))
	}
	for _, s := range []string{`{"a":[1,{"b":null}],"c":"\u00e9\ud83d\ude00"}`, `[{"a":1},{"a":1}]`, `{"a":"\\u0000"}`, `-1.5e-7`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := strictjson.Check(data, "body")
		var p *problem.Problem
		var se *strictjson.SyntaxError
		switch {
		case err == nil:
			if !json.Valid(data) {
				t.Fatalf("%q: accepted, but encoding/json refuses it", data)
			}
			got, _, derr := strictjson.Decode(data, "body", 0, &strictjson.Hooks[int]{})
			var want any
			if uerr := json.Unmarshal(data, &want); uerr == nil && (derr != nil || !reflect.DeepEqual(got, want)) {
				t.Fatalf("%q: Decode %#v %v, json.Unmarshal %#v", data, got, derr, want)
			}
		case errors.As(err, &p):
			if p.Code != problem.Invalid || p.Field == "" || !utf8.ValidString(p.Field) {
				t.Fatalf("%q: refusal %v", data, err)
			}
		case errors.As(err, &se):
			if json.Valid(data) {
				t.Fatalf("%q: a syntax error at %d, but encoding/json takes it", data, se.Offset)
			}
		default:
			t.Fatalf("%q: %v", data, fmt.Sprintf("%T", err))
		}
	})
}
