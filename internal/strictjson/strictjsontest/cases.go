// Package strictjsontest is the table of bodies that every door reading
// client JSON through strictjson must refuse alike: each door's tests send
// them and expect the same code and field.
package strictjsontest

// Case is one JSON object, as a REST body or a tool's arguments, that is
// refused with code invalid_argument naming Field.
type Case struct {
	What  string
	Body  string
	Field string
	// Raw: the body holds a raw control character, which makes any message
	// that carries it invalid JSON: inside a JSON-RPC message it is refused
	// as a malformed message before any tool reads it.
	Raw bool
}

// Cases are the shared refusals.
var Cases = []Case{
	{What: "an escaped NUL", Body: `{"title":"a\u0000b"}`, Field: "title"},
	{What: "a raw NUL", Body: "{\"title\":\"a\x00b\"}", Field: "title", Raw: true},
	{What: "a raw control character", Body: "{\"title\":\"a\tb\"}", Field: "title", Raw: true},
	{What: "a lone high surrogate", Body: `{"title":"\ud800"}`, Field: "title"},
	{What: "a lone low surrogate", Body: `{"title":"x\udc00y"}`, Field: "title"},
	{What: "a reversed pair", Body: `{"title":"\udc00\ud800"}`, Field: "title"},
	{What: "invalid UTF-8", Body: "{\"title\":\"\xff\"}", Field: "title"},
	{What: "a surrogate in UTF-8 bytes (CESU-8)", Body: "{\"title\":\"\xed\xa0\x80\"}", Field: "title"},
	{What: "a NUL in a cell", Body: `{"values":[["a","b","\u0000"]]}`, Field: "values[0][2]"},
	{What: "a surrogate in a slide", Body: `{"slides":[{"title":"a"},{"body":"\ud800"}]}`, Field: "slides[1].body"},
	{What: "a property twice", Body: `{"title":"a","title":"b"}`, Field: "title"},
	{What: "a property twice, once escaped", Body: `{"title":"a","t\u0069tle":"b"}`, Field: "title"},
	{What: "a property twice in a nested object", Body: `{"slides":[{"body":"a","body":"b"}]}`, Field: "slides[0].body"},
	{What: "a lone surrogate in a property name", Body: `{"files":{"src/\udfff.tsx":"x"}}`, Field: "files.src/\ufffd.tsx"},
	{What: "invalid UTF-8 in a property name", Body: "{\"files\":{\"a\xffb\":\"x\"}}", Field: "files.a\ufffdb"},
	{What: "a NUL in a property name", Body: `{"files":{"a\u0000":"x"}}`, Field: "files.a\u0000"},
}
