package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"foundry/internal/account"
	"foundry/internal/server"
	"foundry/internal/service"
)

const serveLong = `On its first start on a data folder (or database) it creates the workspace
and prints the next steps; with --demo it also creates demo content then (an
approved Note "Welcome", a Room with an app, a repository). --demo on a
folder that already has a workspace changes nothing and says so.

Two servers may serve the same SQLite data folder (both see each other's
writes); the second one logs a warning naming the first one's process ID.
`

// toolsetNames are the MCP toolsets --toolsets takes.
var toolsetNames = server.Toolsets

func serveFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	addr := fs.String("addr", envOr("FOUNDRY_ADDR", "127.0.0.1:8080"), "address to listen on (env FOUNDRY_ADDR; with --https, default :443)")
	var https httpsFlags
	https.register(fs)
	demo := fs.Bool("demo", false, "on first start, also create demo content (an approved Note \"Welcome\" with slides and sheet tabs, a Room, a repository)")
	publicURL := fs.String("public-url", os.Getenv("FOUNDRY_PUBLIC_URL"), "URL clients use to reach this server, e.g. https://foundry.example.com (default http://ADDR; env FOUNDRY_PUBLIC_URL)")
	syncMode := fs.String("sync", "full", "SQLite durability: full (an acknowledged write survives a power cut) or normal (survives a crash of Foundry only)")
	toolsets := fs.String("toolsets", "all", "MCP toolsets to serve: all, or a comma-separated list of "+strings.Join(toolsetNames, ", "))
	readOnly := fs.Bool("read-only", false, "serve only read tools over MCP")
	origins := fs.String("allowed-origins", "", "extra browser origins allowed to call /mcp, comma-separated, each like https://app.example.com")
	gcPercent := fs.Int("gc-percent", 400, "Go GC target (GOGC); a higher value trades memory for less CPU per MCP call; -1 keeps the runtime default")
	memLimit := fs.String("memory-limit", "256MiB", "soft memory cap for the Go runtime (GOMEMLIMIT), so a high --gc-percent stays bounded")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	logFormat := fs.String("log-format", "text", "log lines as text (key=value) or json (one object a line); each line of a request has its request_id")
	metricsAddr := fs.String("metrics-addr", "", "serve GET /metrics only on this HOST:PORT, e.g. 127.0.0.1:9090 (default: on --addr)")
	waitersPerToken := fs.Int("max-waiters-per-token", 8, "concurrent long polls (event polls that wait) and subscription streams one token may hold, each")
	waitersPerNode := fs.Int("max-waiters-per-node", 1024, "concurrent long polls and subscription streams this server holds, each")
	blobGrace := fs.Duration("blob-grace", time.Hour, "how long an uploaded file's bytes that no Note's version references (a refused upload) are kept before they are removed; at least 1m")
	maxWorkspace := fs.String("max-workspace-bytes", "10GiB", "the most one workspace's files may hold, uploads not yet in a Note included (e.g. 10GiB, 500MiB); 0: no limit")
	drainDelay := fs.Duration("drain-delay", server.DefaultDrainDelay, "on SIGTERM, keep serving this long after /readyz turns unready, before closing the listener: at least the interval at which your balancer checks /readyz (e.g. 5s); 0 behind none")
	shutdownTimeout := fs.Duration("shutdown-timeout", server.DefaultShutdownTimeout, "on SIGTERM, the longest a graceful shutdown takes, the drain delay included; past it the calls still open are cut and the exit code is 1")
	hashes := fs.Int("max-password-hashes", 0, "password checks (sign-ins) computed at once, 19 MiB each; others wait up to 2 s, then get 429 (0: a quarter of --memory-limit, at most one per CPU)")
	backups := backupScheduleFlags(fs)
	limits := limitFlags(fs) // ratelimit.go
	return func([]string) error {
		cfg := d.config()
		var err error
		if cfg.Limits, err = limits(); err != nil {
			return err
		}
		if cfg.Toolsets, err = parseToolsets(*toolsets); err != nil {
			return err
		}
		if cfg.Origins, err = parseOrigins(*origins); err != nil {
			return err
		}
		if *syncMode != "full" && *syncMode != "normal" {
			return usagef("--sync: %q is not full or normal", *syncMode)
		}
		var lvl slog.Level
		if err := lvl.UnmarshalText([]byte(*logLevel)); err != nil {
			return usagef("--log-level: %q is not debug, info, warn or error", *logLevel)
		}
		if *gcPercent < -1 {
			return usagef("--gc-percent: %d is not a GC target: give a percentage (e.g. 100 or 400), or -1 for the runtime default", *gcPercent)
		}
		if *waitersPerToken < 1 || *waitersPerNode < 1 {
			return usagef("--max-waiters-per-token and --max-waiters-per-node take a number of 1 or more (got %d and %d)", *waitersPerToken, *waitersPerNode)
		}
		if *hashes < 0 {
			return usagef("--max-password-hashes takes 0 (sized to --memory-limit) or a number of 1 or more (got %d)", *hashes)
		}
		if *shutdownTimeout <= 0 {
			return usagef("--shutdown-timeout: %s is not a duration above zero; give e.g. 30s", *shutdownTimeout)
		}
		if *drainDelay < 0 || *drainDelay >= *shutdownTimeout {
			return usagef("--drain-delay: %s must be 0 or more and shorter than --shutdown-timeout (%s); give e.g. --drain-delay 5s", *drainDelay, *shutdownTimeout)
		}
		if *publicURL != "" {
			if err := checkPublicURL(*publicURL); err != nil {
				return err
			}
		}
		if err := https.check(d, addr, *publicURL); err != nil {
			return err
		}
		limit, err := parseMemoryLimit(*memLimit)
		if err != nil {
			return err
		}
		if err := backups.check(cfg); err != nil {
			return err
		}
		if cfg.BlobGrace, cfg.MaxWorkspaceBytes, err = parseBlobFlags(*blobGrace, *maxWorkspace); err != nil {
			return err
		}
		log, err := newLogger(*logFormat, lvl, os.Stderr)
		if err != nil {
			return err
		}
		slog.SetDefault(log)
		tuneGC(*gcPercent, limit)

		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		// After the first signal, a second one stops the process at once.
		context.AfterFunc(ctx, stop)
		ln, err := net.Listen("tcp", *addr)
		if err != nil {
			return fmt.Errorf("listen on %s: %w (choose another with --addr)", *addr, err)
		}
		defer ln.Close()
		ln, stopHTTP, err := https.listen(log, ln, publicURL)
		if err != nil {
			return err
		}
		defer stopHTTP()
		mln, err := listenMetrics(*metricsAddr, ln.Addr().String())
		if err != nil {
			return err
		}
		cfg.MetricsOwnAddr = mln != nil
		if mln != nil {
			defer mln.Close()
		}
		if *publicURL == "" {
			*publicURL = "http://" + ln.Addr().String()
		}
		cfg.Sync, cfg.PublicURL, cfg.ReadOnly, cfg.Version, cfg.Logger = *syncMode, strings.TrimRight(*publicURL, "/"), *readOnly, version, log
		cfg.WaitersPerToken, cfg.WaitersPerNode = *waitersPerToken, *waitersPerNode
		cfg.StreamsPerToken, cfg.StreamsPerNode = *waitersPerToken, *waitersPerNode
		cfg.PasswordHashes = *hashes
		st, err := server.OpenStore(ctx, cfg)
		if err != nil {
			return err
		}
		served := false // Serve closes the store itself, within its timeout
		defer func() {
			if !served {
				st.Close()
			}
		}()
		if cfg.Database == "" {
			others, release, err := announceServing(d.data)
			if err != nil {
				log.Warn("cannot tell whether another Foundry serves this data folder", "data", d.data, "err", err)
			}
			defer release()
			if len(others) > 0 {
				log.Warn(fmt.Sprintf("another Foundry is serving this data folder (pid %s): both see each other's writes, but each keeps its own limits and its own long polls; stop one unless you mean to run two", joinPIDs(others)),
					"data", d.data, "pids", joinPIDs(others))
			}
		}
		srv := server.New(st, cfg)
		if srv.OAuthErr != nil {
			return fmt.Errorf("start the OAuth authorization server: %w", srv.OAuthErr)
		}
		stopBackups, err := backups.start(ctx, srv, log)
		if err != nil {
			return err
		}
		defer stopBackups()
		https.watch(srv)

		owner, created, err := srv.Service.Bootstrap(ctx, firstWorkspaceName, firstOwnerEmail)
		if err != nil {
			return fmt.Errorf("create workspace: %w", err)
		}
		demoMade := false
		switch {
		case created:
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
				demoMade = true
			}
		case *demo:
			log.Warn("--demo: this data already has a workspace, so no demo content was created (demo content is only created on a first start); start with --demo on a new --data folder to see it",
				"data", where(cfg), "workspace", owner.Workspace.ID)
		}
		setup := newOwnerSetup(ctx, log, srv, owner, *publicURL)
		switch {
		case created:
			printNextSteps(os.Stderr, d, *publicURL, demoMade, setup)
		case setup.link != "":
			log.Warn("the owner has no password yet, so nobody can sign in: open this one-time link to set it (it works once, for 24 hours; every start logs a fresh one until a password is set)",
				"email", setup.email, "link", setup.link, "or", fmt.Sprintf("%s user passwd %s %s --password-stdin", self, setup.email, d.arg()))
		}

		if mln != nil {
			defer serveMetrics(mln, srv.MetricsHandler, log)()
		}
		// The blob collector and the backup schedule use the store: both stop
		// once every call has answered, before the store closes.
		stopBlobs := sync.OnceFunc(srv.Blobs.Start())
		defer stopBlobs()
		// Notes written before the search index existed are indexed in the
		// background, a Note per transaction, while writes go on.
		stopIndex := sync.OnceFunc(indexInBackground(ctx, srv, log))
		defer stopIndex()
		hs := server.HTTPServer(srv.Handler, ln.Addr().String())
		hs.ErrorLog = server.ErrorLog(log)
		server.TrackConnections(srv.Metrics, hs)
		log.Info("Foundry is serving", "mcp", *publicURL+"/mcp", "data", where(cfg), "version", version)
		served = true
		return srv.Serve(ctx, hs, ln, server.ServeOptions{DrainDelay: *drainDelay, ShutdownTimeout: *shutdownTimeout, Logger: log,
			Drained: func(context.Context) { stopBlobs(); stopBackups(); stopIndex() }})
	}
}

