//go:build !windows

package main

import (
	"os/exec"
	"syscall"
)

// detach starts the emulator in its own session, so it outlives the step.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }
