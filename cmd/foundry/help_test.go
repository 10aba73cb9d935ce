package main

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// helpFlags are the flags a help text lists (lines "  --name …").
func helpFlags(help string) []string {
	var out []string
	for _, line := range strings.Split(help, "\n") {
		if strings.HasPrefix(line, "  -") {
			out = append(out, strings.TrimLeft(strings.Fields(line)[0], "-"))
		}
	}
	slices.Sort(out)
	return out
}

// ownFlags are the flags command c registers.
func ownFlags(c command) []string {
	fs := flag.NewFlagSet(c.path, flag.ContinueOnError)
	c.flags(fs)
	var out []string
	fs.VisitAll(func(f *flag.Flag) { out = append(out, f.Name) })
	slices.Sort(out)
	return out
}

// TestEveryHelp runs --help (and -h, and "foundry help …") of every command
// and subcommand of the commands table, and of every group: each exits 0,
// prints to stdout, names the command, and lists exactly that command's
// flags, none of the others', with no stray backquotes.
func TestEveryHelp(t *testing.T) {
	if len(commands) < 20 {
		t.Fatalf("the commands table has %d entries", len(commands))
	}
	for _, c := range commands {
		want := ownFlags(c)
		words := strings.Fields(c.path)
		forms := [][]string{
			append(slices.Clone(words), "--help"),
			append(slices.Clone(words), "-h"),
			append(slices.Clone(words), "-help"),
			append([]string{"help"}, words...),
		}
		if slices.Contains(want, "data") {
			forms = append(forms, append(slices.Clone(words), "--data", "x", "--help")) // after other flags
		}
		for _, form := range forms {
			code, stdout, stderr := runInProcess(t, form...)
			if code != 0 || stderr != "" {
				t.Errorf("foundry %s: exit %d, stderr %q; want 0 and help on stdout", strings.Join(form, " "), code, stderr)
				continue
			}
			if !strings.Contains(stdout, "usage: foundry "+c.path) {
				t.Errorf("foundry %s does not name the command:\n%s", strings.Join(form, " "), stdout)
			}
			if got := helpFlags(stdout); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Errorf("foundry %s lists flags %v, want exactly %v", strings.Join(form, " "), got, want)
			}
			if strings.Contains(stdout, "`") {
				t.Errorf("foundry %s help has a backquote:\n%s", strings.Join(form, " "), stdout)
			}
		}
		fs := flag.NewFlagSet(c.path, flag.ContinueOnError)
		c.flags(fs)
		fs.VisitAll(func(f *flag.Flag) {
			if strings.Contains(f.Usage, "`") {
				t.Errorf("%s --%s: usage %q has a backquote (flag would take it for the value's name)", c.path, f.Name, f.Usage)
			}
		})
	}
	for _, g := range groups() {
		for _, h := range []string{"--help", "-h", "help"} {
			code, stdout, stderr := runInProcess(t, g, h)
			if code != 0 || stderr != "" || !strings.Contains(stdout, "usage: foundry "+g) {
				t.Errorf("foundry %s %s: exit %d, stderr %q, stdout %q", g, h, code, stderr, stdout)
			}
			for _, c := range subcommands(g) {
				if !strings.Contains(stdout, c.path) {
					t.Errorf("foundry %s %s does not list %s", g, h, c.path)
				}
			}
			for _, other := range groups() {
				if other != g && strings.Contains(stdout, "  "+other+" ") {
					t.Errorf("foundry %s %s lists %s's subcommands:\n%s", g, h, other, stdout)
				}
			}
		}
		// No subcommand is a usage error (exit 2), with the group's help.
		if code, _, stderr := runInProcess(t, g); code != 2 || !strings.Contains(stderr, "usage: foundry "+g) {
			t.Errorf("foundry %s: exit %d, %q", g, code, stderr)
		}
		if code, _, stderr := runInProcess(t, g, "bogus"); code != 2 || !strings.Contains(stderr, `unknown subcommand "bogus"`) {
			t.Errorf("foundry %s bogus: exit %d, %q", g, code, stderr)
		}
	}
	for _, h := range []string{"--help", "-h", "help"} {
		code, stdout, _ := runInProcess(t, h)
		if code != 0 {
			t.Errorf("foundry %s: exit %d", h, code)
		}
		for _, c := range commands {
			if !strings.Contains(stdout, "  "+c.path) {
				t.Errorf("foundry %s does not list %s", h, c.path)
			}
		}
	}
	// A flag a command does not take is a usage error naming it.
	code, _, stderr := runInProcess(t, "notes", "approve", "note_x", "--title", "t")
	if code != 2 || !strings.Contains(stderr, "-title") {
		t.Errorf("notes approve --title: exit %d, %q", code, stderr)
	}
	code, _, stderr = runInProcess(t, "proposals", "show")
	if code != 2 || !strings.Contains(stderr, "needs PROPOSAL_ID") {
		t.Errorf("proposals show without an ID: exit %d, %q", code, stderr)
	}
}

// TestCLICallsTheService: the commands only parse flags, call the server's
// assembly and the service's use cases, and print; they never reach into
// the store themselves.
func TestCLICallsTheService(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range file.Imports {
			if p := strings.Trim(imp.Path.Value, `"`); p == "foundry/internal/store" || strings.HasPrefix(p, "foundry/internal/store/") {
				t.Errorf("%s imports %s: commands go through internal/service", f, p)
			}
		}
		ast.Inspect(file, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if inner, ok := sel.X.(*ast.SelectorExpr); ok && inner.Sel.Name == "Store" {
					t.Errorf("%s calls %s.Store.%s: use a service use case", f, exprName(inner.X), sel.Sel.Name)
				}
			}
			return true
		})
	}
}

func exprName(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return "…"
}
