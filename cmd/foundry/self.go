package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// self is how this program is typed to run it again, as it was started:
// "foundry" from PATH, "./foundry" or "/opt/foundry/bin/foundry" as typed,
// "go run ./cmd/foundry" when started by go run. Every command Foundry
// prints (next steps, hints in errors, usage) starts with it, so it runs as
// typed. main sets it; tests keep "foundry".
var self = "foundry"

// startedByGoRun: go run builds into $WORK/b001/exe/NAME (WORK a go-build
// folder in the temporary directory, removed on exit) or, since Go 1.24,
// runs the executable it caches in GOCACHE as XX/HASH-d/NAME. Neither is a
// path a person types.
var goRunExe = []*regexp.Regexp{
	regexp.MustCompile(`(^|/)go-build[0-9]*/b[0-9]+/exe/[^/]+$`),
	regexp.MustCompile(`(^|/)[0-9a-f]{2}/[0-9a-f]{32,}-d/[^/]+$`),
}

func startedByGoRun(arg0 string) bool {
	p := filepath.ToSlash(arg0)
	for _, re := range goRunExe {
		if re.MatchString(p) {
			return true
		}
	}
	return false
}

// invokedAs is self for a program started as arg0 (os.Args[0]).
func invokedAs(arg0 string) string {
	if arg0 == "" {
		return "foundry"
	}
	if startedByGoRun(arg0) {
		wd, _ := os.Getwd()
		return goRunCommand(wd)
	}
	// As typed: a bare name was found on PATH and is found again; a path
	// (relative or absolute) works again from the same folder.
	return shellQuote(arg0)
}

// goRunCommand is "go run PKG" for Foundry's main package, relative to the
// folder wd, found by walking up to the module's go.mod ("go run ./cmd/foundry"
// at the root of the module, "go run ." in cmd/foundry).
func goRunCommand(wd string) string {
	for dir := wd; dir != ""; {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
			if !isFoundryModule(string(b)) {
				break
			}
			rel, err := filepath.Rel(wd, filepath.Join(dir, "cmd", "foundry"))
			if err != nil {
				break
			}
			rel = filepath.ToSlash(rel)
			if rel == "." {
				return "go run ."
			}
			if !strings.HasPrefix(rel, "../") {
				rel = "./" + rel
			}
			return "go run " + shellQuote(rel)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "go run ./cmd/foundry"
}

func isFoundryModule(gomod string) bool {
	for _, line := range strings.Split(gomod, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`) == "foundry"
		}
	}
	return false
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,+@%", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
