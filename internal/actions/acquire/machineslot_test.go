package acquire_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/acquire"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit/machineslot"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/release"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	mq "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue/filestore"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue/liveness"
)

// machine is one fake build machine: its queue directory and process
// table. Job n's steps are pid 1000+n under its worker, pid 100+n.
type machine struct {
	dir  string
	mu   sync.Mutex
	dead map[mq.Process]bool
	// noWorker: the steps have no Runner.Worker ancestor.
	noWorker bool
}

func newMachine(t *testing.T) *machine {
	return &machine{dir: filepath.Join(t.TempDir(), "machine-queue"), dead: map[mq.Process]bool{}}
}

func (m *machine) ParentOf(pid int) (liveness.Parent, error) {
	switch {
	case pid >= 1000:
		return liveness.Parent{PPID: pid - 900, Name: "acquire"}, nil
	case pid >= 100 && m.noWorker:
		return liveness.Parent{PPID: 1, Name: "bash"}, nil
	case pid >= 100:
		return liveness.Parent{PPID: 1, Name: machineslot.WorkerName}, nil
	}
	return liveness.Parent{}, errors.New("no such process")
}

func (m *machine) Lookup(pid int) (mq.Process, error) {
	return mq.Process{PID: pid, Start: "test:" + strconv.Itoa(pid)}, nil
}

func (m *machine) Probe(p mq.Process) mq.Verdict {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dead[p] {
		return mq.VerdictDead
	}
	return mq.VerdictAlive
}

func (m *machine) kill(pid int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dead[mq.Process{PID: pid, Start: "test:" + strconv.Itoa(pid)}] = true
}

// deps are the step deps of job n of j on m, with machine-slots k.
func (m *machine) deps(j *actiontest.Job, n, k int) acquire.Deps {
	j.Input("machine-slots", strconv.Itoa(k))
	j.Env[machineslot.EnvMachineDir] = m.dir
	d := j.Deps()
	step := 1000 + n
	d.Machine = machineslot.Edges{Tree: m, SelfPID: step, Prober: m, Self: mq.Process{PID: step, Start: "test:" + strconv.Itoa(step)}}
	return d
}

// queue reads the machine queue (the empty queue before the first write).
func (m *machine) queue(t *testing.T) *mq.State {
	t.Helper()
	st, err := filestore.Open(m.dir, filestore.Options{Prober: m, Self: mq.Process{PID: 1, Start: "test:1"}, Clock: clock.Real{}})
	require.NoError(t, err)
	s, err := st.Snapshot(context.Background())
	require.NoError(t, err)
	return s
}

func holds(s *mq.State, holderID string) bool {
	h, _ := mq.Find(s, holderID)
	return h != nil
}

// TestMachineSlotBeforeSeatAndReleaseFreesBoth: a job takes the machine
// slot, then the organization seat, and outputs both waits; the next job
// of the machine waits for the slot without joining the organization
// queue (no license held or queued while it waits for its machine); the
// release step frees the seat, then the slot, handing it on.
func TestMachineSlotBeforeSeatAndReleaseFreesBoth(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":3,"releaseCooldownSeconds":0}`)
		m := newMachine(t)
		a := w.NewJob("a", "agent-1")
		da := m.deps(a, 1, 1)
		require.NoError(t, runDeps(context.Background(), da))
		out := a.Outputs()
		assert.Equal(t, "acquired", out["admission-result"])
		assert.Equal(t, "1", out["machine-slot"])
		assert.Equal(t, "0.000", out["machine-wait-seconds"])
		assert.NotEmpty(t, out["lock-wait-seconds"])
		assert.Len(t, out, 19)
		q := m.queue(t)
		require.Len(t, q.Holders, 1)
		assert.Equal(t, a.HolderID(), q.Holders[0].HolderID)
		assert.Equal(t, mq.Process{PID: 101, Start: "test:101"}, q.Holders[0].Owner, "the owner is the job's worker, not the step")
		assert.Contains(t, a.Summary(), "| Machine slot | 1 of 1")

		b := w.NewJob("b", "agent-2")
		db := m.deps(b, 2, 1)
		done := make(chan error, 1)
		go func() { done <- runDeps(context.Background(), db) }()
		time.Sleep(30 * time.Second)
		synctest.Wait()
		_, pos := mq.Find(m.queue(t), b.HolderID())
		assert.Equal(t, 1, pos, "b waits for the machine")
		s := w.State()
		assert.Equal(t, 0, lockstate.QueuePosition(s, b.HolderID()), "b is not in the organization queue")
		assert.Equal(t, -1, lockstate.HolderIndex(s, b.HolderID()))

		a.ResetFiles()
		ra := a.Deps()
		ra.Machine = da.Machine
		a.Input("resource-cleanup-status", "confirmed")
		ra.Getenv = a.Deps().Getenv
		require.NoError(t, release.Run(context.Background(), ra))
		assert.Contains(t, a.Out.String(), "Machine slot of "+a.HolderID()+": released.")
		require.NoError(t, <-done)
		bo := b.Outputs()
		assert.Equal(t, "acquired", bo["admission-result"])
		assert.Equal(t, "1", bo["machine-slot"])
		wait, err := strconv.ParseFloat(bo["machine-wait-seconds"], 64)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, wait, 30.0)
		q = m.queue(t)
		require.Len(t, q.Holders, 1)
		assert.Equal(t, b.HolderID(), q.Holders[0].HolderID)
		assert.Equal(t, -1, lockstate.HolderIndex(w.State(), a.HolderID()))
		_, ok, _ := machineslot.ReadMarker(a.Env["RUNNER_TEMP"], targetOf(), a.HolderID())
		assert.False(t, ok, "a's marker is gone")
	})
}

