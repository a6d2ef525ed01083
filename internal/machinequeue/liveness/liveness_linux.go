//go:build linux

package liveness

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue"
)

// bootID and pidNamespace cannot change while this process runs: read once.
var (
	bootID = sync.OnceValues(func() (string, error) {
		b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
		if err != nil {
			return "", err
		}
		id := strings.TrimSpace(string(b))
		if !validBootID(id) {
			return "", fmt.Errorf("/proc/sys/kernel/random/boot_id: %q is not a boot id", id)
		}
		return id, nil
	})
	pidNamespace = sync.OnceValues(func() (uint64, error) {
		target, err := os.Readlink("/proc/self/ns/pid")
		if err != nil {
			return 0, err
		}
		ns, ok := parseNamespaceLink(target)
		if !ok {
			return 0, fmt.Errorf("/proc/self/ns/pid: unexpected link %q", target)
		}
		return ns, nil
	})
)

func readStat(pid int) (procStat, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(data)
}

func lookup(pid int) (machinequeue.Process, error) {
	if pid <= 0 {
		return machinequeue.Process{}, fmt.Errorf("look up process %d: not a pid", pid)
	}
	boot, err := bootID()
	if err != nil {
		return machinequeue.Process{}, fmt.Errorf("look up process %d: %w", pid, err)
	}
	ns, err := pidNamespace()
	if err != nil {
		return machinequeue.Process{}, fmt.Errorf("look up process %d: %w", pid, err)
	}
	st, err := readStat(pid)
	if err != nil {
		return machinequeue.Process{}, fmt.Errorf("look up process %d: %w", pid, err)
	}
	if st.exited() {
		return machinequeue.Process{}, fmt.Errorf("look up process %d: it has exited", pid)
	}
	return machinequeue.Process{PID: pid, Start: linuxToken(boot, ns, st.StartTicks)}, nil
}

func self() (machinequeue.Process, error) { return lookup(os.Getpid()) }

func probe(p machinequeue.Process) machinequeue.Verdict {
	boot, _ := bootID()
	ns, nsErr := pidNamespace()
	var v view
	st, err := readStat(p.PID)
	switch {
	case err == nil:
		if b, n, _, ok := parseLinuxToken(p.Start); ok && b == boot && n == ns {
			v.current = linuxToken(boot, ns, st.StartTicks)
		}
		v.exited = st.exited()
	case errors.Is(err, fs.ErrNotExist):
		// hidepid hides other users' processes as if they did not exist:
		// only ESRCH proves the pid is free.
		v.gone = errors.Is(unix.Kill(p.PID, 0), unix.ESRCH)
	}
	return judgeLinux(p.Start, boot, ns, nsErr == nil, v)
}
