package credentials

import (
	"crypto/rand"
	"encoding/hex"
)

// sentinelPad is what a sentinel is padded with.
const sentinelPad = "abcdefghijklmnopqrstuvwxyz0123456789_-"

// Sentinel returns the stand-in for a masked value, as the reference
// makes it: "fake_value_" and a random (version 4) UUID, padded with
// random [a-z0-9_-] to the value's length when the value is longer, so
// that lengths in requests stay right. The UUID's 122 random bits keep
// every stand-in unique and unguessable, whatever the value's length;
// the proxy finds a stand-in in traffic by its exact bytes.
func Sentinel(real string) (string, error) {
	var u [16]byte
	if _, err := rand.Read(u[:]); err != nil {
		return "", err
	}
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	h := hex.EncodeToString(u[:])
	out := []byte("fake_value_" + h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:])
	for len(out) < len(real) {
		var b [64]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", err
		}
		for _, c := range b {
			// Uniform over the alphabet: bytes past the last whole
			// multiple of its size are drawn again.
			if int(c) < 256/len(sentinelPad)*len(sentinelPad) && len(out) < len(real) {
				out = append(out, sentinelPad[int(c)%len(sentinelPad)])
			}
		}
	}
	return string(out), nil
}
