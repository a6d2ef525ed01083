//go:build darwin

package liveness

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue"
)

// sZOMB is p_stat of a process that exited and waits to be reaped
// (<sys/proc.h>).
const sZOMB = 5

// kinfo reads kinfo_proc of pid through sysctl kern.proc.pid.<pid>. For a
// pid nobody has, the kernel answers with zero bytes, which
// unix.SysctlKinfoProc reports as EIO.
func kinfo(pid int) (token string, exited bool, err error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return "", false, err
	}
	if int(kp.Proc.P_pid) != pid {
		return "", false, fmt.Errorf("sysctl kern.proc.pid.%d answered for pid %d", pid, kp.Proc.P_pid)
	}
	tv := kp.Proc.P_starttime
	return darwinToken(int64(tv.Sec), int64(tv.Usec)), kp.Proc.P_stat == sZOMB, nil
}

func lookup(pid int) (machinequeue.Process, error) {
	if pid <= 0 {
		return machinequeue.Process{}, fmt.Errorf("look up process %d: not a pid", pid)
	}
	token, exited, err := kinfo(pid)
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
	token, exited, err := kinfo(p.PID)
	if err == nil {
		v.current, v.exited = token, exited
	} else {
		v.gone = errors.Is(unix.Kill(p.PID, 0), unix.ESRCH)
	}
	return judgeOS("darwin:", p.Start, v)
}
