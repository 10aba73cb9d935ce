package sim

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"
)

func TestPollPolicy_PlayCountsCallsUntilTheApprovalIsSeen(t *testing.T) {
	fixed5 := pollPolicy{first: 5, factor: 1, cap: 5}
	backoff := pollPolicy{first: 5, factor: 1.5, cap: 120}
	long := pollPolicy{wait: 25}
	for _, tc := range []struct {
		name   string
		p      pollPolicy
		review float64
		calls  int
		lag    float64
		seen   bool
	}{
		{"fixed: polls at 5, 10, 15", fixed5, 12, 3, 3, true},
		{"fixed: a poll exactly at the approval sees it", fixed5, 10, 2, 0, true},
		{"backoff: polls at 5, 12.5, 23.75", backoff, 20, 3, 3.75, true},
		{"long poll: the third call is waiting when it comes", long, 60, 3, 0, true},
		{"long poll: at the end of a wait, still that call", long, 50, 2, 0, true},
		{"fixed: gives up after the call at the deadline", fixed5, 4000, 720, 0, false},
		{"long poll: gives up after 144 calls", long, 4000, 144, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls, lag, seen := tc.p.play(tc.review, reviewBudget)
			if calls != tc.calls || math.Abs(lag-tc.lag) > 1e-9 || seen != tc.seen {
				t.Errorf("play(%v) = %d calls, lag %v, seen %v; want %d, %v, %v", tc.review, calls, lag, seen, tc.calls, tc.lag, tc.seen)
			}
		})
	}
}

func TestPollPolicy_EveryStrategyGivesUpOnTheSameReviews(t *testing.T) {
	reviews := []float64{3599, 3600, 3600.5, 9000}
	for _, p := range pollPolicies {
		o := p.over(reviews, reviewBudget)
		if o.gaveUp != 2 {
			t.Errorf("%s gave up on %d of %v, want the 2 beyond the budget", p.name, o.gaveUp, reviews)
		}
	}
}

func TestPercentile_NearestRank(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	if got := percentile(xs, 50); got != 3 {
		t.Errorf("p50 = %v, want 3", got)
	}
	if got := percentile(xs, 95); got != 5 {
		t.Errorf("p95 = %v, want 5", got)
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("p50 of nothing = %v, want 0", got)
	}
	if xs[0] != 5 {
		t.Error("percentile sorted its input in place")
	}
}

// slowPerson never gets to the proposals: approving does nothing.
type slowPerson struct{ People }

func (slowPerson) ApproveProposal(context.Context, string) error { return nil }

// TestWaitingCountsWhatTheServerAnswered: the measured rows count the
// server's answers, so when no approval comes, the long poll's row shows the
// waiters that gave up and the invariants fail (the row used to print
// "gave up 0" whatever happened).
func TestWaitingCountsWhatTheServerAnswered(t *testing.T) {
	if testing.Short() {
		t.Skip("the waiting experiment's run is skipped in -short mode")
	}
	defer func(b time.Duration) { measuredBudget = b }(measuredBudget)
	measuredBudget = 2 * time.Second
	ctx := context.Background()
	env := quickEnv(ctx, t)
	env.People = slowPerson{env.People}
	rep, err := runWaiting(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	var row []string
	for _, r := range rep.Table.Rows {
		if strings.HasPrefix(r[0], "Foundry long poll (wait 25s)") && strings.HasPrefix(r[1], "measured") {
			row = r
		}
	}
	gaveUpCol := -1
	for i, h := range rep.Table.Header {
		if h == "gave up" {
			gaveUpCol = i
		}
	}
	if row == nil || gaveUpCol < 0 {
		t.Fatalf("no measured long-poll row or gave-up column:\n%q\n%q", rep.Table.Header, rep.Table.Rows)
	}
	if row[gaveUpCol] != "3" {
		t.Errorf("measured long poll with no approval: gave up %q, want 3 (of 3): %q", row[gaveUpCol], row)
	}
	for _, inv := range rep.Invariants {
		if strings.Contains(inv.Name, "already waiting") && inv.Held {
			t.Errorf("%q held with no approval: %s", inv.Name, inv.Got)
		}
		if strings.Contains(inv.Name, "nothing approved") && !inv.Held {
			t.Errorf("%q failed: %s", inv.Name, inv.Got)
		}
	}
}
