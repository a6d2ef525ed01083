//go:build !linux && !darwin && !windows

package liveness

import (
	"fmt"
	"runtime"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue"
)

func lookup(pid int) (machinequeue.Process, error) {
	return machinequeue.Process{}, fmt.Errorf("look up process %d: process start times are not supported on %s", pid, runtime.GOOS)
}

func self() (machinequeue.Process, error) { return lookup(0) }

// probe cannot prove anything here: nothing is ever reclaimed.
func probe(machinequeue.Process) machinequeue.Verdict { return machinequeue.VerdictUnknown }
