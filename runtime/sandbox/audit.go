//go:build linux || darwin

package sandbox

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"time"

	"srt.dev/runtime/violations"
)

// auditStart writes the run's start record to the Manager's audit log,
// if it has one, and refuses the run when the log cannot be written: it
// would be a run the log does not show.
func (r *run) auditStart() error {
	if r.m.audit == nil {
		return nil
	}
	rec := violations.RunRecord{PID: os.Getpid(), UID: os.Getuid(), Cwd: r.o.Cwd, Settings: r.p.Source, SettingsSHA256: r.p.SourceSHA256,
		Program: filepath.Base(r.argv[0]), Args: len(r.argv) - 1}
	if u, err := user.Current(); err == nil {
		rec.User = u.Username
	} else {
		rec.User = strconv.Itoa(rec.UID)
	}
	r.auditRun = rec
	rec.Time, rec.Event = time.Now().UTC(), "start"
	r.m.audit.WriteRun(rec)
	if err := r.m.audit.Err(); err != nil {
		return fmt.Errorf("the audit log: %w. Refusing to run the command without the audit log it asks for", err)
	}
	return nil
}

// auditExit writes the run's exit record, with the status it ended with,
// once every other record of the run is written.
func (r *run) auditExit(status int) {
	if r.m.audit == nil {
		return
	}
	rec := r.auditRun
	rec.Time, rec.Event, rec.ExitStatus = time.Now().UTC(), "exit", &status
	r.m.audit.WriteRun(rec)
}
