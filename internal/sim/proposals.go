package sim

import (
	"cmp"
	"context"
	"encoding/hex"
	"fmt"
	"iter"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/mcpclient"
	"foundry/internal/room"
)

// Experiment 8 (seed 002): an agent proposes 1,000 Room snippets while 5% of
// the responses are lost after the server committed. With a fresh random key
// per attempt every lost response becomes a second card for the owner; with
// the content-derived key (room.SnippetKey) the resend replays the first
// proposal. Either way nothing reaches the launcher before a person approves.

func init() {
	registerNumbered(8, Experiment{
		Name:  "proposals",
		Seed:  "002",
		Title: "Room proposals under 5% lost responses: random vs content keys, and the review gate",
		Run:   runProposals,
	})
}

// Published figures of seed 002 ("review gate, 1000 proposals, 5% lost responses").
var seedProposals = map[string]struct{ calls, cards, dups, launcher int }{
	"random":  {1074, 1074, 74, 0},
	"content": {1057, 1000, 0, 0},
}

// proposalRun is what one key policy produced.
type proposalRun struct {
	policy     string // "random" | "content"
	roomID     string
	intents    int
	calls      int
	lost       int
	replayed   int
	seenIDs    int // distinct proposal_ids the agent received
	cards      int // pending proposals the owner sees for these intents
	cardsVia   string
	launcher   int // apps added to the launcher before any approval
	inLauncher int // instances whose status said in_launcher before approval
	contentIDs []proposalAck
}

type proposalAck struct{ proposalID, instanceID string }

func runProposals(ctx context.Context, env *Env) (*Report, error) {
	n, workers := 1000, 8
	if env.Quick {
		n, workers = 100, 4
	}
	const loss = 0.05
	seed := seedOr(env, 2)
	// A Room the runner did not make fresh may hold an earlier run's
	// proposals, whose content keys would replay: name this run's apps apart.
	tag := ""
	if env.Fresh == nil {
		tag = " · run " + strconv.FormatInt(time.Now().Unix(), 36)
	}

	var runs []*proposalRun
	var cs *mcp.ClientSession
	for _, policy := range []string{"random", "content"} {
		roomID, err := simRoom(ctx, env)
		if err != nil {
			return nil, err
		}
		// The same dropper stream for both policies: each call draws once,
		// and both make the same sequence of calls (one per attempt), so
		// they meet exactly the same losses.
		inj := newFaultInjector(newDropper(seed, 8, loss), "propose_room_snippet_app")
		agent, err := dialAgent(ctx, env, inj)
		if err != nil {
			return nil, err
		}
		defer agent.Close()
		progress(env, "proposals: %s keys, %d apps, %.0f%% lost answers, Room %s", policy, n, loss*100, roomID)
		r, err := proposeAll(ctx, env, agent, inj, roomID, policy, tag, n, workers, seed)
		if err != nil {
			return nil, fmt.Errorf("%s keys: %w", policy, err)
		}
		runs = append(runs, r)
		cs = agent
	}

	// The people's side: approve a few content proposals (and decline one)
	// and see exactly those appear in the launcher.
	var approveNote string
	approvedOK, approvedGot := true, "skipped: no people's side (remote server)"
	if env.People != nil {
		var err error
		approvedOK, approvedGot, err = approveAndSee(ctx, env, cs, runs[1])
		if err != nil {
			return nil, err
		}
		approveNote = "After the counts, 3 content proposals were approved and 1 declined through the people's side: " + approvedGot + "."
	}

	rep := &Report{
		Table: Table{Header: []string{"keys", "proposals", "calls", "lost answers", "replayed", "owner cards", "duplicates", "in launcher before approval",
			"seed 002: calls / cards / duplicates / in launcher"}},
		CSV: [][]string{{"keys", "proposals", "calls", "lost_responses", "replayed", "distinct_proposal_ids_seen", "owner_cards", "cards_counted_via", "duplicates", "in_launcher_before_approval",
			"seed_calls", "seed_cards", "seed_duplicates", "seed_in_launcher"}},
	}
	for _, r := range runs {
		s := seedProposals[r.policy]
		dups := r.cards - r.intents
		launcher := max(r.launcher, r.inLauncher)
		rep.Table.Rows = append(rep.Table.Rows, []string{r.policy, commas(r.intents), commas(r.calls), commas(r.lost), commas(r.replayed),
			commas(r.cards), commas(dups), commas(launcher), fmt.Sprintf("%s / %s / %d / %d", commas(s.calls), commas(s.cards), s.dups, s.launcher)})
		rep.CSV = append(rep.CSV, []string{r.policy, itoa(r.intents), itoa(r.calls), itoa(r.lost), itoa(r.replayed), itoa(r.seenIDs), itoa(r.cards), r.cardsVia,
			itoa(dups), itoa(launcher), itoa(s.calls), itoa(s.cards), itoa(s.dups), itoa(s.launcher)})
	}
	random, content := runs[0], runs[1]
	rep.Invariants = []Invariant{
		{Name: "0 duplicate proposal cards with content keys", Held: content.cards == content.intents,
			Got: fmt.Sprintf("%d cards for %d apps (%d duplicates) after %d lost responses", content.cards, content.intents, content.cards-content.intents, content.lost)},
		{Name: "0 apps in a launcher before approval", Held: random.launcher == 0 && content.launcher == 0 && random.inLauncher == 0 && content.inLauncher == 0,
			Got: fmt.Sprintf("%d apps (random keys), %d apps (content keys) before any approval", max(random.launcher, random.inLauncher), max(content.launcher, content.inLauncher))},
		{Name: "approved proposals, and only they, reach the launcher", Held: approvedOK, Got: approvedGot},
	}
	rep.Notes = []string{
		fmt.Sprintf("Both policies saw the same loss pattern (paired): a response is lost after the server committed with probability %.0f%%; the agent resends until it gets an answer.", loss*100),
		"Random keys: a fresh key per attempt, as the seed measured it. Content keys: room.SnippetKey = \"snip-\" + first 32 hex of sha256(room, name, files).",
		"Cards are counted on the owner's side (" + content.cardsVia + "), so lost responses the agent never saw are counted too.",
	}
	if approveNote != "" {
		rep.Notes = append(rep.Notes, approveNote)
	}
	if random.cards-random.intents != random.lost {
		rep.Notes = append(rep.Notes, fmt.Sprintf("Note: random keys gave %d duplicates for %d lost responses.", random.cards-random.intents, random.lost))
	}
	return rep, nil
}

