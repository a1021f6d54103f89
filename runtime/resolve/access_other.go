//go:build !linux

package resolve

// canCreateIn is only known on Linux, where the plan runs.
func canCreateIn(string, bool) bool { return true }

// foreignRoot is only known on Linux, where the plan runs.
func foreignRoot(string, bool) string { return "" }
