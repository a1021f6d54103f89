//go:build !unix

package proxy

import (
	"sync"
	"syscall"
)

// rawReads says whether readRaw reads a TCP connection itself: not
// here, where reads wait holding their buffer.
const rawReads = false

func readRaw(syscall.RawConn, *sync.Pool, int) (*[]byte, int, error) {
	panic("readRaw without raw reads")
}
