package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/mcpclient"
	"foundry/internal/note"
)

// Experiment 7 (seed 004): what if the version were a timestamp. Two editors
// race on one Note at zero think time against Foundry over MCP; Foundry
// versions with a counter, and every commit's time (microseconds) is in the
// Note's history. From those real commit times we ask what a timestamp
// version would have done: two commits in the same millisecond get the same
// version, and a write refused by the counter would have passed a
// millisecond timestamp whenever the version it read and the current one
// fell in the same millisecond — each such write overwrites the edits in
// between. The timestamp schemes are simulated; the race and the commit
// times are Foundry's.

func init() {
	registerNumbered(7, Experiment{Name: "timestamps", Seed: "004",
		Title: "Timestamp versions vs a counter at zero think time", Run: runTimestamps})
}

// staleTry is a write the counter refused: the version it carried and the
// current one.
type staleTry struct{ expected, current int64 }

type tsRun struct {
	edits, commits int
	tries          []staleTry
	at             map[int64]time.Time // version → commit time
	consecutive    bool                // history versions are 1..V with no gap or repeat
	linesKept      int
	took           time.Duration
}

// raceEditor writes its lines as fast as it can: write with what it knows,
// on a conflict read and redo.
func raceEditor(ctx context.Context, cs *mcp.ClientSession, noteID, name string, edits int, mu *sync.Mutex, tries *[]staleTry) error {
	text, v, err := readMarkdown(ctx, cs, noteID)
	if err != nil {
		return err
	}
	for i := 1; i <= edits; i++ {
		line := fmt.Sprintf("%s-%d", name, i)
		for n := 0; ; n++ {
			if n == 1000 {
				return fmt.Errorf("%s: edit %d starved", name, i)
			}
			payload := text + line + "\n"
			r, err := mcpclient.Call(ctx, cs, "edit_note_tab", map[string]any{"note_id": noteID, "tab_id": note.TypeMarkdown, "expected_version": v,
				"idempotency_key": fmt.Sprintf("ts-%s-%s-%d-%d", noteID, name, i, n), "operation": "replace_text", "text": payload})
			if err != nil {
				return err
			}
			if r.Conflict() {
				mu.Lock()
				*tries = append(*tries, staleTry{v, r.Int("current_version")})
				mu.Unlock()
				if text, v, err = readMarkdown(ctx, cs, noteID); err != nil {
					return err
				}
				continue
			}
			if r.IsError {
				return fmt.Errorf("edit_note_tab refused: %s", r.Text)
			}
			text, v = payload, r.Int("version")
			break
		}
	}
	return nil
}

// racePerson is the person's editor at zero think time, through the
// service: save with the version loaded, on a conflict load and redo.
func racePerson(ctx context.Context, people People, reader noteReader, noteID, name string, edits int, mu *sync.Mutex, tries *[]staleTry) error {
	d, v, err := reader.Snapshot(ctx, noteID)
	if err != nil {
		return err
	}
	text := d.Markdown
	for i := 1; i <= edits; i++ {
		line := fmt.Sprintf("%s-%d", name, i)
		for n := 0; ; n++ {
			if n == 1000 {
				return fmt.Errorf("%s: edit %d starved", name, i)
			}
			payload := text + line + "\n"
			nv, err := people.EditMarkdown(ctx, noteID, v, func(string) string { return payload })
			if IsConflict(err) {
				cur := int64(0)
				if d, cur, err = reader.Snapshot(ctx, noteID); err != nil {
					return err
				}
				mu.Lock()
				*tries = append(*tries, staleTry{v, cur})
				mu.Unlock()
				text, v = d.Markdown, cur
				continue
			}
			if err != nil {
				return err
			}
			text, v = payload, nv
			break
		}
	}
	return nil
}

