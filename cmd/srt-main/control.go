package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"srt.dev/compiler/policy"
	"srt.dev/internal/pollread"
	"srt.dev/runtime/sandbox"
	"srt.dev/schema/builtin"
)

// A controller applies the settings lines of --control-fd
// (docs/reference.md#live-updates) to a running Manager.
type controller struct {
	m *sandbox.Manager
	// start is the policy the sandbox started with: what a line cannot
	// change is compared with it, not with the last line.
	start  *policy.Policy
	fd     int
	stderr io.Writer
	log    *slog.Logger
}

// read applies each line until the end of input, or until the reading
// is stopped (pollread.ErrStopped: the run has ended; a line not yet
// whole is dropped). It fails only when the descriptor fails before any
// line arrived: the command then runs without the channel it was
// promised, and srt stops it.
func (c *controller) read(f io.Reader) error {
	r := bufio.NewReaderSize(f, 64<<10)
	for n := 1; ; n++ {
		line, tooLong, err := readLine(r, builtin.MaxFileSize)
		if errors.Is(err, pollread.ErrStopped) {
			return nil
		}
		if len(line) > 0 || tooLong {
			c.apply(n, line, tooLong)
		}
		switch {
		case err == io.EOF:
			return nil
		case err != nil && n == 1 && len(line) == 0:
			fmt.Fprintf(c.stderr, "srt: reading control fd %d failed before any line: %v; stopping the command\n", c.fd, err)
			return err
		case err != nil:
			fmt.Fprintf(c.stderr, "srt: reading control fd %d failed: %v; the last config stays in force\n", c.fd, err)
			return nil
		}
	}
}

// readLine reads one line without its "\n" (or "\r\n"); a line longer than
// max is consumed and reported as tooLong.
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+2 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		return line, tooLong, err
	}
}

func (c *controller) apply(n int, line []byte, tooLong bool) {
	if !tooLong && len(bytes.TrimSpace(line)) == 0 {
		return // blank lines are ignored
	}
	refuse := func(why string) {
		fmt.Fprintf(c.stderr, "srt: invalid config on control fd %d (line %d): %s; ignored, the previous config is still in force\n", c.fd, n, why)
	}
	if tooLong {
		refuse(fmt.Sprintf("longer than a settings file may be (%s)", builtin.ByteSize(builtin.MaxFileSize)))
		return
	}
	// The line itself, and diagnostics that may quote it, go only to the
	// debug log.
	var diags bytes.Buffer
	name := fmt.Sprintf("line %d of --control-fd %d", n, c.fd) // what the refusal lines name
	p, err := compilePolicy(name, line, &diags)
	if c.log != nil {
		c.log.Debug("control line", "fd", c.fd, "line", n, "text", string(line), "diagnostics", diags.String())
	}
	switch {
	case errors.Is(err, errInvalid):
		refuse("not a valid settings document (run with --debug to see why)")
		return
	case err != nil:
		refuse(err.Error())
		return
	}
	if sandbox.FixedPartsDiffer(c.start, p) {
		fmt.Fprintf(c.stderr, "srt: control fd %d (line %d): the network rules and credentials.sigv4 are updated; file-system and process rules, the other credential settings, the parent proxy, the external proxy ports and TLS termination itself cannot change in a running sandbox and stay as they were\n", c.fd, n)
	}
	if err := c.m.Update(p); err != nil {
		refuse(err.Error())
		return
	}
	if c.log != nil {
		c.log.Debug("control line applied", "fd", c.fd, "line", n)
		if len(c.start.Env.Mask) > 0 {
			c.log.Debug("control line: credentials", "fd", c.fd, "line", n, "sigv4", sigV4Summary(p.Env.SigV4),
				"note", "credentials.sigv4 applies from the next request; the masked variables, their injectHosts, allowPlaintextInject and the AWS pairs stay as the run started")
		}
	}
}

// sigV4Summary says what credentials.sigv4 does with each shape.
func sigV4Summary(s *policy.SigV4) string {
	v := func(x policy.SigV4Mode) string { return string(x.Resolved()) }
	var c policy.SigV4
	if s != nil {
		c = *s
	}
	return "streaming=" + v(c.Streaming) + " presigned=" + v(c.Presigned) + " sigv4a=" + v(c.SigV4A)
}
