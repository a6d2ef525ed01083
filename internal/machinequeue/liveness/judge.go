package liveness

import (
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue"
)

// view is what the OS said about the pid of a recorded process, now.
type view struct {
	// gone: proven that no process has this pid (kill(pid, 0) = ESRCH, or
	// OpenProcess = ERROR_INVALID_PARAMETER).
	gone bool
	// current is the start token of the process that has the pid now; ""
	// when it could not be read (no permission, a race, an I/O error).
	current string
	// exited: that process has ended and waits to be reaped (a zombie, a
	// signalled process handle).
	exited bool
}

// judge is the rule every OS shares: proven gone, or the pid now belongs
// to a process started at another time, or that process exited, is Dead;
// the same start time of a running process is Alive; anything not read is
// Unknown.
func judge(recorded string, v view) machinequeue.Verdict {
	switch {
	case v.gone:
		return machinequeue.VerdictDead
	case v.current == "":
		return machinequeue.VerdictUnknown
	case v.current != recorded:
		return machinequeue.VerdictDead
	case v.exited:
		return machinequeue.VerdictDead
	}
	return machinequeue.VerdictAlive
}

// judgeLinux adds Linux's two qualifiers: a token of another boot is Dead
// (every process of an earlier boot has ended), a token of another pid
// namespace is Unknown (its pids mean other processes here). myBoot "" or
// nsKnown false (unreadable) make every judgement Unknown.
func judgeLinux(recorded, myBoot string, myNS uint64, nsKnown bool, v view) machinequeue.Verdict {
	boot, ns, _, ok := parseLinuxToken(recorded)
	switch {
	case !ok || myBoot == "":
		return machinequeue.VerdictUnknown
	case boot != myBoot:
		return machinequeue.VerdictDead
	case !nsKnown || ns != myNS:
		return machinequeue.VerdictUnknown
	}
	return judge(recorded, v)
}

// judgeOS refuses a token of another OS's format (Unknown: it cannot be a
// process of this machine's OS, but a state copied from elsewhere is not
// proof of anything) before judge.
func judgeOS(prefix, recorded string, v view) machinequeue.Verdict {
	if !strings.HasPrefix(recorded, prefix) {
		return machinequeue.VerdictUnknown
	}
	return judge(recorded, v)
}
