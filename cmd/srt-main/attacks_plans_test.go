//go:build linux

package main

import (
	"context"
	"os"
	"path/filepath"
	"time"
)

// compileIn compiles settings (a file of dir) into dir/plan with srtc,
// as the world's user would in the project dir: srtc trusts that plan,
// there.
func (w *world) compileIn(dir, settings string) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := w.command(ctx, os.Getenv("SRTC"), "compile", "-o", "plan", settings)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		w.t.Fatalf("srtc compile %s in %s: %v %s", settings, dir, err, out)
	}
}

// planAttacks put back, in a committed plan directory, a plan this
// machine once trusted: a run under settings that may write the project
// (s.json) copies it over plan/, and srt run --plan plan must refuse it,
// since the plan trusted in plan/ is the narrow one compiled there last.
// The control is the user who reviews the copy and trusts it (srt
// trust): the wide plan then writes outside the project.
var planAttacks = []attack{
	{
		// The wide version of plan/ that the project once committed (as
		// git history keeps it), put back.
		name: "a plan rolled back to an older trusted version",
		setup: func(w *world) {
			w.write("wide.json", widened(w))
			w.compileIn(w.proj, "wide.json")
			w.sh("cp -R plan .plan-wide")
			w.write("s.json", writeProject)
			w.compileIn(w.proj, "s.json")
		},
		steps: func(w *world, sandboxed bool) {
			w.restorePlan(sandboxed, ".plan-wide")
			w.srt("run", "--plan", "plan", "--", "/bin/sh", "-c", "echo out > $BASE/escaped")
		},
		judge: escapedJudge,
	},
	{
		// The plan of another project, trusted there, copied over this
		// project's.
		name: "a plan substituted by another directory's trusted plan",
		setup: func(w *world) {
			other := filepath.Join(w.home, "other")
			w.write(filepath.Join(other, "wide.json"), widened(w))
			w.compileIn(other, "wide.json")
			w.write("s.json", writeProject)
			w.compileIn(w.proj, "s.json")
		},
		steps: func(w *world, sandboxed bool) {
			w.restorePlan(sandboxed, "../other/plan")
			w.srt("run", "--plan", "plan", "--", "/bin/sh", "-c", "echo out > $BASE/escaped")
		},
		judge: escapedJudge,
	},
}

// restorePlan replaces plan/ with a copy of from: in a sandbox under
// s.json, or on the host, where the user then reviews and trusts it.
func (w *world) restorePlan(sandboxed bool, from string) {
	w.t.Helper()
	script := "rm -rf plan && cp -R " + from + " plan"
	w.inSandbox(sandboxed, "s.json", script)
	if !sandboxed {
		w.trust("plan")
	}
}

func init() { attacks = append(attacks, planAttacks...) }
