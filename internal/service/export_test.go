package service

import "time"

// SetHeadFresh sets how long s serves a Note head without asking the store
// again when no doorbell rings (tests: an hour proves the doorbell, not
// the clock, dropped a head).
func SetHeadFresh(s *Service, d time.Duration) { s.heads.fresh = d }
