//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"foundry/internal/server/servertest"
)

func setProcessGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup ends the process and its children (go run's program).
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// interruptGroup is Ctrl-C in the terminal: the whole process group hears it.
func interruptGroup(cmd *exec.Cmd) { syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }

// TestNextStepsUnderGoRun: started with `go run ./cmd/foundry serve` from
// the root of the repository (as the README says), the next steps are
// `go run ./cmd/foundry …` commands that run as typed there, with one tip
// to go install the command.
func TestNextStepsUnderGoRun(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds with go run")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "data")
	s := startServe(t, root, "go", "run", "./cmd/foundry", "serve", "--data", data, "--addr", "127.0.0.1:0")
	checkStepsRun(t, root, s.printed, "go run ./cmd/foundry")
	if n := strings.Count(s.printed, "go install ./cmd/foundry"); n != 1 {
		t.Errorf("the go install tip appears %d times, want once:\n%s", n, s.printed)
	}
	if regexp.MustCompile(`(?m)^\s+foundry `).MatchString(s.printed) {
		t.Errorf("a next step starts with a bare foundry, which is not on PATH after go run:\n%s", s.printed)
	}
	// From cmd/foundry itself, go run . is what runs.
	data2 := filepath.Join(t.TempDir(), "data")
	s2 := startServe(t, ".", "go", "run", ".", "serve", "--data", data2, "--addr", "127.0.0.1:0")
	checkStepsRun(t, ".", s2.printed, "go run .")
	s.stop()
	s2.stop()
}

// TestSecondServeIsAnnounced: a second server on the same data folder
// works (both see each other's writes) and logs a warning naming the first
// one's process ID; a server that was killed leaves no false warning.
func TestSecondServeIsAnnounced(t *testing.T) {
	t.Parallel()
	bin := foundryBin(t)
	data := filepath.Join(t.TempDir(), "data")
	a := startServe(t, ".", bin, "serve", "--data", data, "--addr", "127.0.0.1:0")
	if strings.Contains(a.printed, "another Foundry") {
		t.Fatalf("the first server warns:\n%s", a.printed)
	}
	b := startServe(t, ".", bin, "serve", "--data", data, "--addr", "127.0.0.1:0")
	want := "another Foundry is serving this data folder (pid " + strconv.Itoa(a.cmd.Process.Pid) + ")"
	warn := ""
	for _, line := range strings.Split(b.printed, "\n") {
		if strings.Contains(line, "another Foundry") {
			warn = line
		}
	}
	if !strings.Contains(warn, "level=WARN") || !strings.Contains(warn, want) || !strings.Contains(warn, "see each other's writes") {
		t.Fatalf("second server on the folder logs %q; want a warning with %q:\n%s", warn, want, b.printed)
	}

	// Both serve the same data: a Note approved by the CLI is seen by both.
	out, _ := runCLI(t, bin, "token", "create", "--data", data)
	token := strings.TrimSpace(out)
	runCLI(t, bin, "notes", "create", "--data", data, "--title", "Shared", "--approve")
	for _, s := range []*serving{a, b} {
		url := regexp.MustCompile(`mcp=(\S+)`).FindStringSubmatch(s.printed)
		if url == nil {
			t.Fatalf("no mcp= in %s", s.printed)
		}
		cs := servertest.Connect(t, url[1], token, "", nil)
		if r := servertest.MustCall(t, cs, "list_notes", map[string]any{}); !strings.Contains(r.Text, "Shared") {
			t.Errorf("server %s does not see the Note: %s", url[1], r.Text)
		}
		cs.Close()
	}

	// Killed without a chance to clean up: its record stays, but is not
	// taken for a live server.
	a.cmd.Process.Kill()
	<-a.done
	a.cmd.Wait()
	c := startServe(t, ".", bin, "serve", "--data", data, "--addr", "127.0.0.1:0")
	if strings.Contains(c.printed, "pid "+strconv.Itoa(a.cmd.Process.Pid)) {
		t.Errorf("a killed server is still announced:\n%s", c.printed)
	}
	if !strings.Contains(c.printed, "pid "+strconv.Itoa(b.cmd.Process.Pid)) {
		t.Errorf("the live second server is not announced:\n%s", c.printed)
	}
	b.stop()
	c.stop()
	d := startServe(t, ".", bin, "serve", "--data", data, "--addr", "127.0.0.1:0")
	if strings.Contains(d.printed, "another Foundry") {
		t.Errorf("after every other server stopped, a new one still warns:\n%s", d.printed)
	}
	d.stop()
}

// TestReadOnlyDataFolder runs the CLI as an unprivileged user (uid 65534)
// on data folders that user may not write: a folder with a database, an
// empty folder, a folder it would have to create, and a writable folder
// whose database file it may not write. Each refusal names the folder or
// file, the user and the fix, never SQLite's "readonly database (1544)".
// It needs root to switch users (tests here run as root, whom permissions
// do not stop, so this is the only way to see a real refusal).
func TestReadOnlyDataFolder(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("needs root to run the command as another user")
	}
	bin := foundryBin(t)
	top, err := os.MkdirTemp("", "foundry-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(top) })
	exe := filepath.Join(top, "foundry")
	b, _ := os.ReadFile(bin)
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	withDB := filepath.Join(top, "with-db")
	emptyDir := filepath.Join(top, "empty")
	fileOnly := filepath.Join(top, "file-only")
	for _, d := range []string{withDB, fileOnly} {
		data, _, _ := grantWorkspace(t)
		if err := os.Rename(data, d); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(emptyDir, 0o755)
	for _, p := range []string{top, withDB, emptyDir} {
		os.Chmod(p, 0o755)
	}
	os.Chmod(fileOnly, 0o777)
	for _, d := range []string{withDB, fileOnly} {
		files, _ := filepath.Glob(filepath.Join(d, "*"))
		for _, f := range files {
			os.Chmod(f, 0o644)
		}
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"folder with a database", []string{"token", "create", "--data", withDB}, "data folder " + withDB + " is not writable by this user (uid 65534)"},
		{"empty folder", []string{"token", "list", "--data", emptyDir}, "data folder " + emptyDir + " is not writable by this user (uid 65534)"},
		{"folder to create", []string{"token", "list", "--data", filepath.Join(top, "new", "data")}, "cannot create the data folder " + filepath.Join(top, "new", "data") + ": " + top + " is not writable by this user (uid 65534)"},
		{"database file", []string{"notes", "create", "--title", "x", "--data", fileOnly}, filepath.Join(fileOnly, "foundry.db") + " is not writable by this user (uid 65534)"},
		{"serve", []string{"serve", "--addr", "127.0.0.1:0", "--data", withDB}, "data folder " + withDB + " is not writable"},
	}
	for _, c := range cases {
		cmd := exec.Command(exe, c.args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 1 {
			t.Errorf("%s: %v, want exit 1:\n%s", c.name, err, out)
		}
		if !strings.Contains(string(out), c.want) {
			t.Errorf("%s: says %q; want %q", c.name, out, c.want)
		}
		if strings.Contains(string(out), "1544") || strings.Contains(string(out), "readonly database") || strings.Contains(string(out), "(14)") {
			t.Errorf("%s: speaks SQLite: %q", c.name, out)
		}
	}
}
