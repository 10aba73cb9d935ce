package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"foundry/internal/auth"
	"foundry/internal/server/servertest"
	"foundry/internal/service"
	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
)

// The live benchmarks: many people's browsers following one Note over
// GET /api/events, on real HTTP on loopback. Run them with a bounded
// -benchtime, e.g.
//
//	go test ./internal/api -run '^$' -bench 'Viewers|OtherWriters' -benchtime 5x

const (
	benchViewers  = 1000
	benchHistory  = 2350             // the versions of the long-lived Note
	benchNotified = 10 * time.Second // a viewer not notified by then counts as not notified
)

// benchEnv is a server with a person signed in, and an HTTP client that
// keeps as many connections as the viewers need.
type benchEnv struct {
	*servertest.Env
	secret, csrf string
	owner        service.Caller
	client       *http.Client
}

func benchStores(b *testing.B, fn func(b *testing.B, e *benchEnv)) {
	b.Run("sqlite", func(b *testing.B) { fn(b, benchStart(b, nil)) })
	if os.Getenv("FOUNDRY_TEST_POSTGRES_URL") == "" {
		return
	}
	b.Run("postgres", func(b *testing.B) {
		u, _ := pgtest.Schema(b)
		st, err := postgres.Open(context.Background(), u)
		if err != nil {
			b.Fatal(err)
		}
		fn(b, benchStart(b, st))
	})
}

func benchStart(b *testing.B, st store.Store) *benchEnv {
	b.Helper()
	e := servertest.Start(b, servertest.Options{Store: st})
	e.Server.Service.SetWaitLimits(4*benchViewers, 4*benchViewers)
	secret, csrf := store.NewID("secret"), store.NewID("csrf")
	now := time.Now().UTC()
	if err := e.Server.Store.CreateSession(context.Background(), store.Session{Hash: auth.HashToken(secret), Workspace: e.Owner.Workspace.ID, User: e.Owner.User.ID, CSRF: csrf, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
		b.Fatal(err)
	}
	tr := &http.Transport{MaxIdleConns: 4 * benchViewers, MaxIdleConnsPerHost: 4 * benchViewers, IdleConnTimeout: time.Minute}
	b.Cleanup(tr.CloseIdleConnections)
	return &benchEnv{Env: e, secret: secret, csrf: csrf, client: &http.Client{Transport: tr},
		owner: service.Person(e.Owner.Workspace.ID, e.Owner.User.ID, service.RoleOwner)}
}

// note makes a Note with versions versions (the first is its creation).
func (e *benchEnv) note(b *testing.B, title string, versions int) (string, int64) {
	b.Helper()
	ctx := context.Background()
	res, err := e.Server.Service.CreateNote(ctx, e.owner, service.CreateNoteArgs{Title: title, Approved: true})
	if err != nil {
		b.Fatal(err)
	}
	v := res.Version
	for i := 1; i < versions; i++ { // bounded: versions in all
		v = e.retitle(b, res.NoteID, v, fmt.Sprintf("%s %d", title, i))
	}
	return res.NoteID, v
}

// retitle is one small write to Note id at version v; it answers the new version.
func (e *benchEnv) retitle(b *testing.B, id string, v int64, title string) int64 {
	r, err := e.Server.Service.UpdateNote(context.Background(), e.owner, service.UpdateNoteArgs{NoteID: id, Title: &title, Guard: service.Guard{ExpectedVersion: v}})
	if err != nil {
		b.Error(err)
		return v
	}
	return r.Version
}

// putText is one small write over HTTP (a markdown save); it answers the
// new version and how long the call took.
func (e *benchEnv) putText(id string, v int64, text string) (int64, time.Duration, error) {
	body, _ := json.Marshal(map[string]string{"text": text})
	r, err := http.NewRequest("PUT", e.URL+"/api/notes/"+id+"/tabs/markdown/text", bytes.NewReader(body))
	if err != nil {
		return v, 0, err
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("If-Match", fmt.Sprintf(`"%d"`, v))
	r.Header.Set(auth.CSRFHeader, e.csrf)
	r.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: e.secret})
	start := time.Now()
	res, err := e.client.Do(r)
	if err != nil {
		return v, 0, err
	}
	var out struct{ Version int64 }
	err = json.NewDecoder(res.Body).Decode(&out)
	res.Body.Close()
	took := time.Since(start)
	if err == nil && res.StatusCode != http.StatusOK {
		err = fmt.Errorf("PUT text: %d", res.StatusCode)
	}
	return out.Version, took, err
}

