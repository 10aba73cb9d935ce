package backup_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"foundry/internal/backup"
)

// TestPruneKeepsTheNewest: the oldest whole backups beyond keep go;
// backups without a manifest (unfinished) and other files stay.
func TestPruneKeepsTheNewest(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var names []string
	for i := range 5 {
		n := backup.Name(t0.Add(time.Duration(i) * 6 * time.Hour))
		names = append(names, n)
		os.MkdirAll(filepath.Join(dir, n, "blobs"), 0o700)
		os.WriteFile(filepath.Join(dir, n, backup.ManifestName), []byte("{}"), 0o600)
	}
	unfinished := backup.Name(t0.Add(-time.Hour)) // older than all, but no manifest
	os.MkdirAll(filepath.Join(dir, unfinished), 0o700)
	os.MkdirAll(filepath.Join(dir, "my-own-copy"), 0o700)
	os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o600)

	removed, err := backup.Prune(dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, names[:3]) {
		t.Errorf("pruned %v, want the three oldest %v", removed, names[:3])
	}
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	want := []string{unfinished, names[3], names[4], "my-own-copy", "notes.txt"}
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
	if removed, err := backup.Prune(dir, 2); err != nil || len(removed) != 0 {
		t.Errorf("pruning again removed %v (%v), want nothing", removed, err)
	}
	if _, err := backup.Prune(dir, 0); err == nil {
		t.Error("Prune keeping 0 backups did not refuse")
	}
}

// TestScheduleRecordsResults: each scheduled backup is named by its UTC
// time, only the newest Keep stay, and the last result is in /readyz and
// /metrics of a real server, a failure included.
func TestScheduleRecordsResults(t *testing.T) {
	data, _, _, _ := small(t)
	s := serve(t, data)
	clock := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	dir := filepath.Join(t.TempDir(), "backups")
	sched := &backup.Schedule{DataDir: data, Dir: dir, Every: time.Hour, Keep: 2, Version: "test",
		Now: func() time.Time { return clock }}
	if err := sched.Check(); err != nil {
		t.Fatal(err)
	}
	if err := sched.Register(s.srv.Metrics); err != nil {
		t.Fatal(err)
	}
	s.srv.Ready.SetDetail("backup", sched.Detail)
	hs := httptest.NewServer(s.srv.Handler) // 127.0.0.1
	defer hs.Close()

	var paths []string
	for range 3 {
		st := sched.RunOnce(context.Background())
		if !st.OK || st.Error != "" || st.Bytes <= 0 {
			t.Fatalf("scheduled backup: %+v", st)
		}
		if want := filepath.Join(dir, backup.Name(clock)); st.Path != want {
			t.Errorf("backup at %s, want %s", st.Path, want)
		}
		if _, err := backup.Verify(context.Background(), st.Path); err != nil {
			t.Errorf("the scheduled backup does not verify: %v", err)
		}
		paths = append(paths, st.Path)
		clock = clock.Add(time.Hour)
	}
	entries, _ := os.ReadDir(dir)
	var left []string
	for _, e := range entries {
		left = append(left, filepath.Join(dir, e.Name()))
	}
	if !slices.Equal(left, paths[1:]) {
		t.Errorf("backups left %v, want the newest two %v", left, paths[1:])
	}
	if last := sched.Last(); !slices.Equal(last.Removed, []string{filepath.Base(paths[0])}) {
		t.Errorf("the third backup pruned %v, want the first", last.Removed)
	}

	ready := readyDetail(t, hs.URL)
	if ready.Last == nil || !ready.Last.OK || ready.Last.Path != paths[2] || ready.Keep != 2 || ready.Every != "1h0m0s" {
		t.Errorf("/readyz backup detail %+v, want the third backup, ok", ready)
	}
	metrics := scrape(t, hs.URL)
	for _, want := range []string{
		`foundry_backups_total{outcome="ok"} 3`,
		`foundry_backups_total{outcome="error"} 0`,
		`foundry_backup_duration_seconds_count 3`,
		`foundry_backup_last_failed 0`,
		"foundry_backup_last_success_timestamp_seconds 1.7723736e+09", // 2026-03-01 14:00 UTC
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}

	// A failure is logged, counted and shown; the backups taken stay.
	sched.DataDir = filepath.Join(t.TempDir(), "gone")
	st := sched.RunOnce(context.Background())
	if st.OK || !strings.Contains(st.Error, "holds no Foundry database") {
		t.Fatalf("backup of a missing folder: %+v", st)
	}
	ready = readyDetail(t, hs.URL)
	if ready.Last == nil || ready.Last.OK || ready.Last.Error == "" {
		t.Errorf("/readyz backup detail after a failure: %+v", ready)
	}
	metrics = scrape(t, hs.URL)
	for _, want := range []string{`foundry_backups_total{outcome="error"} 1`, `foundry_backup_last_failed 1`, `foundry_backups_total{outcome="ok"} 3`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics after a failure lacks %q", want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("after a failed backup %d entries in the backup folder, want the 2 kept", len(entries))
	}
}

