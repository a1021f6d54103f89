package decider

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Frame size limits.
const (
	// MaxFrame caps every frame but body frames: 1 MiB.
	MaxFrame = 1 << 20
	// MaxBody is the most a need_body verdict may ask for: 32 MiB.
	MaxBody = 32 << 20
	// MaxBodyFrame caps a body frame: MaxBody bytes in base64 and the
	// JSON around them.
	MaxBodyFrame = (MaxBody+2)/3*4 + 4096
)

// ErrFrameTooLarge is a frame whose announced length is over the cap.
var ErrFrameTooLarge = errors.New("frame too large")

// ReadFrame reads one frame of at most max bytes and returns its payload.
// A clean end of stream before the length gives io.EOF; an end inside a
// frame gives io.ErrUnexpectedEOF.
func ReadFrame(r io.Reader, max int) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if uint64(size) > uint64(max) {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrFrameTooLarge, size, max)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return b, nil
}

// AppendFrame appends payload's length and payload to dst.
func AppendFrame(dst, payload []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(payload)))
	return append(dst, payload...)
}

// WriteFrame writes payload as one frame in a single Write.
func WriteFrame(w io.Writer, payload []byte) error {
	_, err := w.Write(AppendFrame(make([]byte, 0, 4+len(payload)), payload))
	return err
}
