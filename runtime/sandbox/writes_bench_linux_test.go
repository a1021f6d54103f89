//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"srt.dev/runtime/initstep"
)

// watchBenchEnv makes the test binary the write watch benchmark's child
// (see watchBenchChild): "watched" or "plain", the number of opens, and
// the pause between two in microseconds.
const watchBenchEnv = "SRT_WATCH_BENCH"

// watchBenchChild opens n new files for writing in the working directory,
// pausing between two, under the watch's filter when watched (handing the
// watch's descriptor to the parent on descriptor 3 first, and waiting for
// its byte back), and prints the mean time of an open and close in
// nanoseconds, the pauses left out; with a pause of -1, it runs cp once
// for each file instead, and prints the mean time of one.
func watchBenchChild(spec string) {
	parts := strings.Split(spec, ":")
	if parts[0] == "ns" {
		watchChildInstall()
		watchNSChild()
	}
	n, _ := strconv.Atoi(parts[1])
	pause, _ := strconv.Atoi(parts[2])
	if parts[0] == "watched" {
		watchChildInstall()
	}
	if pause < 0 {
		// A process per file, as a build runs its compiler: cp.
		start := time.Now()
		sh := exec.Command("/bin/sh", "-c", fmt.Sprintf(`i=0; while [ $i -lt %d ]; do cp /etc/hostname f$i; i=$((i+1)); done`, n))
		sh.Stderr = os.Stderr
		if err := sh.Run(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(int64(time.Since(start)) / int64(n))
		os.Exit(0)
	}
	var spent time.Duration
	for i := range n {
		if pause > 0 {
			time.Sleep(time.Duration(pause) * time.Microsecond)
		}
		start := time.Now()
		fd, err := unix.Open("f"+strconv.Itoa(i), unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		unix.Close(fd)
		spent += time.Since(start)
	}
	fmt.Println(int64(spent) / int64(n))
	os.Exit(0)
}

// watchChildInstall installs the watch's filter on the calling thread,
// to which it locks the calling goroutine (the filter is the thread's,
// and the processes it starts'), hands the watch's descriptor to the
// parent on descriptor 3, and waits for its byte back.
func watchChildInstall() {
	runtime.LockOSThread()
	fd, err := initstep.InstallWatch()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := unix.Sendmsg(3, []byte{1}, unix.UnixRights(fd), nil, 0); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	unix.Close(fd)
	unix.Read(3, make([]byte, 1))
}

// BenchmarkWriteWatch measures what the write watch adds to a call it
// watches: an open for writing, in a loop (hot) and one every millisecond
// (as a build's compiler processes make them: the watch's thread has gone
// to sleep in between), and cp once a file (a process for each, as a
// build runs its compiler), without the filter and with it, served by the
// watch as a run serves it. ns/open is the mean time of one open and
// close in the child, or of one cp.
func BenchmarkWriteWatch(b *testing.B) {
	if len(initstep.WatchedCalls) == 0 {
		b.Skip("no write watch on this architecture")
	}
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		pause int
	}{{"hot", 0}, {"every ms", 1000}, {"cp", -1}} {
		for _, mode := range []string{"plain", "watched"} {
			b.Run(c.name+"/"+mode, func(b *testing.B) {
				n := max(b.N, 200)
				dir := b.TempDir()
				pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
				if err != nil {
					b.Fatal(err)
				}
				child := os.NewFile(uintptr(pair[1]), "child")
				host := os.NewFile(uintptr(pair[0]), "host")
				defer host.Close()
				cmd := exec.Command(self, "-test.run=^$")
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s:%d:%d", watchBenchEnv, mode, n, c.pause))
				cmd.ExtraFiles = []*os.File{child}
				cmd.Stderr = os.Stderr
				var out strings.Builder
				cmd.Stdout = &out
				b.ResetTimer()
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				child.Close()
				if mode == "watched" {
					h, err := receiveWatch(host)
					if err != nil {
						b.Fatal(err)
					}
					w, err := newWriteWatch(h)
					if err != nil {
						b.Fatal(err)
					}
					defer w.stop()
					host.Write([]byte{1})
				}
				if err := cmd.Wait(); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				ns, err := strconv.ParseFloat(strings.TrimSpace(out.String()), 64)
				if err != nil {
					b.Fatalf("child: %q", out.String())
				}
				b.ReportMetric(ns, "ns/open")
				b.ReportMetric(0, "ns/op")
				if entries, _ := os.ReadDir(dir); len(entries) != n {
					b.Fatalf("%d files, want %d", len(entries), n)
				}
			})
		}
	}
}

// receiveWatch reads the watch's descriptor the child sends.
func receiveWatch(f *os.File) (int, error) {
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := unix.Recvmsg(int(f.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return -1, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return -1, fmt.Errorf("no descriptor: %v", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return -1, fmt.Errorf("no descriptor: %v", err)
	}
	return fds[0], nil
}
