//go:build darwin

package sandbox

// The macOS runtime: the policy's Seatbelt profile run by sandbox-exec,
// with the proxies served by this process on 127.0.0.1.
//
// NOT YET RUN ON A REAL MAC. It builds for darwin/amd64 and darwin/arm64
// (CI cross-compiles it) and its pure parts (seatbelt.go) are tested on
// Linux; whether sandbox-exec accepts the profile's parameter expressions
// and enforces it as intended has not been observed.

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"srt.dev/runtime/quarantine"
	"sync"
	"syscall"
	"time"

	"srt.dev/compiler/policy"
	"srt.dev/emit/seatbelt"
	"srt.dev/runtime/credentials"
	"srt.dev/runtime/proxy"
)

// Run runs argv under the Seatbelt profile of the Manager's policy. There
// is no network namespace on macOS: the proxies listen on ephemeral ports
// of 127.0.0.1 (never a fixed port, which another program could hold), and
// the profile lets the command reach only those two ports, which it
// receives as parameters. When ctx ends, the command gets SIGTERM, and
// SIGKILL 2 s later.
func (m *Manager) Run(ctx context.Context, argv []string, o Options) (*Result, error) {
	if len(argv) == 0 {
		return nil, errors.New("no command")
	}
	p := m.Policy()
	if err := o.hostDefaults(); err != nil {
		return nil, err
	}
	// srt's own files stay read-only (the quarantine hidden) whatever the
	// profile allows: rules appended to the profile (later rules win in
	// SBPL), with the paths as the kernel resolves them.
	guard, err := seatbelt.StateRules(darwinState(o.State))
	if err != nil {
		return nil, err
	}
	profile := o.SeatbeltProfile
	if profile == nil {
		if profile, err = seatbelt.Emit(p); err != nil {
			return nil, err
		}
	}
	profile = append(append([]byte(nil), profile...), guard...)
	// Seatbelt matches the path the kernel resolved (/tmp is
	// /private/tmp): the roots go in without symlinks.
	home, err := filepath.EvalSymlinks(o.Home)
	if err != nil {
		return nil, fmt.Errorf("HOME: %w", err)
	}
	cwd, err := filepath.EvalSymlinks(o.Cwd)
	if err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	}
	if err := seatbelt.ClimbingHazard(p); err != nil {
		return nil, err
	}
	if err := seatbelt.CrossRootHazard(p, home, cwd); err != nil {
		return nil, err
	}
	id, text, key := o.attribution(argv)
	token, err := randomHex(16) // this run's proxy password
	if err != nil {
		return nil, err
	}
	httpL, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer httpL.Close()
	socksL, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer socksL.Close()
	var r [8]byte
	if _, err := rand.Read(r[:]); err != nil {
		return nil, err
	}
	suffix := sessionSuffix(binary.BigEndian.Uint64(r[:]))
	host := seatbelt.Host{
		Home: home, Cwd: cwd,
		HTTPPort:  httpL.Addr().(*net.TCPAddr).Port,
		SOCKSPort: socksL.Addr().(*net.TCPAddr).Port,
		LogTag:    LogTag(id, suffix),
	}
	// Which allows under /tmp, /var and /etc, or with "..", hold: the
	// reference grants their /private or folded spelling only for paths
	// that exist now.
	host.Exists = seatbeltExists(p, host)
	self, err := os.Executable()
	if err != nil {
		return nil, err
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
	env := darwinEnv(o.Env, p, externalEnv(proxyEnv(token, key, self, httpPort, socksPort), p.Network, httpPort, socksPort),
		func(name string) string { v, _ := credentials.Sentinel(envValue(o.Env, name)); return v })
	full, err := seatbeltArgv(profile, p, host, argv)
	if err != nil {
		return nil, err
	}
	out := &Result{Argv: full}
	if o.DryRun {
		return out, nil
	}
	if p.Filesystem.PrivateTmp() {
		// TMPDIR: a new directory of this run inside /tmp/claude, which
		// the profile lets the command write (Seatbelt cannot mount one
		// there: other runs of the same user can reach it), removed when
		// the run ends.
		os.MkdirAll(policy.TmpDir, 0o700)
		tmp, err := os.MkdirTemp(policy.TmpDir, "run-")
		if err != nil {
			return nil, fmt.Errorf("the sandbox's TMPDIR is made in %s: %w (remove it if another user owns it)", policy.TmpDir, err)
		}
		defer os.RemoveAll(tmp)
		env = setEnv(env, "TMPDIR", tmp)
	}

	sigs := make(chan os.Signal, 8)
	if o.ForwardSignals {
		signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
		defer signal.Stop(sigs)
	}
	// Each run has its own two ports, and its profile lets it reach only
	// those: as on Linux, a connection is attributed to the run whose
	// listener it reached (the token keeps other local programs out).
	var rec runRecord
	egress := m.runEgress(key, text, token, &rec)
	var serves []func(context.Context) error
	if p.Network.HTTPProxyPort == 0 {
		serves = append(serves, func(ctx context.Context) error { return (&proxy.HTTP{Egress: egress}).Serve(ctx, httpL) })
	}
	if p.Network.SOCKSProxyPort == 0 {
		serves = append(serves, func(ctx context.Context) error { return (&proxy.SOCKS{Egress: egress}).Serve(ctx, socksL) })
	}
	defer serving(ctx, serves...)()
	if o.Log != nil {
		for _, n := range externalNote(p.Network) {
			o.Log.Debug(n)
		}
	}

	// The profile's denials, tagged for this run, from the system log.
	// Without the log command they are not recorded (said in the debug
	// log); the sandbox itself does not depend on it.
	logDone := make(chan struct{})
	stopLog := func() {}
	stream := exec.Command(LogStreamArgs(suffix)[0], LogStreamArgs(suffix)[1:]...)
	if pipe, err := stream.StdoutPipe(); err == nil && stream.Start() == nil {
		go func() {
			m.readSeatbeltLog(pipe, rec.add)
			close(logDone)
		}()
		stopLog = sync.OnceFunc(func() {
			// The log delivers a moment late: wait briefly for the
			// last denials, then stop it.
			time.Sleep(300 * time.Millisecond)
			stream.Process.Kill()
			<-logDone
			stream.Wait()
		})
		defer stopLog()
	} else {
		close(logDone)
		if o.Log != nil {
			o.Log.Debug("no Seatbelt violation log", "err", err)
		}
	}

	cmd := exec.Command(full[0], full[1:]...)
	cmd.Env = env
	cmd.Dir = o.Cwd
	cmd.Stdin, cmd.Stdout, cmd.Stderr = o.Stdin, o.Stdout, o.Stderr
	// The command stays in the terminal's process group, so that it can
	// read the terminal and gets ^C from it directly; srt survives ^C and
	// forwards SIGTERM and SIGHUP (not SIGINT, which would arrive twice).
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting sandbox-exec: %w", err)
	}
	if o.Started != nil {
		o.Started()
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	werr := supervise(ctx, done, sigs, func(s syscall.Signal) {
		if s != syscall.SIGINT {
			cmd.Process.Signal(s)
		}
	}, func() { cmd.Process.Kill() })
	stopLog()
	out.Violations = rec.entries()
	out.ExitCode = exitCode(cmd.ProcessState)
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) {
		return out, werr
	}
	return out, nil
}

