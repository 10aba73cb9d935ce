package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"foundry/internal/server"
)

func cmdServe(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var d dataFlags
	d.register(fs)
	addr := fs.String("addr", envOr("FOUNDRY_ADDR", "127.0.0.1:8080"), "address to listen on")
	demo := fs.Bool("demo", false, "on first start, also create demo content (an approved Note \"Welcome\" with slides and sheet tabs)")
	publicURL := fs.String("public-url", os.Getenv("FOUNDRY_PUBLIC_URL"), "URL clients use to reach this server (default http://ADDR)")
	syncMode := fs.String("sync", "full", "SQLite durability: full (an acknowledged write survives a power cut) or normal (survives a crash of Foundry only)")
	toolsets := fs.String("toolsets", "all", "MCP toolsets to serve: all, or a comma list of notes, rooms, events")
	readOnly := fs.Bool("read-only", false, "serve only read tools over MCP")
	origins := fs.String("allowed-origins", "", "extra browser origins allowed to call /mcp, comma-separated")
	gcPercent := fs.Int("gc-percent", 400, "Go GC target (GOGC); a higher value trades memory for less CPU per MCP call; -1 keeps the runtime default")
	memLimit := fs.String("memory-limit", "1GiB", "soft memory cap for the Go runtime (GOMEMLIMIT), so a high --gc-percent stays bounded")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	waitersPerToken := fs.Int("max-waiters-per-token", 8, "concurrent long polls (poll_resource_events with wait_seconds > 0) and subscription streams one token may hold, each")
	waitersPerNode := fs.Int("max-waiters-per-node", 1024, "concurrent long polls and subscription streams this server holds, each")
	if err := parse(fs, args); err != nil {
		return err
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level: %q is not debug, info, warn or error", *logLevel)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
	slog.SetDefault(log)
	if err := tuneGC(*gcPercent, *memLimit); err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (choose another with --addr)", *addr, err)
	}
	if *publicURL == "" {
		*publicURL = "http://" + ln.Addr().String()
	}
	cfg := d.config()
	cfg.Sync, cfg.PublicURL, cfg.ReadOnly, cfg.Version, cfg.Logger = *syncMode, strings.TrimRight(*publicURL, "/"), *readOnly, version, log
	if *toolsets != "all" {
		cfg.Toolsets = grant(*toolsets)
	}
	cfg.Origins = grant(*origins)
	cfg.WaitersPerToken, cfg.WaitersPerNode = *waitersPerToken, *waitersPerNode
	cfg.StreamsPerToken, cfg.StreamsPerNode = *waitersPerToken, *waitersPerNode
	st, err := server.OpenStore(ctx, cfg)
	if err != nil {
		ln.Close()
		return err
	}
	defer st.Close()
	srv := server.New(st, cfg)

	owner, created, err := srv.Service.Bootstrap(ctx, "Foundry", "owner@localhost")
	if err != nil {
		return fmt.Errorf("create workspace: %w", err)
	}
	if created {
		log.Info("created workspace", "workspace", owner.Workspace.ID, "owner", owner.User.ID)
		if *demo {
			id, err := srv.Service.Demo(ctx, owner)
			if err != nil {
				return fmt.Errorf("demo content: %w", err)
			}
			log.Info("created demo Note", "note", id, "title", "Welcome")
			roomID, err := srv.Service.DemoRoom(ctx, owner)
			if err != nil {
				return fmt.Errorf("demo room: %w", err)
			}
			log.Info("created demo Room", "room", roomID)
		}
		printNextSteps(cfg, d, *publicURL)
	}

	hs := server.HTTPServer(srv.Handler, ln.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	log.Info("Foundry is serving", "mcp", *publicURL+"/mcp", "data", where(cfg), "version", version)
	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	case <-ctx.Done():
		log.Info("shutting down")
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}
	return nil
}

func where(c server.Config) string {
	if c.Database != "" {
		return "postgres"
	}
	return c.DataDir
}

func tuneGC(percent int, limit string) error {
	if percent != -1 && os.Getenv("GOGC") == "" {
		debug.SetGCPercent(percent)
	}
	if limit != "" && os.Getenv("GOMEMLIMIT") == "" {
		n, err := parseBytes(limit)
		if err != nil {
			return fmt.Errorf("--memory-limit: %v", err)
		}
		debug.SetMemoryLimit(n)
	}
	return nil
}

func parseBytes(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			var n int64
			if _, err := fmt.Sscanf(strings.TrimSuffix(s, u.suffix), "%d", &n); err != nil || n <= 0 {
				break
			}
			return n * u.mult, nil
		}
	}
	return 0, fmt.Errorf("%q is not a size like 512MiB or 2GiB", s)
}

func printNextSteps(c server.Config, d dataFlags, publicURL string) {
	dataArg := "--data " + d.data
	if c.Database != "" {
		dataArg = "--database \"$FOUNDRY_DATABASE_URL\""
	}
	fmt.Fprintf(os.Stderr, `
Foundry created its workspace (data: %s).

Next steps:
  1. Create a token for an MCP client (shown once):
       foundry token create %s --scopes osfoundry:read,osfoundry:write
  2. Connect a client to %s/mcp with the header "Authorization: Bearer <token>", e.g. Claude Code:
       claude mcp add --transport http foundry %s/mcp --header "Authorization: Bearer <token>"
  3. Agents reach a Note only once its owner switches on connected access:
       foundry notes create %s --title "My note" --approve     (or: foundry notes approve NOTE_ID)
     (start with --demo on a fresh data folder for a Welcome Note, a Room and a repository)

`, where(c), dataArg, publicURL, publicURL, dataArg)
}
