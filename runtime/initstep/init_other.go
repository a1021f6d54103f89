//go:build !linux

package initstep

import (
	"errors"
	"fmt"
	"os"
)

var errLinuxOnly = errors.New("the init step runs only inside a Linux sandbox")

// Main is the init step's entry: Linux only.
func Main([]string) int {
	fmt.Fprintf(os.Stderr, "%s: %v\n", Binary, errLinuxOnly)
	return 2
}

// Init is the init step: Linux only.
func Init([]string) error { return errLinuxOnly }

// LimitExec is the trampoline of a Linux plan's rlimits: Linux only.
func LimitExec([]string) error { return errLinuxOnly }
