//go:build linux

package kaudit

import (
	"encoding/binary"
	"errors"
	"iter"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Status is the start of struct audit_status, as AUDIT_GET answers it.
type Status struct {
	Mask, Enabled, Failure, PID, RateLimit, BacklogLimit, Lost, Backlog uint32
}

// FailPanic is Status.Failure when the kernel panics on a lost record
// (auditctl -f 2).
const FailPanic = 2

// statusMaskEnabled is AUDIT_STATUS_ENABLED: AUDIT_SET changes Enabled.
const statusMaskEnabled = 1

// Get asks the kernel for the audit's status. The kernel answers only a
// process with CAP_AUDIT_CONTROL in its initial PID namespace.
func Get() (Status, error) {
	var s Status
	err := request(unix.AUDIT_GET, nil, func(t int, data []byte) bool {
		if t != unix.AUDIT_GET {
			return false
		}
		b := (*[unsafe.Sizeof(s)]byte)(unsafe.Pointer(&s))
		copy(b[:], data)
		return true
	})
	return s, err
}

// SetEnabled turns the kernel's audit on or off, for the whole host
// (auditctl -e 1 or -e 0).
func SetEnabled(on bool) error {
	s := Status{Mask: statusMaskEnabled}
	if on {
		s.Enabled = 1
	}
	b := (*[unsafe.Sizeof(s)]byte)(unsafe.Pointer(&s))
	return request(unix.AUDIT_SET, b[:], nil)
}

// request sends one message of type typ to the kernel and hands each
// answer to answer until it returns true; without answer, it waits for
// the kernel's acknowledgement.
func request(typ uint16, payload []byte, answer func(int, []byte) bool) error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_AUDIT)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	tv := unix.NsecToTimeval(int64(time.Second))
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	req := make([]byte, unix.NLMSG_HDRLEN, unix.NLMSG_HDRLEN+len(payload))
	req = append(req, payload...)
	flags := uint16(unix.NLM_F_REQUEST)
	if answer == nil {
		flags |= unix.NLM_F_ACK
	}
	binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
	binary.NativeEndian.PutUint16(req[4:], typ)
	binary.NativeEndian.PutUint16(req[6:], flags)
	binary.NativeEndian.PutUint32(req[8:], 1)
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	buf := make([]byte, 4096)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return err
		}
		for t, data := range Messages(buf[:n]) {
			if t == unix.NLMSG_ERROR {
				if len(data) < 4 {
					return errors.New("a short netlink error")
				}
				if e := int32(binary.NativeEndian.Uint32(data)); e < 0 {
					return unix.Errno(-e)
				}
				if answer == nil {
					return nil // the acknowledgement
				}
				continue
			}
			if answer != nil && answer(t, data) {
				return nil
			}
		}
	}
}

// Messages are the type and payload of each netlink message in b. The
// audit's records are not padded to NLMSG_ALIGNTO as netlink's own
// messages are (syscall.ParseNetlinkMessage refuses them), so a message
// ends at its length and the next starts at the aligned offset.
func Messages(b []byte) iter.Seq2[int, []byte] {
	return func(yield func(int, []byte) bool) {
		for len(b) >= unix.NLMSG_HDRLEN {
			n := int(binary.NativeEndian.Uint32(b[0:4]))
			if n < unix.NLMSG_HDRLEN || n > len(b) {
				return
			}
			if !yield(int(binary.NativeEndian.Uint16(b[4:6])), b[unix.NLMSG_HDRLEN:n]) {
				return
			}
			b = b[min(len(b), (n+unix.NLMSG_ALIGNTO-1)&^(unix.NLMSG_ALIGNTO-1)):]
		}
	}
}
