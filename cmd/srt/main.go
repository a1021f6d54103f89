// Command srt runs a command in a sandbox described by a settings file, as
// the reference CLI does: srt [--settings FILE] [-d] [-c CMD] [--] [CMD ARGS...].
package main

import (
	"fmt"
	"os"

	"srt.dev/runtime/sandbox"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	if len(os.Args) > 1 && os.Args[1] == sandbox.InitArg {
		// The first process inside the sandbox (see package sandbox).
		err := sandbox.Init(os.Args[2:])
		fmt.Fprintf(os.Stderr, "srt: sandbox init: %v\n", err)
		os.Exit(126)
	}
	if len(os.Args) > 1 && os.Args[1] == sandbox.ReapArg {
		// Cleans up after a run, even one killed with SIGKILL.
		if err := sandbox.Reap(os.Args[2:]); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	if len(os.Args) > 1 && os.Args[1] == sandbox.ConnectArg {
		// The ProxyCommand of GIT_SSH_COMMAND, inside the sandbox.
		if err := sandbox.Connect(os.Args[2:], os.Stdin, os.Stdout); err != nil {
			fmt.Fprintf(os.Stderr, "srt: %v\n", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
