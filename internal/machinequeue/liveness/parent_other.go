//go:build !linux && !darwin && !windows

package liveness

import (
	"fmt"
	"runtime"
)

func parentOf(pid int) (Parent, error) {
	return Parent{}, fmt.Errorf("read the parent of process %d: not supported on %s", pid, runtime.GOOS)
}
