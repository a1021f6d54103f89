//go:build !linux

package main

import (
	"errors"
)

// warmServer: sandboxes are prepared ahead on Linux only.
func warmServer([]string) error {
	return errors.New("the warm server runs on Linux only")
}
