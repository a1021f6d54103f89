// Package pollread reads a descriptor this process shares with others (a
// terminal, a pipe or a file it inherited) so that another goroutine can
// stop the reading: a read waits in poll(2) for the descriptor or for
// Stop, never in read(2), and the descriptor's blocking mode never
// changes. That mode belongs to the open file, which every holder shares:
// reading a terminal non-blocking would leave the user's shell with a
// non-blocking terminal, and a blocking read cannot be interrupted, so a
// goroutine reading one could not be waited for.
package pollread

import "errors"

// ErrStopped is what Read returns once Stop has been called.
var ErrStopped = errors.New("reading stopped")