// targetOf is the target of the test lock (for marker reads).
func targetOf() lockaction.Target {
	return lockaction.Target{Owner: actiontest.Owner, Repo: actiontest.LockRepo, Lock: actiontest.Lock}
}

// TestMachineSlotFreedWhenTheOrganizationWaitFails: a job that took its
// slot and then timed out in the organization queue leaves neither a queue
// entry nor its slot; acquired=false outputs no slot.
func TestMachineSlotFreedWhenTheOrganizationWaitFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		m := newMachine(t)
		holder := w.NewJob("holder", "elsewhere")
		require.NoError(t, run(context.Background(), holder))
		b := w.NewJob("b", "agent-1").Input("timeout-minutes", "1")
		d := m.deps(b, 1, 2)
		err := runDeps(context.Background(), d)
		require.Error(t, err)
		out := b.Outputs()
		assert.Equal(t, "timeout", out["admission-result"])
		assert.Equal(t, "", out["machine-slot"], "a failed acquire holds no slot")
		assert.Equal(t, "0.000", out["machine-wait-seconds"])
		assert.NotEmpty(t, out["lock-wait-seconds"])
		assert.Empty(t, m.queue(t).Holders, "the slot was freed before exit")
		assert.Empty(t, m.queue(t).Queue)
		assert.Equal(t, 0, lockstate.QueuePosition(w.State(), b.HolderID()))
		assert.Contains(t, b.Out.String(), "Freed machine slot 1 after the failed acquire.")
	})
}

// TestMachineSlotWaitCancelledOrTimedOut: a job cancelled (or timed out)
// while it waits for its machine leaves the machine queue and never
// touched the organization lock.
func TestMachineSlotWaitCancelledOrTimedOut(t *testing.T) {
	for _, mode := range []string{"cancelled", "timeout"} {
		t.Run(mode, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := actiontest.NewWorld(t, `{"maxHolders":3}`)
				m := newMachine(t)
				a := w.NewJob("a", "agent-1")
				require.NoError(t, runDeps(context.Background(), m.deps(a, 1, 1)))
				versions := w.Versions()
				b := w.NewJob("b", "agent-2").Input("timeout-minutes", "1")
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				done := make(chan error, 1)
				go func() { done <- runDeps(ctx, m.deps(b, 2, 1)) }()
				time.Sleep(10 * time.Second)
				synctest.Wait()
				if mode == "cancelled" {
					cancel()
				}
				require.Error(t, <-done)
				assertNotAcquired(t, b, mode)
				assert.NotEmpty(t, b.Outputs()["machine-wait-seconds"])
				q := m.queue(t)
				assert.Empty(t, q.Queue, "b left the machine queue")
				require.Len(t, q.Holders, 1)
				assert.Equal(t, versions, w.Versions(), "b never wrote the organization lock")
			})
		})
	}
}

