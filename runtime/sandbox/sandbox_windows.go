//go:build windows

package sandbox

import (
	"context"
	"errors"
)

// errWindows: srtc writes the Windows plan (windows/plan.json: the WFP
// filters, the sandbox account, the ACL grants and the write-restricted
// token), but nothing executes it yet. srt refuses rather than run the
// command without a sandbox, and there is deliberately no stand-in
// executor that would pretend to enforce the plan.
var errWindows = errors.New("srt does not run commands in a sandbox on Windows yet: 'srtc compile --target windows' writes the plan (windows/plan.json) for review, but nothing executes it; nothing was run")

// Run refuses: there is no sandbox for this operating system yet.
func (*Manager) Run(context.Context, []string, Options) (*Result, error) {
	return nil, errWindows
}

// Doctor reports that Windows has no sandbox runtime yet.
func Doctor(string) []Check {
	return []Check{{Name: "sandbox", Detail: errWindows.Error(), Remedy: "review the plan with srtc compile --target windows; run sandboxed commands on Linux for now"}}
}

// Reap refuses, as Run does.
func Reap([]string) error { return errWindows }
