package sim

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Experiment 5 (seed 004): an agent and a person append unique lines to the
// same markdown tab, 100 edits each, read → think → write → think (agent
// 20–80 ms, person 5–40 ms, virtual). Without a version check the last
// writer wins; with Foundry's check, what the editor does after a conflict
// decides whether anything is lost.

func init() {
	registerNumbered(5, Experiment{Name: "lost-updates", Seed: "004",
		Title: "Lost updates: an agent and a person on one tab, by conflict policy", Run: runLostUpdates})
}

var seedLost = map[string]string{
	policyNone:    "30% of all edits lost; the person loses more",
	policyRefresh: "over 300 conflicts, and nothing protected",
	policyReapply: "0 lost; agent 41–48% of edits need a 2nd attempt, never a 3rd; attempts 1.41–1.48 (agent), 1.24–1.30 (person)",
}

type lostRun struct {
	seed                          int64
	policy, engine                string
	edits                         int
	agentLost, personLost         int
	agentConflicts, personConfl   int
	agentAttempts, personAttempts int
	agentSecond, agentThird       int
	personSecond, personThird     int
}

func (r lostRun) lost() int      { return r.agentLost + r.personLost }
func (r lostRun) conflicts() int { return r.agentConflicts + r.personConfl }

// lostUpdatesRun races the two editors once. engine "model" uses the
// in-memory Note (the only place "none" exists); "Foundry" drives the agent
// over MCP and the person through the service on a fresh Note.
func lostUpdatesRun(ctx context.Context, env *Env, cs *mcp.ClientSession, seed int64, policy, engine string, edits int) (lostRun, error) {
	r := lostRun{seed: seed, policy: policy, engine: engine, edits: edits}
	agentRNG := rand.New(rand.NewPCG(uint64(seed), 0x5000_0001))
	personRNG := rand.New(rand.NewPCG(uint64(seed), 0x5000_0002))
	agent := &textEditor{name: "agent", prefix: "agent-", edits: edits, think: uniformMS(agentRNG, 20, 80), policy: policy, ctx: ctx}
	person := &textEditor{name: "person", prefix: "person-", edits: edits, think: uniformMS(personRNG, 5, 40), policy: policy, ctx: ctx}
	var final func() (string, error)
	switch engine {
	case "model":
		scope := "note"
		if policy == policyNone {
			scope = "none"
		}
		m := newMemNote(scope)
		agent.be, person.be = memText{m}, memText{m}
		final = func() (string, error) { return m.text, nil }
	default:
		maker, _ := env.People.(noteMaker)
		reader, _ := env.People.(noteReader)
		noteID, err := maker.NewNote(ctx, fmt.Sprintf("Lost updates, %s, seed %d", policy, seed), nil)
		if err != nil {
			return r, err
		}
		n := 0
		agent.be = mcpText{cs: cs, noteID: noteID, tag: fmt.Sprintf("lu-%d-%s", seed, strings.ReplaceAll(policy, " ", "-")), n: &n}
		person.be = personText{p: env.People, r: reader, noteID: noteID}
		final = func() (string, error) {
			t, _, err := readMarkdown(ctx, cs, noteID)
			return t, err
		}
	}
	if err := runVirtual([]*evActor{agent.actor(agent.think()), person.actor(person.think())}); err != nil {
		return r, err
	}
	text, err := final()
	if err != nil {
		return r, err
	}
	r.agentLost = edits - countLines(text, "agent-", edits)
	r.personLost = edits - countLines(text, "person-", edits)
	r.agentConflicts, r.personConfl = agent.conflicts, person.conflicts
	r.agentAttempts, r.personAttempts = agent.attempts, person.attempts
	r.agentSecond, r.agentThird, r.personSecond, r.personThird = agent.second, agent.third, person.second, person.third
	return r, nil
}

