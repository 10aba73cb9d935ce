package main

// These tests drive the command as a newcomer does: in-process runs and the
// built binary on temporary data folders. They use only what the command
// prints, so they hold whatever its code looks like.

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// serving is a `foundry serve` started as its own process.
type serving struct {
	cmd     *exec.Cmd
	printed string // stderr up to "Foundry is serving"
	mu      sync.Mutex
	rest    bytes.Buffer // stderr after it
	done    chan struct{}
}

// startServe starts cmdline (e.g. bin serve --data …) in dir and waits until
// it serves (or ends); stop ends it.
func startServe(t *testing.T, dir string, name string, args ...string) *serving {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	setProcessGroup(cmd)
	cmd.Cancel = func() error { return killGroup(cmd) }
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &serving{cmd: cmd, done: make(chan struct{})}
	var printed strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		printed.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), `msg="Foundry is serving"`) {
			break
		}
	}
	s.printed = printed.String()
	go func() {
		defer close(s.done)
		for sc.Scan() {
			s.mu.Lock()
			s.rest.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
	})
	if !strings.Contains(s.printed, `msg="Foundry is serving"`) {
		cancel()
		cmd.Wait()
		t.Fatalf("%s %s did not start:\n%s", name, strings.Join(args, " "), s.printed)
	}
	return s
}

// stop ends the server as Ctrl-C does and waits for it.
func (s *serving) stop() {
	interruptGroup(s.cmd)
	<-s.done
	s.cmd.Wait()
}

// nextSteps are the command lines the first start printed for the person
// to type (indented lines), without the ones holding a placeholder.
func nextSteps(printed string) []string {
	var out []string
	inSteps := false
	for _, line := range strings.Split(printed, "\n") {
		if strings.HasPrefix(line, "Next steps") {
			inSteps = true
			continue
		}
		if inSteps && strings.HasPrefix(line, "       ") {
			l := strings.TrimSpace(line)
			if !strings.Contains(l, "<token>") && !strings.Contains(l, "NOTE_ID") {
				out = append(out, l)
			}
		}
	}
	return out
}

// runTyped runs line as a person types it in a shell, in dir.
func runTyped(t *testing.T, dir, line string) (stdout, stderr string, err error) {
	t.Helper()
	var o, e bytes.Buffer
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// checkStepsRun types every printed next step: each runs as printed, and
// token create prints a token.
func checkStepsRun(t *testing.T, dir, printed, prefix string) {
	t.Helper()
	steps := nextSteps(printed)
	if len(steps) == 0 {
		t.Fatalf("the first start printed no commands to type:\n%s", printed)
	}
	sawToken := false
	for _, line := range steps {
		if strings.HasPrefix(line, "claude ") {
			continue
		}
		if !strings.HasPrefix(line, prefix+" ") {
			t.Errorf("next step %q does not start with %q, how Foundry was started", line, prefix)
			continue
		}
		out, errOut, err := runTyped(t, dir, line)
		if err != nil {
			t.Errorf("next step %q, typed as printed, fails: %v\n%s%s", line, err, out, errOut)
			continue
		}
		if strings.Contains(line, " token create ") {
			sawToken = strings.HasPrefix(strings.TrimSpace(out), "fdy_")
		}
	}
	if !sawToken {
		t.Errorf("no printed token create step printed a token:\n%s", printed)
	}
}

// TestNextStepsRunAsTyped: the first start prints its next steps as
// commands that run as typed in the folder it was started from, the way it
// was started (here: the binary by its path), and no go install tip.
func TestNextStepsRunAsTyped(t *testing.T) {
	t.Parallel()
	bin := foundryBin(t)
	dir := t.TempDir()
	local := filepath.Join(dir, "bin", "foundry")
	os.MkdirAll(filepath.Dir(local), 0o755)
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(local, b, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, arg0 string }{
		{"absolute path", local},
		{"relative path", "./bin/foundry"},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := "data-" + strings.ReplaceAll(c.name, " ", "-")
			s := startServe(t, dir, c.arg0, "serve", "--data", data, "--addr", "127.0.0.1:0")
			checkStepsRun(t, dir, s.printed, c.arg0)
			if strings.Contains(s.printed, "go install") {
				t.Errorf("an installed binary is told to go install:\n%s", s.printed)
			}
			s.stop()
		})
	}
}

