package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// dispatch is what a bare go-sdk server dispatched for one request, seen
// by a receiving middleware before any handler runs.
type dispatch struct {
	mu     sync.Mutex
	method string
	name   string   // tools/call: params.name
	subs   []string // subscriptions/listen: the resource subscriptions
	n      int
}

var errRecorded = errors.New("recorded")

// sdkReader is a bare stateless go-sdk server whose only middleware notes
// what it is about to dispatch, and refuses it.
func sdkReader() (http.Handler, *dispatch) {
	d := &dispatch{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "reader", Version: "v1"}, nil)
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			d.mu.Lock()
			defer d.mu.Unlock()
			switch p := req.GetParams().(type) {
			case *mcp.CallToolParamsRaw:
				d.method, d.name, d.n = method, p.Name, d.n+1
			case *mcp.SubscriptionsListenParams:
				d.method, d.n = method, d.n+1
				if p.Notifications != nil {
					d.subs = p.Notifications.ResourceSubscriptions
				}
			}
			return nil, errRecorded
		}
	})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, DisableLocalhostProtection: true}), d
}

func (d *dispatch) take() (method, name string, subs []string, n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	method, name, subs, n = d.method, d.name, d.subs, d.n
	d.method, d.name, d.subs, d.n = "", "", nil, 0
	return
}

// serveSDK posts body to the SDK as a client of the revision would, and
// returns the id the SDK wrote back (nil when it wrote none).
func serveSDK(sdk http.Handler, body []byte, method string, newProto bool) json.RawMessage {
	req := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if newProto {
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
	}
	rec := httptest.NewRecorder()
	sdk.ServeHTTP(rec, req)
	out := rec.Body.Bytes()
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(out))
		sc.Buffer(nil, 1<<20)
		out = nil
		for sc.Scan() {
			if d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: ")); ok && len(d) > 0 {
				out = append([]byte(nil), d...)
			}
		}
	}
	var answer struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(out, &answer) != nil || string(answer.ID) == "null" {
		return nil
	}
	return answer.ID
}

// checkFront holds readMessage to the SDK: for every body the front either
// refuses it (a batch), or finds nothing the SDK would dispatch and indeed
// the SDK dispatches nothing, or reads the method and id the SDK's own
// decoder reads, the id the SDK writes back, and the tool name or the
// resource subscriptions the SDK dispatches.
func checkFront(t *testing.T, sdk http.Handler, d *dispatch, body []byte) {
	t.Helper()
	m, err := readMessage(body)
	if err != nil {
		if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) == 0 || trimmed[0] != '[' {
			t.Fatalf("%.300q: refused (%v), and it is no batch", body, err)
		}
		return
	}
	msg, derr := jsonrpc.DecodeMessage(body)
	sdkReq, isReq := msg.(*jsonrpc.Request)
	method := ""
	if derr == nil && isReq {
		method = sdkReq.Method
	}
	// What the SDK dispatches, as a client of either revision would send it.
	var gotMethods []string
	var gotName string
	var gotSubs []string
	var answered json.RawMessage
	for _, newProto := range []bool{false, true} {
		id := serveSDK(sdk, body, method, newProto)
		if !newProto {
			answered = id
		}
		if dm, name, subs, n := d.take(); n > 0 {
			gotMethods = append(gotMethods, dm)
			gotName, gotSubs = name, subs
		}
	}
	if m == nil {
		if derr == nil && isReq {
			t.Fatalf("%.300q: the front reads no request; the SDK reads %q", body, method)
		}
		if len(gotMethods) > 0 {
			t.Fatalf("%.300q: the front reads no request; the SDK dispatched %v", body, gotMethods)
		}
		return
	}
	if derr != nil || !isReq || m.Method != method {
		t.Fatalf("%.300q: the front reads method %q; the SDK's decoder %q (%v)", body, m.Method, method, derr)
	}
	if sdkReq.ID.IsValid() != (m.ID != nil) {
		t.Fatalf("%.300q: the front reads id %s; the SDK's decoder %v", body, m.ID, sdkReq.ID.Raw())
	}
	if answered != nil && !bytes.Equal(answered, m.ID) {
		t.Fatalf("%.300q: the front would answer id %s; the SDK answers %s", body, m.ID, answered)
	}
	for _, dm := range gotMethods {
		if dm != m.Method || !m.Params.ok {
			t.Fatalf("%.300q: the SDK dispatched %s; the front read %q (params read: %v)", body, dm, m.Method, m.Params.ok)
		}
		switch dm {
		case "tools/call":
			if gotName != m.Params.Name {
				t.Fatalf("%.300q: the SDK calls tool %q; the front read %q", body, gotName, m.Params.Name)
			}
		case "subscriptions/listen":
			if !slices.Equal(gotSubs, m.Params.ResourceSubscriptions) {
				t.Fatalf("%.300q: the SDK listens to %q; the front read %q", body, gotSubs, m.Params.ResourceSubscriptions)
			}
		}
	}
}

// FuzzFrontReadsAsTheSDK: differential fuzzing of the front's reading
// against the go-sdk's own decoding and dispatch. The seeds under
// testdata/fuzz/FuzzFrontReadsAsTheSDK run with every go test.
func FuzzFrontReadsAsTheSDK(f *testing.F) {
	sdk, d := sdkReader()
	f.Fuzz(func(t *testing.T, body []byte) { checkFront(t, sdk, d, body) })
}

// TestFrontReadsTheSeeds: the seed corpus is there, and its messages reach
// the SDK's dispatch (so the fuzzing starts from calls it runs).
func TestFrontReadsTheSeeds(t *testing.T) {
	sdk, d := sdkReader()
	for _, c := range []struct {
		body, method, name string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"edit_note_tab","NAME":"list_notes","arguments":{}}}`, "tools/call", "edit_note_tab"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_notes","name":"edit_note_tab"}}`, "tools/call", "edit_note_tab"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"n\u0061me":"edit_note_tab"}}`, "tools/call", "edit_note_tab"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{"name":"edit_note_tab"}}`, "tools/call", "edit_note_tab"},
		{`{"jsonrpc":"2.0","id":1,"METHOD":"tools/list","method":"tools/call","params":{"name":"edit_note_tab"}}`, "tools/call", "edit_note_tab"},
		{`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{` + newMeta + `,"notifications":{"resourceSubscriptions":["foundry://notes/n1"]}}}`, "subscriptions/listen", ""},
	} {
		checkFront(t, sdk, d, []byte(c.body))
		m, _ := readMessage([]byte(c.body))
		serveSDK(sdk, []byte(c.body), c.method, c.method == "subscriptions/listen")
		if dm, name, _, _ := d.take(); m == nil || dm != c.method || name != c.name || m.Params.Name != c.name {
			t.Errorf("%s: the SDK dispatched %q %q; the front read %+v", c.body, dm, name, m)
		}
	}
}
