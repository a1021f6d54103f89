// Package quarantine finds the protected names (shell start-up files, git
// hooks and configuration, editor settings) that a sandboxed command
// created or changed below its write roots, and moves them out of the
// user's tree into a quarantine that only the user can release.
//
// The sandbox keeps the protected names that exist when it starts
// read-only; it cannot pin a name that does not exist yet at every depth
// (sub/.git/hooks/pre-commit after git init, a/.bashrc). Check closes that
// gap after the command has ended and before the user's next command: a
// name counts as written by the run when its inode changed (ctime) at or
// after the run started, which no process without CAP_SYS_TIME can
// backdate. Empty files and directories are left: they run nothing, and
// they are what the sandbox's own placeholders look like.
package quarantine
