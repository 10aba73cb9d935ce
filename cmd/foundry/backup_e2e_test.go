package main

import (
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"foundry/internal/server/servertest"
)

// TestBackupOfAServingFolderAsAnOperatorDoes runs the built binary as an
// operator would: foundry serve on a data folder, agents writing over MCP
// without pause, foundry backup from another process in the middle of it,
// foundry restore into a new folder and foundry serve on that folder. The
// restored server answers with every edit acknowledged before the backup
// started (the token, which is in the database, works there too).
func TestBackupOfAServingFolderAsAnOperatorDoes(t *testing.T) {
	t.Parallel()
	bin := foundryBin(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	live := startServe(t, ".", bin, append([]string{"serve", "--data", data, "--addr", "127.0.0.1:0"}, unlimited...)...)
	const writers, maxEdits = 3, 200
	var notes []string
	for i := range writers {
		out, _ := runCLI(t, bin, "notes", "create", "--data", data, "--title", fmt.Sprintf("Written %d", i), "--approve")
		notes = append(notes, strings.TrimSpace(out))
	}
	out, _ := runCLI(t, bin, "token", "create", "--data", data, "--scopes", "osfoundry:read,osfoundry:write")
	token := strings.TrimSpace(out)
	mcpURL := func(s *serving) string {
		m := regexp.MustCompile(`mcp=(\S+)`).FindStringSubmatch(s.printed)
		if m == nil {
			t.Fatalf("no mcp= in %s", s.printed)
		}
		return m[1]
	}

	var mu sync.Mutex
	acked := make([]int, writers) // the newest rev acknowledged, per writer
	total := 0
	enough := make(chan struct{})
	var enoughOnce sync.Once
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range writers {
		cs := servertest.Connect(t, mcpURL(live), token, "", nil)
		wg.Go(func() {
			v := servertest.MustCall(t, cs, "read_note_tab", map[string]any{"note_id": notes[w], "tab_id": "markdown"}).Int("version")
			for rev := 1; rev <= maxEdits; rev++ {
				select {
				case <-stop:
					return
				default:
				}
				r := servertest.MustCall(t, cs, "edit_note_tab", map[string]any{"note_id": notes[w], "tab_id": "markdown", "expected_version": v,
					"idempotency_key": fmt.Sprintf("backup-e2e-w%d-rev%d", w, rev), "operation": "replace_text", "text": fmt.Sprintf("writer %d rev %d", w, rev)})
				if r.IsError {
					t.Errorf("writer %d, rev %d: %s", w, rev, r.Text)
					return
				}
				v = r.Int("version")
				mu.Lock()
				acked[w] = rev
				if total++; total >= 10*writers {
					enoughOnce.Do(func() { close(enough) })
				}
				mu.Unlock()
			}
		})
	}
	writersDone := make(chan struct{})
	go func() { wg.Wait(); close(writersDone) }()
	select {
	case <-enough:
	case <-writersDone:
		t.Fatal("the writers stopped before the backup could start")
	}
	mu.Lock()
	before := append([]int(nil), acked...)
	mu.Unlock()
	bk := filepath.Join(dir, "backup")
	cmd := exec.Command(bin, "backup", "--data", data, bk)
	res, err := cmd.CombinedOutput()
	mu.Lock()
	during := total
	mu.Unlock()
	close(stop)
	<-writersDone
	if err != nil || !strings.Contains(string(res), "backup written to "+bk) {
		t.Fatalf("foundry backup while serving: %v\n%s", err, res)
	}
	t.Logf("acknowledged before the backup: %v; writes acknowledged by its end: %d", before, during)
	live.stop()

	restored := filepath.Join(dir, "restored")
	runCLI(t, bin, "restore", bk, "--data", restored)
	again := startServe(t, ".", bin, "serve", "--data", restored, "--addr", "127.0.0.1:0")
	defer again.stop()
	base := strings.TrimSuffix(mcpURL(again), "/mcp")
	if resp, err := http.Get(base + "/readyz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the restored server is not ready: %v %v", resp, err)
	}
	cs := servertest.Connect(t, mcpURL(again), token, "", nil)
	for w, id := range notes {
		text := servertest.MustCall(t, cs, "read_note_tab", map[string]any{"note_id": id, "tab_id": "markdown"}).Str("text")
		i := strings.LastIndex(text, " rev ")
		if i < 0 {
			t.Fatalf("Note %s restored with markdown %q", id, text)
		}
		got, err := strconv.Atoi(strings.TrimSpace(text[i+len(" rev "):]))
		if err != nil {
			t.Fatalf("Note %s restored with markdown %q", id, text)
		}
		if got < before[w] {
			t.Errorf("Note %s restored at rev %d; rev %d was acknowledged before the backup started", id, got, before[w])
		}
	}
}