// TestMachineSlotOwnerUnavailableWritesNothing: no Runner.Worker ancestor
// (a container job, a local run) is refused before any request or write.
func TestMachineSlotOwnerUnavailableWritesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":3}`)
		m := newMachine(t)
		m.noWorker = true
		j := w.NewJob("a", "agent-1")
		err := runDeps(context.Background(), m.deps(j, 1, 2))
		require.Error(t, err)
		assertNotAcquired(t, j, machineslot.CodeOwnerUnavailable)
		assert.Equal(t, 0, w.Versions())
		_, serr := os.Stat(m.dir)
		assert.True(t, errors.Is(serr, os.ErrNotExist), "the machine queue directory was not even created")
	})
}

// TestMachineSlotOfADeadWorkerIsReclaimed: a job whose worker died (the
// runner lost the job) holds its slot only until the next writer proves
// the worker dead.
func TestMachineSlotOfADeadWorkerIsReclaimed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":3}`)
		m := newMachine(t)
		a := w.NewJob("a", "agent-1")
		require.NoError(t, runDeps(context.Background(), m.deps(a, 1, 1)))
		m.kill(101)
		b := w.NewJob("b", "agent-2")
		require.NoError(t, runDeps(context.Background(), m.deps(b, 2, 1)))
		assert.Equal(t, "0.000", b.Outputs()["machine-wait-seconds"])
		q := m.queue(t)
		require.Len(t, q.Holders, 1)
		assert.Equal(t, b.HolderID(), q.Holders[0].HolderID)
	})
}

// TestPostStepFreesSeatThenSlot: the with-cleanup post step removes the
// organization seat, then frees the machine slot.
func TestPostStepFreesSeatThenSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":3}`)
		m := newMachine(t)
		j := w.NewJob("a", "agent-1")
		j.Env["BUILD_LOCK_MODE"] = acquire.ModeAcquireWithCleanup
		require.NoError(t, runDeps(context.Background(), m.deps(j, 1, 2)))
		require.True(t, holds(m.queue(t), j.HolderID()))
		saved := j.Saved()
		require.Equal(t, "enabled", saved[acquire.StateCleanup])
		j.Env["BUILD_LOCK_MODE"] = acquire.ModePostCleanup
		j.Env["STATE_"+acquire.StateCleanup] = "enabled"
		require.NoError(t, runDeps(context.Background(), m.deps(j, 1, 2)))
		assert.Equal(t, -1, lockstate.HolderIndex(w.State(), j.HolderID()))
		assert.False(t, holds(m.queue(t), j.HolderID()), "the post step freed the slot")
		assert.Contains(t, j.Out.String(), "Build-lock post cleanup: machine slot released.")
	})
}

// TestMachineSlotKeptWhileTheAdmissionIsUnknown: when acquire cannot tell
// whether its admission landed (admission-unknown), the organization may
// record the job as a holder, so acquire keeps the machine slot; the
// always() release step removes the admission, then frees the slot.
func TestMachineSlotKeptWhileTheAdmissionIsUnknown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		w.SeedState(emptyState())
		m := newMachine(t)
		w.Em.AddFault(emulator.Fault{Method: "PUT", Kind: emulator.WriteAcceptedResponseLost, Count: 1})
		w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: statePathPattern, Kind: emulator.ServerError, Status: 502, Skip: 1})
		j := w.NewJob("build", "agent-1").Input("timeout-minutes", "10")
		d := m.deps(j, 1, 1)
		require.Error(t, runDeps(context.Background(), d))
		out := j.Outputs()
		assert.Equal(t, "admission-unknown", out["admission-result"])
		assert.Equal(t, "", out["machine-slot"])
		require.Len(t, w.State().Holders, 1, "the write landed")
		assert.True(t, holds(m.queue(t), j.HolderID()), "the slot is kept while the organization may record the job")
		assert.Contains(t, j.Out.String(), "Keeping machine slot 1 for the release step")

		w.Em.ClearFaults()
		j.ResetFiles()
		j.Input("resource-cleanup-status", "confirmed")
		rd := j.Deps()
		rd.Machine = d.Machine
		require.NoError(t, release.Run(context.Background(), rd))
		assert.Empty(t, w.State().Holders)
		assert.False(t, holds(m.queue(t), j.HolderID()), "release freed the slot after the seat")
	})
}
