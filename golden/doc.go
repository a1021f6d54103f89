// Package golden holds the golden-file tests: one directory per case with a
// settings.json and the expected artifacts for every target, rewritten only
// by "go test ./golden/... -update" (or SRT_UPDATE=1) and reviewed like code.
//
// testdata/<case>/ holds the Linux cases (compiled with the POSIX path
// rules); windows/<case>/ the Windows cases (compiled with the Windows path
// rules: windows/plan.json, or error.txt for a file that is refused), whose
// plans are also checked against the musts and must-nots of
// docs/reference.md#windows-cases.
package golden
