package service

// The fan-out's bounds, for the tests.
const (
	LiveQueue = liveQueue
	LiveRing  = liveRing
	LivePage  = livePage
)
