package main

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The CLI is a door of its own: it calls the service's use cases, never
// another door's package (the REST handlers, the MCP tools). It starts the
// server, which mounts the doors, through package server alone.
func TestCLIImportsNoDoor(t *testing.T) {
	doors := []string{"foundry/internal/api", "foundry/internal/mcpserver"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			seen++
			for _, d := range doors {
				if path == d || strings.HasPrefix(path, d+"/") {
					t.Errorf("%s imports %s, a door: call the service's use case instead", name, path)
				}
			}
		}
	}
	if seen == 0 {
		t.Fatal("no imports read")
	}
}
