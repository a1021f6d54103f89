//go:build unix

package testenv

import (
	"os/exec"
	"syscall"
)

// asUser has cmd run as uid (and the group of the same number).
func asUser(cmd *exec.Cmd, uid int) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
}
