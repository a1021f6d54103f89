//go:build !linux

package main

import (
	"fmt"
	"io"
)

// quarantineCmd: only Linux quarantines protected names; the macOS
// profile refuses their creation.
func quarantineCmd(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "Error: srt quarantine exists on Linux only")
	return 1
}
