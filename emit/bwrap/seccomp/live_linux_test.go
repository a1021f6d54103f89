//go:build linux

package seccomp

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	goruntime "runtime"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"srt.dev/internal/testenv"
)

// These tests run bubblewrap directly, not srt: they test the seccomp
// programs alone, under the kernel, with nothing else of the sandbox
// (srt's own tests run the programs as srt loads them).
//
// TestMain lets the test binary act as the victim inside the sandbox: with
// SRT_SECCOMP_TRY set it makes one system call and prints its errno.
func TestMain(m *testing.M) {
	if op := os.Getenv("SRT_SECCOMP_TRY"); op != "" {
		fmt.Print(try(op))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// try makes the system call op names and returns "ok" or "errno=N".
func try(op string) string {
	var errno syscall.Errno
	switch op {
	case "socket-unix":
		_, _, errno = unix.RawSyscall(unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_STREAM, 0)
	case "socket-unix-high": // AF_UNIX with garbage in the upper 32 bits
		_, _, errno = unix.RawSyscall(unix.SYS_SOCKET, 1|1<<32, unix.SOCK_STREAM, 0)
	case "socket-vsock":
		_, _, errno = unix.RawSyscall(unix.SYS_SOCKET, unix.AF_VSOCK, unix.SOCK_STREAM, 0)
	case "socket-inet":
		_, _, errno = unix.RawSyscall(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM, 0)
	case "socketpair-unix":
		var fds [2]int32
		_, _, errno = unix.RawSyscall6(unix.SYS_SOCKETPAIR, unix.AF_UNIX, unix.SOCK_STREAM, 0, uintptr(unsafe.Pointer(&fds)), 0, 0)
	case "io_uring_setup":
		var params [120]byte
		_, _, errno = unix.RawSyscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params)), 0)
	case "unshare-user":
		_, _, errno = unix.RawSyscall(unix.SYS_UNSHARE, unix.CLONE_NEWUSER, 0, 0)
	case "unshare-ns":
		_, _, errno = unix.RawSyscall(unix.SYS_UNSHARE, unix.CLONE_NEWNS, 0, 0)
	case "clone3":
		_, _, errno = unix.RawSyscall(unix.SYS_CLONE3, 0, 0, 0)
	case "mount":
		_, _, errno = unix.RawSyscall6(unix.SYS_MOUNT, 0, 0, 0, 0, 0, 0)
	case "keyctl": // KEYCTL_GET_KEYRING_ID of the session keyring
		_, _, errno = unix.RawSyscall(unix.SYS_KEYCTL, unix.KEYCTL_GET_KEYRING_ID, keySpec(unix.KEY_SPEC_SESSION_KEYRING), 0)
	case "add_key":
		typ, desc, payload := []byte("user\x00"), []byte("srt-test\x00"), []byte("x")
		_, _, errno = unix.RawSyscall6(unix.SYS_ADD_KEY, uintptr(unsafe.Pointer(&typ[0])), uintptr(unsafe.Pointer(&desc[0])),
			uintptr(unsafe.Pointer(&payload[0])), 1, keySpec(unix.KEY_SPEC_PROCESS_KEYRING), 0)
	case "request_key":
		typ, desc := []byte("user\x00"), []byte("srt-test-absent\x00")
		_, _, errno = unix.RawSyscall6(unix.SYS_REQUEST_KEY, uintptr(unsafe.Pointer(&typ[0])), uintptr(unsafe.Pointer(&desc[0])), 0, 0, 0, 0)
	default:
		return "unknown op " + op
	}
	if errno != 0 {
		return fmt.Sprintf("errno=%d", int(errno))
	}
	return "ok"
}

// keySpec passes a negative special keyring id as the kernel reads it (an
// int in a register).
func keySpec(id int) uintptr { return uintptr(int64(id)) }

// runInBwrap runs the victim with op inside bubblewrap, with the given
// programs installed through --add-seccomp-fd, as uid (0 = the caller).
func runInBwrap(t *testing.T, bwrap, victim string, uid int, op string, progs ...Program) string {
	t.Helper()
	args := []string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-all", "--die-with-parent"}
	var files []*os.File
	for i, p := range progs {
		raw, err := p.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(raw); err != nil {
			t.Fatal(err)
		}
		w.Close()
		defer r.Close()
		files = append(files, r)
		args = append(args, "--add-seccomp-fd", fmt.Sprint(3+i))
	}
	args = append(args, "--", victim)
	cmd := exec.Command(bwrap, args...)
	cmd.Env = []string{"SRT_SECCOMP_TRY=" + op, "PATH=/usr/bin:/bin"}
	cmd.ExtraFiles = files
	if uid != 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bwrap %s (uid %d): %v\n%s", op, uid, err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// TestLive installs the programs with bwrap --add-seccomp-fd, as root and
// as the unprivileged user nobody, and checks the errno of real system
// calls, against a run of the same call without the programs.
func TestLive(t *testing.T) {
	arch, ok := ForGOARCH(goruntime.GOARCH)
	if !ok {
		t.Skipf("no programs for %s", goruntime.GOARCH)
	}
	bwrap := testenv.Require(t, "bwrap")[0]
	v := testenv.PublicCopy(t, "victim")
	eperm, enosys := fmt.Sprintf("errno=%d", EPERM), fmt.Sprintf("errno=%d", ENOSYS)
	tests := []struct {
		op       string
		filtered string // what the call gives under both programs
		// bare is what it must give without them; "" means anything but
		// filtered, so that the filter is what made the difference.
		bare string
	}{
		{"socket-unix", eperm, "ok"},
		{"socket-unix-high", eperm, "ok"},
		{"socket-vsock", eperm, ""},
		{"socket-inet", "ok", "ok"},
		{"socketpair-unix", "ok", "ok"},
		{"io_uring_setup", eperm, ""},
		{"unshare-user", eperm, ""},
		{"unshare-ns", eperm, ""},
		{"clone3", enosys, ""},
		{"mount", eperm, ""},
		{"keyctl", eperm, "ok"},
		{"add_key", eperm, "ok"},
		{"request_key", eperm, ""}, // ENOKEY without the filter
	}
	users := []int{0} // 0: as the caller is
	if os.Geteuid() == 0 {
		users = append(users, 65534) // and as nobody
	}
	for _, uid := range users {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("uid%d/%s", uid, tt.op), func(t *testing.T) {
				bare := runInBwrap(t, bwrap, v, uid, tt.op)
				got := runInBwrap(t, bwrap, v, uid, tt.op, Keyring(arch), Unix(arch), Namespaces(arch))
				if all := runInBwrap(t, bwrap, v, uid, tt.op, Build(arch, Rules{Keyring: true, Unix: true, Namespaces: true})); all != got {
					t.Errorf("%s: %s under the three programs, %s under the combined one", tt.op, got, all)
				}
				t.Logf("%s: %s without the programs, %s with them", tt.op, bare, got)
				if got != tt.filtered {
					t.Errorf("%s under the programs: %s, want %s", tt.op, got, tt.filtered)
				}
				if tt.bare != "" && bare != tt.bare {
					t.Errorf("%s without the programs: %s, want %s (the test itself is broken)", tt.op, bare, tt.bare)
				}
				if tt.bare == "" && bare == tt.filtered {
					t.Logf("%s gives %s without the programs too: this host cannot show the filter's effect; the simulation covers it", tt.op, bare)
				}
			})
		}
	}
}
