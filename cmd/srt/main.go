// Command srt runs a command in a sandbox described by a settings file.
//
// The sandbox runtime is not built yet (see the issue "srt on Linux"). Until
// it is, srt refuses to run anything rather than run it unsandboxed.
package main

import (
	"fmt"
	"os"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	if len(os.Args) == 2 && (os.Args[1] == "--version" || os.Args[1] == "-V") {
		fmt.Println(version)
		return
	}
	fmt.Fprintln(os.Stderr, "srt: the sandbox runtime is not built yet, so nothing was run.")
	fmt.Fprintln(os.Stderr, "srt: use 'srtc validate' to check a settings file in the meantime.")
	os.Exit(1)
}
