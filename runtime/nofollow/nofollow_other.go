//go:build !linux

package nofollow

import (
	"errors"
	"os"
)

var errLinuxOnly = errors.New("opening without following links is implemented on Linux only")

// Open is Linux only.
func Open(p string) (*os.File, error) { return nil, errLinuxOnly }

// OpenDir is Linux only.
func OpenDir(p string) (int, error) { return -1, errLinuxOnly }
