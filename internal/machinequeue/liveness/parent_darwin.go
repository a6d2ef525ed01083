//go:build darwin

package liveness

import (
	"bytes"
	"fmt"

	"golang.org/x/sys/unix"
)

// parentOf reads kinfo_proc (sysctl kern.proc.pid.<pid>): e_ppid and
// p_comm.
func parentOf(pid int) (Parent, error) {
	if pid <= 0 {
		return Parent{}, fmt.Errorf("read the parent of process %d: not a pid", pid)
	}
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return Parent{}, fmt.Errorf("read the parent of process %d: %w", pid, err)
	}
	if int(kp.Proc.P_pid) != pid {
		return Parent{}, fmt.Errorf("read the parent of process %d: sysctl answered for pid %d", pid, kp.Proc.P_pid)
	}
	comm := kp.Proc.P_comm[:]
	if i := bytes.IndexByte(comm, 0); i >= 0 {
		comm = comm[:i]
	}
	return Parent{PPID: int(kp.Eproc.Ppid), Name: string(comm)}, nil
}
