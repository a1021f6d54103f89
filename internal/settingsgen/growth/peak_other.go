//go:build !unix

package main

import "os"

// peakKB: this system reports no peak memory here (0: not measured).
func peakKB(*os.ProcessState) int64 { return 0 }
