package machineslot

import (
	"context"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	mq "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue/filestore"
)

// FreeWindow bounds the release of a slot after the job's context ended
// (a cancelled acquire, a release step inside the runner's signal window):
// one read-modify-write of a small local file.
const FreeWindow = 10 * time.Second

// Edges are the OS edges of the machine queue, injected by tests (the zero
// value is production: this process, the OS process table, liveness).
type Edges struct {
	// Tree is the process table the owner rule walks (OSTree when nil).
	Tree Tree
	// SelfPID is this process's pid, where the walk starts (os.Getpid()
	// when 0).
	SelfPID int
	// Prober judges recorded processes (liveness.System when nil); Self
	// is the waiting process recorded in the queue (liveness.Self() when
	// zero).
	Prober filestore.Prober
	Self   mq.Process
	// Poll overrides filestore.DefaultPoll (tests).
	Poll time.Duration
	// Observe receives every committed queue.json a writer of this process
	// read under the lock (tests, bench).
	Observe func([]byte)
	// Step is called at every step boundary of the store (bench: it counts
	// the file operations).
	Step func(filestore.Step)
}

// TreeOrOS returns the process table to walk.
func (e Edges) TreeOrOS() Tree {
	if e.Tree == nil {
		return OSTree{}
	}
	return e.Tree
}

// Open opens the machine queue in dir with these edges and clock c.
func (e Edges) Open(dir string, c clock.Clock) (*filestore.Store, error) {
	return filestore.Open(dir, filestore.Options{Clock: c, Prober: e.Prober, Self: e.Self, Poll: e.Poll, Observe: e.Observe, Step: e.Step})
}

// Freed is what Free did.
type Freed struct {
	// Found: this job's acquire left a marker (it joined the machine queue).
	Found bool
	// Marker is that marker.
	Marker Marker
	// Decision is the machine queue's release decision.
	Decision mq.ReleaseDecision
}

// Free releases the machine slot (or queue entry) of holderID on t named
// by its marker, then removes the marker. No marker is nothing to do (the
// job did not use machine-slots, or a local run). A release that finds
// nothing (the slot was already freed, or reclaimed) still removes the
// marker. The work runs on a context that survives ctx's end for at most
// FreeWindow.
func Free(ctx context.Context, runnerTemp string, t lockaction.Target, holderID string, e Edges, c clock.Clock) (Freed, error) {
	m, ok, err := ReadMarker(runnerTemp, t, holderID)
	if err != nil || !ok {
		return Freed{}, err
	}
	f := Freed{Found: true, Marker: m}
	st, err := e.Open(m.Dir, c)
	if err != nil {
		return f, err
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), FreeWindow)
	defer cancel()
	if f.Decision, err = st.Release(cctx, holderID, m.Owner); err != nil {
		return f, err
	}
	return f, RemoveMarker(runnerTemp, t, holderID)
}
