package wfp

import "strings"

// Access masks of the ACE catalogue (docs/reference.md#windows-aces).
const (
	// MaskRead is FILE_GENERIC_READ | FILE_GENERIC_EXECUTE: an allowRead
	// grant, and the profile read grant.
	MaskRead Mask = 0x001200A9
	// MaskWrite is generic read, write and execute plus DELETE, without
	// FILE_DELETE_CHILD: an allowWrite root grant (a child can still be
	// deleted through its own DELETE right, but a deny on the child wins).
	MaskWrite Mask = 0x001301BF
	// MaskDenyRead is FILE_ALL_ACCESS: a denyRead target.
	MaskDenyRead Mask = 0x001F01FF
	// MaskDenyWrite is write data, append, write EA, write attributes and
	// DELETE, without SYNCHRONIZE and READ_CONTROL, which reading needs
	// too (docs/reference.md#windows-paths).
	MaskDenyWrite Mask = 0x00010116
	// MaskDeleteChild is FILE_DELETE_CHILD, denied on the parent of every
	// deny target so that the target cannot be deleted or renamed away.
	MaskDeleteChild Mask = 0x00000040
	// MaskDelete is DELETE, denied on the directories a placeholder chain
	// creates, so that they cannot be removed to lift the deny.
	MaskDelete Mask = 0x00010000
	// MaskFullControl is FILE_ALL_ACCESS, in install-time DACLs.
	MaskFullControl Mask = 0x001F01FF
	// MaskUsersState is what BUILTIN\Users get on the install directory:
	// read, write and execute plus DELETE, without FILE_DELETE_CHILD.
	MaskUsersState Mask = 0x001301BF
)

// rightNames names the bits of a file access mask, low bit first.
var rightNames = []struct {
	bit  Mask
	name string
}{
	{0x00000001, "FILE_READ_DATA"},
	{0x00000002, "FILE_WRITE_DATA"},
	{0x00000004, "FILE_APPEND_DATA"},
	{0x00000008, "FILE_READ_EA"},
	{0x00000010, "FILE_WRITE_EA"},
	{0x00000020, "FILE_EXECUTE"},
	{0x00000040, "FILE_DELETE_CHILD"},
	{0x00000080, "FILE_READ_ATTRIBUTES"},
	{0x00000100, "FILE_WRITE_ATTRIBUTES"},
	{0x00010000, "DELETE"},
	{0x00020000, "READ_CONTROL"},
	{0x00040000, "WRITE_DAC"},
	{0x00080000, "WRITE_OWNER"},
	{0x00100000, "SYNCHRONIZE"},
}

// Rights spells out m, one name per bit, low bit first. A bit without a
// name is written in hex, so that nothing is hidden.
func (m Mask) Rights() []string {
	var out []string
	rest := m
	for _, r := range rightNames {
		if m&r.bit != 0 {
			out = append(out, r.name)
			rest &^= r.bit
		}
	}
	for b := Mask(1); b != 0; b <<= 1 {
		if rest&b != 0 {
			out = append(out, Mask(b).hex())
		}
	}
	return out
}

// rightsText is Rights joined by " | ", as a plan shows it.
func (m Mask) rightsText() string { return strings.Join(m.Rights(), " | ") }

func (m Mask) hex() string {
	b, _ := m.MarshalJSON()
	return string(b[1 : len(b)-1])
}
