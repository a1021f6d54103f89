package violations

import (
	"regexp"
	"strings"
)

// Seatbelt tags every profile's denials with a message, TagPrefix +
// base64(attribution key) + "_END_" + a per-process suffix
// (docs/reference.md#macos-log-tag); the macOS runtime streams the system log for
// lines ending in the suffix and hands each chunk to SeatbeltLog.
const TagPrefix = "CMD64_"

var tagKey = regexp.MustCompile(`^` + TagPrefix + `(.+?)_END`)

// noise are denials every process provokes; the reference drops them.
var noise = []string{"mDNSResponder", "mach-lookup com.apple.diagnosticd", "mach-lookup com.apple.analyticsd"}

// A LogViolation is one Seatbelt denial read from the system log.
type LogViolation struct {
	Line string // the log line, as logged (Add sanitises it)
	Key  string // the attribution key from the tag, base64; "" if none
}

// SeatbeltLog reads one chunk of `log stream --style compact` output: the
// lines with "Sandbox:" and "deny" are violations, attributed to the key
// of the chunk's line that starts with the tag; the noise lines are
// dropped. What this parses has been written from the reference's
// description, not yet read off a real Mac (see README).
func SeatbeltLog(chunk string) []LogViolation {
	key := ""
	lines := strings.Split(chunk, "\n")
	for _, l := range lines {
		if m := tagKey.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			key = m[1]
			break
		}
	}
	var out []LogViolation
	for _, l := range lines {
		if !strings.Contains(l, "Sandbox:") || !strings.Contains(l, "deny") {
			continue
		}
		drop := false
		for _, n := range noise {
			drop = drop || strings.Contains(l, n)
		}
		if !drop {
			out = append(out, LogViolation{Line: strings.TrimSpace(l), Key: key})
		}
	}
	return out
}
