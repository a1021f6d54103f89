package periodic

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestEvery: the ticks come until tick says no more; after stop has
// returned none comes, and stop may be called again.
func TestEvery(t *testing.T) {
	var n atomic.Int32
	stop := Every(time.Millisecond, func() bool { return n.Add(1) < 3 })
	for deadline := time.Now().Add(5 * time.Second); n.Load() < 3 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
	}
	stop()
	time.Sleep(10 * time.Millisecond)
	if got := n.Load(); got != 3 {
		t.Errorf("%d ticks, want 3: tick said no more at the third", got)
	}
	n.Store(0)
	stop = Every(time.Millisecond, func() bool { n.Add(1); return true })
	time.Sleep(10 * time.Millisecond)
	stop()
	after := n.Load()
	time.Sleep(10 * time.Millisecond)
	stop()
	if after == 0 || n.Load() != after {
		t.Errorf("ticks: %d at stop, %d later; want some, and none after stop", after, n.Load())
	}
}
