package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/mcpclient"
	"foundry/internal/note"
)

// Experiment 4 (seed 000): a 12-slide deck as one create_note_tab with an
// outline, or as an empty create and 12 slide_add calls. Writes and bytes
// are measured over MCP; conflicts follow the seed's model — 4 s between
// the agent's read and each write, a person saving somewhere in the Note
// about once a minute (exponential) — in virtual time, over 2,000 decks in
// memory and over a sample of the same decks against Foundry, where the
// person's saves are real edits made through the service at the moments the
// model says.

func init() {
	registerNumbered(4, Experiment{Name: "outline", Seed: "000",
		Title: "One outline call vs slide by slide: writes, bytes and conflicts for a 12-slide deck", Run: runOutline})
}

const (
	approachOutline = "create_note_tab with slides"
	approachSlides  = "empty create + 12 × slide_add"
	thinkSeconds    = 4.0
	meanSaveSeconds = 60.0
)

// seedOutline: seed 000's writes, request bytes, conflicts per deck.
var seedOutline = map[string][3]string{
	approachOutline: {"1", "1,673", "0.070"},
	approachSlides:  {"13", "5,237", "0.817"},
}

// demoDeck is the 12 slides every simulated deck carries.
var demoDeck = []note.SlideInput{
	{Title: "Q3 research readout", Body: "What we learned from 40 customer interviews and 3 pilots", Notes: "Open with the one-line answer."},
	{Title: "The question", Body: "Why do teams stop using shared notes after the first month?"},
	{Title: "Method", Body: "40 interviews, 3 pilot teams, 6 weeks of usage data", Notes: "Mention the recruiting bias."},
	{Title: "Finding 1: edits collide", Body: "Two people editing the same page lose work about once a week"},
	{Title: "Finding 2: agents repeat", Body: "Retried agent calls created duplicate pages in 2 of 3 pilots"},
	{Title: "Finding 3: wrong tab", Body: "Agents wrote into the first deck when asked for 'the slides'"},
	{Title: "What people asked for", Body: "See who changed what; never lose a paragraph; undo an agent"},
	{Title: "Design principle", Body: "Every write names the version it read and the exact tab ID"},
	{Title: "Retries", Body: "An idempotency key per intent turns a resend into a replay", Notes: "Show the 50-create experiment."},
	{Title: "Costs", Body: "One indexed read per write; no locks held while a model thinks"},
	{Title: "Risks", Body: "False conflicts when people edit other tabs; we re-read, not merge"},
	{Title: "Next steps", Body: "Ship tab IDs in every list; outline calls up to 20 slides", Notes: "Ask for two pilot teams."},
}

// saveClock is a person's saves in virtual seconds: a Poisson process.
type saveClock struct {
	rng  *rand.Rand
	next float64
}

func newSaveClock(seed int64, deck int) *saveClock {
	c := &saveClock{rng: rand.New(rand.NewPCG(uint64(seed), 0x4000_0000|uint64(deck)))}
	c.next = c.rng.ExpFloat64() * meanSaveSeconds
	return c
}

// until returns how many saves happen at or before t, advancing the clock.
func (c *saveClock) until(t float64) int {
	n := 0
	for c.next <= t {
		n++
		c.next += c.rng.ExpFloat64() * meanSaveSeconds
	}
	return n
}

// deckWrites is how many writes an approach makes: each is preceded by a
// 4 s window (read or previous answer → write).
func deckWrites(approach string) int {
	if approach == approachOutline {
		return 1
	}
	return 1 + len(demoDeck)
}

// modelDeck counts conflicts: a write conflicts when the person saved in
// its window; the agent then re-reads and redoes the write at once.
func modelDeck(seed int64, deck int, approach string) int {
	c := newSaveClock(seed, deck)
	conflicts := 0
	for w := 1; w <= deckWrites(approach); w++ {
		if c.until(float64(w)*thinkSeconds) > 0 {
			conflicts++
		}
	}
	return conflicts
}

type deckResult struct {
	conflicts, calls    int
	argBytes, httpBytes int64
}

