package main

import (
	"encoding/json"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"srt.dev/compiler/policy"
)

// auditLog is the --audit-log file: the sandbox's network decisions
// (violations.Record) between a start and an exit record of the run
// (runRecord). Each record is one Write, under a lock, so lines never
// interleave.
type auditLog struct {
	mu  sync.Mutex
	w   io.Writer
	run runRecord
}

func (a *auditLog) Write(b []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.w.Write(b)
}

// runRecord is the start or the exit of a run in the audit log: who ran
// what under which settings, and how it ended. It records the program and
// the number of its arguments, never the arguments: they can carry
// secrets (a token in a header, a password in a URL), and an audit log is
// kept, shipped and shared. The settings file's hash says exactly which
// rules applied.
type runRecord struct {
	Time           time.Time `json:"time"`
	Event          string    `json:"event"` // start or exit
	PID            int       `json:"pid"`   // srt's, the same in both records
	User           string    `json:"user"`
	UID            int       `json:"uid"`
	Cwd            string    `json:"cwd,omitempty"`
	Settings       string    `json:"settings"`
	SettingsSHA256 string    `json:"settingsSha256,omitempty"`
	Program        string    `json:"program"`
	Args           int       `json:"args"` // after the program
	ExitStatus     *int      `json:"exitStatus,omitempty"`
}

func newRunRecord(p *policy.Policy, argv []string) runRecord {
	r := runRecord{PID: os.Getpid(), UID: os.Getuid(), Settings: p.Source, SettingsSHA256: p.SourceSHA256}
	if u, err := user.Current(); err == nil {
		r.User = u.Username
	} else {
		r.User = strconv.Itoa(r.UID)
	}
	r.Cwd, _ = os.Getwd()
	if len(argv) > 0 {
		r.Program, r.Args = filepath.Base(argv[0]), len(argv)-1
	}
	return r
}

// event writes the start record, or the exit record with the status.
func (a *auditLog) event(event string, status *int) error {
	r := a.run
	r.Time, r.Event, r.ExitStatus = time.Now().UTC(), event, status
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = a.Write(append(b, '\n'))
	return err
}