// indexInBackground runs service.IndexNotes until it is done or the
// returned func is called (which waits for it).
func indexInBackground(ctx context.Context, srv *server.Server, log *slog.Logger) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := service.IndexNotes(ctx, srv.Store, log); err != nil && ctx.Err() == nil {
			log.Error("search index: indexing older Notes stopped; the next start goes on", "err", err)
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// parseToolsets reads --toolsets: "all" is nil (every toolset); otherwise
// every name must be a toolset, so a typo never serves fewer tools silently.
func parseToolsets(v string) ([]string, error) {
	if strings.EqualFold(strings.TrimSpace(v), "all") {
		return nil, nil
	}
	valid := "all, or a comma-separated list of " + strings.Join(toolsetNames, ", ")
	names := commaList(strings.ToLower(v))
	if len(names) == 0 {
		return nil, usagef("--toolsets: %q names no toolset; give %s", v, valid)
	}
	for _, n := range names {
		if n == "all" {
			return nil, usagef("--toolsets: all cannot be mixed with toolset names; give %s", valid)
		}
		if !slices.Contains(toolsetNames, n) {
			return nil, usagef("--toolsets: unknown toolset %q; give %s", n, valid)
		}
	}
	return names, nil
}

// parseOrigins reads --allowed-origins: each an origin as a browser sends
// it (scheme://host[:port], no path), so it can match.
func parseOrigins(v string) ([]string, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var out []string
	for _, o := range commaList(v) {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return nil, usagef("--allowed-origins: %q is not an origin; give each like https://app.example.com or http://localhost:5173 (scheme, host and port only)", o)
		}
		out = append(out, strings.ToLower(u.Scheme+"://"+u.Host))
	}
	return out, nil
}

