package sim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
)

// errAnswerLost is what a client sees when the fault injector dropped an
// answer: the server committed, the client timed out.
var errAnswerLost = errors.New("timeout: the answer was lost after the server committed (fault injector)")

// isAnswerLost reports whether err is a dropped answer. The SDK wraps
// transport errors, sometimes only by text.
func isAnswerLost(err error) bool {
	return err != nil && (errors.Is(err, errAnswerLost) || strings.Contains(err.Error(), errAnswerLost.Error()))
}

// dropper decides, deterministically from its seed, which answers are lost.
// It draws exactly one number per lossy call, lost or not, so a client that
// makes the same calls meets the same losses — the in-memory models use the
// same dropper as the MCP runs, which is how they can be compared call by
// call.
type dropper struct {
	mu  sync.Mutex
	rng *rand.Rand
	p   float64
}

func newDropper(seed int64, stream uint64, p float64) *dropper {
	return &dropper{rng: rand.New(rand.NewPCG(uint64(seed), stream)), p: p}
}

// lose draws for one call; an answer is lost only if it carried a result
// (the server committed, or replayed a commit). A refusal wrote nothing:
// losing it would only cost a resend, and the seeds' rebuilds lost answers
// "after the server committed".
func (d *dropper) lose(answered bool) bool {
	if d == nil || d.p == 0 {
		return false
	}
	d.mu.Lock()
	x := d.rng.Float64()
	d.mu.Unlock()
	return answered && x < d.p
}

// faultInjector is an http.RoundTripper between a go-sdk client and the
// server. It forwards every request; for a tools/call of a lossy tool it
// reads the whole answer (so the server has committed and replied) and
// then, as its dropper says, discards it and returns errAnswerLost. It also
// counts calls and request bytes per tool.
type faultInjector struct {
	base  http.RoundTripper
	drop  *dropper
	lossy map[string]bool

	mu    sync.Mutex
	calls map[string]int
	bytes map[string]int64
	lost  int
}

// newFaultInjector loses answers of the given tools with the dropper's
// probability (drop nil: never).
func newFaultInjector(drop *dropper, tools ...string) *faultInjector {
	f := &faultInjector{drop: drop, lossy: map[string]bool{}, calls: map[string]int{}, bytes: map[string]int64{}}
	for _, t := range tools {
		f.lossy[t] = true
	}
	return f
}

func (f *faultInjector) RoundTrip(r *http.Request) (*http.Response, error) {
	base := f.base
	if base == nil {
		base = http.DefaultTransport
	}
	tool := ""
	if r.Body != nil && r.Method == http.MethodPost {
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		r = r.Clone(r.Context())
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		r.ContentLength = int64(len(body))
		var m struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &m) == nil && m.Method == "tools/call" {
			tool = m.Params.Name
			f.mu.Lock()
			f.calls[tool]++
			f.bytes[tool] += int64(len(body))
			f.mu.Unlock()
		}
	}
	resp, err := base.RoundTrip(r)
	if err != nil || tool == "" || !f.lossy[tool] || f.drop == nil {
		return resp, err
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	if f.drop.lose(answeredWithResult(resp.Header.Get("Content-Type"), data)) {
		f.mu.Lock()
		f.lost++
		f.mu.Unlock()
		return nil, errAnswerLost
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	resp.ContentLength = int64(len(data))
	return resp, nil
}

// Lost is how many answers were dropped.
func (f *faultInjector) Lost() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lost
}

// Calls and Bytes are the tools/call count and request body bytes of a tool.
func (f *faultInjector) Calls(tool string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[tool]
}

func (f *faultInjector) Bytes(tool string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bytes[tool]
}

// answeredWithResult reports whether a tools/call answer is a result that
// is not an error (JSON or the last SSE data line).
func answeredWithResult(contentType string, body []byte) bool {
	msg := body
	if strings.HasPrefix(contentType, "text/event-stream") {
		msg = nil
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			if line := sc.Bytes(); bytes.HasPrefix(line, []byte("data:")) {
				msg = bytes.TrimSpace(append([]byte(nil), line[5:]...))
			}
		}
	}
	var m struct {
		Result *struct {
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Result == nil {
		return false
	}
	return !m.Result.IsError
}
