//go:build !linux

package sandbox

import (
	"context"
	"errors"
)

type prepared struct{}

func (*prepared) close() {}

func prepare(context.Context, *Manager, Options) (*Prepared, error) {
	return nil, errors.New("sandboxes are prepared ahead on Linux only")
}
