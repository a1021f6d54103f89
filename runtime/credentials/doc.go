// Package credentials prepares what one run needs to keep the command's
// secrets from it, before anything runs (every error of the settings or
// the host is reported then):
//
//   - TLS termination (network.tlsTerminate, tls.go): the run's CA,
//     ephemeral or read from caCertPath and caKeyPath, the trust bundle
//     the command's clients get (the run's CA, the system's roots,
//     extraCaCertPaths) and the proxy.Terminator that signs the leaf
//     certificates;
//   - masked credentials (credentials.envVars and files, masks.go): the
//     command's environment and copies of its credential files with
//     stand-ins (Sentinel) for the secrets, and the proxy.Injector that
//     swaps them back on the way to the hosts each may go to;
//   - AWS keys (credentials.awsPairs and sigv4, aws.go): the pairs of
//     masked variables the proxy re-signs SigV4 requests with.
//
// What acts on the command's traffic (signing a leaf at each handshake,
// swapping the secrets, re-signing) is runtime/proxy's; runtime/sandbox
// calls this package for each run and hands the proxies what it made.
// See docs/tls-and-credentials.md.
package credentials
