package proxy

import (
	"sync"
	"sync/atomic"
)

// reserveFDs are the descriptors the proxies leave to the rest of the
// process, whatever the commands they serve do: the check after a run
// walks the write roots by descriptor, and a command that opens thousands
// of tunnels must not leave it none.
const reserveFDs = 512

// fdsPerConn is what one accepted connection may hold: itself, its
// upstream connection, and one more while a TLS tunnel is terminated.
const fdsPerConn = 3

// A connBudget bounds the connections the proxies of this process hold at
// once, so that they never take the descriptors reserveFDs keeps.
type connBudget struct {
	once sync.Once
	max  int64
	n    atomic.Int64
}

// conns is the process's budget: every proxy of the process shares it
// (each server takes the pointer when it starts).
var conns = &connBudget{}

// acquire takes a place for one connection, or reports that there is
// none left (the connection is then closed at once).
func (b *connBudget) acquire() bool {
	b.once.Do(func() { b.max = max(int64(openFileLimit()-reserveFDs)/fdsPerConn, 16) })
	if b.n.Add(1) > b.max {
		b.n.Add(-1)
		return false
	}
	return true
}

// release gives a place back.
func (b *connBudget) release() { b.n.Add(-1) }
