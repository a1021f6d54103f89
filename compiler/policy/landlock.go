package policy

// A LandlockGrant is a path every Linux sandbox may write besides its write
// roots and its TMPDIR, in the second layer (Landlock). Landlock grants by
// hierarchy: a grant of a directory covers what is below it.
type LandlockGrant struct {
	// Path is absolute, as the sandbox sees it.
	Path string
	// Why is the reason, shown by explain.
	Why string
}

// LandlockGrants are the paths bubblewrap's /dev gives every sandbox that
// programs write: the devices, the terminals, POSIX shared memory. They
// are the sandbox's own (a fresh /dev), not the host's.
var LandlockGrants = []LandlockGrant{
	{"/dev/null", "the null device"},
	{"/dev/zero", "the zero device"},
	{"/dev/full", "the full device"},
	{"/dev/random", "the random device (writes add entropy)"},
	{"/dev/urandom", "the random device (writes add entropy)"},
	{"/dev/tty", "the controlling terminal"},
	{"/dev/ptmx", "new pseudo-terminals"},
	{"/dev/pts", "pseudo-terminals of the sandbox's own devpts"},
	{"/dev/shm", "POSIX shared memory and semaphores, a tmpfs of the sandbox's own /dev, gone with it"},
}

// LandlockProc is granted besides LandlockGrants when nested user
// namespaces are allowed: a nested sandbox writes its uid_map, gid_map and
// setgroups below /proc (the sandbox's own /proc, with /proc/sys
// read-only).
var LandlockProc = LandlockGrant{"/proc", "nested user namespaces write uid_map, gid_map and setgroups there (allowNestedUserNamespaces)"}

// LandlockScopes are what the second layer keeps inside the sandbox, where
// the kernel's Landlock offers it (ABI 6): connecting to abstract Unix
// sockets made outside it, and sending signals to processes outside it.
var LandlockScopes = []string{"abstract-unix-socket", "signal"}

// LandlockWhy is the one-line reason every Linux plan gives for its second
// layer.
const LandlockWhy = "a second layer (Landlock, where the kernel has it): writes only in the write roots, the run's TMPDIR and these paths, whatever the mounts allow"

// Landlock returns the paths the second layer of p grants besides the
// write roots and TMPDIR; nil when p has no second layer (the file system
// policy disabled: everything is writable).
func (p *Policy) Landlock() []LandlockGrant {
	if p.Filesystem.Disabled {
		return nil
	}
	out := append([]LandlockGrant(nil), LandlockGrants...)
	if p.Process.AllowNestedUserNamespaces {
		out = append(out, LandlockProc)
	}
	return out
}
