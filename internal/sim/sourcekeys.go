package sim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"iter"
	"math/rand/v2"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/mcpclient"
	"foundry/internal/urlnorm"
)

// Experiment 3 (seed 000): what an add_note_source key should name. 300
// research sessions of three turns; each turn cites 6 of the session's 8
// pages, each written in one of seven spellings; 20% of the answers are
// lost and resent with the same key.
//
// The seed's rebuild had no server-side dedupe, so its duplicates are what
// the key alone prevents: that is the in-memory model. Foundry over MCP adds
// its own dedupe by normalized URL, so there every key gives 0 duplicates;
// the invariant is on the key the tool description recommends.

func init() {
	registerNumbered(3, Experiment{Name: "source-keys", Seed: "000",
		Title: "Source keys: UUID per citation, raw-URL hash, normalized URL + Note hash", Run: runSourceKeys})
}

const (
	keyUUID = "UUID per citation, reused on resend"
	keyRaw  = "hash of the raw URL"
	keyNorm = "hash of normalized URL + Note ID"
)

var sourceKeySchemes = []string{keyUUID, keyRaw, keyNorm}

// seedSources: seed 000's stored, duplicates, per session.
var seedSources = map[string][3]string{
	keyUUID: {"5,400", "3,038", "10.13"},
	keyRaw:  {"4,814", "2,452", "8.17"},
	keyNorm: {"2,362", "0", "0.00"},
}

var sourceHosts = []string{"example.org", "nature.com", "arxiv.org", "who.int", "worldbank.org", "ourworldindata.org", "github.com", "nytimes.com"}

// spell writes page (host, path) in one of the seven spellings.
func spell(host, path string, s int) string {
	switch s {
	case 1:
		return "https://" + host + path + "/"
	case 2:
		return "https://www." + host + path
	case 3:
		return "https://" + host + path + "?utm_source=chatgpt.com&utm_medium=referral"
	case 4:
		return "https://" + host + path + "#results"
	case 5:
		return "http://" + host + path
	case 6:
		return host + path
	}
	return "https://" + host + path
}

// citation is one add_note_source intent.
type citation struct {
	url, title string
	uuid       string // the key a UUID-per-citation agent makes up for it
}

// sessionCitations draws a session's three turns of 6 of 8 pages.
func sessionCitations(seed int64, session int) []citation {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x3000_0000|uint64(session)))
	var out []citation
	for turn := range 3 {
		for _, p := range rng.Perm(8)[:6] {
			host := sourceHosts[p]
			path := fmt.Sprintf("/research/s%03d/page-%d", session, p)
			u := spell(host, path, rng.IntN(7))
			var b [16]byte
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			out = append(out, citation{url: u, title: fmt.Sprintf("Page %d of session %d (turn %d)", p+1, session, turn+1), uuid: "cite-" + hex.EncodeToString(b[:])})
		}
	}
	return out
}

func sourceKey(scheme, noteID string, c citation) string {
	switch scheme {
	case keyUUID:
		return c.uuid
	case keyRaw:
		sum := sha256.Sum256([]byte(c.url))
		return "raw-" + hex.EncodeToString(sum[:16])
	}
	norm, _ := urlnorm.Normalize(c.url)
	sum := sha256.Sum256([]byte(noteID + "\n" + norm))
	return "src-" + hex.EncodeToString(sum[:16])
}

// sourceTally is what a scheme produced.
type sourceTally struct {
	sessions, citations, calls int
	stored, distinct           int
	alreadyAttached, replayed  int
}

func (t *sourceTally) add(o sourceTally) {
	t.sessions += o.sessions
	t.citations += o.citations
	t.calls += o.calls
	t.stored += o.stored
	t.distinct += o.distinct
	t.alreadyAttached += o.alreadyAttached
	t.replayed += o.replayed
}

func (t sourceTally) dups() int { return t.stored - t.distinct }

// modelSession is the seed's store: keys scoped to the Note, no dedupe by
// URL. Lost answers are resent with the same key.
func modelSession(seed int64, session int, scheme string, loss float64) sourceTally {
	drop := newDropper(seed, 0x3100_0000|uint64(session), loss)
	noteID := fmt.Sprintf("note-%d", session)
	keys := map[string]bool{}
	var stored []string
	t := sourceTally{sessions: 1}
	for _, c := range sessionCitations(seed, session) {
		t.citations++
		key := sourceKey(scheme, noteID, c)
		for {
			t.calls++
			if keys[key] {
				t.replayed++
			} else {
				keys[key] = true
				norm, _ := urlnorm.Normalize(c.url)
				stored = append(stored, norm)
			}
			if !drop.lose(true) {
				break
			}
		}
	}
	t.stored = len(stored)
	t.distinct = len(distinctStrings(stored))
	return t
}

