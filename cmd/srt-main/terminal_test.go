//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"srt.dev/internal/testenv"
)

// wait bounds every wait of these tests: generous for a loaded machine,
// and still shorter than the sleep 30 that a missed signal would let run.
const wait = 20 * time.Second

// A ptySession is srt started on a real pseudo-terminal, as from a
// terminal emulator: the test holds the master side and types into it.
type ptySession struct {
	t      *testing.T
	cmd    *exec.Cmd
	master *os.File
	slave  *os.File // the outer terminal, as srt's stdin, stdout and stderr
	before string   // its settings (stty -g) before srt started

	mu   sync.Mutex
	out  bytes.Buffer
	seen int // expect matches after this offset
	done chan struct{}
}

// openPTY opens a pseudo-terminal pair of the test's own.
func openPTY(t *testing.T, rows, cols uint16) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetUint32(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	unix.IoctlSetWinsize(int(m.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols})
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

// startPTY starts bin (srt) in dir on a new terminal of rows x cols, as
// its session leader, as uid (0: the caller).
func startPTY(t *testing.T, bin, dir string, uid int, env []string, args ...string) *ptySession {
	t.Helper()
	return startPTYStdin(t, bin, dir, uid, env, nil, args...)
}

// startPTYStdin is startPTY with stdin as srt's standard input (nil: the
// terminal).
func startPTYStdin(t *testing.T, bin, dir string, uid int, env []string, stdin io.Reader, args ...string) *ptySession {
	t.Helper()
	master, slave := openPTY(t, 30, 100)
	if uid != 0 {
		// A user's terminal is the user's.
		if err := slave.Chown(uid, uid); err != nil {
			t.Fatal(err)
		}
	}
	s := &ptySession{t: t, master: master, slave: slave, done: make(chan struct{})}
	s.before = s.sttyG()
	s.cmd = exec.Command(bin, args...)
	s.cmd.Dir = dir
	s.cmd.Env = env
	s.cmd.Stdin, s.cmd.Stdout, s.cmd.Stderr = slave, slave, slave
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if stdin != nil {
		s.cmd.Stdin, s.cmd.SysProcAttr.Ctty = stdin, 1
	}
	if uid != 0 {
		s.cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			s.mu.Lock()
			s.out.Write(buf[:n])
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() { s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		s.cmd.Process.Kill()
		<-s.done
	})
	return s
}

// expect waits until what srt wrote since the last match matches re, and
// returns the match; the wait is bounded.
func (s *ptySession) expect(re string) []string {
	s.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(wait)
	for {
		s.mu.Lock()
		b := s.out.Bytes()[s.seen:]
		loc := rx.FindSubmatchIndex(b)
		if loc != nil {
			var m []string
			for i := 0; i < len(loc); i += 2 {
				if loc[i] >= 0 {
					m = append(m, string(b[loc[i]:loc[i+1]]))
				}
			}
			s.seen += loc[1]
			s.mu.Unlock()
			return m
		}
		text := string(b)
		s.mu.Unlock()
		if time.Now().After(deadline) {
			s.t.Fatalf("no %q within %v; srt wrote:\n%q", re, wait, text)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *ptySession) send(text string) {
	s.t.Helper()
	if _, err := s.master.Write([]byte(text)); err != nil {
		s.t.Fatal(err)
	}
}

// exit waits, bounded, for srt to end and returns its status.
func (s *ptySession) exit() int {
	s.t.Helper()
	select {
	case <-s.done:
	case <-time.After(wait):
		s.mu.Lock()
		text := s.out.String()
		s.mu.Unlock()
		s.t.Fatalf("srt still runs after %v; it wrote:\n%q", wait, text)
	}
	return s.cmd.ProcessState.ExitCode()
}

// sttyG is the outer terminal's settings as stty -g prints them.
func (s *ptySession) sttyG() string {
	s.t.Helper()
	c := exec.Command("stty", "-g")
	c.Stdin = s.slave
	out, err := c.Output()
	if err != nil {
		s.t.Fatalf("stty -g: %v", err)
	}
	return string(out)
}

// waitForProcess waits until a process named comm runs below pid (in the
// sandbox: the command has started and reached it).
func waitForProcess(t *testing.T, pid int, comm string) {
	t.Helper()
	parent := func(p string) (string, int) {
		b, err := os.ReadFile("/proc/" + p + "/stat")
		if err != nil {
			return "", 0
		}
		i := bytes.LastIndexByte(b, ')')
		f := strings.Fields(string(b[i+1:]))
		ppid, _ := strconv.Atoi(f[1])
		return string(b[bytes.IndexByte(b, '(')+1 : i]), ppid
	}
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			name, pp := parent(e.Name())
			if name != comm {
				continue
			}
			for hops := 0; pp > 1 && hops < 20; hops++ {
				if pp == pid {
					return
				}
				_, pp = parent(strconv.Itoa(pp))
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %s below srt (pid %d) within %v", comm, pid, wait)
}

// cliEnv is the environment of srt in dir.
func cliEnv(dir string) []string {
	return append(os.Environ(), "HOME="+dir, "XDG_RUNTIME_DIR="+filepath.Join(dir, ".run"))
}

// TestTerminalInteractive: an interactive shell run from a terminal gets
// a terminal of its own: a /dev/pts name, job control, ^C that stops the
// foreground job and not the shell, the window size and its changes; the
// outer terminal is in no descriptor inside, and gets its settings back.
func TestTerminalInteractive(t *testing.T) {
	requireSandbox(t)
	testenv.Require(t, "bash", "stty")
	users := []int{0}
	if os.Geteuid() == 0 {
		users = append(users, 65534)
	}
	for _, uid := range users {
		t.Run(fmt.Sprintf("uid=%d", uid), func(t *testing.T) {
			dir := project(t)
			env := cliEnv(dir)
			if uid != 0 {
				dir = filepath.Join(publicDir(t), "home")
				testenv.MkdirAll(t, dir, 0o755)
				testenv.Chown(t, dir, uid, uid)
				env = append([]string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "TMPDIR=/tmp", "SRTC=" + os.Getenv("SRTC")}, warmSetting()...)
			} else {
				testenv.MkdirAll(t, filepath.Join(dir, ".run"), 0o700)
			}
			terminalSession(t, srtBin, dir, uid, env)
		})
	}
}

func terminalSession(t *testing.T, bin, dir string, uid int, env []string) {
	s := startPTY(t, bin, dir, uid, env, "--", "env", "PS1=srt$ ", "TERM=dumb", "bash", "--norc", "--noprofile", "-i")
	before := s.before
	var outer unix.Stat_t
	unix.Fstat(int(s.slave.Fd()), &outer)
	prompt := `srt\$ $`
	s.expect(prompt)
	if now := s.sttyG(); now == before {
		t.Error("the outer terminal is not in raw mode while srt relays it")
	}

	s.send("tty\r")
	if m := s.expect(`\n(/dev/\S+)\r\n` + prompt); !strings.HasPrefix(m[1], "/dev/pts/") {
		t.Errorf("tty inside: %s, want a /dev/pts name", m[1])
	}
	s.send("stty size\r")
	if m := s.expect(`\n(\d+ \d+)\r\n` + prompt); m[1] != "30 100" {
		t.Errorf("stty size: %s, want 30 100", m[1])
	}

	// No descriptor of any process inside, nor a device node, is the
	// outer terminal: nothing can read it or push input into it.
	s.send(`for f in /proc/[0-9]*/fd/* /dev/console /dev/tty /dev/pts/*; do stat -L -c "%d:%i $f" "$f" 2>/dev/null; done | grep -c "^` +
		fmt.Sprintf("%d:%d ", outer.Dev, outer.Ino) + `"; echo "outer-checked"` + "\r")
	if m := s.expect(`\n(\d+)\r\nouter-checked`); m[1] != "0" {
		t.Errorf("%s descriptors or nodes inside the sandbox are the outer terminal", m[1])
	}
	s.expect(prompt)

	// ^C stops the foreground job; the shell goes on.
	s.send("sleep 30\r")
	waitForProcess(t, s.cmd.Process.Pid, "sleep")
	s.send("\x03")
	s.expect(prompt)
	s.send("echo al''ive\r")
	s.expect(`\nalive\r\n` + prompt)

	// Job control.
	s.send("sleep 30 &\r")
	s.expect(prompt)
	s.send("jobs\r")
	s.expect(`\[1\]\+\s+Running\s+sleep 30 &\r\n` + prompt)

	// A resize reaches the command (SIGWINCH, then TIOCSWINSZ inside).
	unix.IoctlSetWinsize(int(s.master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 41, Col: 121})
	deadline := time.Now().Add(wait)
	for {
		s.send("stty size\r")
		m := s.expect(`\n(\d+ \d+)\r\n` + prompt)
		if m[1] == "41 121" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stty size after the resize: %s, want 41 121", m[1])
		}
		time.Sleep(50 * time.Millisecond)
	}

	s.send("exit 3\r")
	if code := s.exit(); code != 3 {
		t.Errorf("exit status %d, want 3", code)
	}
	if after := s.sttyG(); after != before {
		t.Errorf("the outer terminal's settings changed:\nbefore %s\nafter  %s", before, after)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if bytes.Contains(s.out.Bytes(), []byte("job control")) {
		t.Errorf("the shell says it has no job control:\n%q", s.out.String())
	}
}

// interrupted are commands that must stop at SIGINT: sh, and bash, whose
// wait for the foreground program would otherwise end normally.
var interrupted = [][]string{
	{"-c", "sleep 30; echo after"},
	{"--", "bash", "-c", "sleep 30; echo $?"},
}

// TestInterruptWithoutTerminal: SIGINT sent to srt reaches the whole
// process group of the command: the shell stops with 130 and prints
// nothing after sleep.
func TestInterruptWithoutTerminal(t *testing.T) {
	requireSandbox(t)
	for _, args := range interrupted {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			dir := project(t)
			cmd, out := cli(t, dir, args...)
			waitForProcess(t, cmd.Process.Pid, "sleep")
			cmd.Process.Signal(syscall.SIGINT)
			done := make(chan []byte, 1)
			go func() { b, _ := out.ReadBytes(0); done <- b }()
			select {
			case b := <-done:
				cmd.Wait()
				if code := cmd.ProcessState.ExitCode(); code != 130 || len(b) != 0 {
					t.Errorf("exit %d, output %q; want 130 and nothing", code, b)
				}
			case <-time.After(wait):
				cmd.Process.Kill()
				t.Fatalf("still running %v after SIGINT", wait)
			}
		})
	}
}

// TestInterruptOnTerminal: on a terminal, ^C typed and SIGINT sent to srt
// both stop the command with 130, and SIGTERM and SIGHUP end it too; the
// outer terminal gets its settings back on each of these ways out.
func TestInterruptOnTerminal(t *testing.T) {
	requireSandbox(t)
	testenv.Require(t, "bash", "stty")
	ways := []struct {
		name string
		stop func(*ptySession)
		code int
	}{
		{"^C", func(s *ptySession) { s.send("\x03") }, 130},
		{"SIGINT", func(s *ptySession) { s.cmd.Process.Signal(syscall.SIGINT) }, 130},
		{"SIGTERM", func(s *ptySession) { s.cmd.Process.Signal(syscall.SIGTERM) }, 143},
		{"SIGHUP", func(s *ptySession) { s.cmd.Process.Signal(syscall.SIGHUP) }, 129},
	}
	for _, args := range interrupted {
		for _, w := range ways {
			t.Run(w.name+" "+strings.Join(args, " "), func(t *testing.T) {
				dir := project(t)
				testenv.MkdirAll(t, filepath.Join(dir, ".run"), 0o700)
				s := startPTY(t, srtBin, dir, 0, cliEnv(dir), args...)
				before := s.before
				waitForProcess(t, s.cmd.Process.Pid, "sleep")
				w.stop(s)
				if code := s.exit(); code != w.code {
					t.Errorf("exit %d, want %d", code, w.code)
				}
				s.mu.Lock()
				text := s.out.String()
				s.mu.Unlock()
				if strings.Contains(text, "after") || regexp.MustCompile(`\d`).MatchString(text) {
					t.Errorf("the shell went on after the signal: %q", text)
				}
				if after := s.sttyG(); after != before {
					t.Errorf("the outer terminal's settings changed:\nbefore %s\nafter  %s", before, after)
				}
			})
		}
	}
}

// TestTerminalOutputOnly: when only the output is a terminal, the command
// writes to a terminal of its own too (the outer one stays out of the
// sandbox), reads its standard input as it is, and the outer terminal is
// left in its mode.
func TestTerminalOutputOnly(t *testing.T) {
	requireSandbox(t)
	testenv.Require(t, "stty")
	dir := project(t)
	testenv.MkdirAll(t, filepath.Join(dir, ".run"), 0o700)
	s := startPTYStdin(t, srtBin, dir, 0, cliEnv(dir), strings.NewReader("ping\n"),
		"-c", `read x; echo "got:$x"; test -t 0 || echo stdin-not-a-terminal; readlink /proc/self/fd/1; test -e /dev/console || echo no-console`)
	s.expect(`got:ping\r\nstdin-not-a-terminal\r\n/dev/pts/\d+\r\nno-console\r\n$`)
	if code := s.exit(); code != 0 {
		t.Errorf("exit %d", code)
	}
	if after := s.sttyG(); after != s.before {
		t.Errorf("the outer terminal's settings changed:\nbefore %s\nafter  %s", s.before, after)
	}
}

// TestTerminalOutputComplete: everything the command wrote to its terminal
// reaches the outer one before srt exits, and so does its status.
func TestTerminalOutputComplete(t *testing.T) {
	requireSandbox(t)
	testenv.Require(t, "stty")
	dir := project(t)
	testenv.MkdirAll(t, filepath.Join(dir, ".run"), 0o700)
	s := startPTY(t, srtBin, dir, 0, cliEnv(dir), "-c", "seq 1 100000; exit 5")
	if code := s.exit(); code != 5 {
		t.Errorf("exit %d, want 5", code)
	}
	s.expect(`\r\n99999\r\n100000\r\n$`)
	s.mu.Lock()
	defer s.mu.Unlock()
	if n, want := s.out.Len(), 588895+100000; n != want {
		t.Errorf("%d bytes on the terminal, want %d", n, want)
	}
}
