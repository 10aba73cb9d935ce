package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"foundry/internal/sim"
)

// simLong is the help of foundry sim, with the list of experiments.
func simLong() string {
	var b strings.Builder
	b.WriteString(`Reproduces the seeds' published measurements against a real Foundry server
over MCP, through a fault injector that loses answers after the server
committed. Without --url it starts Foundry in-process on a loopback port
(SQLite in a temporary folder, or PostgreSQL with --database).

Each experiment prints a table with the seed's figure beside ours and writes
a CSV (and an SVG chart) to --out. With --check the command exits non-zero
if any invariant failed; the last line is "N invariants held, M failed".

Experiments (name or number; none = all):
`)
	for _, e := range sim.Experiments() {
		fmt.Fprintf(&b, "  %2d %-20s %-8s %s\n", e.N, e.Name, seedLabel(e.Seed), e.Title)
	}
	return b.String()
}

func simFlags(fs *flag.FlagSet) func([]string) error {
	seed := fs.Int64("seed", 0, "seed for every experiment (0: the seeds' published ones: 7 for tab handles, 1–3, 1–5, …)")
	quick := fs.Bool("quick", false, "small sizes (seconds instead of minutes)")
	check := fs.Bool("check", false, "exit non-zero if any invariant fails")
	url := fs.String("url", "", "drive a running Foundry at this URL (…/mcp) instead of an in-process one; people's acts are then skipped, and the runs write into --note")
	token := fs.String("token", os.Getenv("FOUNDRY_TOKEN"), "bearer token with osfoundry:read and osfoundry:write, with --url (env FOUNDRY_TOKEN)")
	noteID := fs.String("note", "", "with --url: the approved Note to work on (default: the first one the token reaches)")
	roomID := fs.String("room", "", "with --url: the cloud Room to work on")
	database := fs.String("database", "", "postgres:// URL for the in-process server (default: SQLite in a temporary folder); the runs add Notes and Rooms to its first workspace")
	out := fs.String("out", "", "folder for report.md, CSV and SVG files (default: docs/sim/DATE for a full run, a temporary folder with --quick)")
	list := fs.Bool("list", false, "list the experiments and exit")
	return func(args []string) error {
		if *list {
			for _, e := range sim.Experiments() {
				fmt.Printf("%2d %-20s %-8s %s\n", e.N, e.Name, seedLabel(e.Seed), e.Title)
			}
			return nil
		}
		if *url != "" && *database != "" {
			return usagef("give --url (a running server) or --database (an in-process one), not both")
		}
		if *url != "" && *token == "" {
			return usagef("--url needs --token (create one with `%s token create --scopes osfoundry:read,osfoundry:write`)", self)
		}
		if _, err := sim.Select(args); err != nil {
			return usagef("%v", err)
		}
		dir := *out
		if dir == "" {
			date := time.Now().Format("2006-01-02")
			if *quick {
				dir = filepath.Join(os.TempDir(), "foundry-sim-"+date)
			} else {
				dir = filepath.Join("docs", "sim", date)
			}
		}

		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		cfg := sim.Config{Seed: *seed, Quick: *quick, OutDir: dir, URL: *url, Token: *token, NoteID: *noteID, RoomID: *roomID,
			Database: *database, Progress: os.Stderr}
		fmt.Fprintf(os.Stderr, "sim: report.md, CSV and SVG files go to %s\n", dir)
		// The report's last line on stdout is "N invariants held, M failed".
		_, failed, err := sim.Run(ctx, args, cfg, os.Stdout)
		if err != nil {
			return err
		}
		if *check && failed > 0 {
			return fmt.Errorf("%d invariants failed", failed)
		}
		return nil
	}
}

func seedLabel(s string) string {
	if s == "" {
		return ""
	}
	return "seed " + s
}
