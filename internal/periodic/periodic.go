// Package periodic runs a function at a fixed period on a goroutine of
// its own, which its owner stops and waits for.
package periodic

import (
	"sync"
	"time"
)

// Every calls tick every period, on a goroutine of its own, until tick
// returns false or stop is called; stop returns once that goroutine has
// returned, and may be called more than once.
func Every(period time.Duration, tick func() (more bool)) (stop func()) {
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if !tick() {
					return
				}
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		<-ended
	}
}
