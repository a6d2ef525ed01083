//go:build windows

package main

import (
	"os/exec"
	"syscall"
)

// detach starts the emulator in its own process group, so the console
// events of later steps do not reach it.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}
