//go:build !windows

package actioncontract_test

import (
	"os"
	"os/exec"
	"syscall"
)

// configureConsole puts a PowerShell launcher in its own process group, so
// interrupt can deliver the signal to every process of the "console" at
// once, as Windows does with a console control event. The bash launcher
// stays in the test's group: the runner signals only the step's process on
// Linux and macOS, which launch.sh has replaced by the binary (exec).
func configureConsole(cmd *exec.Cmd, l launcher) {
	if l.name != "bash" {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
}

// interrupt cancels a started launcher the way the runner cancels a step on
// Linux and macOS: SIGINT to the step's process (for PowerShell: to its
// process group, standing in for the Windows console event).
func interrupt(cmd *exec.Cmd, l launcher) error {
	if l.name != "bash" {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	}
	return cmd.Process.Signal(os.Interrupt)
}

func execCommand(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).Output()
	return string(out), err
}