// TestDemoSaysWhatHappened: --demo on a fresh folder creates the demo and
// does not tell the person to start with --demo; --demo on a folder that
// has a workspace creates nothing and says so; a fresh start without --demo
// mentions --demo.
func TestDemoSaysWhatHappened(t *testing.T) {
	t.Parallel()
	bin := foundryBin(t)
	dir := t.TempDir()
	demoHint := regexp.MustCompile(`(?i)start with --demo`)

	s := startServe(t, dir, bin, "serve", "--demo", "--data", "demo", "--addr", "127.0.0.1:0")
	if !strings.Contains(s.printed, "created demo Note") {
		t.Fatalf("demo start:\n%s", s.printed)
	}
	if demoHint.MatchString(s.printed) {
		t.Errorf("the demo start still says to start with --demo:\n%s", s.printed)
	}
	s.stop()

	s = startServe(t, dir, bin, "serve", "--demo", "--data", "demo", "--addr", "127.0.0.1:0")
	warn := ""
	for _, line := range strings.Split(s.printed, "\n") {
		if strings.Contains(line, "--demo") {
			warn = line
		}
	}
	if !strings.Contains(warn, "level=WARN") || !strings.Contains(warn, "already has a workspace") || !strings.Contains(warn, "no demo content") {
		t.Errorf("--demo on a folder with a workspace says %q; want a warning that nothing was created:\n%s", warn, s.printed)
	}
	if strings.Contains(s.printed, "created demo") {
		t.Errorf("second --demo start created demo content:\n%s", s.printed)
	}
	s.stop()
	out, _ := runCLI(t, bin, "notes", "list", "--data", filepath.Join(dir, "demo"))
	if n := strings.Count(out, "Welcome"); n != 1 {
		t.Errorf("%d Welcome Notes after two --demo starts:\n%s", n, out)
	}

	s = startServe(t, dir, bin, "serve", "--data", "plain", "--addr", "127.0.0.1:0")
	if !demoHint.MatchString(s.printed) {
		t.Errorf("a first start without --demo does not mention it:\n%s", s.printed)
	}
	s.stop()
}

// TestServeRefusesUselessValues: a list flag naming nothing that exists
// (--toolsets bogus serves no tool at all) and other values that cannot
// work are refused at start with exit 2, naming the value and the valid
// ones, before the data folder is touched.
func TestServeRefusesUselessValues(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"--toolsets", "bogus"}, []string{`"bogus"`, "notes, rooms, events"}},
		{[]string{"--toolsets", "note"}, []string{`"note"`, "notes, rooms, events"}},
		{[]string{"--toolsets", "notes,bogus"}, []string{`"bogus"`}},
		{[]string{"--toolsets", "notes;rooms"}, []string{"notes;rooms"}},
		{[]string{"--toolsets", ""}, []string{"--toolsets"}},
		{[]string{"--toolsets", " , "}, []string{"--toolsets"}},
		{[]string{"--toolsets", "all,notes"}, []string{"all"}},
		{[]string{"--allowed-origins", "example.com"}, []string{`"example.com"`, "https://"}},
		{[]string{"--allowed-origins", "https://ok.example.com,https://x.example.com/app"}, []string{`"https://x.example.com/app"`}},
		{[]string{"--allowed-origins", "ftp://x.example.com"}, []string{"ftp://x.example.com"}},
		{[]string{"--sync", "fast"}, []string{`"fast"`, "full", "normal"}},
		{[]string{"--log-level", "loud"}, []string{`"loud"`}},
		{[]string{"--gc-percent", "-5"}, []string{"-5"}},
		{[]string{"--max-waiters-per-token", "0"}, []string{"--max-waiters-per-token"}},
		{[]string{"--max-waiters-per-node", "-1"}, []string{"--max-waiters-per-node"}},
		{[]string{"--max-password-hashes", "-1"}, []string{"--max-password-hashes"}},
		{[]string{"--memory-limit", "lots"}, []string{`"lots"`}},
		{[]string{"--public-url", "foundry.example.com"}, []string{`"foundry.example.com"`}},
		{[]string{"--drain-delay", "30s"}, []string{"--drain-delay: 30s must be 0 or more and shorter than --shutdown-timeout (30s)"}},
		{[]string{"--drain-delay", "-1s"}, []string{"--drain-delay: -1s"}},
		{[]string{"--shutdown-timeout", "0s"}, []string{"--shutdown-timeout: 0s is not a duration above zero"}},
	}
	bin := foundryBin(t)
	for _, c := range cases {
		data := filepath.Join(t.TempDir(), "data")
		args := append([]string{"serve", "--data", data, "--addr", "127.0.0.1:0"}, c.args...)
		code, stderr, served := serveOrRefuse(t, bin, args...)
		if served {
			t.Errorf("serve %q started serving; want a refusal:\n%s", c.args, stderr)
			continue
		}
		if code != 2 {
			t.Errorf("serve %q: exit %d (%s), want 2", c.args, code, stderr)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("serve %q: %q does not say %q", c.args, stderr, w)
			}
		}
		if _, err := os.Stat(data); err == nil {
			t.Errorf("serve %q created the data folder before refusing", c.args)
		}
	}
	// The same for the other commands' list values.
	data, _, _ := grantWorkspace(t)
	code, _, stderr := runInProcess(t, "proposals", "list", "--data", data, "--status", "pendig")
	if code != 2 || !strings.Contains(stderr, `"pendig"`) || !strings.Contains(stderr, "pending, approved, declined") {
		t.Errorf("proposals list --status pendig: exit %d, %q", code, stderr)
	}
}

