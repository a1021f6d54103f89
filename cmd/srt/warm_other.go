//go:build !linux

package main

// warm: sandboxes are prepared ahead on Linux only; elsewhere srt-main
// runs every command.
func warm(self, prog string, args []string) (code int, served bool) { return 0, false }
