//go:build darwin

package sandbox

// The macOS steps of a run (see run.go): the policy's Seatbelt profile run
// by sandbox-exec, with the proxies served by this process on 127.0.0.1.
// There is no network namespace on macOS: the proxies listen on ephemeral
// ports of 127.0.0.1 (never a fixed port, which another program could
// hold), and the profile lets the command reach only those two ports,
// which it receives as parameters.
//
// NOT YET RUN ON A REAL MAC. It builds for darwin/amd64 and darwin/arm64
// (CI cross-compiles it) and its pure parts (seatbelt.go) are tested on
// Linux; whether sandbox-exec accepts the profile's parameter expressions
// and enforces it as intended has not been observed.

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"srt.dev/compiler/policy"
	"srt.dev/emit/seatbelt"
	"srt.dev/runtime/credentials"
	"srt.dev/runtime/proxy"
)

// osRun is what the macOS steps of a run need (see run).
type osRun struct {
	// httpL and socksL are the run's two proxy listeners, on ephemeral
	// ports of 127.0.0.1 (the profile's parameters).
	httpL, socksL net.Listener
	// suffix is the session suffix of the profile's log tag (LogTag).
	suffix string
	// stopLog stops reading the profile's denials from the system log,
	// once the last ones have arrived.
	stopLog func()
}

// prepare makes the profile (the policy's, or Options.SeatbeltProfile,
// with srt's own files kept read-only), opens the proxies' listeners and
// builds the sandbox-exec command line and the command's environment.
func (r *run) prepare() error {
	p, o := r.p, r.o
	profile, home, cwd, err := r.profile()
	if err != nil {
		return err
	}
	httpL, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return err
	}
	r.atEnd(func() { httpL.Close() })
	socksL, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return err
	}
	r.atEnd(func() { socksL.Close() })
	r.httpL, r.socksL = httpL, socksL
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return err
	}
	r.suffix = sessionSuffix(binary.BigEndian.Uint64(rnd[:]))
	host := seatbelt.Host{
		Home: home, Cwd: cwd,
		HTTPPort:  httpL.Addr().(*net.TCPAddr).Port,
		SOCKSPort: socksL.Addr().(*net.TCPAddr).Port,
		LogTag:    LogTag(r.id, r.suffix),
	}
	// Which allows under /tmp, /var and /etc, or with "..", hold: the
	// reference grants their /private or folded spelling only for paths
	// that exist now.
	host.Exists = seatbeltExists(p, host)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	// An external proxy port (network.httpProxyPort, socksProxyPort) is
	// reached directly: the profile names it, and srt serves nothing for
	// that protocol.
	httpPort, socksPort := host.HTTPPort, host.SOCKSPort
	if n := p.Network; n.HTTPProxyPort != 0 {
		httpPort = n.HTTPProxyPort
	}
	if n := p.Network; n.SOCKSProxyPort != 0 {
		socksPort = n.SOCKSProxyPort
	}
	r.env = darwinEnv(o.Env, p, externalEnv(proxyEnv(r.token, r.key, self, r.noProxy(), httpPort, socksPort), p.Network, httpPort, socksPort),
		func(name string) string { v, _ := credentials.Sentinel(envValue(o.Env, name)); return v })
	full, err := seatbeltArgv(profile, p, host, r.argv)
	if err != nil {
		return err
	}
	r.out = &Result{Argv: full}
	return nil
}

// profile is the Seatbelt profile to run, with srt's own files kept
// read-only, and the home and working directories as Seatbelt matches
// them; it refuses a policy whose rules would not hold on this host.
func (r *run) profile() (profile []byte, home, cwd string, err error) {
	p, o := r.p, r.o
	// srt's own files stay read-only (the quarantine hidden) whatever the
	// profile allows: rules appended to the profile (later rules win in
	// SBPL), with the paths as the kernel resolves them.
	guard, err := seatbelt.StateRules(darwinState(o.State))
	if err != nil {
		return nil, "", "", err
	}
	profile = o.SeatbeltProfile
	if profile == nil {
		if profile, err = seatbelt.Emit(p); err != nil {
			return nil, "", "", err
		}
	}
	profile = append(append([]byte(nil), profile...), guard...)
	// Seatbelt matches the path the kernel resolved (/tmp is
	// /private/tmp): the roots go in without symlinks.
	home, err = filepath.EvalSymlinks(o.Home)
	if err != nil {
		return nil, "", "", fmt.Errorf("HOME: %w", err)
	}
	cwd, err = filepath.EvalSymlinks(o.Cwd)
	if err != nil {
		return nil, "", "", fmt.Errorf("working directory: %w", err)
	}
	if err := seatbelt.ClimbingHazard(p); err != nil {
		return nil, "", "", err
	}
	if err := seatbelt.CrossRootHazard(p, home, cwd); err != nil {
		return nil, "", "", err
	}
	return profile, home, cwd, nil
}

