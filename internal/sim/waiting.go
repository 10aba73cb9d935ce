package sim

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/mcpclient"
	"foundry/internal/room"
)

// Experiment 9 (seed 002): how an agent waits while a person reviews its
// proposal. The review time is log-normal (median 6 min) with a one-hour
// budget; each polling strategy is played on a virtual clock against the same
// 2,000 review times, and Foundry's long poll (poll_resource_events with a
// wait of up to 25 s) is also measured for real over MCP on a small sample.

func init() {
	registerNumbered(9, Experiment{
		Name:  "waiting",
		Seed:  "002",
		Title: "Waiting for a person's approval: fixed and backoff polling vs Foundry's long poll",
		Run:   runWaiting,
	})
}

const (
	reviewMedian = 360.0  // seconds: the seed's "median review 6 min"
	reviewBudget = 3600.0 // seconds: the seed's "1 h budget"
	// reviewSigma is the log-normal shape. The seed does not publish it;
	// 0.95 reproduces its calls per proposal for all four strategies
	// (111.6, 19.0, 10.9, 6.1 against 111.8, 19.0, 10.8, 6.1).
	reviewSigma = 0.95
	longPollMax = 25.0 // seconds: poll_resource_events' longest wait
)

// pollPolicy is one way to wait. Between calls it sleeps first, then
// first×factor, … capped at cap; a long poll (wait > 0) instead holds each
// call open for up to wait seconds and returns as soon as the event arrives.
type pollPolicy struct {
	name               string
	first, factor, cap float64
	wait               float64
	seed               *seedPolling
}

// seedPolling is a row of the seed's table "polling while the owner reviews".
type seedPolling struct {
	calls, p50, p95 float64
	gaveUp          int
}

var pollPolicies = []pollPolicy{
	{name: "fixed 5s", first: 5, factor: 1, cap: 5, seed: &seedPolling{111.8, 2.4, 4.7, 14}},
	{name: "fixed 30s", first: 30, factor: 1, cap: 30, seed: &seedPolling{19.0, 14.5, 28.4, 14}},
	{name: "backoff 5s x1.5 cap 120s", first: 5, factor: 1.5, cap: 120, seed: &seedPolling{10.8, 47.0, 111.0, 14}},
	{name: "backoff 10s x2 cap 300s", first: 10, factor: 2, cap: 300, seed: &seedPolling{6.1, 105.2, 273.8, 14}},
	{name: "Foundry long poll (wait 25s), simulated", wait: longPollMax},
}

// play waits for an approval that comes review seconds after the proposal,
// giving up at budget (after one last call at the deadline, so every
// strategy gives up on exactly the reviews that take longer than budget). It returns the calls made and, when the approval was
// seen, how long after it the agent learned of it.
func (p pollPolicy) play(review, budget float64) (calls int, lag float64, seen bool) {
	if p.wait > 0 {
		for t := 0.0; t < budget; t += p.wait {
			calls++
			if review <= min(t+p.wait, budget) {
				return calls, 0, true // the event wakes the waiting call
			}
		}
		return calls, 0, false
	}
	t, iv := 0.0, p.first
	for t < budget {
		t = min(t+iv, budget) // the last call is at the deadline
		calls++
		if t >= review {
			return calls, t - review, true
		}
		iv = min(iv*p.factor, p.cap)
	}
	return calls, 0, false
}

// pollOutcome summarizes a policy over many reviews.
type pollOutcome struct {
	callsMean, p50, p95 float64
	gaveUp              int
}

func (p pollPolicy) over(reviews []float64, budget float64) pollOutcome {
	var total int
	var lags []float64
	var o pollOutcome
	for _, r := range reviews {
		calls, lag, seen := p.play(r, budget)
		total += calls
		if seen {
			lags = append(lags, lag)
		} else {
			o.gaveUp++
		}
	}
	o.callsMean = float64(total) / float64(len(reviews))
	o.p50, o.p95 = percentile(lags, 50), percentile(lags, 95)
	return o
}

// gaveUp counts the reviews longer than the budget.
func gaveUp(reviews []float64) int {
	n := 0
	for _, r := range reviews {
		if r > reviewBudget {
			n++
		}
	}
	return n
}

// reviewTimes draws n log-normal review times (seconds).
func reviewTimes(rng *rand.Rand, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = reviewMedian * math.Exp(reviewSigma*rng.NormFloat64())
	}
	return out
}

