package api

import (
	"net/http"
	"strconv"
	"sync"

	"foundry/internal/problem"
)

// RefuseHTTP answers a request that a limit in front of the API (a rate
// limit) refused: the problem document every API error is, with status,
// and Retry-After from the problem's retry_after.
func RefuseHTTP(w http.ResponseWriter, status int, p *problem.Problem) {
	if s, ok := p.Details["retry_after"].(int); ok {
		w.Header().Set("Retry-After", strconv.Itoa(s))
	}
	w.Header().Set("Cache-Control", "no-store")
	writeProblem(w, status, p)
}

// Stream reports whether r is for one of the API's event streams
// (text/event-stream), which live for minutes under a cap of their own
// (service.StreamGate) rather than answering at once.
func Stream(r *http.Request) bool {
	_, pattern := streamRoutes().Handler(r)
	return pattern != ""
}

var streamRoutes = sync.OnceValue(func() *http.ServeMux {
	mux := http.NewServeMux()
	for _, rt := range (&handler{}).routes() {
		if rt.doc.media == "text/event-stream" {
			mux.Handle(rt.method+" "+rt.path, http.NotFoundHandler())
		}
	}
	return mux
})
