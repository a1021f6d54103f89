// Package doccheck holds no code: its test checks that the documentation
// stays consistent with itself. Every docs/reference.md#anchor that a
// source comment cites exists, no comment cites a section (§) of a document
// outside the repository, and every relative link of README.md and docs/
// names a file (and heading) that exists.
package doccheck
