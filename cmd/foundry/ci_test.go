package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ciCopied are the files .ci/run reads from the repository; the test runs
// the script on a copy of them, so nothing it does lands in the work tree.
var ciCopied = []string{".ci/run", ".ci/node.sh", "go.mod", "go.sum"}

// ciLinked are the plain utilities .ci/run uses besides the tools it drives;
// the test's PATH holds them (linked from the machine's) and the stubs, and
// nothing else, so a tool the script starts calling without a stub here is
// "command not found" rather than the real one.
var ciLinked = []string{"dirname", "seq", "mktemp", "cp", "rm", "ls", "head", "id", "env"}

// ciStubbed are the tools .ci/run drives. Each stand-in logs how it was
// called (with the settings the tests would get) and succeeds, unless the
// run's fail list names it. pg_isready answers as the run's PostgreSQL is
// up or down; node answers a version; sleep returns at once. A run's
// bodies replace a stand-in's behaviour (after its log line).
var ciStubbed = []string{"pg_isready", "pg_ctlcluster", "sleep", "go", "gofmt", "git", "npm", "node", "apt-get", "sudo", "bash"}

// ciRun is one run of .ci/run on a copy, in a PATH of stubs.
type ciRun struct {
	pgUp     bool
	chromium bool              // a chromium on PATH
	pebble   bool              // pebble and pebble-challtestsrv on PATH
	noOffice bool              // no soffice or pdftotext on PATH (they are there unless this is set)
	bodies   map[string]string // stub name: its shell code instead
	env      []string
}

type ciResult struct {
	code          int
	output, calls string
}

