package store

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"testing"
)

// TestTokenCacheForwardsEveryMethod: the wrapper embeds nothing (so no
// method of the store under it can be reached, or hidden, except by the
// wrapper's own methods), and each method of Store is a method of the
// wrapper that calls the same method of the store under it with its own
// arguments, in order.
func TestTokenCacheForwardsEveryMethod(t *testing.T) {
	typ := reflect.TypeFor[tokenCache]()
	for i := range typ.NumField() {
		if f := typ.Field(i); f.Anonymous {
			t.Errorf("tokenCache embeds %s: a method it does not forward would be the embedded one's", f.Type)
		}
	}

	fs := token.NewFileSet()
	file, err := parser.ParseFile(fs, "tokencache.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	decls := map[string]*ast.FuncDecl{}
	for _, d := range file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 {
			continue
		}
		if star, ok := fn.Recv.List[0].Type.(*ast.StarExpr); ok {
			if id, ok := star.X.(*ast.Ident); ok && id.Name == "tokenCache" {
				decls[fn.Name.Name] = fn
			}
		}
	}
	iface := reflect.TypeFor[Store]()
	for i := range iface.NumMethod() {
		name := iface.Method(i).Name
		fn, ok := decls[name]
		if !ok {
			t.Errorf("tokenCache has no method %s of its own", name)
			continue
		}
		if !forwards(fn) {
			t.Errorf("tokenCache.%s does not call %s of the store under it with its arguments in order", name, name)
		}
	}
}

// forwards reports whether fn's body calls <recv>.s.<fn's name> with fn's
// parameters, in order.
func forwards(fn *ast.FuncDecl) bool {
	recv := fn.Recv.List[0].Names[0].Name
	var params []string
	for _, p := range fn.Type.Params.List {
		for _, n := range p.Names {
			params = append(params, n.Name)
		}
	}
	found := false
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != len(params) {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != fn.Name.Name {
			return true
		}
		inner, ok := sel.X.(*ast.SelectorExpr)
		if !ok || inner.Sel.Name != "s" {
			return true
		}
		if id, ok := inner.X.(*ast.Ident); !ok || id.Name != recv {
			return true
		}
		for i, a := range call.Args {
			if id, ok := a.(*ast.Ident); !ok || id.Name != params[i] {
				return true
			}
		}
		found = true
		return false
	})
	return found
}
