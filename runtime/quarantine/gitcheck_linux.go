//go:build linux

package quarantine

import (
	"strings"

	"srt.dev/internal/untrusted"
	"srt.dev/runtime/gitconfig"
)

// gitConfigWhy says why the git configuration name of directory fd (seen
// as id), new or changed during the run, goes to the quarantine, or ""
// when it stays: written in git's plain form (gitconfig.Plain, where no
// reading differs from git's) and setting only what git init, git clone
// and git remote add write. Anything else is quarantined whole, unread
// beyond that: a link, a FIFO, a file too large, a comment, a quote.
func gitConfigWhy(fd int, name string, id ident) string {
	if !id.isReg() {
		return "a git configuration that is not a regular file"
	}
	b, err := readAt(fd, name, id, maxRead)
	if err != nil {
		return "a git configuration that cannot be read (" + err.Error() + ")"
	}
	if !gitconfig.Plain(b) {
		return "a git configuration in a form git does not write itself (comments, quotes, escapes or continued lines)"
	}
	entries, ok := gitconfig.Parse(b)
	if !ok {
		return "a git configuration git would refuse"
	}
	for _, e := range entries {
		if !safeKey(e.Key) {
			return "a git configuration that sets " + untrusted.Quote(e.Key)
		}
	}
	return ""
}

// safeKey reports whether a git variable is one that runs nothing and
// redirects nothing.
func safeKey(k string) bool {
	switch k {
	case "core.repositoryformatversion", "core.filemode", "core.bare", "core.logallrefupdates",
		"core.ignorecase", "core.precomposeunicode", "core.symlinks", "core.autocrlf",
		"extensions.objectformat", "user.name", "user.email":
		return true
	}
	section, _, _ := strings.Cut(k, ".")
	name := k[strings.LastIndexByte(k, '.')+1:]
	switch section {
	case "remote":
		return name == "url" || name == "fetch" || name == "pushurl"
	case "branch":
		return name == "remote" || name == "merge"
	case "submodule":
		return name == "url" || name == "active"
	}
	return false
}