// percentile is the nearest-rank percentile of xs (0 when empty).
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// realLongPoll is what the long poll did over MCP.
type realLongPoll struct {
	n                  int
	callsMean          float64
	lagP50, lagP95     time.Duration // from clicking Approve to the poll returning
	approveP50         time.Duration // how long the approval itself took
	cursorFromResult   bool
	lags               []time.Duration
	delayMin, delayMax time.Duration
}

func runWaiting(ctx context.Context, env *Env) (*Report, error) {
	n, real := 2000, 20
	if env.Quick {
		real = 3
	}
	reviews := reviewTimes(rand.New(rand.NewPCG(uint64(seedOr(env, 2)), 9)), n)
	rep := &Report{
		Table: Table{Header: []string{"strategy", "calls/proposal", "lag p50", "lag p95", "gave up", "seed 002: calls / p50 / p95 / gave up"}},
		CSV:   [][]string{{"strategy", "calls_per_proposal", "lag_p50_s", "lag_p95_s", "gave_up", "n", "seed_calls", "seed_lag_p50_s", "seed_lag_p95_s", "seed_gave_up"}},
	}
	rep.Table.Rows = append(rep.Table.Rows, []string{"review delay (input)", "",
		fmtSeconds(percentile(reviews, 50)), fmtSeconds(percentile(reviews, 95)), itoa(gaveUp(reviews)), "— / 357s / 1816s / 14"})
	var points []chartPoint
	for _, p := range pollPolicies {
		o := p.over(reviews, reviewBudget)
		row := []string{p.name, fmt.Sprintf("%.1f", o.callsMean), fmtSeconds(o.p50), fmtSeconds(o.p95), itoa(o.gaveUp), "—"}
		csv := []string{p.name, ftoa(o.callsMean, 2), ftoa(o.p50, 2), ftoa(o.p95, 2), itoa(o.gaveUp), itoa(n), "", "", "", ""}
		if s := p.seed; s != nil {
			row[5] = fmt.Sprintf("%.1f / %s / %s / %d", s.calls, fmtSeconds(s.p50), fmtSeconds(s.p95), s.gaveUp)
			csv[6], csv[7], csv[8], csv[9] = ftoa(s.calls, 2), ftoa(s.p50, 2), ftoa(s.p95, 2), itoa(s.gaveUp)
			points = append(points, chartPoint{name: p.name, calls: s.calls, p95: s.p95, seed: true})
		}
		rep.Table.Rows = append(rep.Table.Rows, row)
		rep.CSV = append(rep.CSV, csv)
		points = append(points, chartPoint{name: p.name, calls: o.callsMean, p95: o.p95})
	}

	rl, skipped, err := measureLongPoll(ctx, env, real)
	if err != nil {
		return nil, err
	}
	lp := pollPolicies[len(pollPolicies)-1].over(reviews, reviewBudget)
	if skipped != "" {
		rep.Table.Rows = append(rep.Table.Rows, []string{"Foundry long poll over MCP", "skipped", "", "", "", "—"})
		rep.Notes = append(rep.Notes, "The real long poll was not measured: "+skipped+".")
	} else {
		name := fmt.Sprintf("Foundry long poll over MCP (measured, n=%d)", rl.n)
		rep.Table.Rows = append(rep.Table.Rows, []string{name, fmt.Sprintf("%.1f", rl.callsMean),
			fmtMillis(rl.lagP50), fmtMillis(rl.lagP95), "0", "—"})
		rep.CSV = append(rep.CSV, []string{name, ftoa(rl.callsMean, 2), ftoa(rl.lagP50.Seconds(), 6), ftoa(rl.lagP95.Seconds(), 6), "0", itoa(rl.n), "", "", "", ""})
		points = append(points, chartPoint{name: "Foundry long poll, measured lag", calls: lp.callsMean, p95: rl.lagP95.Seconds()})
		rep.Notes = append(rep.Notes, fmt.Sprintf(
			"Measured: %d proposals over real MCP; each poll_resource_events call waited up to 25 s from the cursor the proposal returned, and a person approved after %s–%s. Lag is from clicking Approve to the waiting call returning (the approval itself took %s at p50).",
			rl.n, rl.delayMin.Round(time.Millisecond), rl.delayMax.Round(time.Millisecond), fmtMillis(rl.approveP50)))
		if !rl.cursorFromResult {
			rep.Notes = append(rep.Notes, "The proposal result carried no cursor; the poll started from the Room's latest event instead.")
		}
	}
	rep.Notes = append(rep.Notes,
		fmt.Sprintf("Simulated on a virtual clock: n=%d log-normal review times (median %.0f s, σ=%.2f, chosen because it reproduces the seed's calls per proposal), 1 h budget; the same review times for every strategy. Calls per proposal include the calls of reviews that ran out of budget, as the seed's do.", n, reviewMedian, reviewSigma),
		fmt.Sprintf("Long poll: one call per 25 s of waiting (%.1f calls per proposal here) and the waiting call returns when the approval commits, so the lag is the server's wake-up time, not an interval.", lp.callsMean),
	)
	if skipped == "" {
		rep.Invariants = []Invariant{{
			Name: "every approval wakes the waiting long poll",
			Held: len(rl.lags) == rl.n,
			Got:  fmt.Sprintf("%d of %d approvals returned a waiting poll_resource_events call (lag p50 %s, p95 %s)", len(rl.lags), rl.n, fmtMillis(rl.lagP50), fmtMillis(rl.lagP95)),
		}}
	}
	rep.SVG = pollingChart(points)
	return rep, nil
}

