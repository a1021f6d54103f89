// Package decider is version 1 of the protocol between srt proxy and its
// external decider: length-prefixed JSON frames (frame.go), a strict
// decoder that refuses anything it was not told to expect (strict.go), the
// messages (message.go) and the members each may hold, read from their
// structs (shape.go), and the proxy's end of the link (link.go).
//
// Every frame is a 4-byte big-endian length followed by that many bytes of
// one UTF-8 JSON object with a "t" field naming the message. Any violation
// of the protocol ends the link: the proxy then answers every pending and
// later request 503 and exits, so a confused decider never turns into an
// allowed request.
package decider