// viewer is one browser following a Note: the newest version it was told
// of, and when.
type viewer struct {
	version atomic.Int64
	at      atomic.Int64 // unix nanoseconds
}

// viewers are n open GET /api/events streams of Note id.
type viewers struct {
	list   []viewer
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func (e *benchEnv) watch(b *testing.B, id string, n int) *viewers {
	return e.watchAt(b, "/api/events?note_id="+id, n)
}

// watchAt opens n streams of path (GET /api/events or GET /api/live).
func (e *benchEnv) watchAt(b *testing.B, path string, n int) *viewers {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	vs := &viewers{list: make([]viewer, n), cancel: cancel}
	var connected sync.WaitGroup
	connected.Add(n)
	gate := make(chan struct{}, 50) // connect 50 at a time
	var failed atomic.Int64
	for i := range vs.list {
		vs.wg.Add(1)
		go func(w *viewer) {
			defer vs.wg.Done()
			gate <- struct{}{}
			once := sync.OnceFunc(func() { <-gate; connected.Done() })
			defer once()
			r, _ := http.NewRequestWithContext(ctx, "GET", e.URL+path, nil)
			r.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: e.secret})
			res, err := e.client.Do(r)
			if err != nil {
				failed.Add(1)
				return
			}
			defer res.Body.Close()
			if res.StatusCode != http.StatusOK {
				failed.Add(1)
				return
			}
			sc := bufio.NewScanner(res.Body)
			write := false
			for sc.Scan() {
				line := sc.Text()
				switch {
				case strings.HasPrefix(line, "retry:"):
					once()
				case line == "event: write":
					write = true
				case write && strings.HasPrefix(line, "data: "):
					// A browser parses the data; the bench reads only the
					// version, so that its own cost stays small beside the
					// server's.
					if v, ok := dataVersion(line); ok {
						w.at.Store(time.Now().UnixNano())
						w.version.Store(v)
					}
					write = false
				}
			}
		}(&vs.list[i])
	}
	connected.Wait()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d of %d viewers could not connect", n, len(vs.list))
	}
	return vs
}

// dataVersion is the version a write event's data line names.
func dataVersion(line string) (int64, bool) {
	_, rest, ok := strings.Cut(line, `"version":`)
	if !ok {
		return 0, false
	}
	end := strings.IndexAny(rest, ",}")
	if end < 0 {
		return 0, false
	}
	v, err := strconv.ParseInt(rest[:end], 10, 64)
	return v, err == nil
}

func (vs *viewers) close() {
	vs.cancel()
	vs.wg.Wait()
}

