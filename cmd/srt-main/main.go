// Command srt-main is srt's main program: srt (cmd/srt), the small front
// users run, starts it with srt's arguments unless the warm server runs
// the command (docs/srt.md#warm-start). It runs a command in a sandbox
// described by a settings file, as the reference CLI does: srt
// [--settings FILE] [-d] [-c CMD] [--] [CMD ARGS...], and srt's other
// commands (cmd/internal/cmdline).
package main

import (
	"os"

	"srt.dev/cmd/internal/warmwire"
	"srt.dev/internal/buildversion"
	"srt.dev/runtime/initstep"
	"srt.dev/runtime/sandbox"
)

// version is set at build time with -ldflags "-X main.version=..."; ""
// means the module version and VCS revision the binary was built from.
var version = ""

// versionLine is what --version prints.
func versionLine() string { return buildversion.Line("srt", version) }

func main() {
	if code, ok := helperRole(os.Args[1:]); ok {
		os.Exit(code)
	}
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// helperRole runs srt's own helper roles: the sandbox's init step, the
// reaper, the ProxyCommand of GIT_SSH_COMMAND, and the warm server.
func helperRole(args []string) (code int, ok bool) {
	if len(args) == 0 {
		return 0, false
	}
	var err error
	switch args[0] {
	case initstep.InitArg, initstep.LimitArg:
		// srt in srt-init's place (see runtime/initstep); returns only on
		// failure.
		return initstep.Main(args), true
	case sandbox.ReapArg:
		err = sandbox.Reap(args[1:])
	case sandbox.ConnectArg:
		err = sandbox.Connect(args[1:], os.Stdin, os.Stdout)
	case warmwire.Arg:
		servingWarm = true
		err = warmServer(args[1:])
	default:
		return 0, false
	}
	return report(os.Stderr, rolePrefix, 0, err), true
}
