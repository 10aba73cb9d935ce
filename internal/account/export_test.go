package account

// HoldHashSlots takes every password hash slot of m, as that many sign-ins
// being checked would, until the returned func is called.
func HoldHashSlots(m *Manager) (release func()) {
	n := cap(m.hashes.slots)
	for range n {
		m.hashes.slots <- struct{}{}
	}
	return func() {
		for range n {
			<-m.hashes.slots
		}
	}
}

// HashSlotCount is how many password hashes m computes at once.
func HashSlotCount(m *Manager) int { return cap(m.hashes.slots) }

// DummyHash is the hash an unknown account is compared against.
func DummyHash() string { return dummy() }