// measureLongPoll proposes n snippets, long-polls the Room from each
// proposal's cursor, approves through the people's side after a short
// random delay and times how soon the waiting call returns.
func measureLongPoll(ctx context.Context, env *Env, n int) (realLongPoll, string, error) {
	if env.People == nil {
		return realLongPoll{}, "no people's side to approve (remote server)", nil
	}
	roomID, err := simRoom(ctx, env)
	if err != nil {
		return realLongPoll{}, "", err
	}
	agent, err := dialAgent(ctx, env, nil)
	if err != nil {
		return realLongPoll{}, "", err
	}
	defer agent.Close()
	rng := rand.New(rand.NewPCG(uint64(seedOr(env, 2)), 10))
	rl := realLongPoll{n: n, cursorFromResult: true, delayMin: time.Hour}
	var calls int
	var approves []time.Duration
	for i := 0; i < n; i++ {
		_, files := snippetApp(100000 + i)
		name := fmt.Sprintf("Waiting probe %d (%s)", i, time.Now().Format(time.RFC3339Nano))
		res, err := mcpclient.Call(ctx, agent, "propose_room_snippet_app", map[string]any{
			"room_id": roomID, "name": name, "files": files, "idempotency_key": room.SnippetKey(roomID, name, files),
		})
		if err != nil || res.IsError {
			return rl, "", fmt.Errorf("propose: %v %s", err, res.Text)
		}
		cursor := res.Str("cursor")
		if cursor == "" {
			rl.cursorFromResult = false
			if cursor, err = latestCursor(ctx, agent, roomID); err != nil {
				return rl, "", err
			}
		}
		type polled struct {
			at    time.Time
			calls int
			err   error
		}
		done := make(chan polled, 1)
		started := make(chan struct{})
		go func() {
			var once sync.Once
			c, calls := cursor, 0
			for {
				once.Do(func() { close(started) })
				calls++
				res, err := mcpclient.Call(ctx, agent, "poll_resource_events", map[string]any{
					"resource_type": "room", "resource_id": roomID, "cursor": c, "limit": 50, "wait_seconds": 25,
				})
				at := time.Now()
				if err == nil && res.IsError {
					err = fmt.Errorf("poll_resource_events: %s", res.Text)
				}
				if err != nil {
					done <- polled{err: err}
					return
				}
				for _, e := range res.List("events") {
					if m, ok := e.(map[string]any); ok && m["kind"] == "app_approved" {
						done <- polled{at: at, calls: calls}
						return
					}
				}
				if next := res.Str("next_cursor"); next != "" {
					c = next
				}
				if calls > 100 {
					done <- polled{err: fmt.Errorf("no approval event after %d polls", calls)}
					return
				}
			}
		}()
		<-started
		delay := time.Duration(100+rng.IntN(1400)) * time.Millisecond
		if env.Quick {
			delay = time.Duration(50+rng.IntN(250)) * time.Millisecond
		}
		rl.delayMin, rl.delayMax = min(rl.delayMin, delay), max(rl.delayMax, delay)
		time.Sleep(delay)
		t0 := time.Now()
		if err := env.People.ApproveProposal(ctx, res.Str("proposal_id")); err != nil {
			return rl, "", fmt.Errorf("approve: %w", err)
		}
		approves = append(approves, time.Since(t0))
		var p polled
		select {
		case p = <-done:
		case <-time.After(60 * time.Second):
			return rl, "", fmt.Errorf("the long poll did not return within 60 s of the approval")
		}
		if p.err != nil {
			return rl, "", p.err
		}
		calls += p.calls
		rl.lags = append(rl.lags, max(0, p.at.Sub(t0)))
	}
	rl.callsMean = float64(calls) / float64(n)
	rl.lagP50, rl.lagP95 = durPercentile(rl.lags, 50), durPercentile(rl.lags, 95)
	rl.approveP50 = durPercentile(approves, 50)
	return rl, "", nil
}

