package violations

import "strings"

// Seatbelt tags every profile's denials with a message, TagPrefix +
// base64(attribution key) + "_END_" + a per-process suffix
// (docs/reference.md#macos-log-tag); the macOS runtime streams the system log for
// lines ending in the suffix and hands each chunk to SeatbeltLog.
const TagPrefix = "CMD64_"

// tagKey is the attribution key of a line that starts with the tag: what
// lies between TagPrefix and the first "_END" after at least one byte.
func tagKey(l string) (string, bool) {
	rest, ok := strings.CutPrefix(l, TagPrefix)
	if !ok || rest == "" {
		return "", false
	}
	i := strings.Index(rest[1:], "_END")
	if i < 0 {
		return "", false
	}
	return rest[:i+1], true
}

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
		if k, ok := tagKey(strings.TrimSpace(l)); ok {
			key = k
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
