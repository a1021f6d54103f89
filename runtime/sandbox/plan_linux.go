//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	goruntime "runtime"

	"srt.dev/compiler/policy"
	"srt.dev/emit/bwrap"
	"srt.dev/emit/bwrap/seccomp"
)

// hostArch is this machine's seccomp architecture, "" when none is built.
var hostArch, _ = seccomp.ForGOARCH(goruntime.GOARCH)

// compiledPlan is the Linux plan of p as srtc compile writes it: the
// rendered bwrap.args and this machine's seccomp program. A settings file
// and a compiled directory then take the same way from here on: parse,
// resolve, run.
func compiledPlan(p *policy.Policy) (*LinuxPlan, error) {
	lp := &LinuxPlan{Name: "linux/bwrap.args of " + p.Source, Args: bwrap.Emit(p).Render()}
	rules, err := seccomp.ParseRules(p.Process.Seccomp)
	if err != nil {
		return nil, err
	}
	if rules != (seccomp.Rules{}) && hostArch != "" {
		prog, err := seccomp.Build(hostArch, rules).Marshal()
		if err != nil {
			return nil, err
		}
		lp.Seccomp = map[seccomp.Arch][]byte{hostArch: prog}
	}
	return lp, nil
}

// read parses the plan and picks this machine's seccomp program (nil when
// the plan installs none). A concrete plan is refused on another host; a
// plan that installs a program without one for this machine is refused.
func (lp *LinuxPlan) read(home, cwd string) ([]bwrap.Step, []byte, error) {
	for _, d := range []struct{ what, want, have string }{{"home directory", lp.Home, home}, {"working directory", lp.Cwd, cwd}} {
		if d.want != "" && filepath.Clean(d.want) != filepath.Clean(d.have) {
			return nil, nil, fmt.Errorf("%s is a concrete plan for the %s %s, and this run's is %s: run it there, or compile a symbolic plan (srtc compile without --home and --cwd)", lp.Name, d.what, d.want, d.have)
		}
	}
	pl, err := bwrap.Parse(lp.Args)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", lp.Name, err)
	}
	needs := false
	for _, s := range pl.Steps {
		needs = needs || s.Directive == bwrap.Seccomp
	}
	if !needs {
		return pl.Steps, nil, nil
	}
	if hostArch == "" {
		return nil, nil, fmt.Errorf("%s installs a seccomp program, and srt has none for this machine (%s): refusing to run without one", lp.Name, goruntime.GOARCH)
	}
	prog, ok := lp.Seccomp[hostArch]
	if !ok {
		return nil, nil, fmt.Errorf("%s installs a seccomp program, and the plan has none for this machine (linux/seccomp.%s.bpf): compile it again with an srtc that writes one", lp.Name, hostArch)
	}
	if len(prog) == 0 || len(prog)%8 != 0 {
		return nil, nil, errors.New("linux/seccomp." + string(hostArch) + ".bpf is not a seccomp program (a whole number of 8-byte instructions): compile it again")
	}
	return pl.Steps, prog, nil
}