type backupDetail struct {
	Dir   string         `json:"dir"`
	Every string         `json:"every"`
	Keep  int            `json:"keep"`
	Last  *backup.Status `json:"last"`
}

func readyDetail(t *testing.T, base string) backupDetail {
	t.Helper()
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Detail struct {
			Backup backupDetail `json:"backup"`
		} `json:"detail"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return body.Detail.Backup
}

func scrape(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestScheduleCheckRefusesBadFlags: too often, keeping none, and a backup
// folder inside the data folder are refused, each naming its flag.
func TestScheduleCheckRefusesBadFlags(t *testing.T) {
	data := t.TempDir()
	for _, tc := range []struct {
		s    *backup.Schedule
		want string
	}{
		{&backup.Schedule{DataDir: data, Dir: t.TempDir(), Every: time.Second, Keep: 1}, "--backup-every"},
		{&backup.Schedule{DataDir: data, Dir: t.TempDir(), Every: time.Hour, Keep: 0}, "--backup-keep"},
		{&backup.Schedule{DataDir: data, Dir: filepath.Join(data, "backups"), Every: time.Hour, Keep: 1}, "inside the data folder"},
		{&backup.Schedule{DataDir: data, Dir: data, Every: time.Hour, Keep: 1}, "inside the data folder"},
	} {
		if err := tc.s.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check(every %s, keep %d, dir %s): %v, want an error saying %q", tc.s.Every, tc.s.Keep, tc.s.Dir, err, tc.want)
		}
	}
}

// TestScheduleRunTakesBackupsUntilStopped: Run takes a backup each period
// and returns once its context ends.
func TestScheduleRunTakesBackupsUntilStopped(t *testing.T) {
	data, _, _, _ := small(t)
	dir := filepath.Join(t.TempDir(), "backups")
	os.MkdirAll(dir, 0o700)
	// Names are per second: a period of more than a second keeps them apart.
	sched := &backup.Schedule{DataDir: data, Dir: dir, Every: 1100 * time.Millisecond, Keep: 2}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { sched.Run(ctx); close(stopped) }()
	// Wait (bounded) for three backups: two kept.
	deadline := time.After(30 * time.Second)
	for {
		entries, _ := os.ReadDir(dir)
		if last := sched.Last(); last.OK && len(last.Removed) > 0 && len(entries) == 2 {
			break
		}
		select {
		case <-deadline:
			cancel()
			t.Fatalf("no three scheduled backups within 30 s; last %+v", sched.Last())
		case <-time.After(50 * time.Millisecond):
		}
	}
	cancel()
	<-stopped
	entries, _ := os.ReadDir(dir)
	if len(entries) > 2 {
		t.Errorf("%d entries kept, want at most 2", len(entries))
	}
	for _, e := range entries {
		if _, err := backup.Verify(context.Background(), filepath.Join(dir, e.Name())); err != nil {
			t.Errorf("%s: %v", e.Name(), err)
		}
	}
}
