package api

import (
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"foundry/internal/problem"
	"foundry/internal/service"
)

// A route's request is one Go struct, which is both what the handler
// decodes and what the OpenAPI document is generated from: fields tagged
// path:"x" are path parameters, query:"x" query parameters, header:"X"
// headers (all also json:"-"; a []string query parameter may be repeated),
// and the fields with a json name form the JSON body. required:"true" marks what must be given; missing:"…" says
// what to give when it is not.

// doc is what the OpenAPI document says of a route beyond its method,
// path and access.
type doc struct {
	summary string
	req     any // the request (nil: none)
	resp    any // the success answer's JSON body (nil: none)
	status  int // the success status (0: 200, or 204 without resp)
	// media, when set, is the success answer's media type instead of JSON
	// (a file's bytes, an event stream).
	media string
	// rawBody, when set, is the request body's media type (a file's bytes),
	// instead of JSON.
	rawBody string
	// write: the route takes a precondition, and may answer 409, 412, 428.
	write bool
	// description says more than the summary (what a stream sends).
	description string
}

// bind fills a new T from r: its path, query and header parameters, and
// its JSON body when T has one (an absent body is {} when optional). A
// query parameter T does not take, or one given twice, is refused by name,
// as is a required field that is missing.
func bind[T any](r *http.Request, optional bool) (*T, error) {
	v := new(T)
	rv := reflect.ValueOf(v).Elem()
	fields := paramFields(rv.Type())
	q := r.URL.Query()
	var takes, repeats []string
	for _, f := range fields {
		if f.in == "query" {
			takes = append(takes, f.name)
			if f.kind == reflect.Slice {
				repeats = append(repeats, f.name)
			}
		}
	}
	for k, vs := range q {
		if !slices.Contains(takes, k) {
			what := "takes no query parameters"
			if len(takes) > 0 {
				what = "takes " + strings.Join(takes, ", ")
			}
			return nil, problem.New(problem.Invalid, k, "is not a parameter of %s %s, which %s", r.Method, routeOf(r), what)
		}
		if len(vs) > 1 && !slices.Contains(repeats, k) {
			return nil, problem.New(problem.Invalid, k, "is given %d times: give it once", len(vs))
		}
	}
	for _, f := range fields {
		var raw string
		var given bool
		switch f.in {
		case "path":
			raw = r.PathValue(f.name)
			given = true
			if err := checkPathID(f.name, raw); err != nil && f.kind == reflect.String {
				return nil, err
			}
		case "query":
			_, given = q[f.name]
			raw = q.Get(f.name)
			if f.kind == reflect.Slice && given {
				// A repeatable parameter (?topic=a&topic=b) takes every value.
				rv.FieldByIndex(f.index).Set(reflect.ValueOf(slices.Clone(q[f.name])))
				continue
			}
		case "header":
			vs := r.Header.Values(f.name)
			given = len(vs) > 0
			raw = strings.TrimSpace(strings.Join(vs, ","))
		}
		if !given {
			continue
		}
		if err := setParam(rv.FieldByIndex(f.index), f.name, raw); err != nil {
			return nil, err
		}
	}
	if hasBody(rv.Type()) {
		if err := decodeBody(r, v, optional); err != nil {
			return nil, err
		}
		if err := checkRequired(rv); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// routeOf is the route template r was matched by (its path when unknown).
func routeOf(r *http.Request) string {
	if r.Pattern != "" {
		if _, p, ok := strings.Cut(r.Pattern, " "); ok {
			return p
		}
		return r.Pattern
	}
	return r.URL.Path
}

type paramField struct {
	in, name string
	index    []int
	kind     reflect.Kind
}

func paramFields(t reflect.Type) []paramField {
	var out []paramField
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous {
			continue
		}
		for _, in := range []string{"path", "query", "header"} {
			if name := f.Tag.Get(in); name != "" {
				k := f.Type.Kind()
				if k == reflect.Pointer {
					k = f.Type.Elem().Kind()
				}
				out = append(out, paramField{in: in, name: name, index: f.Index, kind: k})
			}
		}
	}
	return out
}

func hasBody(t reflect.Type) bool {
	for _, f := range reflect.VisibleFields(t) {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); f.IsExported() && !f.Anonymous && name != "-" && name != "" {
			return true
		}
	}
	return false
}

// setParam parses raw into v (a string, a whole number or a boolean, or a
// pointer to one).
func setParam(v reflect.Value, name, raw string) error {
	if v.Kind() == reflect.Pointer {
		v.Set(reflect.New(v.Type().Elem()))
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(raw)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || len(raw) > 19 {
			return problem.New(problem.Invalid, name, "must be a whole number; got %q", problem.Excerpt(raw))
		}
		v.SetInt(n)
	case reflect.Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return problem.New(problem.Invalid, name, "must be true or false; got %q", problem.Excerpt(raw))
		}
		v.SetBool(b)
	}
	return nil
}

// checkRequired refuses a required body field that is absent.
func checkRequired(rv reflect.Value) error {
	for _, f := range reflect.VisibleFields(rv.Type()) {
		if f.Tag.Get("required") != "true" || f.Anonymous {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		fv := rv.FieldByIndex(f.Index)
		if fv.Kind() == reflect.Pointer || fv.Kind() == reflect.Slice || fv.Kind() == reflect.Map {
			if fv.IsNil() {
				msg := "is required"
				if m := f.Tag.Get("missing"); m != "" {
					msg += ": " + m
				}
				return problem.New(problem.Invalid, name, "%s", msg)
			}
		}
	}
	return nil
}

// checkPathID refuses a path parameter no Foundry ID can be.
func checkPathID(name, id string) error {
	if id == "" {
		return problem.New(problem.Invalid, name, "is empty: give the ID Foundry returned")
	}
	if len(id) > service.MaxIDBytes {
		return problem.New(problem.Invalid, name, "is %d bytes long, which no Foundry ID is (at most %d)", len(id), service.MaxIDBytes)
	}
	return nil
}

// noParams refuses any query parameter of a route that takes none.
func (h *handler) noParams(w http.ResponseWriter, r *http.Request) bool {
	if _, err := bind[struct{}](r, true); err != nil {
		h.fail(w, r, err)
		return false
	}
	return true
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func invalid(field, msg string, args ...any) error {
	return problem.New(problem.Invalid, field, msg, args...)
}
