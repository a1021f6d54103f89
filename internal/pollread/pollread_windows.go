package pollread

import (
	"errors"
	"os"
)

// A Reader reads a descriptor until it ends or Stop is called: not on
// Windows, where srt runs no sandbox.
type Reader struct{}

var errWindows = errors.New("not supported on Windows")

// New fails on Windows.
func New(fd int) (*Reader, error) { return nil, errWindows }

// FromFile fails on Windows.
func FromFile(f *os.File) (*Reader, error) { return nil, errWindows }

// Read fails on Windows.
func (r *Reader) Read([]byte) (int, error) { return 0, errWindows }

// Stop does nothing on Windows.
func (r *Reader) Stop() {}

// Close does nothing on Windows.
func (r *Reader) Close() error { return nil }
