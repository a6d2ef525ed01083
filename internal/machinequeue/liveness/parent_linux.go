//go:build linux

package liveness

import (
	"fmt"
	"os"
	"strconv"
)

func parentOf(pid int) (Parent, error) {
	if pid <= 0 {
		return Parent{}, fmt.Errorf("read the parent of process %d: not a pid", pid)
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Parent{}, fmt.Errorf("read the parent of process %d: %w", pid, err)
	}
	p, err := parseStatParent(data)
	if err != nil {
		return Parent{}, fmt.Errorf("read the parent of process %d: %w", pid, err)
	}
	return p, nil
}