// proposeAll makes n intended apps, one after the other, each proposed
// until an answer arrives: with a fresh random key per attempt, or with the
// content key every time.
func proposeAll(ctx context.Context, env *Env, cs *mcp.ClientSession, inj *faultInjector, roomID, policy, tag string, n, workers int, seed int64) (*proposalRun, error) {
	beforeApps, err := launcherApps(ctx, cs, roomID)
	if err != nil {
		return nil, err
	}
	firstInstance, err := nextInstance(ctx, cs, roomID)
	if err != nil {
		return nil, err
	}
	r := &proposalRun{policy: policy, roomID: roomID, intents: n}
	keyRNG := rand.New(rand.NewPCG(uint64(seed), 0x5eed0002))
	seen := map[string]bool{}
	m := newMeter(env, policy+" keys", n)
	for i := 0; i < n; i++ {
		name, files := snippetApp(i)
		name += tag
		for attempt := 0; ; attempt++ {
			if attempt == 20 {
				return nil, fmt.Errorf("app %d: no answer after 20 attempts", i)
			}
			key := room.SnippetKey(roomID, name, files)
			if policy == "random" {
				key = randomKey(keyRNG)
			}
			r.calls++
			res, err := mcpclient.Call(ctx, cs, "propose_room_snippet_app", map[string]any{
				"room_id": roomID, "name": name, "files": files, "idempotency_key": key,
			})
			if isAnswerLost(err) {
				continue // the agent resends: same key or a fresh one
			}
			if err != nil {
				return nil, fmt.Errorf("app %d: %w", i, err)
			}
			if res.IsError {
				return nil, fmt.Errorf("app %d: propose_room_snippet_app refused: %s", i, res.Text)
			}
			if res.Bool("replayed") {
				r.replayed++
			}
			if st := res.Str("status"); st != room.StatePendingReview {
				return nil, fmt.Errorf("app %d: proposal status %q, want %q", i, st, room.StatePendingReview)
			}
			seen[res.Str("proposal_id")] = true
			if policy == "content" {
				r.contentIDs = append(r.contentIDs, proposalAck{res.Str("proposal_id"), res.Str("instance_id")})
			}
			break
		}
		m.step(i + 1)
	}
	r.lost, r.seenIDs = inj.Lost(), len(seen)

	// Before any approval: the launcher is as it was, and every instance
	// these calls reserved says pending_review.
	afterApps, err := launcherApps(ctx, cs, roomID)
	if err != nil {
		return nil, err
	}
	r.launcher = len(afterApps) - len(beforeApps)
	pending, inLauncher, err := instanceStates(ctx, cs, roomID, firstInstance, r.calls, workers)
	if err != nil {
		return nil, err
	}
	r.inLauncher = inLauncher
	r.cards, r.cardsVia = pending, "read_room_app_status of every instance the calls reserved"
	if lp, ok := env.People.(proposalLister); ok {
		ps, err := lp.ListProposals(ctx, roomID, room.StatusPending)
		if err != nil {
			return nil, err
		}
		if firstInstance == 1 { // a fresh Room: its inbox holds this run only
			if len(ps) != pending {
				return nil, fmt.Errorf("owner's inbox has %d pending proposals, read_room_app_status found %d", len(ps), pending)
			}
			r.cardsVia = "the owner's inbox (ListProposals), cross-checked with read_room_app_status"
		}
	}
	return r, nil
}

