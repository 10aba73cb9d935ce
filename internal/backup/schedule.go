package backup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// NamePrefix starts the name of every scheduled backup; the rest is the
// UTC time it was started, so names sort by age.
const NamePrefix = "foundry-backup-"

const stampLayout = "20060102T150405Z"

var scheduledName = regexp.MustCompile(`^` + NamePrefix + `\d{8}T\d{6}Z$`)

// Name is the name of a scheduled backup started at t.
func Name(t time.Time) string { return NamePrefix + t.UTC().Format(stampLayout) }

// Schedule takes a backup of a data folder into a folder every so often
// and keeps the newest few.
type Schedule struct {
	DataDir string        // the data folder served
	Dir     string        // where the backups go
	Every   time.Duration // how often
	Keep    int           // how many backups are kept (the oldest beyond are removed)
	Version string        // Foundry's version, for the manifest
	Log     *slog.Logger
	Now     func() time.Time // the clock (nil: time.Now)

	mu   sync.Mutex
	last Status
	next time.Time

	once      sync.Once
	total     *prometheus.CounterVec
	duration  prometheus.Histogram
	lastOK    prometheus.Gauge
	lastSize  prometheus.Gauge
	lastError prometheus.Gauge
}

// Status is the result of the last scheduled backup, as /readyz shows it.
type Status struct {
	Time     time.Time `json:"time"` // when it started
	OK       bool      `json:"ok"`
	Error    string    `json:"error,omitempty"`
	Path     string    `json:"path,omitempty"`
	Bytes    int64     `json:"bytes,omitempty"` // the database and the blobs
	Seconds  float64   `json:"duration_seconds"`
	Missing  int       `json:"missing_blobs,omitempty"` // files named whose bytes the data folder lacks
	Removed  []string  `json:"pruned,omitempty"`        // older backups removed after it
	PruneErr string    `json:"prune_error,omitempty"`
}

func (s *Schedule) init() {
	s.once.Do(func() {
		if s.Log == nil {
			s.Log = slog.Default()
		}
		if s.Now == nil {
			s.Now = time.Now
		}
		s.total = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "foundry_backups_total", Help: "Scheduled backups taken, by outcome (ok or error).",
		}, []string{"outcome"})
		s.total.WithLabelValues("ok")
		s.total.WithLabelValues("error")
		s.duration = prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "foundry_backup_duration_seconds", Help: "How long scheduled backups took, verification included.",
			Buckets: prometheus.ExponentialBuckets(0.1, 4, 8), // 0.1 s … ~27 min
		})
		s.lastOK = prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "foundry_backup_last_success_timestamp_seconds", Help: "When the last scheduled backup that succeeded started (Unix time; 0: none yet).",
		})
		s.lastSize = prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "foundry_backup_last_size_bytes", Help: "Bytes of the last scheduled backup that succeeded (database and blobs).",
		})
		s.lastError = prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "foundry_backup_last_failed", Help: "1 when the last scheduled backup failed, else 0.",
		})
	})
}