func timestampRace(ctx context.Context, env *Env, maker noteMaker, hist historian, setup string, run, edits int) (tsRun, error) {
	r := tsRun{edits: edits}
	noteID, err := maker.NewNote(ctx, fmt.Sprintf("Timestamp race %d (%s)", run, setup), nil)
	if err != nil {
		return r, err
	}
	cs, err := dialAgent(ctx, env, nil)
	if err != nil {
		return r, err
	}
	defer cs.Close()
	reader, _ := env.People.(noteReader)
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, 2)
	start := time.Now()
	wg.Add(2)
	names := [2]string{"a", "p"}
	go func() {
		defer wg.Done()
		if setup == setupMCP {
			errs[0] = raceEditor(ctx, cs, noteID, names[0], edits, &mu, &r.tries)
		} else {
			errs[0] = racePerson(ctx, env.People, reader, noteID, names[0], edits, &mu, &r.tries)
		}
	}()
	go func() {
		defer wg.Done()
		errs[1] = racePerson(ctx, env.People, reader, noteID, names[1], edits, &mu, &r.tries)
	}()
	wg.Wait()
	r.took = time.Since(start)
	for _, err := range errs {
		if err != nil {
			return r, err
		}
	}
	h, err := hist.History(ctx, noteID)
	if err != nil {
		return r, err
	}
	r.at = map[int64]time.Time{}
	r.consecutive = true
	for i, v := range h {
		if v.Version != int64(i+1) {
			r.consecutive = false
		}
		r.at[v.Version] = v.At
	}
	r.commits = len(h) - 1 // without the Note's creation
	text, _, err := readMarkdown(ctx, cs, noteID)
	if err != nil {
		return r, err
	}
	r.linesKept = countLines(text, names[0]+"-", edits) + countLines(text, names[1]+"-", edits)
	return r, nil
}

// tsScheme turns a commit (version, time) into the version a timestamp
// scheme would have given it.
type tsScheme struct {
	name, short string
	key         func(v int64, at time.Time) string
}

func timestampSchemes(seed int64) []tsScheme {
	suffix := map[int64]string{}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x7000_0000))
	return []tsScheme{
		{"counter (Foundry)", "counter", func(v int64, _ time.Time) string { return fmt.Sprint(v) }},
		{"millisecond timestamp", "ms", func(_ int64, at time.Time) string { return at.UTC().Format("2006-01-02T15:04:05.000Z") }},
		{"microsecond timestamp", "µs", func(_ int64, at time.Time) string { return at.UTC().Format("2006-01-02T15:04:05.000000Z") }},
		{"microsecond timestamp + 6-hex suffix", "µs + suffix", func(v int64, at time.Time) string {
			s, ok := suffix[v]
			if !ok {
				s = fmt.Sprintf("%06x", rng.Uint32()&0xffffff)
				suffix[v] = s
			}
			return at.UTC().Format("2006-01-02T15:04:05.000000Z") + "-" + s
		}},
	}
}

const (
	setupMCP    = "agent over MCP + person"
	setupPeople = "two editors at store speed"
)

