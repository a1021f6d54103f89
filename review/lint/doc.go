// Package lint finds risky or pointless rules in a compiled policy: writes
// to the home directory, to / or to directories on PATH; dangerous unix
// sockets; weakening switches in a project's own settings; allow-all
// wildcards; rules that others shadow or that can never match;
// duplicates; write denies at or above a write root; globs a target
// cannot enforce; credential masks without TLS termination.
//
// Every rule has a stable code (SRT1xx) and a severity; a finding points at
// the settings entry that caused it (file:line:col from the rule's Origin).
// Codes are never reused for a different check, so that CI annotations and
// suppressions keep their meaning. Rules reason with review/query, the
// evaluator explain and test use.
package lint
