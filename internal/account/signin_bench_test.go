package account_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"testing"
	"time"

	"foundry/internal/account"
	"foundry/internal/benchtest"
	"foundry/internal/service"
	"foundry/internal/store/sqlite"
)

// procMB is one "Name:   N kB" field of /proc/self/status, in MB.
func procMB(b *testing.B, field string) float64 {
	return float64(benchtest.ProcField(b, "status", field)) / 1024
}

// BenchmarkConcurrentSignIns: 20 people sign in at once (real HTTP on
// 127.0.0.1, each with their own browser and the right password), against a
// Manager with its default bound on password hashes, under foundry serve's
// GC settings (GOGC=400, GOMEMLIMIT=256MiB, unless set in the
// environment). Each op is one burst. Reports the RSS before the burst
// (after a GC that returned freed memory to the system), the peak RSS
// during it (VmHWM, reset before), the RSS right after it, after a GC, and
// one second later (nothing forced by the benchmark), each in MB; the
// latencies of the sign-ins that succeeded (p50, p95, max, in ms) and how
// many of the 20 were answered 429 (all slots busy for the whole wait).
//
//	go test ./internal/account/ -run '^$' -bench BenchmarkConcurrentSignIns -benchtime=5x -count=1
func BenchmarkConcurrentSignIns(b *testing.B) {
	const people = 20
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(256 << 20))
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, b.TempDir(), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	own, _, err := service.New(st).Bootstrap(ctx, "Foundry", ownerEmail)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := account.AddUser(ctx, st, own.Workspace.ID, account.NewUser{Email: adaEmail, Name: "Ada", Role: account.RoleMember, Password: adaPass}); err != nil {
		b.Fatal(err)
	}
	m := account.New(st, account.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	mux := http.NewServeMux()
	m.Mount(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	// signinForm opens the sign-in page in a new browser and answers it
	// with the form filled in.
	signinForm := func() (*http.Client, url.Values) {
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar, Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Get(srv.URL + "/signin")
		if err != nil {
			b.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		f := hidden(string(page))
		f.Set("email", adaEmail)
		f.Set("password", adaPass)
		return c, f
	}
	clients := make([]*http.Client, people)
	forms := make([]url.Values, people)
	var idle, peak, after, afterGC, settled float64
	var lat []time.Duration
	busy := 0
	for range b.N {
		for i := range clients {
			clients[i], forms[i] = signinForm()
		}
		runtime.GC()
		debug.FreeOSMemory()
		idle += procMB(b, "VmRSS")
		hwm := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
		var wg sync.WaitGroup
		var mu sync.Mutex
		start := make(chan struct{})
		for i := range clients {
			wg.Go(func() {
				<-start
				t0 := time.Now()
				resp, err := clients[i].PostForm(srv.URL+"/signin", forms[i])
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				d := time.Since(t0)
				mu.Lock()
				defer mu.Unlock()
				switch resp.StatusCode {
				case http.StatusSeeOther:
					lat = append(lat, d)
				case http.StatusTooManyRequests:
					busy++
				default:
					b.Errorf("sign-in: %d", resp.StatusCode)
				}
			})
		}
		close(start)
		wg.Wait()
		after += procMB(b, "VmRSS")
		if hwm {
			peak += procMB(b, "VmHWM")
		}
		runtime.GC()
		afterGC += procMB(b, "VmRSS")
		time.Sleep(time.Second)
		settled += procMB(b, "VmRSS")
	}
	N := float64(b.N)
	b.ReportMetric(idle/N, "idle-rss-MB")
	if peak > 0 {
		b.ReportMetric(peak/N, "peak-rss-MB")
	}
	b.ReportMetric(after/N, "after-rss-MB")
	b.ReportMetric(afterGC/N, "after-gc-rss-MB")
	b.ReportMetric(settled/N, "settled-rss-MB")
	if len(lat) > 0 {
		slices.Sort(lat)
		pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1e3 }
		b.ReportMetric(pct(0.5), "ok-p50-ms")
		b.ReportMetric(pct(0.95), "ok-p95-ms")
		b.ReportMetric(pct(1), "ok-max-ms")
	}
	b.ReportMetric(float64(busy)/N, "429/op")
}