func checkPublicURL(v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return usagef("--public-url: %q is not an http:// or https:// URL like https://foundry.example.com", v)
	}
	return nil
}

func where(c server.Config) string {
	if c.Database != "" {
		return "postgres"
	}
	return c.DataDir
}

func parseMemoryLimit(limit string) (int64, error) {
	if limit == "" {
		return 0, nil
	}
	n, err := parseBytes(limit)
	if err != nil {
		return 0, usagef("--memory-limit: %v", err)
	}
	return n, nil
}

func tuneGC(percent int, limit int64) {
	if percent != -1 && os.Getenv("GOGC") == "" {
		debug.SetGCPercent(percent)
	}
	if limit > 0 && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(limit)
	}
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

// ownerSetup is the one-time link for the workspace's owner to set a
// password, made while no owner has one: nothing to guess, and no password
// printed anywhere. link is "" once an owner has a password (or when the
// link could not be made, which is logged).
type ownerSetup struct {
	email, link string
	expires     time.Time
}

func newOwnerSetup(ctx context.Context, log *slog.Logger, srv *server.Server, owner service.Owner, publicURL string) ownerSetup {
	s := ownerSetup{email: owner.User.Email}
	u, ok, err := account.OwnerToSetUp(ctx, srv.Store, owner.Workspace.ID)
	if err != nil {
		log.Error("cannot tell whether an owner has a password", "err", err)
		return s
	}
	if !ok {
		return s
	}
	s.email = u.Email
	link, exp, err := account.CreateSetupLink(ctx, srv.Store, u, publicURL, time.Now())
	if err != nil {
		log.Error("cannot make the owner's one-time link to set a password", "email", u.Email, "err", err)
		return s
	}
	s.link, s.expires = link, exp
	return s
}

