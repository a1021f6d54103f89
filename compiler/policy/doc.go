// Package policy holds the platform-neutral policy IR that the compiler
// produces and the emitters and the runtime consume. It is small and stable
// on purpose: emitters import it, never the settings schema.
//
// A Policy is one settings file compiled: the network rules the proxies
// enforce (allow and deny lists, and the host patterns of excludeDomains,
// mitmProxy.domains and injectHosts, parsed once into HostRule matchers,
// docs/reference.md#host-matching; the resolved-address ranges), the
// file-system rules as PathRules with the mandatory write denies and
// their scan, the process switches, the
// command's environment, and, for a file read with the Windows path rules,
// the windows.* keys. Every rule carries the Origin that produced it (a
// settings key and file:line:col, or default or mandatory), and nothing in
// a Policy depends on the host. Its words (the seccomp rule sets,
// onExtractNoMatch, decode, the SigV4 modes) are named types with
// constants; a plan naming a word this srt does not know is refused when
// it is read.
//
// A rule's path is a Path: a Root ("/", or a symbolic root that stands
// for a host fact, ${HOME} and ${CWD}, and the Windows reading's drives,
// UNC shares, ${HOMEDRIVE} and ${HOMEDRIVE}${HOMEPATH}) and the clean
// elements below it. Its text is the spelling plan.json has always had
// ("${HOME}/.ssh", "/etc/x"), and reading it back refuses any other. Its
// methods do what callers once did by hand on the text: Expand fills in
// the root for one host (and says when it cannot), Contains and Under
// compare two paths of one root, Join and Parent walk them, Spell writes
// the root the way a platform names it.
//
// It also holds the helpers the compiler, the emitters, the evaluator and
// the runtime share so that they cannot disagree: CanonicalHost, the glob
// translations (Doublestar for the Linux matcher, GlobRegex and DenyRegex for
// Seatbelt, docs/reference.md#glob-regex) and GitSafeValues.
package policy
