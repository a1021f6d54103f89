//go:build !linux

package main

import (
	"errors"
	"io"
)

// warmClient: sandboxes are prepared ahead on Linux only; elsewhere srt
// runs every command itself.
func warmClient(_ *command, _ *options, _ io.Reader, _, _ io.Writer) (int, bool, error) {
	_, err := warmOn()
	return 0, false, err
}

func warmServer([]string) error {
	return errors.New("the warm server runs on Linux only")
}
