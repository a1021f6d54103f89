// Package netpolicy decides, for the HTTP and SOCKS5 proxies alike, whether
// a connection may go out (docs/reference.md#network-decision), and vets the addresses an
// allowed name resolves to before one of them is dialled (docs/reference.md#resolved-address-guard).
//
// One function decides for both proxies, so they cannot disagree. Names are
// canonicalised once (compiler/policy.CanonicalHost) and matched with the
// compiler's rules; the guard works on the addresses a single lookup
// returned, and the caller dials one of the survivors, never the name, so a
// second lookup cannot bring back a refused address.
package netpolicy
