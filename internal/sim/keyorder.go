package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/mcpclient"
	"foundry/internal/note"
)

// Experiment 2 (seed 000): where the idempotency key is checked. 50
// create_note_tab intents a run, 30% of the answers lost after the server
// committed; the client resends the same call and acts on its key policy.
// Foundry checks the key first (over MCP); the other order exists only as
// an in-memory model, run on the same losses.

func init() {
	registerNumbered(2, Experiment{Name: "key-before-version", Seed: "000",
		Title: "Idempotency key before version: creates under 30% lost answers", Run: runKeyOrder})
}

const (
	policyNewKeyPerCall  = "new key per call"
	policySameKey        = "same key on retry"
	policyNewKeyConflict = "new key after conflict"
	orderKeyFirst        = "key, then version"
	orderVersionFirst    = "version, then key"
)

var keyPolicies = []string{policyNewKeyPerCall, policySameKey, policyNewKeyConflict}

// seedKeyOrder: seed 000's "tabs created (calls sent)" for seeds 1 / 2 / 3.
var seedKeyOrder = map[string]string{
	orderKeyFirst + policyNewKeyPerCall:      "63 (76) / 75 (100) / 62 (74)",
	orderKeyFirst + policySameKey:            "50 (67) / 50 (81) / 50 (62)",
	orderKeyFirst + policyNewKeyConflict:     "50 (67) / 50 (81) / 50 (62)",
	orderVersionFirst + policyNewKeyPerCall:  "63 (76) / 75 (100) / 62 (74)",
	orderVersionFirst + policySameKey:        "50 (79) / 50 (98) / 50 (72)",
	orderVersionFirst + policyNewKeyConflict: "72 (94) / 73 (96) / 61 (72)",
}

// createAnswer is what a client learns from one create call.
type createAnswer struct {
	conflict bool
	version  int64
	tabID    string
	replayed bool
}

// creator is a server the create loop talks to: Foundry over MCP or the
// in-memory model.
type creator interface {
	create(ctx context.Context, expected int64, key, label string) (createAnswer, error) // errAnswerLost when lost
	readVersion(ctx context.Context) (int64, error)
}

// createAll runs n intents under a key policy and returns the calls sent.
func createAll(ctx context.Context, c creator, policy string, n int, newKey func() string) (calls int, err error) {
	v, err := c.readVersion(ctx)
	if err != nil {
		return 0, err
	}
	for i := range n {
		label := fmt.Sprintf("Deck %d", i+1)
		key := newKey()
		for attempt := 0; ; attempt++ {
			if attempt == 200 {
				return calls, fmt.Errorf("intent %d: no answer after 200 calls", i)
			}
			calls++
			a, err := c.create(ctx, v, key, label)
			if isAnswerLost(err) {
				// A timeout: resend the same call (same version, since the
				// client never saw the new one).
				if policy == policyNewKeyPerCall {
					key = newKey()
				}
				continue
			}
			if err != nil {
				return calls, err
			}
			if a.conflict {
				if v, err = c.readVersion(ctx); err != nil {
					return calls, err
				}
				if policy != policySameKey {
					key = newKey()
				}
				continue
			}
			v = max(v, a.version)
			break
		}
	}
	return calls, nil
}

// modelCreator is the rebuild's store reduced to what matters here: a
// version, the recorded keys and a tab count, with the check order as a
// switch. It loses answers through the same dropper as the MCP client.
type modelCreator struct {
	order   string
	version int64
	keys    map[string]int64
	tabs    int
	drop    *dropper
}

func (m *modelCreator) readVersion(context.Context) (int64, error) { return m.version, nil }

func (m *modelCreator) create(_ context.Context, expected int64, key, _ string) (createAnswer, error) {
	replay := func() (createAnswer, error) {
		v := m.keys[key]
		if m.drop.lose(true) {
			return createAnswer{}, errAnswerLost
		}
		return createAnswer{version: v, replayed: true}, nil
	}
	if _, ok := m.keys[key]; ok && m.order == orderKeyFirst {
		return replay()
	}
	if expected != m.version {
		m.drop.lose(false)
		return createAnswer{conflict: true}, nil
	}
	if _, ok := m.keys[key]; ok {
		return replay()
	}
	m.version++
	m.tabs++
	m.keys[key] = m.version
	if m.drop.lose(true) {
		return createAnswer{}, errAnswerLost
	}
	return createAnswer{version: m.version}, nil
}

// mcpCreator is Foundry over MCP through a fault injector.
type mcpCreator struct {
	cs     *mcp.ClientSession
	noteID string
}