// serveOrRefuse runs bin with args until it ends or starts serving (then it
// is stopped): its exit code, its stderr, and whether it served.
func serveOrRefuse(t *testing.T, bin string, args ...string) (code int, stderr string, served bool) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), `msg="Foundry is serving"`) {
			served = true
			cmd.Process.Kill()
			break
		}
	}
	go io.Copy(io.Discard, pipe)
	err = cmd.Wait()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	return code, b.String(), served
}

// TestCLIRefusalsInItsOwnWords: what the service refuses, the CLI says with
// the value typed and the command that helps, never in the MCP door's words
// (tool names, "this connection", expected_version, idempotency keys).
func TestCLIRefusalsInItsOwnWords(t *testing.T) {
	data, noteID, _ := grantWorkspace(t)
	if code, _, stderr := runInProcess(t, "token", "create", "--data", data, "--name", "gone"); code != 0 {
		t.Fatal(stderr)
	}
	code, out, stderr := runInProcess(t, "token", "list", "--data", data)
	if code != 0 {
		t.Fatal(stderr)
	}
	tokID := strings.Fields(strings.Split(out, "\n")[1])[0]
	if code, _, stderr := runInProcess(t, "token", "revoke", tokID, "--data", data); code != 0 {
		t.Fatal(stderr)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	mcpWords := regexp.MustCompile(`\b(list|read|edit|create|add|propose|poll)_[a-z_]+\b|this connection|expected_version|idempotency|not_found|invalid_argument`)
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"notes", "approve", "note_nope"}, []string{"no Note note_nope in this workspace", "`foundry notes list`"}},
		{[]string{"notes", "unapprove", "note_nope"}, []string{"no Note note_nope", "`foundry notes list`"}},
		{[]string{"notes", "history", "note_nope"}, []string{"no Note note_nope", "`foundry notes list`"}},
		{[]string{"notes", "history", noteID, "--cursor", "nope"}, []string{"--cursor", "omit it"}},
		{[]string{"notes", "history", noteID, "--limit", "51"}, []string{"--limit", "between 1 and 50"}},
		{[]string{"notes", "restore", "note_nope", "--version", "1"}, []string{"no Note note_nope", "`foundry notes list`"}},
		{[]string{"notes", "restore", noteID, "--version", "7"}, []string{"--version", "between 1 and 1", "got 7"}},
		{[]string{"notes", "create", "--title", " "}, []string{"--title", "title"}},
		{[]string{"rooms", "create", "--name", ""}, []string{"--name"}},
		{[]string{"proposals", "show", "prop_nope"}, []string{"no proposal prop_nope", "`foundry proposals list`"}},
		{[]string{"proposals", "approve", "prop_nope"}, []string{"no proposal prop_nope", "`foundry proposals list`"}},
		{[]string{"proposals", "decline", "prop_nope"}, []string{"no proposal prop_nope", "`foundry proposals list`"}},
		{[]string{"token", "revoke", "tok_nope"}, []string{"no token tok_nope", "`foundry token list`"}},
		{[]string{"token", "revoke", tokID}, []string{tokID, "already revoked"}},
		{[]string{"token", "create", "--notes", "note_nope"}, []string{"--notes", "no Note note_nope", "`foundry notes list`"}},
		{[]string{"token", "create", "--rooms", "room_nope"}, []string{"--rooms", "no Room room_nope", "`foundry rooms list`"}},
		{[]string{"token", "create", "--scopes", "admin"}, []string{"--scopes", `"admin"`}},
	}
	// A value of the wrong shape is the command given wrongly (exit 2).
	givenWrongly := map[string]bool{
		"notes history " + noteID + " --limit 51": true, "notes create --title  ": true,
		"rooms create --name ": true, "token create --scopes admin": true,
	}
	for _, c := range cases {
		args := append(append([]string{}, c.args...), "--data", data)
		code, stdout, stderr := runInProcess(t, args...)
		want := 1
		if givenWrongly[strings.Join(c.args, " ")] {
			want = 2
		}
		if code != want || stdout != "" {
			t.Errorf("%q: exit %d, stdout %q; want %d and nothing on stdout", c.args, code, stdout, want)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%q says %q; want %q in it", c.args, stderr, w)
			}
		}
		if m := mcpWords.FindString(stderr); m != "" {
			t.Errorf("%q says %q: %q is the MCP door's wording", c.args, stderr, m)
		}
	}
	// A data folder the server never started on: say which, and the
	// command (with that folder) that sets it up.
	code, _, stderr = runInProcess(t, "token", "list", "--data", empty)
	if code != 1 || !strings.Contains(stderr, empty) || !strings.Contains(stderr, "`foundry serve --data "+empty+"`") {
		t.Errorf("token list on an empty folder: exit %d, %q", code, stderr)
	}
}

