package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ciStubs puts stand-ins for the tools .ci/run calls first on PATH: each
// logs how it was called (and FOUNDRY_TEST_POSTGRES_URL) and succeeds;
// pg_isready answers as pgUp says; sleep returns at once.
func ciStubs(t *testing.T, pgUp bool) (path, log string) {
	t.Helper()
	dir := t.TempDir()
	log = filepath.Join(dir, "calls.log")
	stub := func(name, body string) {
		script := "#!/bin/sh\necho \"" + name + " $* [pg=$FOUNDRY_TEST_POSTGRES_URL]\" >> " + log + "\n" + body + "\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ready := "exit 2"
	if pgUp {
		ready = "exit 0"
	}
	stub("pg_isready", ready)
	stub("pg_ctlcluster", "exit 0")
	stub("sleep", "exit 0")
	stub("go", "exit 0")
	stub("gofmt", "exit 0")
	stub("bash", "exit 0") // .ci/run's own sub-scripts (the conformance suites)
	return dir + string(os.PathListSeparator) + os.Getenv("PATH"), log
}

func runCI(t *testing.T, pgUp bool, env ...string) (code int, output, calls string) {
	t.Helper()
	path, log := ciStubs(t, pgUp)
	cmd := exec.Command("bash", "../../.ci/run")
	cmd.Env = append(os.Environ(), "PATH="+path, "CI=", "FOUNDRY_TEST_POSTGRES_URL=", "FOUNDRY_CI_DRY_RUN=", "FOUNDRY_CI_PG_PORT=", "FOUNDRY_CI_PG_HOST=")
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(log)
	return code, string(out), string(b)
}

// TestCIFailsWithoutPostgreSQL: in CI a PostgreSQL that cannot be reached
// fails the run (its suites would otherwise pass by skipping); outside CI it
// is a warning. With PostgreSQL up, the run includes the README's command,
// the race detector on store, service and server, staticcheck and the
// go mod tidy check, with the tests pointed at PostgreSQL.
func TestCIFailsWithoutPostgreSQL(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	code, out, calls := runCI(t, false, "CI=true")
	if code == 0 || !strings.Contains(out, "PostgreSQL is not reachable") || strings.Contains(calls, "go test") {
		t.Fatalf("CI=true with PostgreSQL down: exit %d, output %q, ran %q; want a failure before any test", code, out, calls)
	}
	code, out, calls = runCI(t, false, "CI=true", "FOUNDRY_CI_PG_PORT=1")
	if code == 0 || !strings.Contains(out, ":1 ") {
		t.Fatalf("CI=true with PostgreSQL down on the overridden port: exit %d, %q", code, out)
	}
	if strings.Contains(calls, "pg_ctlcluster") {
		t.Errorf("started the local cluster for another port: %q", calls)
	}

	code, out, calls = runCI(t, false)
	if code != 0 || !strings.Contains(out, "WARNING") || !strings.Contains(calls, "go test ./... [pg=]") {
		t.Fatalf("outside CI with PostgreSQL down: exit %d, output %q, ran %q; want a warning and the tests without PostgreSQL", code, out, calls)
	}

	code, out, calls = runCI(t, true, "CI=true")
	if code != 0 {
		t.Fatalf("CI=true with PostgreSQL up: exit %d: %s", code, out)
	}
	pg := "[pg=postgres://postgres@127.0.0.1:5432/test?sslmode=disable]"
	for _, want := range []string{
		"go vet ./...",
		"go mod tidy",
		"go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...",
		"go test ./... " + pg,
		"go test -race -skip ^TestBrowser ./internal/store/... ./internal/service/... ./internal/server/... ./internal/oauth/... ./internal/account/... ./internal/api/... " + pg,
		"bash .ci/conformance",
		"bash .ci/oauth-check",
	} {
		if !strings.Contains(calls, want) {
			t.Errorf(".ci/run did not run %q; it ran:\n%s", want, calls)
		}
	}
}
