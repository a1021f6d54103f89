package decider

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// DefaultTimeout is how long the proxy waits for a verdict.
const DefaultTimeout = 5 * time.Second

// ErrTimeout is a verdict that did not come in time. The request is
// refused; a verdict that comes later is ignored.
var ErrTimeout = errors.New("decider timed out")

// ErrReqTooLarge is a req frame over MaxFrame; it is not sent.
var ErrReqTooLarge = errors.New("the request does not fit in a frame")

// A Link is the proxy's end of the connection to the decider. Ask and
// Body may be called from many goroutines.
type Link struct {
	// Timeout bounds the wait for each verdict; 0 means DefaultTimeout.
	Timeout time.Duration

	w io.Writer
	// wsem lets one frame at a time be written, so that ids reach the
	// wire in order; a writer that blocks (a decider that stopped
	// reading) holds it, and the others time out.
	wsem chan struct{}

	mu      sync.Mutex
	last    uint64 // the newest id sent
	pending map[uint64]chan Verdict
	done    chan struct{}
	err     error
}

// Open greets the decider over r and w and reads its hello. It then reads
// verdicts until the decider goes or breaks the protocol; Done tells when.
func Open(r io.Reader, w io.Writer) (*Link, Hello, error) {
	if err := WriteFrame(w, ProxyHello); err != nil {
		return nil, Hello{}, fmt.Errorf("sending hello to the decider: %w", err)
	}
	// Buffered: a frame is then one read, not two, and frames that
	// arrive together are taken in one.
	r = bufio.NewReaderSize(r, 64<<10)
	b, err := ReadFrame(r, MaxFrame)
	if err != nil {
		return nil, Hello{}, fmt.Errorf("reading the decider's hello: %w", err)
	}
	h, err := ParseHello(b)
	if err != nil {
		return nil, Hello{}, err
	}
	l := &Link{w: w, wsem: make(chan struct{}, 1), pending: map[uint64]chan Verdict{}, done: make(chan struct{})}
	go l.read(r)
	return l, h, nil
}

// Done is closed when the link is over.
func (l *Link) Done() <-chan struct{} { return l.done }

// Err says why the link is over; nil while it is up.
func (l *Link) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Close ends the link.
func (l *Link) Close() { l.fail(errors.New("the link was closed")) }

func (l *Link) fail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return
	}
	l.err = err
	close(l.done)
}

// read delivers verdicts to the requests waiting for them. A verdict for
// an id that is no longer waiting (it timed out, or was answered) is
// ignored; a verdict for an id never sent breaks the protocol.
func (l *Link) read(r io.Reader) {
	for {
		b, err := ReadFrame(r, MaxFrame)
		if err != nil {
			if err == io.EOF {
				err = errors.New("the decider closed the link")
			}
			l.fail(err)
			return
		}
		v, err := ParseVerdict(b)
		if err != nil {
			l.fail(err)
			return
		}
		l.mu.Lock()
		ch, ok := l.pending[v.ID]
		delete(l.pending, v.ID)
		last := l.last
		l.mu.Unlock()
		switch {
		case v.ID > last:
			l.fail(violation("a verdict for id %d, which was never sent (newest %d)", v.ID, last))
			return
		case ok:
			ch <- v
		}
	}
}

// Ask sends r (its ID is assigned here) and waits for the verdict.
func (l *Link) Ask(ctx context.Context, r Req) (Verdict, error) {
	t := time.NewTimer(l.timeout())
	defer t.Stop()
	if err := l.acquire(ctx, t); err != nil {
		return Verdict{}, err
	}
	l.mu.Lock()
	r.ID = l.last + 1
	l.mu.Unlock()
	b, err := json.Marshal(r)
	if err == nil && len(b) > MaxFrame {
		err = ErrReqTooLarge
	}
	if err != nil {
		<-l.wsem
		return Verdict{}, err
	}
	l.mu.Lock()
	l.last = r.ID
	l.mu.Unlock()
	return l.send(ctx, t, r.ID, b)
}

func (l *Link) timeout() time.Duration {
	if l.Timeout > 0 {
		return l.Timeout
	}
	return DefaultTimeout
}

// acquire takes the right to write a frame, within the verdict's time.
func (l *Link) acquire(ctx context.Context, t *time.Timer) error {
	select {
	case l.wsem <- struct{}{}:
		return nil
	case <-l.done:
		return l.Err()
	case <-t.C:
		return ErrTimeout
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Body sends the body a need_body verdict for id asked for and waits for
// the verdict, which must be allow or deny.
func (l *Link) Body(ctx context.Context, id uint64, data []byte, cut bool) (Verdict, error) {
	b, err := json.Marshal(Body{ID: id, Data: data, Cut: cut})
	if err != nil {
		return Verdict{}, err
	}
	t := time.NewTimer(l.timeout())
	defer t.Stop()
	if err := l.acquire(ctx, t); err != nil {
		return Verdict{}, err
	}
	v, err := l.send(ctx, t, id, b)
	if err == nil && v.Action == ActionNeedBody {
		err = violation("a second need_body for id %d", id)
		l.fail(err)
	}
	return v, err
}

// send writes frame b for id and waits for its verdict until t fires;
// the right to write is held on entry and given back once b is written.
func (l *Link) send(ctx context.Context, t *time.Timer, id uint64, b []byte) (Verdict, error) {
	ch := make(chan Verdict, 1)
	l.mu.Lock()
	if l.err != nil {
		err := l.err
		l.mu.Unlock()
		<-l.wsem
		return Verdict{}, err
	}
	l.pending[id] = ch
	l.mu.Unlock()
	go func() {
		err := WriteFrame(l.w, b)
		<-l.wsem
		if err != nil {
			l.fail(fmt.Errorf("writing to the decider: %w", err))
		}
	}()
	forget := func() {
		l.mu.Lock()
		delete(l.pending, id)
		l.mu.Unlock()
	}
	select {
	case v := <-ch:
		return v, nil
	case <-l.done:
		forget()
		return Verdict{}, l.Err()
	case <-t.C:
		forget()
		return Verdict{}, ErrTimeout
	case <-ctx.Done():
		forget()
		return Verdict{}, ctx.Err()
	}
}