// TestSubcommandHelpExitsZero: the examples of the issue, as a newcomer
// types them: each prints its own help on stdout and exits 0.
func TestSubcommandHelpExitsZero(t *testing.T) {
	cases := []struct {
		args    []string
		want    []string // in stdout
		notWant []string
	}{
		{[]string{"token", "--help"}, []string{"token create", "token list", "token revoke"}, []string{"unknown subcommand"}},
		{[]string{"proposals", "--help"}, []string{"proposals list", "proposals show", "proposals approve"}, []string{"--help PROPOSAL_ID"}},
		{[]string{"rooms", "--help"}, []string{"rooms list", "rooms create"}, []string{"notes create", "notes restore"}},
		{[]string{"notes", "--help"}, []string{"notes list", "notes restore"}, []string{"rooms create"}},
		{[]string{"notes", "create", "--help"}, []string{"--title", "--approve"}, []string{"--version"}},
		{[]string{"notes", "approve", "--help"}, []string{"NOTE_ID"}, []string{"--title", "--approve", "--version"}},
		{[]string{"notes", "restore", "--help"}, []string{"--version"}, []string{"--title", "--approve"}},
		{[]string{"token", "create", "--help"}, []string{"--scopes", "--notes", "--rooms", "--name"}, []string{"-name foundry", "`"}},
		{[]string{"token", "revoke", "--help"}, []string{"TOKEN_ID"}, []string{"--scopes"}},
		{[]string{"proposals", "list", "--help"}, []string{"--status", "--room"}, nil},
		{[]string{"proposals", "show", "--help"}, []string{"PROPOSAL_ID"}, []string{"--status"}},
		{[]string{"repo", "push", "--help"}, []string{"--name", "DIR"}, nil},
		{[]string{"serve", "--help"}, []string{"--toolsets", "--demo"}, []string{"--scopes"}},
		{[]string{"migrate", "--help"}, []string{"--data"}, nil},
		{[]string{"--help"}, []string{"serve", "token create"}, nil},
	}
	for _, c := range cases {
		code, stdout, stderr := runInProcess(t, c.args...)
		if code != 0 {
			t.Errorf("foundry %s: exit %d, stderr %q; want 0", strings.Join(c.args, " "), code, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("foundry %s: stdout lacks %q:\n%s", strings.Join(c.args, " "), w, stdout)
			}
		}
		for _, w := range c.notWant {
			if strings.Contains(stdout+stderr, w) {
				t.Errorf("foundry %s: says %q:\n%s%s", strings.Join(c.args, " "), w, stdout, stderr)
			}
		}
	}
}

// unlimited are the serve flags that turn the rate limits off, for the
// tests that load a server as fast as their writers go (what they measure
// is not the limits: TestServeLimits is).
var unlimited = []string{"--rate-per-token", "0", "--rate-per-address", "0", "--max-concurrent-per-token", "0"}