func runTimestamps(ctx context.Context, env *Env) (*Report, error) {
	type setupSize struct {
		setup       string
		edits, runs int
	}
	sizes := []setupSize{{setupMCP, 1000, 2}, {setupPeople, 1000, 5}}
	if env.Quick {
		sizes = []setupSize{{setupMCP, 150, 1}, {setupPeople, 300, 1}}
	}
	maker, _ := env.People.(noteMaker)
	hist, _ := env.People.(historian)
	_, okReader := env.People.(noteReader)
	if maker == nil || hist == nil || !okReader {
		return &Report{Table: Table{Header: []string{"skipped"}, Rows: [][]string{{"needs an in-process server: the commit times come from the Note's history"}}}}, nil
	}
	seed := seedOr(env, 1)
	seedCells := []string{"use a counter", "collides: the second write in the same ms gets the first one's version", "–", "full precision + tie-breaker: no collision"}
	rep := &Report{}
	rep.Table.Header = []string{"race", "version scheme", "engine", "commits", "colliding versions", "stale writes it would let through", "edits those would overwrite", "seed 004"}
	rep.CSV = [][]string{{"race", "scheme", "engine", "runs", "edits_per_editor", "commits", "colliding_versions", "stale_writes_passed", "edits_overwritten", "writes_refused_by_counter", "commits_per_second"}}
	var cats []string
	var col, pass []float64
	allConsecutive, allKept, wantKept, allCommits := true, 0, 0, 0
	for _, sz := range sizes {
		var rs []tsRun
		for i := range sz.runs {
			fmt.Fprintf(env.Progress, "  timestamps: %s, race %d of %d (%d edits per editor)\n", sz.setup, i+1, sz.runs, sz.edits)
			r, err := timestampRace(ctx, env, maker, hist, sz.setup, i, sz.edits)
			if err != nil {
				return nil, fmt.Errorf("%s, race %d: %w", sz.setup, i+1, err)
			}
			rs = append(rs, r)
		}
		type tally struct{ commits, collisions, passed, overwritten int }
		schemes := timestampSchemes(seed)
		tallies := make([]tally, len(schemes))
		refused, commits := 0, 0
		var took time.Duration
		for _, r := range rs {
			refused += len(r.tries)
			commits += r.commits
			allKept += r.linesKept
			wantKept += 2 * r.edits
			took += r.took
			allConsecutive = allConsecutive && r.consecutive && r.commits == 2*r.edits
			for si, sch := range schemes {
				ver := map[int64]string{}
				for v := int64(1); v <= int64(len(r.at)); v++ {
					ver[v] = sch.key(v, r.at[v])
				}
				t := &tallies[si]
				t.commits += r.commits
				for v := int64(2); v <= int64(len(r.at)); v++ {
					if ver[v] == ver[v-1] {
						t.collisions++
					}
				}
				for _, st := range r.tries {
					if ver[st.expected] == ver[st.current] {
						t.passed++
						t.overwritten += int(st.current - st.expected)
					}
				}
			}
		}
		allCommits += commits
		rate := float64(commits) / took.Seconds()
		race := fmt.Sprintf("%s (%d × %s edits each, %s commits/s)", sz.setup, sz.runs, commas(sz.edits), commas(int(rate)))
		for si, sch := range schemes {
			t := tallies[si]
			engine := "simulated on Foundry's commit times"
			passed := commas(t.passed)
			if si == 0 {
				engine = "Foundry"
				if sz.setup == setupMCP {
					engine = "Foundry over MCP"
				}
				passed = fmt.Sprintf("%d (Foundry refused all %s)", t.passed, commas(refused))
			}
			rep.Table.Rows = append(rep.Table.Rows, []string{race, sch.name, engine, commas(t.commits), commas(t.collisions), passed, commas(t.overwritten), seedCells[si]})
			rep.CSV = append(rep.CSV, []string{sz.setup, sch.name, engine, itoa(sz.runs), itoa(sz.edits), itoa(t.commits), itoa(t.collisions), itoa(t.passed), itoa(t.overwritten), itoa(refused), ftoa(rate, 0)})
			cats = append(cats, sch.short+"\n"+map[string]string{setupMCP: "MCP race", setupPeople: "store speed"}[sz.setup])
			col = append(col, float64(t.collisions))
			pass = append(pass, float64(t.passed))
			race = ""
		}
	}
	rep.Notes = []string{
		"Two races at zero think time, each editor appending unique lines, re-reading and redoing after a conflict. " +
			"\"agent over MCP + person\": the agent writes with edit_note_tab over MCP while the person saves through the service (the web editor's path). " +
			"\"two editors at store speed\": both save through the service, as the seed's two threads on their own store connections did; its commit rate is what decides how often two commits share a millisecond.",
		"Colliding versions: commits whose version equals the previous commit's. Stale writes: writes the counter refused (the Note had moved on since the version they carried) whose carried and current versions would have been equal under the scheme — they would have passed the check and overwritten the edits in between.",
		"Sizes: the seed raced 2,000 edits per editor, 5 runs; we race 1,000 (every commit rewrites the whole Note and keeps it in history, so a Note of 2,000 appended lines per editor costs a quadratic amount of writing that the question doesn't need). " +
			"Timestamp schemes are simulated (Foundry's version is a counter, SPEC §1) by giving each of Foundry's real commits the version the scheme would, from its commit time in the Note history (microsecond precision, the clock of this machine). The seed 004 table is not in the article text we have; its prose is quoted.",
	}
	rep.Invariants = []Invariant{
		{Name: "counter versions never collide (Foundry)", Held: allConsecutive,
			Got: fmt.Sprintf("%s commits, every Note's versions consecutive: %v", commas(allCommits), allConsecutive)},
		{Name: "0 lost lines at zero think time with the counter and re-read-and-reapply", Held: allKept == wantKept,
			Got: fmt.Sprintf("%s of %s lines kept", commas(allKept), commas(wantKept))},
	}
	rep.SVG = barChartSVG("Version schemes on Foundry's real commit times, zero think time", "count", cats, []barSeries{
		{Name: "colliding versions", Color: colorSim, Values: col},
		{Name: "stale writes that would pass", Color: colorBad, Values: pass},
	}, 0, "")
	return rep, nil
}
