package machineslot

import (
	"fmt"
	"strconv"
	"strings"

	mq "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue/liveness"
)

// CodeOwnerUnavailable is the reason code of an acquire with machine-slots
// that found no Runner.Worker ancestor to own its slot.
const CodeOwnerUnavailable = "machine-slot-owner-unavailable"

// WorkerName is the executable name of the GitHub runner's per-job worker
// process (Runner.Worker.exe on Windows).
const WorkerName = "Runner.Worker"

// MaxAncestors bounds the walk up the process tree.
const MaxAncestors = 32

// Tree is the process table the owner rule reads: liveness in production,
// a fake in tests.
type Tree interface {
	// ParentOf returns pid's parent pid and executable name.
	ParentOf(pid int) (liveness.Parent, error)
	// Lookup returns the running process pid with its start time.
	Lookup(pid int) (mq.Process, error)
}

// OSTree is the process table of this machine (liveness).
type OSTree struct{}

// ParentOf is liveness.ParentOf.
func (OSTree) ParentOf(pid int) (liveness.Parent, error) { return liveness.ParentOf(pid) }

// Lookup is liveness.Lookup.
func (OSTree) Lookup(pid int) (mq.Process, error) { return liveness.Lookup(pid) }

// IsWorker reports whether an executable name is the runner's worker:
// Runner.Worker, or Runner.Worker.exe in any case (Windows names are case
// insensitive).
func IsWorker(name string) bool {
	return name == WorkerName || strings.EqualFold(name, WorkerName+".exe")
}

// FindOwner walks up from process self (this step) to the nearest ancestor
// named Runner.Worker and returns it with its start time. It refuses with
// CodeOwnerUnavailable when the walk reaches the top of the tree (pid 0 or
// 1), fails to read a process, or passes MaxAncestors processes first.
func FindOwner(t Tree, self int) (mq.Process, error) {
	pid := self
	var seen []string
	for range MaxAncestors {
		p, err := t.ParentOf(pid)
		if err != nil {
			return mq.Process{}, ownerUnavailable(seen, err)
		}
		if p.PPID <= 1 || p.PPID == pid {
			return mq.Process{}, ownerUnavailable(seen, nil)
		}
		pid = p.PPID
		parent, err := t.ParentOf(pid)
		if err != nil {
			return mq.Process{}, ownerUnavailable(seen, err)
		}
		seen = append(seen, strconv.Quote(parent.Name))
		if !IsWorker(parent.Name) {
			continue
		}
		owner, err := t.Lookup(pid)
		if err != nil {
			return mq.Process{}, ownerUnavailable(seen, err)
		}
		return owner, nil
	}
	return mq.Process{}, ownerUnavailable(seen, fmt.Errorf("no %s within %d ancestors", WorkerName, MaxAncestors))
}

func ownerUnavailable(seen []string, cause error) error {
	chain := "none"
	if len(seen) > 0 {
		chain = strings.Join(seen, " < ")
	}
	return &Error{Code: CodeOwnerUnavailable, Err: cause, Message: fmt.Sprintf(
		"machine-slots needs the job's %s process to own the machine slot, and no ancestor of this step is one (ancestors: %s); a container job cannot see it and a local run has none. Nothing was written (docs/machine-queue.md, \"The owner\")",
		WorkerName, chain)}
}
