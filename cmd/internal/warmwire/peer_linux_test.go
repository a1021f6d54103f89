package warmwire

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestPeerHelper is not a test: run by the tests below as a child, it
// connects to WARMWIRE_DIAL, then exits or, with WARMWIRE_STAY, waits
// for its standard input to close.
func TestPeerHelper(t *testing.T) {
	path := os.Getenv("WARMWIRE_DIAL")
	if path == "" {
		t.Skip("run by the peer tests as their client")
	}
	c, err := net.Dial("unix", path)
	if err != nil {
		os.Exit(2)
	}
	if os.Getenv("WARMWIRE_STAY") != "" {
		var b [1]byte
		os.Stdin.Read(b[:])
	}
	c.Close()
	os.Exit(0)
}

// connectFrom starts the test binary as a client of ln and returns the
// server's end of its connection.
func connectFrom(t *testing.T, ln *net.UnixListener, stay bool) (*exec.Cmd, *net.UnixConn) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestPeerHelper$")
	cmd.Env = append(os.Environ(), "WARMWIRE_DIAL="+ln.Addr().String())
	if stay {
		cmd.Env = append(cmd.Env, "WARMWIRE_STAY=1")
		if _, err := cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	conn, err := ln.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return cmd, conn
}

func samePeer(t *testing.T, conn *net.UnixConn) error {
	t.Helper()
	raw, err := conn.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var perr error
	if err := raw.Control(func(fd uintptr) { perr = SamePeer(int(fd)) }); err != nil {
		t.Fatal(err)
	}
	return perr
}

// TestSamePeerReusedPID: a client that connects and ends leaves its PID
// free; a process of this user and these namespaces that takes it must
// not pass for the client (as a sandbox's process would, that connects
// and exits so that a process of the host's gets its PID).
func TestSamePeerReusedPID(t *testing.T) {
	if os.Getuid() != 0 {
		if os.Getenv("SRT_REQUIRE_SANDBOX") == "1" {
			t.Fatal("needs root, to choose the next PID (/proc/sys/kernel/ns_last_pid)")
		}
		t.Skip("needs root, to choose the next PID (/proc/sys/kernel/ns_last_pid)")
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(t.TempDir(), "s"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()

	// The control: a client that stays is its own peer.
	stay, conn := connectFrom(t, ln, true)
	if err := samePeer(t, conn); err != nil {
		t.Errorf("a live client of this user and namespaces was refused: %v", err)
	}
	stay.Process.Kill()
	stay.Wait()

	for try := 0; try < 20; try++ {
		gone, conn := connectFrom(t, ln, false)
		pid := gone.Process.Pid
		gone.Wait()
		if err := os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(pid-1)), 0); err != nil {
			t.Fatal(err)
		}
		heir := exec.Command("sleep", "30")
		if err := heir.Start(); err != nil {
			t.Fatal(err)
		}
		got := heir.Process.Pid
		if got != pid {
			heir.Process.Kill()
			heir.Wait()
			continue // another process took the PID first
		}
		err := samePeer(t, conn)
		heir.Process.Kill()
		heir.Wait()
		if err == nil {
			t.Fatalf("a client that ended passed the check: its PID %d, now another process's of this user, was taken for it", pid)
		}
		t.Logf("refused: %v", err)
		return
	}
	t.Fatal("no process could be given the ended client's PID in 20 tries")
}
