package policy

// TmpDir is where a sandboxed command finds its temporary directory
// (TMPDIR), the reference's name for it. On Linux it is a new, empty
// directory of each run mounted there: the host's directory of that name
// is neither seen nor changed, and other runs do not see the run's files.
const TmpDir = "/tmp/claude"

// PrivateTmp reports whether the command gets its own TMPDIR: the
// file-system policy is on and the default write paths name TmpDir.
func (fs *Filesystem) PrivateTmp() bool {
	if fs.Disabled {
		return false
	}
	for _, r := range fs.AllowWrite {
		if r.Origin == Default && r.Path.String() == TmpDir {
			return true
		}
	}
	return false
}
