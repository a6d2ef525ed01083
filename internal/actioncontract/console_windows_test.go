//go:build windows

package actioncontract_test

import (
	"os/exec"
	"syscall"
)

// configureConsole starts the launcher in a new process group of the
// test's console, so interrupt can send a console control event to the
// launcher's PowerShell and the binary together without interrupting the
// test itself.
func configureConsole(cmd *exec.Cmd, _ launcher) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

var generateConsoleCtrlEvent = syscall.NewLazyDLL("kernel32.dll").NewProc("GenerateConsoleCtrlEvent")

// interrupt sends CTRL_BREAK to the launcher's process group: the event the
// runner generates 7.5 s after CTRL_C when a step is cancelled
// (actions/runner src/Runner.Sdk/ProcessInvoker.cs). CTRL_C itself cannot
// be sent to one process group (CREATE_NEW_PROCESS_GROUP disables it there);
// Go delivers both as os.Interrupt.
func interrupt(cmd *exec.Cmd, _ launcher) error {
	const ctrlBreakEvent = 1
	r, _, err := generateConsoleCtrlEvent.Call(ctrlBreakEvent, uintptr(cmd.Process.Pid))
	if r == 0 {
		return err
	}
	return nil
}

func execCommand(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).Output()
	return string(out), err
}
