package main

import (
	"errors"

	"srt.dev/internal/pollread"
)

// openControl: srt does not run commands on Windows yet.
func openControl(int) (*pollread.Reader, error) {
	return nil, errors.New("not supported on Windows")
}