func (c *mcpCreator) readVersion(ctx context.Context) (int64, error) {
	_, v, err := listTabs(ctx, c.cs, c.noteID)
	return v, err
}

func (c *mcpCreator) create(ctx context.Context, expected int64, key, label string) (createAnswer, error) {
	r, err := mcpclient.Call(ctx, c.cs, "create_note_tab", map[string]any{"note_id": c.noteID, "expected_version": expected,
		"idempotency_key": key, "tab_type": note.TypeSlides, "label": label})
	if err != nil {
		return createAnswer{}, err
	}
	if r.Conflict() {
		return createAnswer{conflict: true, version: r.Int("current_version")}, nil
	}
	if r.IsError {
		return createAnswer{}, fmt.Errorf("create_note_tab refused: %s", r.Text)
	}
	return createAnswer{version: r.Int("version"), tabID: r.Str("tab_id"), replayed: r.Bool("replayed")}, nil
}

type keyOrderRun struct{ tabs, calls int }

func runKeyOrder(ctx context.Context, env *Env) (*Report, error) {
	const loss = 0.30
	n := 50
	seeds := seedsFrom(env, 1, 3)
	nonce := fmt.Sprintf("%08x", rand.Uint32())
	keyGen := func(seed int64, policy string) func() string {
		i := 0
		tag := strings.ReplaceAll(policy, " ", "-")
		return func() string {
			i++
			return fmt.Sprintf("ko-%s-%d-%s-%d", nonce, seed, tag, i)
		}
	}
	// The dropper depends on the seed only: every policy and order meets
	// the same sequence of draws, call by call.
	newDrop := func(seed int64) *dropper { return newDropper(seed, 0x2000, loss) }

	model := map[string][]keyOrderRun{}
	for _, order := range []string{orderKeyFirst, orderVersionFirst} {
		for _, policy := range keyPolicies {
			for _, s := range seeds {
				m := &modelCreator{order: order, version: 1, keys: map[string]int64{}, drop: newDrop(s)}
				calls, err := createAll(ctx, m, policy, n, keyGen(s, policy))
				if err != nil {
					return nil, fmt.Errorf("model %s / %s: %w", order, policy, err)
				}
				model[order+policy] = append(model[order+policy], keyOrderRun{m.tabs, calls})
			}
		}
	}

	// Foundry over MCP: key, then version.
	live := map[string][]keyOrderRun{}
	maker, _ := env.People.(noteMaker)
	for _, policy := range keyPolicies {
		for _, s := range seeds {
			noteID := env.NoteID
			if maker != nil {
				id, err := maker.NewNote(ctx, fmt.Sprintf("Key order, %s, seed %d", policy, s), nil)
				if err != nil {
					return nil, err
				}
				noteID = id
			}
			inj := newFaultInjector(newDrop(s), "create_note_tab")
			cs, err := dialAgent(ctx, env, inj)
			if err != nil {
				return nil, err
			}
			before, _, err := listTabs(ctx, cs, noteID)
			if err != nil {
				cs.Close()
				return nil, err
			}
			calls, err := createAll(ctx, &mcpCreator{cs: cs, noteID: noteID}, policy, n, keyGen(s, policy))
			if err != nil {
				cs.Close()
				return nil, fmt.Errorf("against Foundry, %s, seed %d: %w", policy, s, err)
			}
			after, _, err := listTabs(ctx, cs, noteID)
			cs.Close()
			if err != nil {
				return nil, err
			}
			if calls != inj.Calls("create_note_tab") {
				return nil, errors.New("call count differs from the injector's")
			}
			live[policy] = append(live[policy], keyOrderRun{countSlides(after) - countSlides(before), calls})
		}
	}

	cell := func(runs []keyOrderRun) string {
		var parts []string
		for _, r := range runs {
			parts = append(parts, fmt.Sprintf("%d (%d)", r.tabs, r.calls))
		}
		return strings.Join(parts, " / ")
	}
	rep := &Report{}
	rep.Table.Header = []string{"server checks", "client key policy", "engine", "tabs created (calls sent), seeds " + seedRange(seeds), "seed 000"}
	rep.CSV = [][]string{{"server_order", "client_policy", "engine", "seed", "intents", "tabs_created", "calls_sent"}}
	addCSV := func(order, policy, engine string, runs []keyOrderRun) {
		for i, r := range runs {
			rep.CSV = append(rep.CSV, []string{order, policy, engine, fmt.Sprint(seeds[i]), itoa(n), itoa(r.tabs), itoa(r.calls)})
		}
	}
	same := true
	var cats []string
	var oursTabs, seedTabs []float64
	for _, order := range []string{orderKeyFirst, orderVersionFirst} {
		for _, policy := range keyPolicies {
			runs, engine := model[order+policy], "simulated (in-memory model)"
			if order == orderKeyFirst {
				runs, engine = live[policy], "Foundry over MCP"
				for i := range runs {
					if runs[i] != model[order+policy][i] {
						same = false
					}
				}
				addCSV(order, policy, "model", model[order+policy])
			}
			addCSV(order, policy, engine, runs)
			rep.Table.Rows = append(rep.Table.Rows, []string{order, policy, engine, cell(runs), seedKeyOrder[order+policy]})
			cats = append(cats, strings.ReplaceAll(order, ", then ", "→")+"\n"+policy)
			oursTabs = append(oursTabs, meanTabs(runs))
			seedTabs = append(seedTabs, meanSeedTabs(seedKeyOrder[order+policy]))
		}
	}
	rep.SVG = barChartSVG(fmt.Sprintf("Tabs created for %d intended tabs, 30%% answers lost (mean of %d seeds)", n, len(seeds)), "tabs created", cats,
		[]barSeries{{Name: "ours", Color: colorFoundry, Values: oursTabs}, {Name: "seed 000", Color: colorSeed, Values: seedTabs}}, 0, "")

	kept := true
	var got []string
	for _, policy := range []string{policySameKey, policyNewKeyConflict} {
		for i, r := range live[policy] {
			if r.tabs != n {
				kept = false
			}
			got = append(got, fmt.Sprintf("%s seed %d: %d tabs", policy, seeds[i], r.tabs))
		}
	}
	rep.Invariants = []Invariant{
		{Name: "exactly one tab per intent with key-then-version and a kept key (Foundry over MCP)", Held: kept,
			Got: fmt.Sprintf("%d intents each; %s", n, strings.Join(got, "; "))},
		{Name: "the in-memory model matches Foundry call by call (key, then version)", Held: same,
			Got: fmt.Sprintf("model %s vs Foundry %s (same policy order)", cellAll(model, orderKeyFirst), cellAll(live, ""))},
	}
	rep.Notes = []string{
		fmt.Sprintf("%d create_note_tab intents a run; an answer that carried a result (a commit or a replay) is lost with probability %.0f%% after the server committed, drawn by a seeded generator per seed so every row meets the same draws call by call. "+
			"On a timeout the client resends the same call, with the version it had (it never saw the new one); on version_conflict it reads the version again. "+
			"Calls sent counts create_note_tab calls only.", n, loss*100),
		"Key-then-version rows are Foundry over MCP: tabs created is counted from list_note_tabs after the run, not from what the client saw. Version-then-key exists only as a switch in the in-memory model (Foundry has no such mode); " +
			"the same model run with key-then-version gives Foundry's figures exactly (second invariant), so the wrong-order rows are what Foundry would do with its checks swapped.",
		"Our counts differ from the seed's because the draws differ; the pattern is the seed's: with the key checked first a kept key gives exactly one tab per intent, and the wrong order turns every lost answer into a conflict — a second deck for a client that takes a new key after a conflict, extra calls for one that keeps it.",
	}
	return rep, nil
}

