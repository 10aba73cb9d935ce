package sim

import (
	"math"
	"math/rand/v2"
	"testing"
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

// The review times are an assumption (the seed publishes median and budget,
// not the shape); σ is chosen so that the seed's calls per proposal come out.
func TestPollPolicies_ReproduceTheSeedsCallsPerProposal(t *testing.T) {
	reviews := reviewTimes(rand.New(rand.NewPCG(2, 9)), 2000)
	for _, p := range pollPolicies {
		if p.seed == nil {
			continue
		}
		o := p.over(reviews, reviewBudget)
		if d := math.Abs(o.callsMean-p.seed.calls) / p.seed.calls; d > 0.05 {
			t.Errorf("%s: %.1f calls per proposal, the seed measured %.1f", p.name, o.callsMean, p.seed.calls)
		}
		if d := math.Abs(o.p95-p.seed.p95) / p.seed.p95; d > 0.1 {
			t.Errorf("%s: lag p95 %.1fs, the seed measured %.1fs", p.name, o.p95, p.seed.p95)
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