// proposalLister is the reviewer's inbox, when the people's side offers it.
type proposalLister interface {
	ListProposals(ctx context.Context, roomID, status string) ([]room.Proposal, error)
}

// approveAndSee approves three content proposals and declines one, then
// checks that exactly the approved ones are in the launcher.
func approveAndSee(ctx context.Context, env *Env, cs *mcp.ClientSession, r *proposalRun) (bool, string, error) {
	if len(r.contentIDs) < 4 {
		return false, "too few proposals to approve", nil
	}
	before, err := launcherApps(ctx, cs, r.roomID)
	if err != nil {
		return false, "", err
	}
	approve, decline := r.contentIDs[:3], r.contentIDs[3]
	for _, a := range approve {
		if err := env.People.ApproveProposal(ctx, a.proposalID); err != nil {
			return false, "", fmt.Errorf("approve %s: %w", a.proposalID, err)
		}
	}
	if err := env.People.DeclineProposal(ctx, decline.proposalID); err != nil {
		return false, "", fmt.Errorf("decline %s: %w", decline.proposalID, err)
	}
	after, err := launcherApps(ctx, cs, r.roomID)
	if err != nil {
		return false, "", err
	}
	rr, err := mcpclient.Call(ctx, cs, "read_room", map[string]any{"room_id": r.roomID})
	if err != nil || rr.IsError {
		return false, "", fmt.Errorf("read_room: %v %s", err, rr.Text)
	}
	inRoom := len(rr.List("apps"))
	ok := len(after)-len(before) == len(approve) && inRoom == len(after)
	for _, a := range approve {
		if !after[a.instanceID] {
			ok = false
		}
		st, err := appState(ctx, cs, r.roomID, a.instanceID)
		if err != nil {
			return false, "", err
		}
		ok = ok && st == room.StateInLauncher
	}
	st, err := appState(ctx, cs, r.roomID, decline.instanceID)
	if err != nil {
		return false, "", err
	}
	ok = ok && st == room.StateDeclined && !after[decline.instanceID]
	return ok, fmt.Sprintf("launcher went from %d to %d apps (read_room: %d) after 3 approvals; the declined one says %q", len(before), len(after), inRoom, st), nil
}

// launcherApps pages through list_room_apps and returns the instance IDs.
func launcherApps(ctx context.Context, cs *mcp.ClientSession, roomID string) (map[string]bool, error) {
	out := map[string]bool{}
	err := eachItem(ctx, cs, "list_room_apps", map[string]any{"room_id": roomID}, "apps", func(m map[string]any) {
		id, _ := m["instance_id"].(string)
		out[id] = true
	})
	return out, err
}

// appState is read_room_app_status's state for one instance ("" when the
// instance is unknown).
func appState(ctx context.Context, cs *mcp.ClientSession, roomID, instanceID string) (string, error) {
	res, err := mcpclient.Call(ctx, cs, "read_room_app_status", map[string]any{"room_id": roomID, "instance_id": instanceID})
	if err != nil {
		return "", fmt.Errorf("read_room_app_status %s: %w", instanceID, err)
	}
	if res.IsError {
		if res.Str("error") == "not_found" {
			return "", nil
		}
		return "", fmt.Errorf("read_room_app_status %s: %s", instanceID, res.Text)
	}
	return res.Str("state"), nil
}

