// Package quarantine finds the protected names (shell start-up files, git
// hooks and configuration, editor settings) that a sandboxed command
// created or changed below its write roots, and moves them out of the
// user's tree into a quarantine that only the user can release.
//
// The sandbox keeps the protected names that exist when it starts
// read-only; it cannot pin a name that does not exist yet at every depth
// (sub/.git/hooks/pre-commit after git init, a/.bashrc). Check closes that
// gap after the command has ended and before the user's next command: it
// compares the write roots with what Snap recorded before the command
// started, by identity (device, inode, size, times, and content where the
// times cannot tell), and a protected name that is new or not the same
// counts as written by the run. Empty files and directories are left:
// they run nothing, and they are what the sandbox's own placeholders look
// like. Both walks fail closed (Limits, Report.Unchecked): what they
// cannot vouch for is said, never passed over.
package quarantine
