package policy

import "strings"

// MacPrivateDirs are macOS's top-level symlinks into /private: /tmp/x is
// /private/tmp/x to the kernel, and Seatbelt checks only that spelling.
var MacPrivateDirs = []string{"/tmp", "/var", "/etc"}

// MacKernelPath is the absolute, clean path p as macOS's kernel sees it:
// under /private where p starts with one of MacPrivateDirs.
func MacKernelPath(p string) string {
	for _, d := range MacPrivateDirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return "/private" + p
		}
	}
	return p
}
