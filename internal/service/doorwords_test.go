package service_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"foundry/internal/mcpserver"
)

// What the service and the domain tell a caller is in words no door owns:
// no HTTP header, no route, no MCP tool. Each door adds its own next step
// (mcpserver/wording.go, api/problem.go). This reads every message the
// service and the domain packages write — the text of every problem.New
// and every assignment to a problem's Message — and fails on any that
// names one.
func TestNoServiceMessageNamesADoor(t *testing.T) {
	t.Parallel()
	var tools []string
	for _, tl := range mcpserver.Tools(nil) {
		tools = append(tools, tl.Def.Name)
	}
	door := regexp.MustCompile(`(?i)\b(If-Match|Idempotency-Key|Idempotency-Replayed|X-CSRF-Token|Authorization|Content-Type|Last-Event-ID|ETag|WWW-Authenticate)\b|/api/|\b(GET|POST|PUT|PATCH|DELETE) /|\b(` + strings.Join(tools, "|") + `)\b`)
	fset := token.NewFileSet()
	checked := 0
	for _, dir := range []string{".", "../note", "../room", "../urlnorm", "../snippet"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			check := func(e ast.Expr) {
				ast.Inspect(e, func(n ast.Node) bool {
					lit, ok := n.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						return true
					}
					s, _ := strconv.Unquote(lit.Value)
					checked++
					if m := door.FindString(s); m != "" {
						t.Errorf("%s: a message names %q, a door's word: %s", fset.Position(lit.Pos()), m, s)
					}
					return true
				})
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.CallExpr:
					// problem.New(code, field, message, args...)
					if sel, ok := x.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "New" && len(x.Args) >= 3 {
						if id, ok := sel.X.(*ast.Ident); ok && id.Name == "problem" {
							for _, a := range x.Args[1:] {
								check(a)
							}
						}
					}
				case *ast.AssignStmt:
					for i, l := range x.Lhs {
						if sel, ok := l.(*ast.SelectorExpr); ok && sel.Sel.Name == "Message" && i < len(x.Rhs) {
							check(x.Rhs[i])
						}
					}
				}
				return true
			})
		}
	}
	if checked < 100 {
		t.Fatalf("only %d message texts were read; the scan is not finding the messages", checked)
	}
}