// Check refuses a schedule that cannot work, before the server starts:
// its values, and a backup folder that cannot be made or written.
func (s *Schedule) Check() error {
	if s.Every < time.Minute {
		return fmt.Errorf("--backup-every: %s is too often; give a duration of 1m or more, e.g. 6h", s.Every)
	}
	if s.Keep < 1 {
		return fmt.Errorf("--backup-keep: %d keeps no backup; give 1 or more", s.Keep)
	}
	if dir, data := absPath(s.Dir), absPath(s.DataDir); dir != "" && data != "" && isUnder(dir, data) {
		return fmt.Errorf("--backup-dir: %s is inside the data folder %s; keep backups elsewhere (on another disk, ideally)", s.Dir, s.DataDir)
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("--backup-dir: %w", err)
	}
	f, err := os.CreateTemp(s.Dir, ".foundry-write-check-*")
	if err != nil {
		return fmt.Errorf("--backup-dir: %s cannot be written by this user: %w", s.Dir, err)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// isUnder reports whether path is inside dir (both absolute and clean).
func isUnder(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Register registers the schedule's metrics.
func (s *Schedule) Register(reg prometheus.Registerer) error {
	s.init()
	for _, c := range []prometheus.Collector{s.total, s.duration, s.lastOK, s.lastSize, s.lastError} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// Detail is what /readyz shows of the schedule: the last result and the
// next run. It never blocks for long (a backup in progress does not hold
// the lock).
func (s *Schedule) Detail() any {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := map[string]any{"dir": s.Dir, "every": s.Every.String(), "keep": s.Keep}
	if !s.next.IsZero() {
		d["next"] = s.next.UTC().Format(time.RFC3339)
	}
	if !s.last.Time.IsZero() {
		d["last"] = s.last
	}
	return d
}

// Last is the result of the last backup (zero Time: none yet).
func (s *Schedule) Last() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// Run takes a backup every s.Every until ctx ends; the first one after
// s.Every has passed. A backup that fails is logged and kept as the last
// result; the next one is tried on time.
func (s *Schedule) Run(ctx context.Context) {
	s.init()
	t := time.NewTicker(s.Every)
	defer t.Stop()
	s.setNext(s.Now().Add(s.Every))
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.RunOnce(ctx)
			s.setNext(s.Now().Add(s.Every))
		}
	}
}

func (s *Schedule) setNext(t time.Time) {
	s.mu.Lock()
	s.next = t
	s.mu.Unlock()
}

// RunOnce takes one backup now, prunes the oldest beyond s.Keep after a
// success, and records the result.
func (s *Schedule) RunOnce(ctx context.Context) Status {
	s.init()
	start := s.Now()
	st := Status{Time: start.UTC().Truncate(time.Second), Path: filepath.Join(s.Dir, Name(start))}
	m, err := Backup(ctx, s.DataDir, st.Path, Options{Version: s.Version, Now: s.Now})
	if err == nil {
		_, err = os.Stat(filepath.Join(st.Path, ManifestName))
	}
	st.Seconds = s.Now().Sub(start).Seconds()
	s.duration.Observe(st.Seconds)
	if err != nil {
		st.Error = err.Error()
		s.total.WithLabelValues("error").Inc()
		s.lastError.Set(1)
		if ctx.Err() != nil {
			s.Log.Info("scheduled backup stopped: the server is shutting down; nothing was left behind", "dir", s.Dir)
		} else {
			s.Log.Error("scheduled backup failed; the next one is tried on schedule", "dir", s.Dir, "err", err)
		}
	} else {
		st.OK = true
		st.Bytes = m.Database.Size + m.Counts.BlobBytes
		if st.Missing = len(m.MissingBlobs); st.Missing > 0 {
			s.Log.Warn("scheduled backup: "+missingText(m.MissingBlobs), "path", st.Path)
		}
		s.total.WithLabelValues("ok").Inc()
		s.lastError.Set(0)
		s.lastOK.Set(float64(start.Unix()))
		s.lastSize.Set(float64(st.Bytes))
		removed, perr := Prune(s.Dir, s.Keep)
		st.Removed = removed
		if perr != nil {
			st.PruneErr = perr.Error()
			s.Log.Error("removing old backups failed", "dir", s.Dir, "err", perr)
		}
		s.Log.Info("scheduled backup taken", "path", st.Path, "bytes", st.Bytes, "seconds", st.Seconds, "pruned", len(removed))
	}
	s.mu.Lock()
	s.last = st
	s.mu.Unlock()
	return st
}

// Prune removes the oldest scheduled backups in dir beyond the newest
// keep, and answers the names removed. Only whole backups (named by
// Name, with a manifest) count and are removed; anything else in dir is
// left alone.
func Prune(dir string, keep int) ([]string, error) {
	if keep < 1 {
		return nil, fmt.Errorf("keep %d: at least one backup is kept", keep)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() || !scheduledName.MatchString(e.Name()) {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, e.Name(), ManifestName)); err != nil {
			continue
		}
		names = append(names, e.Name())
	}
	sort.Strings(names) // oldest first: the names are UTC times
	if len(names) <= keep {
		return nil, nil
	}
	var removed []string
	var errs []error
	for _, n := range names[:len(names)-keep] {
		// The manifest goes first: a backup half removed is not taken
		// for a whole one.
		if err := os.Remove(filepath.Join(dir, n, ManifestName)); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, n)); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, n)
	}
	return removed, errors.Join(errs...)
}
