package api

import "time"

// SetStreamTimings shortens the event stream's timings for a test and
// answers a function that puts them back.
func SetStreamTimings(lifetime, heartbeat, recheck time.Duration) (restore func()) {
	l, hb, rc := streamLifetime, streamHeartbeat, streamRecheck
	streamLifetime, streamHeartbeat, streamRecheck = lifetime, heartbeat, recheck
	return func() { streamLifetime, streamHeartbeat, streamRecheck = l, hb, rc }
}
