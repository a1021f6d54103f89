// Command srt runs a command in a sandbox described by a settings file, as
// the reference CLI does: srt [--settings FILE] [-d] [-c CMD] [--] [CMD
// ARGS...]. It is a small front: with SRT_WARM=on it hands a command to
// the warm server (docs/srt.md#warm-start), and otherwise starts srt-main,
// srt's main program, installed beside it, with the same arguments. Its
// own start is paid by every command, so it links little: srt's command
// line (cmd/internal/cmdline) and the warm server's protocol
// (cmd/internal/warmwire).
package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// mainProgram is the name of srt's main program, beside srt.
const mainProgram = "srt-main"

func main() {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "srt: cannot find its own program, and so %s beside it: %v\n", mainProgram, err)
		os.Exit(1)
	}
	prog := filepath.Join(filepath.Dir(self), mainProgram+filepath.Ext(self))
	if code, served := warm(self, prog, os.Args[1:]); served {
		os.Exit(code)
	}
	err = runMain(prog, os.Args[1:])
	fmt.Fprintf(os.Stderr, "srt: cannot run %s, srt's main program: %v\n"+
		"  fix: install it beside srt, from the same source: CGO_ENABLED=0 go install ./cmd/srt ./cmd/srt-main ./cmd/srt-init ./cmd/srtc (in srt's checkout)\n", prog, err)
	os.Exit(1)
}