func distinctStrings(s []string) map[string]bool {
	m := map[string]bool{}
	for _, x := range s {
		m[x] = true
	}
	return m
}

// liveSession runs a session against Foundry on a fresh Note and counts
// the sources the Note holds afterwards.
func liveSession(ctx context.Context, cs *mcp.ClientSession, maker noteMaker, seed int64, session int, scheme string, inj *faultInjector) (sourceTally, error) {
	t := sourceTally{sessions: 1}
	noteID, err := maker.NewNote(ctx, fmt.Sprintf("Research session %d", session), nil)
	if err != nil {
		return t, err
	}
	_, v, err := listTabs(ctx, cs, noteID)
	if err != nil {
		return t, err
	}
	for _, c := range sessionCitations(seed, session) {
		t.citations++
		key := sourceKey(scheme, noteID, c)
		for attempt := 0; ; attempt++ {
			if attempt == 50 {
				return t, fmt.Errorf("session %d: no answer after 50 resends", session)
			}
			t.calls++
			r, err := mcpclient.Call(ctx, cs, "add_note_source", map[string]any{"note_id": noteID, "expected_version": v,
				"idempotency_key": key, "title": c.title, "url": c.url})
			if isAnswerLost(err) {
				continue // resend: same key, same (now stale) version
			}
			if err != nil {
				return t, err
			}
			if r.Conflict() {
				// Someone else wrote (nobody does here); read and redo.
				if _, v, err = listTabs(ctx, cs, noteID); err != nil {
					return t, err
				}
				continue
			}
			if r.IsError {
				return t, fmt.Errorf("add_note_source refused: %s", r.Text)
			}
			if r.Bool("replayed") {
				t.replayed++
			} else if r.Bool("already_attached") {
				t.alreadyAttached++
			}
			v = max(v, r.Int("version"))
			break
		}
	}
	list, err := mustTool(ctx, cs, "list_note_attachments", map[string]any{"note_id": noteID, "kind": "sources", "limit": 50})
	if err != nil {
		return t, err
	}
	t.stored = int(list.Int("total"))
	var norms []string
	for _, it := range list.List("items") {
		m, _ := it.(map[string]any)
		n, _ := m["normalized_url"].(string)
		norms = append(norms, n)
	}
	if len(norms) != t.stored {
		return t, fmt.Errorf("listed %d of %d sources", len(norms), t.stored)
	}
	t.distinct = len(distinctStrings(norms))
	return t, nil
}

