package query

// Remove answers whether the command can remove or rename the host's file
// or directory at p (a path as Path returns it) on target t: unlink it from
// its directory, with the change reaching the host.
//
// On macOS this is more than a write: the profile keeps protected paths
// and the directories above them from being moved away
// (docs/reference.md#macos-reads step 7, #macos-unlink-rule), so that a
// denied file cannot be renamed to a name no deny matches. The answer is
// the program's file-write-unlink where it allows the write (macfiles.go).
//
// On Linux and Windows the answer is Write's: what can be changed can be
// removed, except that Linux mount points (a protected leaf and the
// directories between it and its write root) refuse rename and rmdir with
// EBUSY, which Remove does not model.
func (e *Evaluator) Remove(p string, t Target) Decision { return e.on(t).remove(p) }
