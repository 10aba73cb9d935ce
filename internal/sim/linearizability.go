package sim

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"foundry/internal/mcpclient"
	"foundry/internal/problem"
)

// Experiment 10: several agents read and write one Note's markdown tab at
// once over real MCP — compare-and-swap writes, resends of earlier keys,
// reused keys and responses lost after the server committed — and
// porcupine checks the whole history against the write contract as a
// sequential model: a versioned register with idempotency keys.

func init() {
	registerNumbered(10, Experiment{
		Name:  "linearizability",
		Title: "Concurrent reads, CAS writes, replays and lost responses on one Note, checked for linearizability",
		Run:   runLinearizability,
	})
}

// regInput is one operation on the register (the Note's markdown tab).
type regInput struct {
	write    bool
	key      string // writes: the idempotency key
	expected int64  // writes: expected_version
	text     string // writes: the new text
}

// Output kinds.
const (
	outRead     = "read"
	outApplied  = "applied"  // a write that answered a version (replayed or not)
	outConflict = "conflict" // version_conflict with the current version
	outReused   = "reused"   // idempotency_key_reused
	outUnknown  = "unknown"  // the response was lost: the outcome is not known
)

// regOutput is what the server answered.
type regOutput struct {
	kind     string
	version  int64 // read: the version read; applied: the version the write made; conflict: current_version
	text     string
	replayed bool
}

// regState is the model's state: the register and the committed keys.
// States are never mutated: a write that applies copies the key map.
type regState struct {
	version int64
	text    string
	keys    map[string]regKey
}

// regKey is what a committed key stored: the request's meaning (its text:
// expected_version is not part of it) and the first result.
type regKey struct {
	text    string
	version int64
}

// regStep is the write contract in sequential form: the key first, then the
// version, then apply and bump.
func regStep(s regState, in regInput, out regOutput) (bool, regState) {
	if !in.write {
		return out.kind == outRead && out.version == s.version && out.text == s.text, s
	}
	if k, ok := s.keys[in.key]; ok {
		if k.text != in.text {
			return out.kind == outReused || out.kind == outUnknown, s
		}
		return out.kind == outUnknown || out.kind == outApplied && out.replayed && out.version == k.version, s
	}
	if in.expected != s.version {
		return out.kind == outConflict && out.version == s.version || out.kind == outUnknown, s
	}
	next := regState{version: s.version + 1, text: in.text, keys: maps.Clone(s.keys)}
	if next.keys == nil {
		next.keys = map[string]regKey{}
	}
	next.keys[in.key] = regKey{text: in.text, version: next.version}
	return out.kind == outApplied && !out.replayed && out.version == next.version || out.kind == outUnknown, next
}

// regModel is the porcupine model of a versioned register with idempotency
// keys, starting from the state first read.
func regModel(init regState) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return init },
		Step: func(state, input, output any) (bool, any) {
			return regStep(state.(regState), input.(regInput), output.(regOutput))
		},
		Equal: func(a, b any) bool {
			x, y := a.(regState), b.(regState)
			return x.version == y.version && x.text == y.text && maps.Equal(x.keys, y.keys)
		},
		Hash: func(state any) uint64 {
			s := state.(regState)
			h := fnv.New64a()
			h.Write([]byte(s.text))
			return h.Sum64() ^ uint64(s.version)*0x9e3779b97f4a7c15 ^ uint64(len(s.keys))
		},
		DescribeOperation: func(input, output any) string {
			in, out := input.(regInput), output.(regOutput)
			if !in.write {
				return fmt.Sprintf("read() → v%d %q", out.version, out.text)
			}
			return fmt.Sprintf("write(%s, v%d, %q) → %s v%d replayed=%v", in.key, in.expected, in.text, out.kind, out.version, out.replayed)
		},
		DescribeState: func(state any) string {
			s := state.(regState)
			return fmt.Sprintf("v%d %q (%d keys)", s.version, s.text, len(s.keys))
		},
	}
}

// linClient is one agent's memory: the version it last saw and the writes
// it made, to resend.
type linClient struct {
	id      int
	rng     *rand.Rand
	version int64
	sent    []regInput
	pending *regInput // a write whose response was lost: resend it next
}

// linCounts tallies a run.
type linCounts struct {
	reads, applied, replayed, conflicts, reused, unknown, resends int
	errors, refusals                                              int
}

