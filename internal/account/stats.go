package account

import "sync/atomic"

// Sign-in outcomes, as Stats counts them.
const (
	SignInOK        = "ok"        // signed in
	SignInRefused   = "refused"   // wrong email or password
	SignInThrottled = "throttled" // too many failures for the account or address
	SignInBusy      = "busy"      // no password check slot came free in time
	SignInError     = "error"     // the server failed
)

// SignInOutcomes lists every outcome Stats counts.
var SignInOutcomes = []string{SignInOK, SignInRefused, SignInThrottled, SignInBusy, SignInError}

// signInStats counts sign-ins by outcome.
type signInStats struct {
	ok, refused, throttled, busy, failed atomic.Uint64
}

func (s *signInStats) counter(outcome string) *atomic.Uint64 {
	switch outcome {
	case SignInOK:
		return &s.ok
	case SignInRefused:
		return &s.refused
	case SignInThrottled:
		return &s.throttled
	case SignInBusy:
		return &s.busy
	}
	return &s.failed
}

// Stats is what a Manager counted since it started.
type Stats struct {
	// SignIns by outcome (SignInOutcomes): sign-in form posts that got as
	// far as checking a password, or were throttled before it.
	SignIns map[string]uint64
	// HashSlots is how many password hashes may run at once, HashesBusy
	// how many run now.
	HashSlots, HashesBusy int
}

// Stats reports the sign-ins counted and the password hash slots in use.
func (m *Manager) Stats() Stats {
	st := Stats{SignIns: make(map[string]uint64, len(SignInOutcomes)), HashSlots: cap(m.hashes.slots), HashesBusy: len(m.hashes.slots)}
	for _, o := range SignInOutcomes {
		st.SignIns[o] = m.signIns.counter(o).Load()
	}
	return st
}

func (m *Manager) countSignIn(outcome string) { m.signIns.counter(outcome).Add(1) }