// discard has nothing to undo: the listeners prepare opened close at the
// run's end.
func (r *run) discard() {}

// start makes the command's TMPDIR, serves the proxies, follows the
// profile's denials in the system log, and starts sandbox-exec.
func (r *run) start(ctx context.Context) error {
	p, o := r.p, r.o
	if p.Filesystem.PrivateTmp() {
		// TMPDIR: a new directory of this run inside /tmp/claude, which
		// the profile lets the command write (Seatbelt cannot mount one
		// there: other runs of the same user can reach it), removed when
		// the run ends.
		os.MkdirAll(policy.TmpDir, 0o700)
		tmp, err := os.MkdirTemp(policy.TmpDir, "run-")
		if err != nil {
			return fmt.Errorf("the sandbox's TMPDIR is made in %s: %w (remove it if another user owns it)", policy.TmpDir, err)
		}
		r.atEnd(func() { os.RemoveAll(tmp) })
		r.env = setEnv(r.env, "TMPDIR", tmp)
	}

	r.catchSignals(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	// Each run has its own two ports, and its profile lets it reach only
	// those: as on Linux, a connection is attributed to the run whose
	// listener it reached (the token keeps other local programs out).
	egress := r.egress()
	var serves []func(context.Context) error
	if p.Network.HTTPProxyPort == 0 {
		serves = append(serves, func(ctx context.Context) error { return (&proxy.HTTP{Egress: egress}).Serve(ctx, r.httpL) })
	}
	if p.Network.SOCKSProxyPort == 0 {
		serves = append(serves, func(ctx context.Context) error { return (&proxy.SOCKS{Egress: egress}).Serve(ctx, r.socksL) })
	}
	r.atEnd(serving(ctx, serves...))
	if o.Log != nil {
		for _, n := range externalNote(p.Network) {
			o.Log.Debug(n)
		}
	}
	r.followLog()

	full := r.out.Argv
	cmd := exec.Command(full[0], full[1:]...)
	cmd.Env = r.env
	cmd.Dir = o.Cwd
	cmd.Stdin, cmd.Stdout, cmd.Stderr = o.Stdin, o.Stdout, o.Stderr
	// The command stays in the terminal's process group, so that it can
	// read the terminal and gets ^C from it directly; srt survives ^C and
	// forwards SIGTERM and SIGHUP (not SIGINT, which would arrive twice).
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting sandbox-exec: %w", err)
	}
	r.cmd = cmd
	r.signal = func(s syscall.Signal) {
		if s != syscall.SIGINT {
			cmd.Process.Signal(s)
		}
	}
	r.kill = func() { cmd.Process.Kill() }
	return nil
}

// followLog records the profile's denials, tagged for this run, from the
// system log, until stopLog. Without the log command they are not
// recorded (said in the debug log); the sandbox itself does not depend
// on it.
func (r *run) followLog() {
	o := r.o
	logDone := make(chan struct{})
	r.stopLog = func() {}
	stream := exec.Command(LogStreamArgs(r.suffix)[0], LogStreamArgs(r.suffix)[1:]...)
	pipe, err := stream.StdoutPipe()
	if err == nil {
		err = stream.Start()
	}
	if err == nil {
		go func() {
			r.m.readSeatbeltLog(pipe, r.rec.add)
			close(logDone)
		}()
		r.stopLog = sync.OnceFunc(func() {
			// The log delivers a moment late: wait briefly for the
			// last denials, then stop it.
			time.Sleep(300 * time.Millisecond)
			stream.Process.Kill()
			<-logDone
			stream.Wait()
		})
		r.atEnd(r.stopLog)
	} else {
		close(logDone)
		if o.Log != nil {
			o.Log.Debug("no Seatbelt violation log", "err", err)
		}
	}
}

// stopWatching stops the log, once its last denials have arrived.
func (r *run) stopWatching() { r.stopLog() }

// finish has nothing to add on macOS: the run's violations are the
// proxies' refusals and the profile's denials.
func (r *run) finish() error { return nil }

// reachesHostLoopback reports whether the command can connect to this
// host's loopback without the proxies: on macOS, with
// network.allowLocalBinding, which the profile turns into outbound
// connections to localhost on any port.
func (r *run) reachesHostLoopback() bool { return r.p.Network.AllowLocalBinding }

// usePrepared: macOS prepares no sandbox ahead (Manager.Prepare).
func (r *run) usePrepared(context.Context, *Prepared) bool { return false }

// wait says when sandbox-exec has ended.
func (r *run) wait() <-chan error {
	done := make(chan error, 1)
	go func() { done <- r.cmd.Wait() }()
	return done
}
