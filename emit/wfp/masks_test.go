package wfp

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

func TestMaskRights(t *testing.T) {
	for _, tt := range []struct {
		m    Mask
		want []string
	}{
		{MaskRead, []string{"FILE_READ_DATA", "FILE_READ_EA", "FILE_EXECUTE", "FILE_READ_ATTRIBUTES", "READ_CONTROL", "SYNCHRONIZE"}},
		{MaskWrite, []string{"FILE_READ_DATA", "FILE_WRITE_DATA", "FILE_APPEND_DATA", "FILE_READ_EA", "FILE_WRITE_EA", "FILE_EXECUTE", "FILE_READ_ATTRIBUTES", "FILE_WRITE_ATTRIBUTES", "DELETE", "READ_CONTROL", "SYNCHRONIZE"}},
		{MaskDenyWrite, []string{"FILE_WRITE_DATA", "FILE_APPEND_DATA", "FILE_WRITE_EA", "FILE_WRITE_ATTRIBUTES", "DELETE"}},
		{MaskDeleteChild, []string{"FILE_DELETE_CHILD"}},
		{MaskDelete, []string{"DELETE"}},
		{0x80000001, []string{"FILE_READ_DATA", "0x80000000"}}, // an unnamed bit is shown, not hidden
	} {
		if got := tt.m.Rights(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s.Rights() = %q, want %q", tt.m.hex(), got, tt.want)
		}
	}
	// FILE_ALL_ACCESS names every file right.
	if got := MaskDenyRead.Rights(); len(got) != len(rightNames) {
		t.Errorf("FILE_ALL_ACCESS rights = %q, want all %d", got, len(rightNames))
	}
	// docs/reference.md#windows-cases, W4: no FILE_DELETE_CHILD in the write grant; W7: no
	// SYNCHRONIZE or READ_CONTROL in the write deny.
	if slices.Contains(MaskWrite.Rights(), "FILE_DELETE_CHILD") {
		t.Error("the write grant includes FILE_DELETE_CHILD")
	}
	if r := MaskDenyWrite.Rights(); slices.Contains(r, "SYNCHRONIZE") || slices.Contains(r, "READ_CONTROL") {
		t.Errorf("the write deny %q would break reading", r)
	}
}

func TestMaskJSON(t *testing.T) {
	b, err := json.Marshal(MaskWrite)
	if err != nil || string(b) != `"0x001301BF"` {
		t.Fatalf("Marshal = %s, %v", b, err)
	}
	var m Mask
	if err := json.Unmarshal(b, &m); err != nil || m != MaskWrite {
		t.Fatalf("Unmarshal = %v, %v", m, err)
	}
	for _, bad := range []string{`"001301BF"`, `"0xZZ"`, `"0x1FFFFFFFF"`, `5`} {
		if err := json.Unmarshal([]byte(bad), &m); err == nil {
			t.Errorf("Unmarshal(%s) accepted", bad)
		}
	}
}
