package liveness

import (
	"bytes"
	"strconv"
	"strings"
)

// Parent is what the OS says about one process for a walk up the process
// tree: its parent's pid and its executable's name.
type Parent struct {
	// PPID is the parent's pid (0 or 1 at the top of the tree).
	PPID int
	// Name is the executable's name as the OS reports it: the comm of
	// /proc/<pid>/stat on Linux (at most 15 bytes), p_comm on macOS (at
	// most 16), the image file name on Windows ("Runner.Worker.exe").
	Name string
}

// ParentOf returns pid's parent and name. On Windows a parent pid that a
// later process reuses (the parent exited) is reported as no parent
// (PPID 0): that process started after its "child".
func ParentOf(pid int) (Parent, error) { return parentOf(pid) }

// parseStatParent reads the comm (field 2) and the ppid (field 4) of a
// /proc/<pid>/stat line. The comm may itself contain spaces and
// parentheses: it runs from the first '(' to the last ')'.
func parseStatParent(data []byte) (Parent, error) {
	open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return Parent{}, errStat
	}
	fields := strings.Fields(string(data[end+1:]))
	// fields[0] is field 3 (state), fields[1] field 4 (ppid).
	if len(fields) < 2 {
		return Parent{}, errStat
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil || ppid < 0 {
		return Parent{}, errStat
	}
	return Parent{PPID: ppid, Name: string(data[open+1 : end])}, nil
}
