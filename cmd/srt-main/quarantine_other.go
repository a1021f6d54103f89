//go:build !linux

package main

import (
	"errors"
	"io"
)

// quarantineCmd: only Linux quarantines protected names; the macOS
// profile refuses their creation.
func quarantineCmd(args []string, stdout, stderr io.Writer) (int, error) {
	return 0, errors.New("srt quarantine exists on Linux only")
}
