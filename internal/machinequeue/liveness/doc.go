// Package liveness is the OS layer of the machine queue: it names a process
// for its whole life (pid plus an OS-specific token of its start time) and
// proves, later and from another process, whether that process still runs.
// A pid reused by a later process has another start time and is judged
// dead, never taken for the recorded one.
//
// Per OS (build tags):
//
//   - Linux: the start time is field 22 of /proc/<pid>/stat (clock ticks
//     since boot), qualified by the boot id (/proc/sys/kernel/random/boot_id:
//     a process of an earlier boot is dead) and the pid namespace
//     (/proc/self/ns/pid: a pid of another namespace, such as another
//     container sharing the machine directory, cannot be judged and is
//     Unknown, never Dead). A missing /proc/<pid> is Dead only when
//     kill(pid, 0) also answers ESRCH (hidepid mounts hide other users'
//     processes). A zombie (state Z or X) has exited: Dead.
//   - macOS: sysctl kern.proc.pid.<pid> (kinfo_proc: p_starttime, p_stat);
//     a missing process is Dead when kill(pid, 0) answers ESRCH; SZOMB is
//     Dead.
//   - Windows: OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION | SYNCHRONIZE)
//     and GetProcessTimes' creation time; ERROR_INVALID_PARAMETER (no such
//     pid) is Dead, ERROR_ACCESS_DENIED Unknown, a signalled process handle
//     (the process exited while someone keeps a handle) Dead.
//   - Anything else: Lookup fails and Probe says Unknown, so nothing is
//     ever reclaimed there.
//
// The token parsers and the judgement rules are pure and tested on every
// OS; the macOS and Windows calls compile in make cross but run only on
// those systems (docs/machine-queue.md lists them).
package liveness

import "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue"

// System probes processes of this machine with the OS calls above. It is
// the production filestore.Prober.
type System struct{}

// Probe tells whether p still runs: VerdictAlive, VerdictDead (proven gone)
// or VerdictUnknown (cannot tell; the queue keeps its entry).
func (System) Probe(p machinequeue.Process) machinequeue.Verdict {
	if p.PID <= 0 {
		return machinequeue.VerdictUnknown
	}
	return probe(p)
}

// Self returns the calling process.
func Self() (machinequeue.Process, error) { return self() }

// Lookup returns the running process pid (for example a runner's worker
// process whose life should bound a slot). It fails for a pid that does
// not run or has exited.
func Lookup(pid int) (machinequeue.Process, error) { return lookup(pid) }
