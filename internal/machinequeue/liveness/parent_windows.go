//go:build windows

package liveness

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"
)

// parentOf walks a Toolhelp snapshot (CreateToolhelp32Snapshot,
// Process32First/Next) for pid's entry: th32ParentProcessID and szExeFile.
// Windows never re-parents: the recorded parent pid may belong to a later
// process once the parent exited, so a "parent" created after pid is no
// parent (PPID 0).
func parentOf(pid int) (Parent, error) {
	if pid <= 0 {
		return Parent{}, fmt.Errorf("read the parent of process %d: not a pid", pid)
	}
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return Parent{}, fmt.Errorf("read the parent of process %d: %w", pid, err)
	}
	defer windows.CloseHandle(snap)
	var e windows.ProcessEntry32
	e.Size = uint32(unsafe.Sizeof(e))
	for err = windows.Process32First(snap, &e); err == nil; err = windows.Process32Next(snap, &e) {
		if int(e.ProcessID) != pid {
			continue
		}
		p := Parent{PPID: int(e.ParentProcessID), Name: windows.UTF16ToString(e.ExeFile[:])}
		if p.PPID > 0 && !startedBefore(p.PPID, pid) {
			p.PPID = 0
		}
		return p, nil
	}
	if errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return Parent{}, fmt.Errorf("read the parent of process %d: no such process", pid)
	}
	return Parent{}, fmt.Errorf("read the parent of process %d: %w", pid, err)
}

// startedBefore reports whether process parent was created no later than
// child (false when either cannot be read).
func startedBefore(parent, child int) bool {
	pp, err1 := lookup(parent)
	cp, err2 := lookup(child)
	if err1 != nil || err2 != nil {
		return false
	}
	pt, err1 := strconv.ParseUint(strings.TrimPrefix(pp.Start, "windows:"), 10, 64)
	ct, err2 := strconv.ParseUint(strings.TrimPrefix(cp.Start, "windows:"), 10, 64)
	return err1 == nil && err2 == nil && pt <= ct
}
