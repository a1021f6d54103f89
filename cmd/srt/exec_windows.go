package main

import (
	"errors"
	"os"
	"os/exec"
)

// runMain runs srt's main program with srt's arguments, its standard
// streams and environment, and exits with its status (Windows has no
// exec); it returns only when the program cannot be started.
func runMain(prog string, args []string) error {
	cmd := exec.Command(prog, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		os.Exit(0)
	case errors.As(err, &exit):
		os.Exit(exit.ExitCode())
	}
	return err
}
