package main

import (
	"errors"
	"os"
)

// openControl: srt does not run commands on Windows yet.
func openControl(int) (*os.File, error) {
	return nil, errors.New("not supported on Windows")
}