func (r ciRun) run(t *testing.T) ciResult {
	t.Helper()
	bashPath, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash on PATH to run .ci/run with")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	repo, bin, home := filepath.Join(tmp, "repo"), filepath.Join(tmp, "bin"), filepath.Join(tmp, "home")
	for _, d := range []string{filepath.Join(repo, ".ci"), bin, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range ciCopied {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, name), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range ciLinked {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Skipf("%s is not on PATH; .ci/run needs it", name)
		}
		if err := os.Symlink(p, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	log := filepath.Join(tmp, "calls.log")
	stub := func(name, body string) {
		script := fmt.Sprintf("#!/bin/sh\necho \"%s $* [pg=$FOUNDRY_TEST_POSTGRES_URL browser=$FOUNDRY_TEST_BROWSER node=$FOUNDRY_TEST_NODE pebble=$FOUNDRY_TEST_PEBBLE]\" >> %s\n%s\n", name, log, body)
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range ciStubbed {
		body := "exit 0"
		switch name {
		case "pg_isready":
			if !r.pgUp {
				body = "exit 2"
			}
		case "node":
			body = `if [ "$1" = -p ]; then echo 22; fi`
		case "sudo":
			body = `exec "$@"`
		}
		if b, ok := r.bodies[name]; ok {
			body = b
		}
		stub(name, body)
	}
	if r.chromium {
		stub("chromium", "exit 0")
	}
	if r.pebble {
		stub("pebble", "exit 0")
		stub("pebble-challtestsrv", "exit 0")
	}
	if !r.noOffice {
		stub("soffice", "exit 0")
		stub("pdftotext", "exit 0")
	}

	before := treeState(t, root)
	cmd := exec.Command(bashPath, filepath.Join(repo, ".ci", "run"))
	cmd.Dir = tmp
	cmd.Env = []string{"PATH=" + bin, "HOME=" + home, "TMPDIR=" + tmp, "LANG=C"}
	cmd.Env = append(cmd.Env, r.env...)
	out, err := cmd.CombinedOutput()
	res := ciResult{output: string(out)}
	if ee, ok := err.(*exec.ExitError); ok {
		res.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.output, "command not found") {
		t.Errorf(".ci/run called a tool this test neither stubs nor links (add it to ciStubbed or ciLinked):\n%s", res.output)
	}
	b, _ := os.ReadFile(log)
	res.calls = string(b)
	if after := treeState(t, root); after != before {
		t.Errorf("running .ci/run on a copy changed the work tree %s", root)
	}
	return res
}

// treeState lists every file and folder under root (but .git and
// docs/screenshots, which FOUNDRY_SCREENSHOTS=1 runs rewrite) with its
// size, mode and modification time.
func treeState(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == ".git" || rel == filepath.Join("docs", "screenshots") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %v %d\n", rel, info.Size(), info.Mode(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestCIFailsWithoutPostgreSQL: in CI a PostgreSQL that cannot be reached
// fails the run (its suites would otherwise pass by skipping); outside CI it
// is a warning. With PostgreSQL up, the run includes the README's command,
// the race detector on store, service and server, staticcheck and the
// go mod tidy check, with the tests pointed at PostgreSQL.
func TestCIFailsWithoutPostgreSQL(t *testing.T) {
	t.Parallel()
	r := ciRun{pgUp: false, chromium: true, pebble: true, env: []string{"CI=true"}}.run(t)
	if r.code == 0 || !strings.Contains(r.output, "PostgreSQL is not reachable") || strings.Contains(r.calls, "go test") {
		t.Fatalf("CI=true with PostgreSQL down: exit %d, output %q, ran %q; want a failure before any test", r.code, r.output, r.calls)
	}
	r = ciRun{pgUp: false, chromium: true, pebble: true, env: []string{"CI=true", "FOUNDRY_CI_PG_PORT=1"}}.run(t)
	if r.code == 0 || !strings.Contains(r.output, ":1 ") {
		t.Fatalf("CI=true with PostgreSQL down on the overridden port: exit %d, %q", r.code, r.output)
	}
	if strings.Contains(r.calls, "pg_ctlcluster") {
		t.Errorf("started the local cluster for another port: %q", r.calls)
	}

	r = ciRun{pgUp: false, chromium: true, pebble: true}.run(t)
	if r.code != 0 || !strings.Contains(r.output, "WARNING") || !strings.Contains(r.calls, "go test ./... [pg= ") {
		t.Fatalf("outside CI with PostgreSQL down: exit %d, output %q, ran %q; want a warning and the tests without PostgreSQL", r.code, r.output, r.calls)
	}

	r = ciRun{pgUp: true, chromium: true, pebble: true, env: []string{"CI=true"}}.run(t)
	if r.code != 0 {
		t.Fatalf("CI=true with PostgreSQL up: exit %d: %s", r.code, r.output)
	}
	settings := "[pg=postgres://postgres@127.0.0.1:5432/test?sslmode=disable browser=required node=required pebble=required]"
	for _, want := range []string{
		"go vet ./...",
		"go mod tidy",
		"go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...",
		"npm ci --prefix web",
		"npm run --prefix web --silent typecheck",
		"go generate ./internal/web/...",
		"go test ./... " + settings,
		"go test -race -skip ^TestBrowser ./internal/store/... ./internal/service/... ./internal/server/... ./internal/oauth/... ./internal/account/... ./internal/api/... " + settings,
		"bash .ci/conformance",
		"bash .ci/oauth-check",
	} {
		if !strings.Contains(r.calls, want) {
			t.Errorf(".ci/run did not run %q; it ran:\n%s", want, r.calls)
		}
	}
	if strings.Contains(r.calls, "apt-get") {
		t.Errorf("installed Chromium or pebble although they are on PATH:\n%s", r.calls)
	}
}

// TestCIInstallsChromium: without Chromium on PATH the run installs
// Debian's package; in CI a failed install fails the run before any test,
// outside CI it is a warning and the tests run (their browser tests skip).
func TestCIInstallsChromium(t *testing.T) {
	t.Parallel()
	r := ciRun{pgUp: true, env: []string{"CI=true"}}.run(t)
	if r.code != 0 || !strings.Contains(r.calls, "apt-get update") || !strings.Contains(r.calls, "apt-get install -y chromium") {
		t.Fatalf("CI=true without Chromium: exit %d, ran:\n%s\n%s", r.code, r.calls, r.output)
	}
	r = ciRun{pgUp: true, bodies: map[string]string{"apt-get": "exit 1"}, env: []string{"CI=true"}}.run(t)
	if r.code == 0 || !strings.Contains(r.output, "Chromium could not be installed") || strings.Contains(r.calls, "go test") {
		t.Fatalf("CI=true with a failed Chromium install: exit %d, output %q, ran %q; want a failure before any test", r.code, r.output, r.calls)
	}
	r = ciRun{pgUp: true, bodies: map[string]string{"apt-get": "exit 1"}}.run(t)
	if r.code != 0 || !strings.Contains(r.output, "WARNING: Chromium could not be installed") || !strings.Contains(r.calls, "go test ./... ") {
		t.Fatalf("outside CI with a failed Chromium install: exit %d, output %q, ran %q; want a warning and the tests", r.code, r.output, r.calls)
	}
}

// TestCIRefusesDifferences: a go.mod that go mod tidy changes, or a
// committed bundle other than what web/src builds, fails the run before the
// tests.
func TestCIRefusesDifferences(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ differs, says string }{
		{"go.mod", "go.mod/go.sum are not tidy"},
		{"internal/web/dist", "internal/web/dist differs"},
	} {
		git := fmt.Sprintf(`case "$*" in diff*%s*) exit 1 ;; esac`, c.differs) // git diff finds a difference
		r := ciRun{pgUp: true, chromium: true, pebble: true, bodies: map[string]string{"git": git}}.run(t)
		if r.code == 0 || !strings.Contains(r.output, c.says) || strings.Contains(r.calls, "go test ./...") {
			t.Errorf("with %s differing: exit %d, output %q, ran %q; want a failure before the tests", c.differs, r.code, r.output, r.calls)
		}
	}
}

// TestCIInstallsLibreOffice: without soffice on PATH the run installs
// Debian's libreoffice-calc-nogui for the formula corpus, and
// poppler-utils for the PDF read-back, in one apt-get install; in CI a failed
// install fails the run before any test, outside CI it is a warning.
func TestCIInstallsLibreOffice(t *testing.T) {
	r := ciRun{pgUp: true, chromium: true, pebble: true, noOffice: true, env: []string{"CI=true"}}.run(t)
	if r.code != 0 || !strings.Contains(r.calls, "apt-get install -y --no-install-recommends libreoffice-calc-nogui poppler-utils") || strings.Contains(r.calls, "install -y chromium") {
		t.Fatalf("CI=true without LibreOffice: exit %d, ran:\n%s\n%s", r.code, r.calls, r.output)
	}
	fail := map[string]string{"apt-get": `case "$*" in *libreoffice*) exit 1 ;; esac`}
	r = ciRun{pgUp: true, chromium: true, pebble: true, noOffice: true, bodies: fail, env: []string{"CI=true"}}.run(t)
	if r.code == 0 || !strings.Contains(r.output, "LibreOffice could not be installed") || strings.Contains(r.calls, "go test") {
		t.Fatalf("CI=true with a failed LibreOffice install: exit %d, output %q; want a failure before any test", r.code, r.output)
	}
	r = ciRun{pgUp: true, chromium: true, pebble: true, noOffice: true, bodies: fail}.run(t)
	if r.code != 0 || !strings.Contains(r.output, "LibreOffice could not be installed") || !strings.Contains(r.calls, "go test ./... ") {
		t.Fatalf("outside CI with a failed LibreOffice install: exit %d, output %q; want a warning and the tests", r.code, r.output)
	}
}

// TestCIInstallsPebble: without pebble on PATH the run installs Debian's
// package (with one apt-get update for it and Chromium); in CI a failed
// install fails the run before any test, outside CI it is a warning and the
// tests run (the serve --https tests skip).
func TestCIInstallsPebble(t *testing.T) {
	t.Parallel()
	r := ciRun{pgUp: true, chromium: true, env: []string{"CI=true"}}.run(t)
	if r.code != 0 || !strings.Contains(r.calls, "apt-get install -y pebble") || strings.Contains(r.calls, "install -y chromium") {
		t.Fatalf("CI=true without pebble: exit %d, ran:\n%s\n%s", r.code, r.calls, r.output)
	}
	r = ciRun{pgUp: true, env: []string{"CI=true"}}.run(t)
	if r.code != 0 || strings.Count(r.calls, "apt-get update") != 1 || !strings.Contains(r.calls, "install -y chromium") || !strings.Contains(r.calls, "install -y pebble") {
		t.Fatalf("CI=true without Chromium and pebble: exit %d, want one apt-get update and both installed; ran:\n%s", r.code, r.calls)
	}
	fail := map[string]string{"apt-get": `case "$*" in *pebble*) exit 1 ;; esac`}
	r = ciRun{pgUp: true, chromium: true, bodies: fail, env: []string{"CI=true"}}.run(t)
	if r.code == 0 || !strings.Contains(r.output, "pebble could not be installed") || strings.Contains(r.calls, "go test") {
		t.Fatalf("CI=true with a failed pebble install: exit %d, output %q, ran %q; want a failure before any test", r.code, r.output, r.calls)
	}
	r = ciRun{pgUp: true, chromium: true, bodies: fail}.run(t)
	if r.code != 0 || !strings.Contains(r.output, "WARNING: pebble could not be installed") || !strings.Contains(r.calls, "go test ./... ") {
		t.Fatalf("outside CI with a failed pebble install: exit %d, output %q, ran %q; want a warning and the tests", r.code, r.output, r.calls)
	}
}
