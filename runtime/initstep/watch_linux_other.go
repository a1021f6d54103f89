//go:build linux && !amd64 && !arm64

package initstep

const auditArch = 0

// WatchedCalls is empty where srt does not watch writes: refused writes
// are not reported there.
var WatchedCalls []WatchedCall