// errLinuxOnly: the helper roles below belong to the Linux runtime.
// darwinState is the caller's state with the quarantine, every path as
// Seatbelt matches it: links resolved (the part that does not exist yet
// kept as written).
func darwinState(in map[policy.StateKind][]string) map[policy.StateKind][]string {
	out := map[policy.StateKind][]string{}
	for k, v := range in {
		out[k] = append(out[k], v...)
	}
	if q, err := quarantine.DefaultDir(); err == nil {
		out[policy.StateQuarantine] = append(out[policy.StateQuarantine], q)
	}
	for k, v := range out {
		for i, p := range v {
			v[i] = resolvedPath(p)
		}
		out[k] = v
	}
	return out
}

// resolvedPath resolves the deepest existing ancestor of p through links
// and joins the rest as written.
func resolvedPath(p string) string {
	tail := ""
	for cur := filepath.Clean(p); ; {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(real, tail)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		tail = filepath.Join(filepath.Base(cur), tail)
		cur = parent
	}
}

var errLinuxOnly = errors.New("not used on macOS: srt runs sandbox-exec directly, with no init step and no placeholders")

// Init is the Linux runtime's init role; macOS has none.
func Init([]string) error { return errLinuxOnly }

// LimitExec is the trampoline of a Linux plan's rlimits (see LimitArg).
func LimitExec([]string) error { return errLinuxOnly }

// Reap is the Linux runtime's reaper; macOS makes no placeholders.
func Reap([]string) error { return errLinuxOnly }

// Doctor reports whether sandbox-exec is there. The bwrap argument is
// ignored on macOS.
func Doctor(string) []Check {
	c := Check{Name: "sandbox-exec", Remedy: SandboxExec + " ships with macOS; without it srt cannot sandbox anything here"}
	fi, err := os.Stat(SandboxExec)
	switch {
	case err != nil:
		c.Detail = err.Error()
	case fi.Mode()&0o111 == 0:
		c.Detail = SandboxExec + " is not executable"
	default:
		c.OK, c.Detail = true, SandboxExec+" found (srt's macOS runtime has not been run on a real Mac yet)"
	}
	return []Check{c}
}
