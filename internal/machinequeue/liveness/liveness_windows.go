//go:build windows

package liveness

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/windows"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue"
)

// open opens pid for the two queries the queue makes: its times and
// whether it has exited.
func open(pid int) (windows.Handle, error) {
	return windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.SYNCHRONIZE, false, uint32(pid))
}

// inspect reads the creation time of the process behind h and whether it
// has exited (its handle is signalled).
func inspect(h windows.Handle) (token string, exited bool, err error) {
	var creation, exit, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(h, &creation, &exit, &kernel, &user); err != nil {
		return "", false, err
	}
	ev, err := windows.WaitForSingleObject(h, 0)
	if err != nil {
		return "", false, err
	}
	ft := uint64(creation.HighDateTime)<<32 | uint64(creation.LowDateTime)
	return windowsToken(ft), ev == windows.WAIT_OBJECT_0, nil
}

func lookup(pid int) (machinequeue.Process, error) {
	if pid <= 0 {
		return machinequeue.Process{}, fmt.Errorf("look up process %d: not a pid", pid)
	}
	h, err := open(pid)
	if err != nil {
		return machinequeue.Process{}, fmt.Errorf("look up process %d: %w", pid, err)
	}
	defer windows.CloseHandle(h)
	token, exited, err := inspect(h)
	if err != nil {
		return machinequeue.Process{}, fmt.Errorf("look up process %d: %w", pid, err)
	}
	if exited {
		return machinequeue.Process{}, fmt.Errorf("look up process %d: it has exited", pid)
	}
	return machinequeue.Process{PID: pid, Start: token}, nil
}

func self() (machinequeue.Process, error) { return lookup(os.Getpid()) }

func probe(p machinequeue.Process) machinequeue.Verdict {
	var v view
	h, err := open(p.PID)
	switch {
	case err == nil:
		defer windows.CloseHandle(h)
		if token, exited, err := inspect(h); err == nil {
			v.current, v.exited = token, exited
		}
	case errors.Is(err, windows.ERROR_INVALID_PARAMETER):
		// OpenProcess answers ERROR_INVALID_PARAMETER for a pid no process
		// has; ERROR_ACCESS_DENIED means one exists (Unknown).
		v.gone = true
	}
	return judgeOS("windows:", p.Start, v)
}