// nextInstance finds the first instance number the Room has not reserved
// yet: instance IDs are "app-<n>" from a counter that never goes down, so
// the reserved ones are app-1 … app-(k-1).
func nextInstance(ctx context.Context, cs *mcp.ClientSession, roomID string) (int, error) {
	lo, hi := 1, 1 // app-lo exists or lo == 1; find the first missing
	for {
		st, err := appState(ctx, cs, roomID, "app-"+strconv.Itoa(hi))
		if err != nil {
			return 0, err
		}
		if st == "" {
			break
		}
		lo, hi = hi+1, hi*2
	}
	for lo < hi { // first missing in [lo, hi]
		mid := (lo + hi) / 2
		st, err := appState(ctx, cs, roomID, "app-"+strconv.Itoa(mid))
		if err != nil {
			return 0, err
		}
		if st == "" {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo, nil
}

// instanceStates reads the status of the instances a run can have reserved
// (each call reserves at most one, in order from first) and counts those
// pending review and those in the launcher.
func instanceStates(ctx context.Context, cs *mcp.ClientSession, roomID string, first, calls, workers int) (pending, inLauncher int, err error) {
	var p, l atomic.Int64
	err = parallel(ctx, calls, workers, nil, func(instances iter.Seq[int]) error {
		for i := range instances {
			st, err := appState(ctx, cs, roomID, "app-"+itoa(first+i))
			if err != nil {
				return err
			}
			switch st {
			case room.StatePendingReview:
				p.Add(1)
			case room.StateInLauncher:
				l.Add(1)
			}
		}
		return nil
	})
	return int(p.Load()), int(l.Load()), cmp.Or(err, ctx.Err())
}

// snippetApp is intended app i: a small standup timer like the seed's (an
// entry point of about 2 KB and a stylesheet of about 1 KB).
func snippetApp(i int) (string, map[string]string) {
	name := fmt.Sprintf("Standup timer %d", i)
	app := fmt.Sprintf(`import { useEffect, useState } from "react";
import "./styles.css";

// Standup timer %d: one speaker at a time, %d seconds each.
const SECONDS = %d;
const PEOPLE = ["Ana", "Budi", "Citra", "Dewi", "Eko"];

export default function App() {
  const [speaker, setSpeaker] = useState(0);
  const [left, setLeft] = useState(SECONDS);
  const [running, setRunning] = useState(false);

  useEffect(() => {
    if (!running) return;
    const t = setInterval(() => {
      setLeft((s) => {
        if (s > 1) return s - 1;
        setSpeaker((p) => (p + 1) %% PEOPLE.length);
        return SECONDS;
      });
    }, 1000);
    return () => clearInterval(t);
  }, [running]);

  const next = () => {
    setSpeaker((p) => (p + 1) %% PEOPLE.length);
    setLeft(SECONDS);
  };

  return (
    <main className="timer">
      <h1>Standup</h1>
      <p className="who">{PEOPLE[speaker]}</p>
      <p className={left <= 10 ? "left warn" : "left"}>{left}s</p>
      <div className="buttons">
        <button onClick={() => setRunning(!running)}>{running ? "Pause" : "Start"}</button>
        <button onClick={next}>Next</button>
      </div>
      <ol>
        {PEOPLE.map((p, i) => (
          <li key={p} className={i === speaker ? "now" : ""}>{p}</li>
        ))}
      </ol>
    </main>
  );
}
`, i, 60+i%60, 60+i%60)
	css := `.timer { font-family: system-ui, sans-serif; max-width: 24rem; margin: 2rem auto; text-align: center; }
.timer h1 { font-size: 1.25rem; color: #444; }
.who { font-size: 2rem; font-weight: 600; margin: 0.5rem 0; }
.left { font-size: 3rem; font-variant-numeric: tabular-nums; margin: 0.25rem 0; }
.left.warn { color: #c0392b; }
.buttons { display: flex; gap: 0.5rem; justify-content: center; }
.buttons button { padding: 0.4rem 1rem; border-radius: 6px; border: 1px solid #bbb; background: #fafafa; }
.buttons button:hover { background: #eee; }
ol { list-style: none; padding: 0; margin-top: 1rem; }
li { padding: 0.2rem 0; color: #666; }
li.now { color: #000; font-weight: 600; }
`
	return name, map[string]string{room.EntryPoint: app, "src/styles.css": css}
}

// randomKey is a fresh key per attempt, like a UUID an agent makes up.
func randomKey(rng *rand.Rand) string {
	var b [16]byte
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return "rnd-" + hex.EncodeToString(b[:])
}
