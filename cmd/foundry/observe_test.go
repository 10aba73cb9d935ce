package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeMetricsAddrAndJSONLogs runs foundry serve with --log-format json
// and --metrics-addr: every line it logs is one JSON object, /metrics is
// served on its own address and not on --addr, and a request's lines carry
// its X-Request-Id.
func TestServeMetricsAddrAndJSONLogs(t *testing.T) {
	t.Parallel()
	bin := foundryBin(t)
	data := filepath.Join(t.TempDir(), "data")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--data", data, "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--log-format", "json", "--log-level", "debug")
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default: // the test stopped reading; the buffer is bounded
			}
		}
	}()
	var logged []map[string]any
	// read takes JSON log lines until one has msg (the first start also
	// prints its next steps for a person, which are not log lines).
	read := func(msg string) map[string]any {
		t.Helper()
		for l := range lines {
			if !strings.HasPrefix(l, "{") {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("a log line is not JSON: %v\n%s", err, l)
			}
			logged = append(logged, m)
			if m["msg"] == msg {
				return m
			}
		}
		t.Fatalf("no %q logged; logged %v", msg, logged)
		return nil
	}
	metricsURL, _ := read("metrics are served on their own address")["metrics"].(string)
	mcpURL, _ := read("Foundry is serving")["mcp"].(string)
	base := strings.TrimSuffix(mcpURL, "/mcp")
	if metricsURL == "" || base == "" || strings.HasPrefix(metricsURL, base+"/") {
		t.Fatalf("metrics at %q, server at %q", metricsURL, base)
	}

	get := func(u, id string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		if id != "" {
			req.Header.Set("X-Request-Id", id)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
		if id != "" && resp.Header.Get("X-Request-Id") != id {
			t.Errorf("GET %s: X-Request-Id %q, want %q", u, resp.Header.Get("X-Request-Id"), id)
		}
		return resp.StatusCode, string(b)
	}
	if code, _ := get(base+"/readyz", "cli-check-1"); code != http.StatusOK {
		t.Fatalf("/readyz: %d", code)
	}
	if code, body := get(base+"/metrics", ""); code == http.StatusOK && strings.Contains(body, "foundry_http_requests_total") {
		t.Errorf("/metrics is served on --addr too")
	}
	code, body := get(metricsURL, "")
	if code != http.StatusOK || !strings.Contains(body, `foundry_http_requests_total{code="2xx",route="GET /readyz"} 1`) {
		t.Errorf("--metrics-addr: %d\n%s", code, body)
	}
	if code, _ := get(strings.TrimSuffix(metricsURL, "/metrics")+"/readyz", ""); code != http.StatusNotFound {
		t.Errorf("--metrics-addr serves /readyz too: %d", code)
	}
	if m := read("request"); m["request_id"] != "cli-check-1" || m["route"] != "GET /readyz" {
		t.Errorf("the request's log line: %v", m)
	}
	cancel()
	cmd.Wait()
}

// TestServeObserveFlagsRefused: a bad --log-format or --metrics-addr is a
// usage error (exit 2) that names the flag, before anything is served.
func TestServeObserveFlagsRefused(t *testing.T) {
	t.Parallel()
	bin := foundryBin(t)
	data := filepath.Join(t.TempDir(), "data")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--log-format", "yaml"}, "--log-format"},
		{[]string{"--metrics-addr", "9090"}, "--metrics-addr"},
		{[]string{"--metrics-addr", "metrics.example.com:9090"}, "--metrics-addr"},
		{[]string{"--metrics-addr", "127.0.0.1:x"}, "--metrics-addr"},
	} {
		code, stderr, served := serveOrRefuse(t, bin, append([]string{"serve", "--data", data, "--addr", "127.0.0.1:0"}, c.args...)...)
		if served || code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("serve %v: exit %d, served %v:\n%s", c.args, code, served, stderr)
		}
	}
}
