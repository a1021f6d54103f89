//go:build !linux && !darwin && !windows

package sandbox

import (
	"context"
	"errors"
)

// errNotBuilt: the Windows runtime does not exist yet.
var errNotBuilt = errors.New("running commands in a sandbox is built for Linux and macOS only so far; nothing was run")

// Run refuses: there is no sandbox for this operating system yet.
func (*Manager) Run(context.Context, []string, Options) (*Result, error) {
	return nil, errNotBuilt
}

// Doctor reports that this operating system has no sandbox yet.
func Doctor(string) []Check {
	return []Check{{Name: "sandbox", Detail: errNotBuilt.Error(), Remedy: "use srt on Linux or macOS for now"}}
}

// Reap refuses, as Run does.
func Reap([]string) error { return errNotBuilt }