// liveDeck builds deck d against Foundry; person saves happen through the
// service at the virtual times the same clock gives.
func liveDeck(ctx context.Context, env *Env, maker noteMaker, reader noteReader, cs *mcp.ClientSession, inj *faultInjector, seed int64, d int, approach string) (deckResult, error) {
	var res deckResult
	noteID, err := maker.NewNote(ctx, fmt.Sprintf("Deck %d (%s)", d, approach), nil)
	if err != nil {
		return res, err
	}
	clock := newSaveClock(seed, d)
	personSaves := func(t float64) error {
		for range clock.until(t) {
			_, v, err := reader.Snapshot(ctx, noteID)
			if err != nil {
				return err
			}
			if _, err := env.People.EditMarkdown(ctx, noteID, v, func(s string) string { return s + "A person's sentence.\n" }); err != nil {
				return err
			}
		}
		return nil
	}
	_, v, err := listTabs(ctx, cs, noteID)
	if err != nil {
		return res, err
	}
	b0 := inj.Bytes("create_note_tab") + inj.Bytes("edit_note_tab")
	tabID := ""
	for w := 1; w <= deckWrites(approach); w++ {
		if err := personSaves(float64(w) * thinkSeconds); err != nil {
			return res, fmt.Errorf("person: %w", err)
		}
		tool := "edit_note_tab"
		args := map[string]any{"note_id": noteID}
		switch {
		case w == 1 && approach == approachOutline:
			tool = "create_note_tab"
			args["tab_type"], args["label"], args["slides"] = note.TypeSlides, "Q3 readout", demoDeck
		case w == 1:
			tool = "create_note_tab"
			args["tab_type"], args["label"] = note.TypeSlides, "Q3 readout"
		default:
			s := demoDeck[w-2]
			args["tab_id"], args["operation"], args["title"], args["body"] = tabID, "slide_add", s.Title, s.Body
			if s.Notes != "" {
				args["notes"] = s.Notes
			}
		}
		for attempt := 0; ; attempt++ {
			if attempt == 5 {
				return res, fmt.Errorf("write %d: still conflicting", w)
			}
			args["expected_version"] = v
			args["idempotency_key"] = fmt.Sprintf("deck-%d-%d-w%d-a%d", seed, d, w, attempt)
			if attempt == 0 {
				b, _ := json.Marshal(args)
				res.argBytes += int64(len(b))
			}
			res.calls++
			r, err := mcpclient.Call(ctx, cs, tool, args)
			if err != nil {
				return res, err
			}
			if r.Conflict() {
				res.conflicts++
				if _, v, err = listTabs(ctx, cs, noteID); err != nil {
					return res, err
				}
				continue
			}
			if r.IsError {
				return res, fmt.Errorf("%s refused: %s", tool, r.Text)
			}
			v = r.Int("version")
			if w == 1 {
				tabID = r.Str("tab_id")
			}
			break
		}
	}
	res.httpBytes = inj.Bytes("create_note_tab") + inj.Bytes("edit_note_tab") - b0
	// The deck holds the 12 slides in order.
	deck, err := mustTool(ctx, cs, "read_note_tab", map[string]any{"note_id": noteID, "tab_id": tabID})
	if err != nil {
		return res, err
	}
	slides := deck.List("slides")
	if len(slides) != len(demoDeck) {
		return res, fmt.Errorf("deck has %d slides, want %d", len(slides), len(demoDeck))
	}
	for i, s := range slides {
		if m, _ := s.(map[string]any); m["title"] != demoDeck[i].Title {
			return res, fmt.Errorf("slide %d is %v", i, m["title"])
		}
	}
	return res, nil
}