func runLinearizability(ctx context.Context, env *Env) (*Report, error) {
	clients, opsPer := 4, 50
	if env.Quick {
		clients, opsPer = 3, 15
	}
	const loss = 0.1
	seed := seedOr(env, 10)
	noteID, err := simNote(ctx, env)
	if err != nil {
		return nil, err
	}
	// The state the history starts from.
	first, err := dialAgent(ctx, env, nil)
	if err != nil {
		return nil, err
	}
	text, version, err := readMarkdown(ctx, first, noteID)
	first.Close()
	if err != nil {
		return nil, err
	}
	init := regState{version: version, text: text}

	start := time.Now()
	now := func() int64 { return int64(time.Since(start)) }
	var mu sync.Mutex
	var history []porcupine.Operation
	var counts linCounts
	var firstErr error
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		// Each client has its own injector and dropper stream: its losses
		// depend on its own calls only.
		inj := newFaultInjector(newDropper(seed, 100+uint64(c), loss), "edit_note_tab")
		cs, err := dialAgent(ctx, env, inj)
		if err != nil {
			return nil, err
		}
		defer cs.Close()
		cl := &linClient{id: c, rng: rand.New(rand.NewPCG(uint64(seed), 200+uint64(c))), version: init.version}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < opsPer && ctx.Err() == nil; i++ {
				in, resend := cl.next(i)
				call := now()
				out, err := linCall(ctx, cs, noteID, in)
				ret := now()
				mu.Lock()
				switch {
				case isAnswerLost(err):
					out, ret = regOutput{kind: outUnknown}, math.MaxInt64 // porcupine: may take effect any time after call
				case err != nil && isRefusal(err):
					counts.refusals++
					if firstErr == nil {
						firstErr = err
					}
				case err != nil:
					// Not injected: the outcome is unknown all the same.
					counts.errors++
					if firstErr == nil {
						firstErr = err
					}
					out, ret = regOutput{kind: outUnknown}, math.MaxInt64
				}
				history = append(history, porcupine.Operation{ClientId: cl.id, Input: in, Call: call, Output: out, Return: ret})
				counts.add(out, resend)
				mu.Unlock()
				cl.saw(in, out)
			}
		}()
	}
	wg.Wait()
	if counts.refusals > 0 {
		return nil, fmt.Errorf("%d calls were refused in a way the write contract does not allow; first: %w", counts.refusals, firstErr)
	}
	if counts.errors > len(history)/4 {
		return nil, fmt.Errorf("%d of %d calls failed outside the fault injector; first: %w", counts.errors, len(history), firstErr)
	}

	checkStart := time.Now()
	result := porcupine.CheckOperationsTimeout(regModel(init), history, 60*time.Second)
	checkTime := time.Since(checkStart)
	// Negative control: the same history plus one read, after everything
	// returned, of the text the run started from. Once any write applied,
	// the model must reject it, or the check above proved nothing.
	control := append(slices.Clone(history), porcupine.Operation{ClientId: clients, Input: regInput{},
		Call: now(), Output: regOutput{kind: outRead, version: init.version, text: init.text}, Return: now() + 1})
	controlResult := porcupine.CheckOperationsTimeout(regModel(init), control, 60*time.Second)

	rep := &Report{
		Table: Table{Header: []string{"clients", "ops", "reads", "writes applied", "replayed", "version conflicts", "keys reused (refused)", "lost responses (unknown)", "porcupine", "seed"}},
		CSV:   [][]string{{"client", "call_ns", "return_ns", "op", "idempotency_key", "expected_version", "text", "outcome", "version", "replayed"}},
	}
	rep.Table.Rows = [][]string{{itoa(clients), itoa(len(history)), itoa(counts.reads), itoa(counts.applied), itoa(counts.replayed), itoa(counts.conflicts),
		itoa(counts.reused), itoa(counts.unknown), string(result), "— (not measured by the seeds)"}}
	for _, op := range history {
		in, out := op.Input.(regInput), op.Output.(regOutput)
		ret := strconv.FormatInt(op.Return, 10)
		if op.Return == math.MaxInt64 {
			ret = ""
		}
		kind := "read"
		if in.write {
			kind = "write"
		}
		rep.CSV = append(rep.CSV, []string{itoa(op.ClientId), strconv.FormatInt(op.Call, 10), ret, kind, in.key, strconv.FormatInt(in.expected, 10), in.text,
			out.kind, strconv.FormatInt(out.version, 10), strconv.FormatBool(out.replayed)})
	}
	rep.Invariants = []Invariant{{
		Name: "history is linearizable",
		Held: result == porcupine.Ok && counts.applied > 0 && controlResult == porcupine.Illegal,
		Got: fmt.Sprintf("porcupine: %s for %d operations from %d clients (%d writes applied, %d with unknown outcome), checked in %s; negative control (a stale read appended): %s",
			result, len(history), clients, counts.applied, counts.unknown, checkTime.Round(time.Microsecond), controlResult),
	}}
	rep.Notes = []string{
		fmt.Sprintf("Model: a register (version, text) with a map key → (request, first result). A known key with the same request returns the stored version with replayed=true, with another request idempotency_key_reused; a stale expected_version returns version_conflict with the current version; otherwise the text is applied and the version bumped. %.0f%% of write responses were lost after the server committed; those operations have an unknown outcome (porcupine: may take effect any time after their call), and the client resends them with the same key.", loss*100),
		fmt.Sprintf("Porcupine checked %d operations in %s. As a negative control, the same history with one extra read of the starting text after everything returned is %s.", len(history), checkTime.Round(time.Microsecond), controlResult),
	}
	if counts.errors > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d calls failed outside the fault injector (counted as unknown outcomes); first: %v", counts.errors, firstErr))
	}
	return rep, nil
}

