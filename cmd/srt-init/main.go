// Command srt-init is srt's init step inside each Linux sandbox (see
// runtime/initstep): srt starts it through bubblewrap as the sandbox's
// first process. It is a program of its own so that it starts in about
// half the time srt does; installed beside srt (go install ./cmd/srt-init),
// it is used when it is of srt's build, and srt runs itself in its place
// otherwise.
package main

import (
	"fmt"
	"os"

	"srt.dev/internal/buildversion"
	"srt.dev/runtime/initstep"
)

// version is set at build time with -ldflags "-X main.version=..."; ""
// means the module version and VCS revision the binary was built from.
var version = ""

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--version" {
		fmt.Println(buildversion.Line(initstep.Binary, version))
		return
	}
	os.Exit(initstep.Main(os.Args[1:]))
}