func runSourceKeys(ctx context.Context, env *Env) (*Report, error) {
	const loss = 0.20
	seed := seedOr(env, 1)
	sessions, sampled, workers := 300, 100, 2
	if env.Quick {
		sessions, sampled = 20, 10
	}

	model := map[string]*sourceTally{}
	for _, sch := range sourceKeySchemes {
		model[sch] = &sourceTally{}
		for s := range sessions {
			model[sch].add(modelSession(seed, s, sch, loss))
		}
	}

	maker, _ := env.People.(noteMaker)
	live := map[string]*sourceTally{}
	if maker != nil {
		for _, sch := range []string{keyNorm, keyUUID, keyRaw} {
			n := sessions
			if sch != keyNorm {
				n = sampled
			}
			tallies := make([]sourceTally, n)
			err := parallel(ctx, n, workers, newMeter(env, "source-keys over MCP, "+sch, n), func(sessions iter.Seq[int]) error {
				for s := range sessions {
					// One client per session, its injector seeded like the
					// model's dropper for that session.
					inj := newFaultInjector(newDropper(seed, 0x3100_0000|uint64(s), loss), "add_note_source")
					cs, err := dialAgent(ctx, env, inj)
					if err != nil {
						return err
					}
					tallies[s], err = liveSession(ctx, cs, maker, seed, s, sch, inj)
					cs.Close()
					if err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
			live[sch] = &sourceTally{}
			for _, t := range tallies {
				live[sch].add(t)
			}
		}
	}

	rep := &Report{}
	rep.Table.Header = []string{"key", "engine", "sessions", "sources stored", "duplicates", "per session", "seed 000: stored / duplicates / per session"}
	rep.CSV = [][]string{{"key", "engine", "sessions", "citations", "calls", "stored", "duplicates", "per_session", "replayed", "already_attached", "seed_stored", "seed_duplicates", "seed_per_session"}}
	row := func(sch, engine string, t *sourceTally, seedCell string) {
		per := ftoa(float64(t.dups())/float64(max(1, t.sessions)), 2)
		rep.Table.Rows = append(rep.Table.Rows, []string{sch, engine, commas(t.sessions), commas(t.stored), commas(t.dups()), per, seedCell})
		s := seedSources[sch]
		rep.CSV = append(rep.CSV, []string{sch, engine, itoa(t.sessions), itoa(t.citations), itoa(t.calls), itoa(t.stored), itoa(t.dups()), per,
			itoa(t.replayed), itoa(t.alreadyAttached), s[0], s[1], s[2]})
	}
	for _, sch := range sourceKeySchemes {
		s := seedSources[sch]
		row(sch, "simulated: the seed's store (no dedupe by URL)", model[sch], s[0]+" / "+s[1]+" / "+s[2])
	}
	for _, sch := range []string{keyNorm, keyUUID, keyRaw} {
		if t := live[sch]; t != nil {
			row(sch, "Foundry over MCP", t, "–")
		}
	}
	cats := []string{"UUID per citation", "raw-URL hash", "normalized URL\n+ Note hash"}
	var ours, seedv []float64
	for _, sch := range sourceKeySchemes {
		ours = append(ours, float64(model[sch].dups())/float64(model[sch].sessions))
		seedv = append(seedv, parsePct(seedSources[sch][2]))
	}
	series := []barSeries{{Name: "key alone (model of the seed's store)", Color: colorSim, Values: ours}, {Name: "seed 000", Color: colorSeed, Values: seedv}}
	if len(live) == 3 {
		var lv []float64
		for _, sch := range sourceKeySchemes {
			lv = append(lv, float64(live[sch].dups())/float64(live[sch].sessions))
		}
		series = append(series, barSeries{Name: "Foundry over MCP (key + dedupe by normalized URL)", Color: colorFoundry, Values: lv})
	}
	rep.SVG = barChartSVG("Duplicate sources per research session (3 turns × 6 of 8 pages, 7 spellings, 20% lost)", "duplicates per session", cats, series, 0, "")

	rep.Notes = []string{
		fmt.Sprintf("Each session: 8 pages, three turns each citing 6 of them, every citation in one of seven spellings (as is, trailing slash, www., ?utm_source=…, #fragment, http://, no scheme); "+
			"%.0f%% of the answers are lost after the server committed and resent with the same key and the same (stale) version. Seed %d; the model and Foundry see the same citations and the same losses.", loss*100, seed),
		"Simulated rows: the seed's rebuild, keys scoped to the Note and no dedupe by URL, so the duplicates are what the key alone lets through. " +
			"Foundry rows: a fresh Note per session, add_note_source over MCP, sources counted afterwards with list_note_attachments; Foundry checks the key first and then also dedupes by normalized URL, answering already_attached, so no key can make a duplicate there.",
	}
	if t := live[keyNorm]; t != nil {
		rep.Notes = append(rep.Notes, fmt.Sprintf("Over MCP with normalized keys, %s of %s calls were replays of a key already committed (resends and repeated pages alike) and %d answers said already_attached; with UUID keys (first %d sessions) Foundry answered already_attached %s times and with raw-URL keys %s times: each of those is a duplicate in the seed's store.",
			commas(t.replayed), commas(t.calls), t.alreadyAttached, sampled, commas(live[keyUUID].alreadyAttached), commas(live[keyRaw].alreadyAttached)))
		rep.Invariants = append(rep.Invariants, Invariant{Name: "0 duplicate sources with normalized keys (Foundry over MCP)", Held: t.dups() == 0 && t.stored == t.distinct && t.sessions == sessions,
			Got: fmt.Sprintf("%s sources stored for %s distinct pages over %d sessions", commas(t.stored), commas(t.distinct), t.sessions)})
	} else {
		rep.Notes = append(rep.Notes, "Foundry rows need the people's side (a fresh Note per session); only the model ran.")
	}
	rep.Invariants = append(rep.Invariants, Invariant{Name: "0 duplicate sources with normalized keys (model without server dedupe)", Held: model[keyNorm].dups() == 0,
		Got: fmt.Sprintf("%s stored, %d duplicates", commas(model[keyNorm].stored), model[keyNorm].dups())})
	return rep, nil
}
