//go:build unix

package main

import (
	"os"
	"syscall"
)

// runMain replaces this process with srt's main program, given srt's
// arguments; it returns only when that cannot be done.
func runMain(prog string, args []string) error {
	return syscall.Exec(prog, append([]string{prog}, args...), os.Environ())
}
