// Package runtime is the only part of srt that touches the host: it
// resolves a symbolic plan against this machine, runs the domain-filtering
// HTTP and SOCKS5 proxies, starts the sandbox and reports violations.
//
// Not built yet: see the issue "srt on Linux".
package runtime
