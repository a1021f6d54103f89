//go:build !windows

package pollread

import (
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// blockingPipe is a pipe whose read end is in blocking mode, as a pipe a
// process inherits usually is, and its descriptor.
func blockingPipe(t *testing.T) (fd int, w *os.File) {
	t.Helper()
	var p [2]int
	if err := unix.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(p[0]) })
	return p[0], os.NewFile(uintptr(p[1]), "w")
}

// TestReader: a Reader reads what comes, then the end; Stop ends a read
// that waits, and the later ones; the descriptor stays blocking and open.
func TestReader(t *testing.T) {
	fd, w := blockingPipe(t)
	r, err := New(fd)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w.Write([]byte("line\n"))
	b := make([]byte, 16)
	if n, err := r.Read(b); err != nil || string(b[:n]) != "line\n" {
		t.Fatalf("Read = %q, %v", b[:n], err)
	}
	got := make(chan error, 1)
	go func() {
		_, err := r.Read(b)
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("Read returned %v with nothing to read", err)
	case <-time.After(50 * time.Millisecond):
	}
	r.Stop()
	select {
	case err := <-got:
		if !errors.Is(err, ErrStopped) {
			t.Errorf("a stopped Read = %v, want ErrStopped", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Stop did not end the Read")
	}
	if _, err := r.Read(b); !errors.Is(err, ErrStopped) {
		t.Errorf("a Read after Stop = %v, want ErrStopped", err)
	}
	if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err != nil || fl&unix.O_NONBLOCK != 0 {
		t.Errorf("the descriptor's flags %#x, %v: want it open and blocking", fl, err)
	}
	// The end of what is read.
	fd2, w2 := blockingPipe(t)
	r2, _ := New(fd2)
	defer r2.Close()
	w2.Write([]byte("x"))
	w2.Close()
	if b, err := io.ReadAll(r2); err != nil || string(b) != "x" {
		t.Errorf("ReadAll = %q, %v", b, err)
	}
	w.Close()
}