// printNextSteps is what a first start tells the person, with commands
// that run as typed (see self).
func printNextSteps(w io.Writer, d dataFlags, publicURL string, demoMade bool, setup ownerSetup) {
	var b strings.Builder
	fmt.Fprintf(&b, "\nFoundry created its workspace (data: %s).\n\nNext steps (in another terminal, from this folder):\n", where(d.config()))
	if setup.link != "" {
		fmt.Fprintf(&b, "  1. Set the password of the owner, %s, with this one-time link (it works once, until %s UTC), then sign in at %s/signin:\n     %s\n", setup.email, setup.expires.UTC().Format("2006-01-02 15:04"), publicURL, setup.link)
		fmt.Fprintf(&b, "     or give the password on standard input: %s user passwd %s %s --password-stdin\n", self, setup.email, d.arg())
	} else {
		fmt.Fprintf(&b, "  1. Set the password of the owner, %s (this prints a one-time link), then sign in at %s/signin:\n       %s user passwd %s %s\n", setup.email, publicURL, self, setup.email, d.arg())
	}
	fmt.Fprintf(&b, "  2. Connect an MCP client by its URL alone, %s/mcp: it sends you to sign in and to choose what it may reach. E.g. Claude Code:\n       claude mcp add --transport http foundry %s/mcp\n", publicURL, publicURL)
	fmt.Fprintf(&b, "  3. For a headless agent (CI, scripts), create a personal access token instead (shown once) and send it as \"Authorization: Bearer <token>\":\n       %s token create %s --scopes osfoundry:read,osfoundry:write\n", self, d.arg())
	if demoMade {
		fmt.Fprintf(&b, "  4. The demo Note \"Welcome\" is already connected. See the Notes and Rooms with:\n       %s notes list %s\n       %s rooms list %s\n", self, d.arg(), self, d.arg())
		b.WriteString("     Agents reach a Note of yours only once you switch on its connected access:\n")
	} else {
		b.WriteString("  4. Agents reach a Note only once its owner switches on connected access:\n")
	}
	fmt.Fprintf(&b, "       %s notes create %s --title \"My note\" --approve\n     or, for a Note that exists:\n       %s notes approve NOTE_ID %s\n", self, d.arg(), self, d.arg())
	if !demoMade {
		b.WriteString("     (start with --demo on a new data folder for a Welcome Note, a Room and a repository)\n")
	}
	if strings.HasPrefix(self, "go run ") {
		fmt.Fprintf(&b, "\nTip: \"go install ./cmd/foundry\" (at the root of the repository) installs the foundry command into $(go env GOPATH)/bin; with that folder on your PATH, type foundry instead of %q.\n", self)
	}
	fmt.Fprintf(&b, "Every command has its help: %s --help, %s token create --help, …\n\n", self, self)
	io.WriteString(w, b.String())
}

func joinPIDs(pids []int) string {
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, ", ")
}
