//go:build !unix

package trust

import "errors"

// Lock cannot lock the record on this system, where srt trusts no plan
// (runtime/private).
func Lock() (unlock func(), err error) {
	return nil, errors.New("the record of trusted plans is kept on Unix systems only")
}
