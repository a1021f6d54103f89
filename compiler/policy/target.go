package policy

// Target is a platform a policy is emitted for and answered about: the
// artifacts (package artifact) and the review tools (package query) share it.
type Target string

// The targets.
const (
	TargetLinux   Target = "linux"
	TargetMacOS   Target = "macos"
	TargetWindows Target = "windows"
)