func runLostUpdates(ctx context.Context, env *Env) (*Report, error) {
	edits, nSeeds := 100, 5
	if env.Quick {
		edits, nSeeds = 40, 2
	}
	seeds := seedsFrom(env, 1, nSeeds)
	policies := []string{policyNone, policyRefresh, policyReapply}
	_, okMaker := env.People.(noteMaker)
	_, okReader := env.People.(noteReader)
	canLive := env.People != nil && okMaker && okReader

	var cs *mcp.ClientSession
	if canLive {
		var err error
		if cs, err = dialAgent(ctx, env, nil); err != nil {
			return nil, err
		}
		defer cs.Close()
	}
	runs := map[string][]lostRun{}  // policy → the row's runs
	model := map[string][]lostRun{} // policy → model runs
	agree := true
	m := newMeter(env, "lost-updates", len(policies)*len(seeds))
	step := 0
	for _, p := range policies {
		for _, s := range seeds {
			mr, err := lostUpdatesRun(ctx, env, nil, s, p, "model", edits)
			if err != nil {
				return nil, fmt.Errorf("model, %s, seed %d: %w", p, s, err)
			}
			model[p] = append(model[p], mr)
			row := mr
			if p != policyNone && canLive {
				lr, err := lostUpdatesRun(ctx, env, cs, s, p, "Foundry", edits)
				if err != nil {
					return nil, fmt.Errorf("against Foundry, %s, seed %d: %w", p, s, err)
				}
				lr2, mr2 := lr, mr
				lr2.engine, mr2.engine = "", ""
				if lr2 != mr2 {
					agree = false
				}
				row = lr
			}
			runs[p] = append(runs[p], row)
			step++
			m.step(step)
		}
	}

	rep := &Report{}
	total := 2 * edits * len(seeds)
	rep.Table.Header = []string{"policy after a conflict", "engine", fmt.Sprintf("lost lines (of %s)", commas(total)), "agent / person lost", "conflicts",
		"attempts per edit: agent / person", "agent edits needing a 2nd / 3rd attempt", "seed 004"}
	rep.CSV = [][]string{{"policy", "engine", "seed", "edits_per_editor", "agent_lost", "person_lost", "agent_conflicts", "person_conflicts",
		"agent_attempts", "person_attempts", "agent_second_attempts", "agent_third_attempts", "person_second_attempts", "person_third_attempts"}}
	var svgAgent, svgPerson, svgConf []float64
	for _, p := range policies {
		rs := runs[p]
		var al, pl, conf, a3 int
		var aAtt, pAtt, a2 []float64
		for _, r := range rs {
			al += r.agentLost
			pl += r.personLost
			conf += r.conflicts()
			a3 += r.agentThird
			aAtt = append(aAtt, float64(r.agentAttempts)/float64(r.edits))
			pAtt = append(pAtt, float64(r.personAttempts)/float64(r.edits))
			a2 = append(a2, 100*float64(r.agentSecond)/float64(r.edits))
			rep.CSV = append(rep.CSV, []string{p, r.engine, fmt.Sprint(r.seed), itoa(r.edits), itoa(r.agentLost), itoa(r.personLost), itoa(r.agentConflicts), itoa(r.personConfl),
				itoa(r.agentAttempts), itoa(r.personAttempts), itoa(r.agentSecond), itoa(r.agentThird), itoa(r.personSecond), itoa(r.personThird)})
		}
		engine := "Foundry over MCP (agent) + service (person)"
		if rs[0].engine == "model" {
			engine = "simulated: last writer wins"
			if p != policyNone {
				engine = "simulated (no people's side)"
			}
		}
		rep.Table.Rows = append(rep.Table.Rows, []string{p, engine, fmt.Sprintf("%s (%s)", commas(al+pl), pct(al+pl, total)), fmt.Sprintf("%d / %d", al, pl), commas(conf),
			spread(aAtt, 2) + " / " + spread(pAtt, 2), spread(a2, 0) + "% / " + itoa(a3), seedLost[p]})
		svgAgent = append(svgAgent, float64(al))
		svgPerson = append(svgPerson, float64(pl))
		svgConf = append(svgConf, float64(conf))
	}
	rep.SVG = barChartSVG(fmt.Sprintf("Lost lines and conflicts, agent + person, %d edits each × %d seeds", edits, len(seeds)), "count", policies, []barSeries{
		{Name: "agent's lines lost", Color: colorSim, Values: svgAgent},
		{Name: "person's lines lost", Color: colorBad, Values: svgPerson},
		{Name: "conflicts (refused writes)", Color: colorFoundry, Values: svgConf},
	}, 0, "")
	rep.Notes = []string{
		fmt.Sprintf("%s, %d edits per editor per seed; each edit appends a unique line (agent-17, person-42) and a missing line at the end is a lost update. "+
			"Think times are virtual: the agent thinks 20–80 ms before a write and again after it, the person 5–40 ms (the seed's scaled times; its 9.6–10.5 s per run for 100 agent edits implies about 100 ms a cycle). A refused write is redone at once with a new idempotency key.", seedsPhrase(seeds), edits),
		"\"none\" is simulated (an in-memory Note whose writes never check the version: Foundry has no such mode). The other rows are Foundry: the agent reads and writes over MCP (read_note_tab, edit_note_tab replace_text), the person through the service with the version their editor loaded (the web editor's If-Match). " +
			"Refresh-version-only re-reads just the version and resends the payload it computed from the old text: Foundry's check passes it, and it overwrites the other edit.",
		fmt.Sprintf("An in-memory model with Foundry's Note-level check gives the same run, write by write, as Foundry for both checked policies: %v.", agree),
	}
	ll := 0
	for _, r := range runs[policyReapply] {
		ll += r.lost()
	}
	nl, rl := 0, 0
	for _, r := range runs[policyNone] {
		nl += r.lost()
	}
	for _, r := range runs[policyRefresh] {
		rl += r.lost()
	}
	if canLive {
		rep.Invariants = append(rep.Invariants,
			Invariant{Name: "0 lost lines with re-read-and-reapply (Foundry over MCP)", Held: ll == 0, Got: fmt.Sprintf("%d of %s lines lost", ll, commas(total))},
			Invariant{Name: "refresh-version-only loses lines even under Foundry's check", Held: rl > 0, Got: fmt.Sprintf("%d of %s lines lost", rl, commas(total))},
			Invariant{Name: "the in-memory model matches Foundry write by write", Held: agree, Got: fmt.Sprintf("%v over %d checked runs", agree, 2*len(seeds))},
		)
	}
	rep.Invariants = append(rep.Invariants, Invariant{Name: "> 0 lost lines without a check (the experiment can see losses)", Held: nl > 0,
		Got: fmt.Sprintf("%d of %s lines lost with last-writer-wins", nl, commas(total))})
	return rep, nil
}

// spread renders the range of per-seed values, "1.41–1.48", or one value.
func spread(xs []float64, prec int) string {
	if len(xs) == 0 {
		return "–"
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	if ftoa(lo, prec) == ftoa(hi, prec) {
		return ftoa(lo, prec)
	}
	return ftoa(lo, prec) + "–" + ftoa(hi, prec)
}
