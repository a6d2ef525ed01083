package liveness

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The start-time tokens, one format per OS. Each is printable ASCII without
// spaces, at most machinequeue.MaxStartBytes long.

// linuxToken is "linux:<boot id>:<pid namespace inode>:<start ticks>".
func linuxToken(bootID string, pidNS, ticks uint64) string {
	return "linux:" + bootID + ":" + strconv.FormatUint(pidNS, 10) + ":" + strconv.FormatUint(ticks, 10)
}

func parseLinuxToken(s string) (bootID string, pidNS, ticks uint64, ok bool) {
	parts := strings.Split(s, ":")
	if len(parts) != 4 || parts[0] != "linux" || !validBootID(parts[1]) {
		return "", 0, 0, false
	}
	ns, err1 := strconv.ParseUint(parts[2], 10, 64)
	t, err2 := strconv.ParseUint(parts[3], 10, 64)
	if err1 != nil || err2 != nil || strconv.FormatUint(ns, 10) != parts[2] || strconv.FormatUint(t, 10) != parts[3] {
		return "", 0, 0, false
	}
	return parts[1], ns, t, true
}

// validBootID accepts the kernel's boot id: a UUID of lowercase hex.
func validBootID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
		default:
			return false
		}
	}
	return true
}

// darwinToken is "darwin:<seconds>.<microseconds>" of kinfo_proc.p_starttime.
func darwinToken(sec, usec int64) string {
	return fmt.Sprintf("darwin:%d.%06d", sec, usec)
}

// windowsToken is "windows:<creation FILETIME>" (100 ns since 1601).
func windowsToken(filetime uint64) string {
	return "windows:" + strconv.FormatUint(filetime, 10)
}

// procStat is what the queue needs from /proc/<pid>/stat.
type procStat struct {
	// State is field 3 (R, S, D, Z, T, t, X, ...).
	State byte
	// StartTicks is field 22: start time in clock ticks after boot.
	StartTicks uint64
}

// exited reports a process that has ended and only waits to be reaped.
func (s procStat) exited() bool { return s.State == 'Z' || s.State == 'X' || s.State == 'x' }

var errStat = errors.New("malformed /proc/<pid>/stat")

// parseProcStat reads /proc/<pid>/stat. The command name (field 2) is in
// parentheses and may itself contain spaces and parentheses, so the fields
// are counted after the last ')'.
func parseProcStat(data []byte) (procStat, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || bytes.IndexByte(data, '(') < 0 || bytes.IndexByte(data, '(') > i {
		return procStat{}, errStat
	}
	fields := strings.Fields(string(data[i+1:]))
	// fields[0] is field 3 (state), so field n is fields[n-3].
	if len(fields) < 20 || len(fields[0]) != 1 {
		return procStat{}, errStat
	}
	ticks, err := strconv.ParseUint(fields[22-3], 10, 64)
	if err != nil {
		return procStat{}, errStat
	}
	return procStat{State: fields[0][0], StartTicks: ticks}, nil
}

// parseNamespaceLink reads the inode of a /proc/<pid>/ns/pid link target
// ("pid:[4026531836]").
func parseNamespaceLink(target string) (uint64, bool) {
	rest, ok := strings.CutPrefix(target, "pid:[")
	if !ok {
		return 0, false
	}
	digits, ok := strings.CutSuffix(rest, "]")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	return n, err == nil && strconv.FormatUint(n, 10) == digits
}
