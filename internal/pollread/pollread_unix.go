//go:build !windows

package pollread

import (
	"errors"
	"io"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// A Reader reads a descriptor until it ends or Stop is called.
type Reader struct {
	fd         int
	stop, stay *os.File // a pipe: Stop writes to stop, Read polls stay
	stopOnce   sync.Once
}

// New reads fd, which stays the caller's: the Reader neither closes it nor
// changes its mode.
func New(fd int) (*Reader, error) {
	stay, stop, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	return &Reader{fd: fd, stop: stop, stay: stay}, nil
}

// FromFile reads f's descriptor (see New), without the change of mode
// f.Fd would make; f must stay open while the Reader is used.
func FromFile(f *os.File) (*Reader, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	if err := rc.Control(func(d uintptr) { fd = int(d) }); err != nil {
		return nil, err
	}
	return New(fd)
}

// Read reads what the descriptor has, once it has something; it returns
// io.EOF at its end, and ErrStopped once Stop has been called.
func (r *Reader) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	pfd := []unix.PollFd{{Fd: int32(r.fd), Events: unix.POLLIN}, {Fd: int32(r.stay.Fd()), Events: unix.POLLIN}}
	for {
		pfd[0].Revents, pfd[1].Revents = 0, 0
		if _, err := unix.Poll(pfd, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return 0, err
		}
		switch {
		case pfd[1].Revents != 0:
			return 0, ErrStopped
		case pfd[0].Revents&unix.POLLNVAL != 0:
			return 0, unix.EBADF
		case pfd[0].Revents&(unix.POLLIN|unix.POLLHUP|unix.POLLERR) == 0:
			continue
		}
		n, err := unix.Read(r.fd, b)
		switch {
		case errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN):
			continue
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// Stop ends a Read in progress, and every later one, with ErrStopped.
func (r *Reader) Stop() {
	r.stopOnce.Do(func() { r.stop.Write([]byte{0}) })
}

// Close releases what the Reader holds, not the descriptor it reads; no
// Read may be in progress.
func (r *Reader) Close() error {
	return errors.Join(r.stop.Close(), r.stay.Close())
}
