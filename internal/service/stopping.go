package service

import (
	"context"
	"sync"
)

// stopState is the Service's shutdown signal, made on first use: closed
// once by StopWaiting, watched by every long poll and event stream.
type stopState struct {
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
}

func (s *Service) stopCtx() context.Context {
	s.waits.stop.once.Do(func() {
		s.waits.stop.ctx, s.waits.stop.cancel = context.WithCancel(context.Background())
	})
	return s.waits.stop.ctx
}

// StopWaiting is a graceful shutdown's signal to everything that waits:
// every long poll answers at once with its page so far (an empty page and
// the same cursor when nothing came), and every event stream ends so that
// its client reconnects, to another node behind a balancer. Calls that do
// not wait are not touched: they finish and answer. It is idempotent.
func (s *Service) StopWaiting() {
	s.stopCtx()
	s.waits.stop.cancel()
}

// Stopping is closed once StopWaiting was called.
func (s *Service) Stopping() <-chan struct{} { return s.stopCtx().Done() }

// StoppingContext is done once StopWaiting was called (for
// context.AfterFunc).
func (s *Service) StoppingContext() context.Context { return s.stopCtx() }