func countSlides(tabs []tabInfo) int {
	n := 0
	for _, t := range tabs {
		if t.Type == note.TypeSlides {
			n++
		}
	}
	return n
}

func seedRange(seeds []int64) string {
	var s []string
	for _, x := range seeds {
		s = append(s, fmt.Sprint(x))
	}
	return strings.Join(s, " / ")
}

func meanTabs(runs []keyOrderRun) float64 {
	if len(runs) == 0 {
		return 0
	}
	t := 0
	for _, r := range runs {
		t += r.tabs
	}
	return float64(t) / float64(len(runs))
}

// meanSeedTabs averages "63 (76) / 75 (100) / 62 (74)".
func meanSeedTabs(s string) float64 {
	var sum, n float64
	for _, part := range strings.Split(s, "/") {
		var t, c int
		if _, err := fmt.Sscanf(strings.TrimSpace(part), "%d (%d)", &t, &c); err == nil {
			sum += float64(t)
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / n
}

// cellAll lists the runs of every policy under order+policy ("" for live).
func cellAll(runs map[string][]keyOrderRun, order string) string {
	var parts []string
	for _, p := range keyPolicies {
		for _, r := range runs[order+p] {
			parts = append(parts, fmt.Sprintf("%d(%d)", r.tabs, r.calls))
		}
	}
	return strings.Join(parts, " ")
}
