//go:build unix

package main

import (
	"os"
	"syscall"
)

// peakKB is the process's peak resident memory as getrusage reports
// it: KB on Linux (bytes on macOS, where the tool is not run).
func peakKB(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Maxrss)
	}
	return 0
}
