package mcpserver

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// Input schemas are Go values built from these pieces, bounds and all, so
// the published contract reads in the tool's own file and in the snapshots.

type props = map[string]*jsonschema.Schema

// object is a closed object: properties other than props are refused.
func object(required []string, p props) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}, Required: required, Properties: p}
}

// str is a string of minLen..maxLen characters (0: no bound).
func str(minLen, maxLen int) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "string"}
	if minLen > 0 {
		s.MinLength = &minLen
	}
	if maxLen > 0 {
		s.MaxLength = &maxLen
	}
	return s
}

// integer is an integer of at least lo, and at most hi[0] when given.
func integer(lo float64, hi ...float64) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "integer", Minimum: &lo}
	if len(hi) > 0 {
		s.Maximum = &hi[0]
	}
	return s
}

// array is an array of items, with minItems/maxItems when > 0.
func array(items *jsonschema.Schema, minItems, maxItems int) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "array", Items: items}
	if minItems > 0 {
		s.MinItems = &minItems
	}
	if maxItems > 0 {
		s.MaxItems = &maxItems
	}
	return s
}

// enum is one of vals.
func enum(vals ...any) *jsonschema.Schema { return &jsonschema.Schema{Enum: vals} }

func ref(def string) *jsonschema.Schema { return &jsonschema.Schema{Ref: "#/$defs/" + def} }

// The fields many tools share.
func noteIDField() *jsonschema.Schema   { return str(1, 64) }
func roomIDField() *jsonschema.Schema   { return str(1, 64) }
func tabIDField() *jsonschema.Schema    { return str(1, 100) }
func expectedField() *jsonschema.Schema { return integer(1) }
func keyField() *jsonschema.Schema      { return str(8, 128) }
func cursorField() *jsonschema.Schema   { return str(0, 200) }
func limitField() *jsonschema.Schema    { return integer(1, 50) }

// dependsField is depends_on: tab IDs. Its bounds are the service's (each
// a tab of the Note, named depends_on[i] when not), which tools/list, paid
// for in every client's context, does not repeat.
func dependsField() *jsonschema.Schema { return array(&jsonschema.Schema{Type: "string"}, 0, 0) }

// outputSchemaFor is the output schema of a result of type T, derived from
// T itself so it cannot drift from what the tool answers: its top-level
// fields named in keys (none: all of them) with their JSON types. A name
// that is not a field of T is a programming error. It stays shallow and
// names the fields an agent's next call needs: tools/list is paid for in
// every client's context, and the rest is in the result and the README.
// It never says more than is always true (no required, no closed objects):
// a client validates results against it, and an error result carries
// error, field and message instead.
func outputSchemaFor[T any](keys []string) *jsonschema.Schema {
	all := props{}
	addFields(all, reflect.TypeFor[T]())
	s := &jsonschema.Schema{Type: "object", Properties: all}
	if keys == nil {
		return s
	}
	s.Properties = props{}
	for _, k := range keys {
		f, ok := all[k]
		if !ok {
			panic(fmt.Sprintf("output schema: %s has no field %q", reflect.TypeFor[T](), k))
		}
		s.Properties[k] = f
	}
	return s
}

func addFields(p props, t reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		if f.Anonymous && name == "" {
			addFields(p, f.Type) // embedded: its fields are the result's
			continue
		}
		if name == "" {
			name = f.Name
		}
		p[name] = &jsonschema.Schema{Type: jsonType(f.Type)}
	}
}

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

// jsonType is the JSON type Go's encoder writes for t ("" if it varies).
func jsonType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType:
		return "string"
	case t == rawType:
		return ""
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return ""
}

// stringMap is an object of string values (a snippet's path → source).
func stringMap() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", AdditionalProperties: &jsonschema.Schema{Type: "string"}}
}
