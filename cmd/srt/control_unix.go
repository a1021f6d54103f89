//go:build !windows

package main

import (
	"os"
	"strconv"
	"syscall"
)

// openControl checks that fd is open and readable (a zero-length read, as
// the reference probes it) and keeps it from the sandboxed command: it is
// closed on exec, so neither bubblewrap nor the command inherits it.
func openControl(fd int) (*os.File, error) {
	if _, err := syscall.Read(fd, nil); err != nil {
		return nil, err
	}
	syscall.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), "control-fd-"+strconv.Itoa(fd)), nil
}
