//go:build !unix

package testenv

import "os/exec"

// asUser: this system has no uids to switch to; the command runs as the
// caller (the tests that need another user run on Linux).
func asUser(*exec.Cmd, int) {}
