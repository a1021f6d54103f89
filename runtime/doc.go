// Package runtime is the only part of srt that touches the host: it
// resolves a symbolic plan against this machine, runs the domain-filtering
// HTTP and SOCKS5 proxies, starts the sandbox and reports violations.
//
// Built so far: resolve, the plan → bubblewrap arguments for this host.
// The proxies and the sandbox runner: see the issue "srt on Linux".
package runtime
