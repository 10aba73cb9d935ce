package sim

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestExperimentsQuick runs every registered experiment in quick mode
// against an in-process server and asserts that every invariant held.
func TestExperimentsQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("the experiments' runs are skipped in -short mode")
	}
	only := os.Getenv("SIM_ONLY") // e.g. SIM_ONLY=tab-handles,2
	for _, e := range Experiments() {
		if only != "" && !strings.Contains(","+only+",", ","+e.Name+",") && !strings.Contains(","+only+",", ","+itoa(e.N)+",") {
			continue
		}
		t.Run(e.Name, func(t *testing.T) {
			var out bytes.Buffer
			dir := t.TempDir()
			var progress bytes.Buffer
			start := time.Now()
			held, failed, err := Run(context.Background(), []string{e.Name}, Config{Quick: true, OutDir: dir, Progress: &progress}, &out)
			t.Logf("%s took %s", e.Name, time.Since(start).Round(time.Millisecond))
			if testing.Verbose() || failed > 0 || err != nil {
				t.Log("\n" + out.String())
			}
			if err != nil {
				t.Fatal(err)
			}
			if failed > 0 {
				t.Fatalf("%d invariants failed (%d held)", failed, held)
			}
			if held == 0 {
				t.Fatalf("no invariant was checked")
			}
			last := strings.TrimSpace(out.String())
			if i := strings.LastIndex(last, "\n"); i >= 0 {
				last = last[i+1:]
			}
			if !strings.HasSuffix(last, "invariants held, 0 failed") {
				t.Errorf("last line %q", last)
			}
			if _, err := os.Stat(dir + "/report.md"); err != nil {
				t.Error(err)
			}
		})
	}
}