// next picks the client's next operation: after a lost response, resend it;
// otherwise read (35%), write on the version last seen with a fresh key
// (45%), resend an earlier write unchanged (15%), or reuse an earlier key for
// a different text (5%).
func (c *linClient) next(i int) (regInput, bool) {
	if c.pending != nil {
		in := *c.pending
		c.pending = nil
		return in, true
	}
	x := c.rng.Float64()
	switch {
	case x < 0.35:
		return regInput{}, false
	case x < 0.80 || len(c.sent) == 0:
		key := fmt.Sprintf("lin-c%d-op%03d-%08x", c.id, i, c.rng.Uint32())
		in := regInput{write: true, key: key, expected: c.version, text: fmt.Sprintf("client %d, op %d", c.id, i)}
		c.sent = append(c.sent, in)
		return in, false
	case x < 0.95:
		return c.sent[c.rng.IntN(len(c.sent))], true
	default:
		in := c.sent[c.rng.IntN(len(c.sent))]
		in.text = fmt.Sprintf("client %d, op %d, reusing %s", c.id, i, in.key)
		return in, false
	}
}

// saw updates what the client knows after an answer.
func (c *linClient) saw(in regInput, out regOutput) {
	switch out.kind {
	case outRead, outConflict:
		c.version = max(c.version, out.version)
	case outApplied:
		c.version = max(c.version, out.version)
	case outUnknown:
		if in.write {
			c.pending = &in
		}
	}
}

func (n *linCounts) add(out regOutput, resend bool) {
	switch out.kind {
	case outRead:
		n.reads++
	case outApplied:
		if out.replayed {
			n.replayed++
		} else {
			n.applied++
		}
	case outConflict:
		n.conflicts++
	case outReused:
		n.reused++
	case outUnknown:
		n.unknown++
	}
	if resend {
		n.resends++
	}
}

// linCall performs one operation over MCP and decodes the answer.
func linCall(ctx context.Context, cs *mcp.ClientSession, noteID string, in regInput) (regOutput, error) {
	if !in.write {
		res, err := mcpclient.Call(ctx, cs, "read_note_tab", map[string]any{"note_id": noteID, "tab_id": "markdown"})
		if err != nil {
			return regOutput{}, err
		}
		if res.IsError {
			return regOutput{}, refusal{"read_note_tab: " + res.Text}
		}
		return regOutput{kind: outRead, version: res.Int("version"), text: res.Str("text")}, nil
	}
	res, err := mcpclient.Call(ctx, cs, "edit_note_tab", map[string]any{
		"note_id": noteID, "tab_id": "markdown", "expected_version": in.expected, "idempotency_key": in.key,
		"operation": "replace_text", "text": in.text,
	})
	if err != nil {
		return regOutput{}, err
	}
	if !res.IsError {
		return regOutput{kind: outApplied, version: res.Int("version"), replayed: res.Bool("replayed")}, nil
	}
	switch res.Str("error") {
	case problem.Conflict:
		return regOutput{kind: outConflict, version: res.Int("current_version")}, nil
	case problem.KeyReused:
		return regOutput{kind: outReused}, nil
	}
	return regOutput{}, refusal{"edit_note_tab: unexpected refusal: " + res.Text}
}

// refusal is an answer the write contract does not allow here.
type refusal struct{ msg string }

func (r refusal) Error() string { return r.msg }

func isRefusal(err error) bool {
	var r refusal
	return errors.As(err, &r)
}
