package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"foundry/internal/problem"
	"foundry/internal/ratelimit"
)

// A rate limit in front of the endpoint (see internal/server's limits)
// refuses a request before the endpoint reads it, but words the refusal
// here: a tools/call answers a tool result with isError, so the model reads
// retry_after and waits instead of seeing a transport failure; any other
// request answers HTTP 429 with Retry-After. The tool result is the SDK's
// own (the call goes through it as any other, and the tool answers the
// refusal before it reads its arguments), so it is exact for every
// protocol revision.

type refusalKey struct{}

// Refused returns ctx carrying a limit's refusal of its request.
func Refused(ctx context.Context, pr *problem.Problem) context.Context {
	return context.WithValue(ctx, refusalKey{}, pr)
}

func refusalOf(ctx context.Context) *problem.Problem {
	pr, _ := ctx.Value(refusalKey{}).(*problem.Problem)
	return pr
}

// RefuseHTTP answers a request refused by a limit: HTTP 429, Retry-After
// (the problem's retry_after), and a JSON-RPC error (id, or null) whose
// data is the problem.
func RefuseHTTP(w http.ResponseWriter, id json.RawMessage, pr *problem.Problem) {
	if s, ok := pr.Details["retry_after"].(int); ok {
		w.Header().Set("Retry-After", strconv.Itoa(s))
	}
	writeRPCErrorData(w, http.StatusTooManyRequests, id, -32000, pr.Error(), pr)
}

// admitted applies a limit's decision at the front, once the request is
// read and its token checked: false when it answered the request. A
// refused tools/call with a token goes on, for its tool to answer the
// refusal as a result; a request that waits under a cap of its own (a
// listen stream, a poll, which may wait up to 25 s) gives back its place
// in the token's cap of requests in flight.
func admitted(w http.ResponseWriter, r *http.Request, m *peek, presented bool) bool {
	if pr := refusalOf(r.Context()); pr != nil && (m == nil || !presented || m.Method != "tools/call") {
		var id json.RawMessage
		if m != nil {
			id = m.ID
		}
		RefuseHTTP(w, id, pr)
		return false
	}
	if m != nil && (m.Method == "subscriptions/listen" || (m.Method == "tools/call" && m.Params.Name == pollTool)) {
		ratelimit.Release(r.Context())
	}
	return true
}

// pollTool waits for events under the long polls' cap (service.Gate).
const pollTool = "poll_resource_events"
