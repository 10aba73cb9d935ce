package events

import "testing"

// TestPanickingListenerIsContained: a listener that panics does not take
// down the notifier, and the other listeners and waiters still hear of it.
func TestPanickingListenerIsContained(t *testing.T) {
	h := NewHub()
	h.OnNotify(func(string, string) { panic("listener bug") })
	heard := 0
	h.OnNotify(func(string, string) { heard++ })
	wake, stop := h.Wait("note", "n1")
	defer stop()
	h.Notify("note", "n1")
	select {
	case <-wake:
	default:
		t.Fatal("the waiter was not woken")
	}
	if heard != 1 {
		t.Fatalf("the other listener heard %d times", heard)
	}
}