// latestCursor pages through a Room's events to the newest cursor.
func latestCursor(ctx context.Context, cs *mcp.ClientSession, roomID string) (string, error) {
	cursor := ""
	for i := 0; i < 100000; i++ {
		args := map[string]any{"resource_type": "room", "resource_id": roomID, "limit": 50}
		if cursor != "" {
			args["cursor"] = cursor
		}
		res, err := mcpclient.Call(ctx, cs, "poll_resource_events", args)
		if err != nil || res.IsError {
			return "", fmt.Errorf("poll_resource_events: %v %s", err, res.Text)
		}
		next := res.Str("next_cursor")
		if len(res.List("events")) == 0 || next == "" || next == cursor {
			return next, nil
		}
		cursor = next
	}
	return cursor, nil
}

func durPercentile(ds []time.Duration, p float64) time.Duration {
	xs := make([]float64, len(ds))
	for i, d := range ds {
		xs[i] = float64(d)
	}
	return time.Duration(percentile(xs, p))
}

func fmtMillis(d time.Duration) string {
	return ftoa(float64(d)/float64(time.Millisecond), 1) + " ms"
}

// chartPoint is one strategy on the chart.
type chartPoint struct {
	name       string
	calls, p95 float64
	seed       bool // the seed's published figure
}

// pollingChart plots calls per proposal (x, log scale) against lag p95
// (y, log scale): ours as filled dots, the seed's as rings. Points with no
// lag (the simulated long poll) have no place on a log scale and are left
// out; the measured long poll stands for it.
func pollingChart(points []chartPoint) []byte {
	const w, h, left, right, top, bottom = 720.0, 440.0, 70.0, 250.0, 40.0, 50.0
	x := func(calls float64) float64 { // 1 … 1000 calls
		return left + (math.Log10(max(calls, 1))/3)*(w-left-right)
	}
	y := func(lag float64) float64 { // 1 ms … 1000 s
		return h - bottom - ((math.Log10(max(lag, 0.001))+3)/6)*(h-top-bottom)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%.0f" y="22" font-size="14">Waiting for approval: calls per proposal vs lag p95 (log–log)</text>`+"\n", left)
	for _, c := range []float64{1, 10, 100, 1000} {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/><text x="%.1f" y="%.1f" text-anchor="middle">%g</text>`+"\n",
			x(c), top, x(c), h-bottom, x(c), h-bottom+16, c)
	}
	for i, l := range []float64{0.001, 0.01, 0.1, 1, 10, 100, 1000} {
		label := []string{"1 ms", "10 ms", "100 ms", "1 s", "10 s", "100 s", "1000 s"}[i]
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/><text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n",
			left, y(l), w-right, y(l), left-6, y(l)+4, label)
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">calls per proposal</text>`+"\n", (left+w-right)/2, h-12)
	fmt.Fprintf(&b, `<text x="16" y="%.1f" transform="rotate(-90 16 %.1f)" text-anchor="middle">lag p95</text>`+"\n", (top+h-bottom)/2, (top+h-bottom)/2)
	row := 0
	for _, p := range points {
		if p.p95 <= 0 {
			continue // the simulated long poll: lag 0 by construction
		}
		name, px, py := p.name, x(p.calls), y(p.p95)
		if p.seed {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="6" fill="none" stroke="#888" stroke-width="2"><title>seed: %s</title></circle>`+"\n", px, py, name)
			continue
		}
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="4" fill="#1f6feb"><title>%s</title></circle>`+"\n", px, py, name)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="#1f6feb">%d</text>`+"\n", px+7, py-5, row+1)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f">%d  %s</text>`+"\n", w-right+12, top+16+float64(row)*18, row+1, svgEscape(name))
		row++
	}
	fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="6" fill="none" stroke="#888" stroke-width="2"/><text x="%.1f" y="%.1f">seed 002</text>`+"\n",
		w-right+16, top+30+float64(row)*18, w-right+28, top+34+float64(row)*18)
	b.WriteString("</svg>\n")
	return b.Bytes()
}

func svgEscape(s string) string {
	var b bytes.Buffer
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
