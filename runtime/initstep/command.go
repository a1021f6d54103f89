package initstep

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// CommandArg has the init step wait for its command in the start message
// (EncodeCommand) instead of taking it from its arguments: a sandbox
// started before its command is known (runtime/sandbox: Prepare) gets
// the command's argv, environment and standard descriptors when it may
// start.
const CommandArg = "--command-later"

// The first byte of the start message: StartByte lets the command of the
// arguments start; CommandByte says the command follows (CommandArg).
const (
	StartByte   = 1
	CommandByte = 2
)

// maxCommand bounds the command a start message carries: the kernel's
// own bound on argv and environment together (ARG_MAX, 2 MiB here) with
// room for the separators.
const maxCommand = 4 << 20

// CommandHeader is the first packet of a start message that carries a
// command: CommandByte, the length of the command that follows in later
// packets (4 bytes, big-endian), and the token of the second layer's
// domain (see Ruleset.Enforce). It travels with the command's standard
// descriptors (stdin, stdout, stderr) as SCM_RIGHTS.
func CommandHeader(token string, command []byte) []byte {
	b := []byte{CommandByte, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], uint32(len(command)))
	return append(b, token...)
}

// EncodeCommand is the command a start message carries: the number of
// arguments, the arguments, then the environment, each ended by a NUL.
// No argument or variable may hold a NUL (execve could not pass it).
func EncodeCommand(argv, env []string) ([]byte, error) {
	if len(argv) == 0 {
		return nil, errors.New("no command")
	}
	var b strings.Builder
	b.WriteString(strconv.Itoa(len(argv)))
	b.WriteByte(0)
	for _, s := range append(append([]string(nil), argv...), env...) {
		if strings.IndexByte(s, 0) >= 0 {
			return nil, fmt.Errorf("%q holds a NUL byte, which no command can be given", s)
		}
		b.WriteString(s)
		b.WriteByte(0)
	}
	if b.Len() > maxCommand {
		return nil, fmt.Errorf("the command and its environment take %d bytes, more than %d", b.Len(), maxCommand)
	}
	return []byte(b.String()), nil
}

// ParseCommandHeader reads a CommandHeader: the command's length and the
// token.
func ParseCommandHeader(b []byte) (length int, token string, err error) {
	if len(b) < 5 || b[0] != CommandByte {
		return 0, "", errors.New("bad start message: no command header")
	}
	n := binary.BigEndian.Uint32(b[1:5])
	if n > maxCommand {
		return 0, "", fmt.Errorf("bad start message: a command of %d bytes", n)
	}
	return int(n), string(b[5:]), nil
}

// DecodeCommand reads what EncodeCommand wrote.
func DecodeCommand(b []byte) (argv, env []string, err error) {
	if len(b) == 0 || b[len(b)-1] != 0 {
		return nil, nil, errors.New("bad command: not NUL-ended")
	}
	words := strings.Split(string(b[:len(b)-1]), "\x00")
	n, err := strconv.Atoi(words[0])
	if err != nil || n < 1 || n > len(words)-1 {
		return nil, nil, errors.New("bad command: no argument count")
	}
	return words[1 : n+1], words[n+1:], nil
}