// until waits (at most benchNotified) for every viewer to be told of
// version v, and answers how long after start each one was (those never
// told are left out).
func (vs *viewers) until(v int64, start time.Time) []time.Duration {
	deadline := start.Add(benchNotified)
	for time.Now().Before(deadline) {
		all := true
		for i := range vs.list {
			if vs.list[i].version.Load() < v {
				all = false
				break
			}
		}
		if all {
			break
		}
		time.Sleep(time.Millisecond)
	}
	var out []time.Duration
	for i := range vs.list {
		w := &vs.list[i]
		if w.version.Load() >= v {
			out = append(out, time.Unix(0, w.at.Load()).Sub(start))
		}
	}
	return out
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkViewers: 1,000 browsers follow one Note; one write; how long
// until each one has the event (p50, p99) and how many had it within 10 s.
// Once on a new Note and once on a Note with 2,350 versions.
func BenchmarkViewers(b *testing.B) {
	benchStores(b, func(b *testing.B, e *benchEnv) {
		for _, history := range []int{1, benchHistory} {
			id, v := e.note(b, fmt.Sprintf("Watched %d", history), history)
			b.Run(fmt.Sprintf("viewers=%d/versions=%d", benchViewers, history), func(b *testing.B) {
				viewersOf(b, e, e.watch(b, id, benchViewers), id, &v)
			})
		}
		// The same over GET /api/live, as the web app follows a Note.
		id, v := e.note(b, "Watched live", 1)
		b.Run(fmt.Sprintf("viewers=%d/versions=1/live", benchViewers), func(b *testing.B) {
			viewersOf(b, e, e.watchAt(b, "/api/live?topic=note:"+id, benchViewers), id, &v)
		})
	})
}

// viewersOf writes Note id (at version *v) once per iteration and reports
// how long each of vs took to be told.
func viewersOf(b *testing.B, e *benchEnv, vs *viewers, id string, v *int64) {
	defer vs.close()
	var all []time.Duration
	writes := 0
	var cpu time.Duration
	for b.Loop() {
		start, used := time.Now(), cpuTime()
		*v = e.retitle(b, id, *v, fmt.Sprintf("Write %d", writes))
		all = append(all, vs.until(*v, start)...)
		cpu += cpuTime() - used
		writes++
	}
	// The CPU one write and its fan-out took, the viewers' own reading
	// included: what other processes on the machine do not change much.
	b.ReportMetric(ms(cpu)/float64(writes), "cpu-ms/write")
	b.ReportMetric(ms(percentile(all, 0.50)), "p50-ms")
	b.ReportMetric(ms(percentile(all, 0.99)), "p99-ms")
	b.ReportMetric(float64(len(all))/float64(writes*len(vs.list)), "notified")
}

// BenchmarkOtherWriters: small writes (markdown saves over HTTP) by 4
// writers, each to a Note of its own, first with nobody watching, then
// while 1,000 browsers follow another Note that is written hot times a
// second meanwhile (in both phases): their throughput and latency, and the
// ratio of the two throughputs (1: the viewers cost the other writers
// nothing). The browsers run in this process, on the same cores.
func BenchmarkOtherWriters(b *testing.B) {
	const writers, each = 4, 200
	benchStores(b, func(b *testing.B, e *benchEnv) {
		for _, hot := range []int{5, 20} {
			b.Run(fmt.Sprintf("hot=%d/s", hot), func(b *testing.B) { otherWriters(b, e, hot, writers, each) })
		}
	})
}

func otherWriters(b *testing.B, e *benchEnv, hot, writers, each int) {
	watched, hv := e.note(b, "Watched", 1)
	notes := make([]string, writers)
	versions := make([]int64, writers)
	for i := range notes {
		notes[i], versions[i] = e.note(b, fmt.Sprintf("Other %d", i), 1)
	}
	// phase runs the writers once (each writes each times, in turn) while
	// the watched Note is written too; it answers writes per second and
	// every write's latency.
	phase := func(round string) (float64, []time.Duration) {
		stop := make(chan struct{})
		hotDone := make(chan struct{})
		go func() {
			defer close(hotDone)
			tick := time.NewTicker(time.Second / time.Duration(hot))
			defer tick.Stop()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				case <-tick.C:
					hv = e.retitle(b, watched, hv, fmt.Sprintf("Hot %s %d", round, n))
				}
			}
		}()
		var mu sync.Mutex
		var lat []time.Duration
		var wg sync.WaitGroup
		start := time.Now()
		for i := range notes {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				for k := range each {
					v, took, err := e.putText(notes[i], versions[i], fmt.Sprintf("%s %d", round, k))
					if err != nil {
						b.Error(err)
						return
					}
					versions[i] = v
					mu.Lock()
					lat = append(lat, took)
					mu.Unlock()
				}
			}(i)
		}
		wg.Wait()
		elapsed := time.Since(start)
		close(stop)
		<-hotDone
		return float64(len(lat)) / elapsed.Seconds(), lat
	}
	var quiet, watchedRate []float64
	var quietLat, watchedLat []time.Duration
	round := 0
	for b.Loop() {
		r, l := phase(fmt.Sprintf("quiet %d", round))
		quiet, quietLat = append(quiet, r), append(quietLat, l...)
		vs := e.watch(b, watched, benchViewers)
		r, l = phase(fmt.Sprintf("watched %d", round))
		watchedRate, watchedLat = append(watchedRate, r), append(watchedLat, l...)
		vs.close()
		round++
	}
	mean := func(xs []float64) float64 {
		t := 0.0
		for _, x := range xs {
			t += x
		}
		return t / float64(len(xs))
	}
	b.ReportMetric(mean(quiet), "writes/s-0")
	b.ReportMetric(mean(watchedRate), "writes/s-1000")
	b.ReportMetric(mean(watchedRate)/mean(quiet), "ratio")
	b.ReportMetric(ms(percentile(quietLat, 0.50)), "p50-ms-0")
	b.ReportMetric(ms(percentile(watchedLat, 0.50)), "p50-ms-1000")
	b.ReportMetric(ms(percentile(quietLat, 0.99)), "p99-ms-0")
	b.ReportMetric(ms(percentile(watchedLat, 0.99)), "p99-ms-1000")
}
