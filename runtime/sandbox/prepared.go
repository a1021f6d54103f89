package sandbox

import (
	"context"
	"sync"
)

// A Prepared is a sandbox started before its command is known, so that
// the command starts without waiting for it (warm start; Linux only):
// bubblewrap started, the namespaces, mounts, seccomp program and cgroups
// in place, the init step waiting. Run (Options.Prepared) uses it for one
// command, and only when the plan, resolved again on the host as it is
// when the command comes, is the one the sandbox was started with: the
// same mounts, the same write roots (by identity), the same second layer
// and limits, the same policy and options. What belongs to the command
// alone is made when it comes: its proxies (its attribution, its allow
// lists), its environment, the record of its write roots and the check
// after it. A sandbox is used once, never again.
type Prepared struct {
	mu sync.Mutex
	p  *prepared // nil once used or closed
}

// Prepare starts a sandbox for a later Run of this Manager with the same
// options (Options.Prepared). Its error says why none could be prepared:
// Run without one still works. Settings that need something of each
// command before its sandbox starts are not prepared: TLS termination,
// masked credentials, placeholders on the host.
func (m *Manager) Prepare(ctx context.Context, o Options) (*Prepared, error) {
	return prepare(ctx, m, o)
}

// take hands the prepared sandbox over, once.
func (p *Prepared) take() *prepared {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.p
	p.p = nil
	return s
}

// Close ends the sandbox if no run used it.
func (p *Prepared) Close() {
	if s := p.take(); s != nil {
		s.close()
	}
}
