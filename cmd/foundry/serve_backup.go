package main

import (
	"context"
	"flag"
	"log/slog"
	"sync"
	"time"

	"foundry/internal/backup"
	"foundry/internal/server"
)

func init() {
	argNames["backup-dir"], argNames["backup-every"], argNames["backup-keep"] = "DIR", "DURATION", "N"
}

// backupSchedule is serve's --backup-dir, --backup-every and --backup-keep.
type backupSchedule struct {
	fs    *flag.FlagSet
	dir   string
	every time.Duration
	keep  int
	sched *backup.Schedule
}

func backupScheduleFlags(fs *flag.FlagSet) *backupSchedule {
	b := &backupSchedule{fs: fs}
	fs.StringVar(&b.dir, "backup-dir", "", "take backups of the SQLite data folder into this folder on a schedule (see \"foundry backup --help\"); off when empty")
	fs.DurationVar(&b.every, "backup-every", 6*time.Hour, "with --backup-dir: how often to take a backup, e.g. 6h or 30m")
	fs.IntVar(&b.keep, "backup-keep", 7, "with --backup-dir: how many backups to keep; the oldest beyond are removed")
	return b
}

// check refuses the flags when they cannot be used: without --backup-dir,
// with PostgreSQL, or with values the schedule refuses.
func (b *backupSchedule) check(cfg server.Config) error {
	set := map[string]bool{}
	b.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if b.dir == "" {
		if set["backup-every"] || set["backup-keep"] {
			return usagef("--backup-every and --backup-keep need --backup-dir, the folder the backups go to")
		}
		return nil
	}
	if cfg.Database != "" {
		return usagef("--backup-dir: scheduled backups copy a SQLite data folder; with --database, back PostgreSQL up with pg_dump -Fc or base backups and WAL archiving (the operators' guide, \"Backups and restore\"), which hold the blobs too")
	}
	b.sched = &backup.Schedule{DataDir: cfg.DataDir, Dir: b.dir, Every: b.every, Keep: b.keep, Version: version}
	if err := b.sched.Check(); err != nil {
		return usagef("%v", err)
	}
	return nil
}

// start runs the schedule beside srv, with its result in /readyz and
// /metrics; stop ends it and waits for a backup in progress to stop.
func (b *backupSchedule) start(ctx context.Context, srv *server.Server, log *slog.Logger) (stop func(), err error) {
	if b.sched == nil {
		return func() {}, nil
	}
	b.sched.Log = log
	if err := b.sched.Register(srv.Metrics); err != nil {
		return nil, err
	}
	srv.Ready.SetDetail("backup", b.sched.Detail)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { b.sched.Run(ctx) })
	log.Info("scheduled backups", "dir", b.dir, "every", b.every.String(), "keep", b.keep)
	return func() { cancel(); wg.Wait() }, nil
}
