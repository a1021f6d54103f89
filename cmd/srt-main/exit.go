package main

// How srt ends: the exit statuses it uses besides the command's own, and
// report, the one place where an error becomes the lines srt prints and
// the status it exits with.

import (
	"cmp"
	"errors"
	"fmt"
	"io"

	"srt.dev/runtime/sandbox"
)

// The exit statuses of srt besides the command's own, which passes
// through (docs/srt.md#exit-status; TestExitStatus runs each case). So do
// the statuses the init step ends with in the command's place:
// initstep.ExitCannotRun (126), initstep.ExitNotFound (127) and
// initstep.ExitSignal+N (signal N killed the command).
const (
	// exitFailure: srt failed, or its command line is wrong; the
	// reference CLI exits 1 for both.
	exitFailure = 1
	// exitProxyUsage: srt proxy's command line is wrong; the reference's
	// srt proxy exits 2 for that.
	exitProxyUsage = 2
	// exitUnchecked: the check after the run could not vouch for
	// everything the command could write, or an earlier run left the
	// tree so and the run did not start.
	exitUnchecked = sandbox.ExitUnchecked
)

// The prefixes of srt's error lines: the reference CLI's, srt proxy's
// (the reference's srt proxy says its own name), and the one of the roles
// srt plays for another program (the ssh ProxyCommand, the reaper),
// whose lines show up in that program's output.
const (
	errorPrefix = "Error: "
	proxyPrefix = "srt proxy: "
	rolePrefix  = "srt: "
)

// A failure is an error with what report needs beyond its message: lines
// said after it, and an exit status other than exitFailure.
type failure struct {
	err    error // nil: the command said why itself
	more   []string
	status int // 0: exitFailure
}

func (f *failure) Error() string {
	if f.err == nil {
		return ""
	}
	return f.err.Error()
}

func (f *failure) Unwrap() error { return f.err }

// fail makes a failure of the message.
func fail(format string, args ...any) *failure {
	return &failure{err: fmt.Errorf(format, args...)}
}

// also adds lines said after the message.
func (f *failure) also(lines ...string) *failure {
	f.more = append(f.more, lines...)
	return f
}

// withStatus sets the exit status.
func (f *failure) withStatus(status int) *failure {
	f.status = status
	return f
}

// report prints err, if any, each of its errors (errors.Join) on a line
// of its own after prefix, then the failure's further lines, and returns
// the exit status: code when there is no error, else the failure's
// (exitUnchecked for a run refused in an unchecked tree, exitFailure by
// default).
func report(stderr io.Writer, prefix string, code int, err error) int {
	if err == nil {
		return code
	}
	f, ok := err.(*failure)
	if !ok {
		f = &failure{err: err}
	}
	var ue *sandbox.UncheckedError
	if f.status == 0 && errors.As(err, &ue) {
		f.status = exitUnchecked
	}
	each(f.err, func(e error) { fmt.Fprintf(stderr, "%s%s\n", prefix, e) })
	for _, l := range f.more {
		fmt.Fprintln(stderr, l)
	}
	return cmp.Or(f.status, exitFailure)
}

// each calls do with each error joined in err (errors.Join), or with err;
// with nothing for nil.
func each(err error, do func(error)) {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			each(e, do)
		}
		return
	}
	if err != nil && err.Error() != "" {
		do(err)
	}
}