func runOutline(ctx context.Context, env *Env) (*Report, error) {
	seed := seedOr(env, 1)
	decks, sample, workers := 2000, 200, 2
	if env.Quick {
		decks, sample = 200, 10
	}
	approaches := []string{approachOutline, approachSlides}
	modelConf := map[string][]int{}
	for _, a := range approaches {
		for d := range decks {
			modelConf[a] = append(modelConf[a], modelDeck(seed, d, a))
		}
	}

	maker, _ := env.People.(noteMaker)
	reader, _ := env.People.(noteReader)
	live := map[string][]deckResult{}
	if maker != nil && reader != nil {
		for _, a := range approaches {
			res := make([]deckResult, sample)
			err := parallel(ctx, sample, workers, newMeter(env, "outline over MCP, "+a, sample), func(decks iter.Seq[int]) error {
				inj := newFaultInjector(nil)
				cs, err := dialAgent(ctx, env, inj)
				if err != nil {
					return err
				}
				defer cs.Close()
				for d := range decks {
					if res[d], err = liveDeck(ctx, env, maker, reader, cs, inj, seed, d, a); err != nil {
						return fmt.Errorf("%s, deck %d: %w", a, d, err)
					}
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
			live[a] = res
		}
	}

	rep := &Report{}
	rep.Table.Header = []string{"approach", "writes", "request bytes (tool arguments)", "HTTP request bytes", fmt.Sprintf("conflicts per deck (model, %s decks)", commas(decks)),
		fmt.Sprintf("conflicts per deck (Foundry over MCP, first %d decks)", sample), "seed 000: writes / bytes / conflicts"}
	rep.CSV = [][]string{{"approach", "writes", "arg_bytes", "http_bytes", "model_decks", "model_conflicts_per_deck", "mcp_decks", "mcp_conflicts_per_deck", "mcp_calls_per_deck",
		"seed_writes", "seed_bytes", "seed_conflicts"}}
	agree := true
	var argB, modelC, liveC [2]float64
	for i, a := range approaches {
		mc := 0
		for _, c := range modelConf[a] {
			mc += c
		}
		modelC[i] = float64(mc) / float64(decks)
		argCell, httpCell, liveCell := "–", "–", "not run (no people's side)"
		var lcalls float64
		if rs := live[a]; len(rs) > 0 {
			lc := 0
			for d, r := range rs {
				lc += r.conflicts
				lcalls += float64(r.calls)
				if r.conflicts != modelConf[a][d] {
					agree = false
				}
			}
			liveC[i] = float64(lc) / float64(len(rs))
			lcalls /= float64(len(rs))
			argB[i] = float64(rs[0].argBytes)
			argCell, httpCell = commas(int(rs[0].argBytes)), commas(int(rs[0].httpBytes))
			liveCell = ftoa(liveC[i], 3)
		}
		s := seedOutline[a]
		rep.Table.Rows = append(rep.Table.Rows, []string{a, itoa(deckWrites(a)), argCell, httpCell, ftoa(modelC[i], 3), liveCell, s[0] + " / " + s[1] + " / " + s[2]})
		rep.CSV = append(rep.CSV, []string{a, itoa(deckWrites(a)), argCell, httpCell, itoa(decks), ftoa(modelC[i], 4), itoa(len(live[a])), ftoa(liveC[i], 4), ftoa(lcalls, 3), s[0], s[1], s[2]})
	}
	pw := 1 - math.Exp(-thinkSeconds/meanSaveSeconds)
	rep.Notes = []string{
		"Writes and bytes: Foundry over MCP, deck 0 (the same 12 slides every deck: title, body, some speaker notes); request bytes are the JSON of the tool arguments of the first attempt of each write, as the seed counted them, and HTTP request bytes the JSON-RPC bodies the client sent (retries included). Every deck is read back afterwards: 12 slides in order.",
		fmt.Sprintf("Conflicts: the seed's model in virtual time — 4 s between the version the agent has and each write, a person saving anywhere in the Note about once a minute (Poisson), a refused write redone at once after a re-read. "+
			"A write conflicts with probability 1 − e^(−4/60) = %.3f, so 13 writes risk about 13 times as many conflicts. Seed %d; the Foundry column replays the first %d decks of the same clock with the person's saves made for real through the service (a version-guarded edit of the markdown tab), so Foundry's compare-and-swap decides each conflict.", pw, seed, sample),
	}
	if len(live) > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("Model and Foundry agree deck by deck on the sampled decks: %v.", agree))
		rep.Invariants = append(rep.Invariants, Invariant{Name: "the conflict model matches Foundry deck by deck", Held: agree,
			Got: fmt.Sprintf("outline %.3f vs %.3f, slide by slide %.3f vs %.3f conflicts per deck over the first %d decks", liveC[0], meanInts(modelConf[approachOutline][:sample]), liveC[1], meanInts(modelConf[approachSlides][:sample]), sample)})
		rep.Invariants = append(rep.Invariants, Invariant{Name: "one outline call beats 13 slide calls in writes, bytes and conflicts", Held: argB[0] < argB[1] && modelC[0] < modelC[1] && deckWrites(approachOutline) < deckWrites(approachSlides),
			Got: fmt.Sprintf("1 vs 13 writes, %s vs %s bytes, %.3f vs %.3f conflicts per deck", commas(int(argB[0])), commas(int(argB[1])), modelC[0], modelC[1])})
	}
	rep.SVG = barChartSVG("12-slide deck: conflicts per deck (model, "+commas(decks)+" decks)", "conflicts per deck", []string{"outline in one call", "empty create + 12 slide_add"},
		[]barSeries{{Name: "ours", Color: colorFoundry, Values: modelC[:]}, {Name: "seed 000", Color: colorSeed, Values: []float64{0.070, 0.817}}}, 0, "")
	return rep, nil
}

func meanInts(xs []int) float64 {
	if len(xs) == 0 {
		return 0
	}
	t := 0
	for _, x := range xs {
		t += x
	}
	return float64(t) / float64(len(xs))
}
