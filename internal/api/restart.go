package api

import (
	"bytes"
	"math/rand/v2"
	"strconv"
)

// A stream the server ends because it shuts down (service.StopWaiting)
// sends a retry hint and closes, with no end event: to every client,
// browsers' EventSource and the web app's live hub alike, it is a dropped
// connection to reopen after the hint, with Last-Event-ID, and behind a
// balancer the reopened stream reaches a node that is still ready. (An end
// event would tell the hub to reopen once at once and give up if that is
// refused, which a balancer with no ready node yet answers.)
const (
	restartRetryMin    = 1000 // ms
	restartRetrySpread = 2000 // ms: the hints spread reconnects over this much more
)

// sseRestart writes the last lines of a stream ended by a shutdown: a
// jittered retry hint, so that the streams of a node do not all reconnect
// in the same instant, and a comment saying why.
func sseRestart(b *bytes.Buffer) {
	ms := restartRetryMin + rand.N(restartRetrySpread)
	b.WriteString("retry: " + strconv.Itoa(ms) + "\n: the server is restarting: reconnect (Last-Event-ID resumes the stream)\n\n")
}
