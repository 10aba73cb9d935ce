package docgen

import (
	"encoding/json"
	"fmt"
	"strings"

	"foundry/internal/api"
)

// RoutesTable renders the REST routes as api.Routes() serves them, in its
// order: method, path, who may call it (from the route's access and scope)
// and what it does (the summary of its operation in the OpenAPI document).
func RoutesTable() (string, error) {
	var doc struct {
		// A path item holds its operations by method, besides other
		// members (parameters) that are not operations.
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(api.OpenAPI, &doc); err != nil {
		return "", fmt.Errorf("reading the OpenAPI document: %w", err)
	}
	var b strings.Builder
	b.WriteString("| Method | Path | Who may call it | What it does |\n|---|---|---|---|\n")
	for _, r := range api.Routes() {
		var op struct {
			Summary string `json:"summary"`
		}
		raw, ok := doc.Paths[r.Path][strings.ToLower(r.Method)]
		if !ok {
			return "", fmt.Errorf("%s %s is served but has no operation in the OpenAPI document", r.Method, r.Path)
		}
		if err := json.Unmarshal(raw, &op); err != nil {
			return "", fmt.Errorf("the OpenAPI operation of %s %s: %w", r.Method, r.Path, err)
		}
		who, err := routeAccess(r)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", r.Method, r.Path, who, cell(op.Summary))
	}
	return b.String(), nil
}

func routeAccess(r api.Route) (string, error) {
	switch r.Access {
	case api.AccessPublic:
		return "anyone", nil
	case api.AccessSession:
		return "a person (session)", nil
	case api.AccessSessionOrToken:
		if r.Scope == "" {
			return "", fmt.Errorf("%s %s takes a token but names no scope", r.Method, r.Path)
		}
		return "a person, or a token with `" + r.Scope + "`", nil
	}
	return "", fmt.Errorf("%s %s: unknown access %q", r.Method, r.Path, r.Access)
}
