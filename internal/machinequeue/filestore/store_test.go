package filestore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	mq "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fakeProber answers from a table: alive unless marked otherwise.
type fakeProber struct {
	mu sync.Mutex
	v  map[mq.Process]mq.Verdict
}

func (f *fakeProber) Probe(p mq.Process) mq.Verdict {
	f.mu.Lock()
	defer f.mu.Unlock()
	if v, ok := f.v[p]; ok {
		return v
	}
	return mq.VerdictAlive
}

func (f *fakeProber) set(p mq.Process, v mq.Verdict) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.v == nil {
		f.v = map[mq.Process]mq.Verdict{}
	}
	f.v[p] = v
}

func fp(pid int) mq.Process { return mq.Process{PID: pid, Start: "fake:" + strconv.Itoa(pid)} }

// world is one directory with a shared fake clock and prober; each store
// plays one process.
type world struct {
	t      *testing.T
	dir    string
	clk    *clock.Fake
	prober *fakeProber
}

func newWorld(t *testing.T) *world {
	return &world{t: t, dir: t.TempDir(), clk: clock.NewFake(t0), prober: &fakeProber{}}
}

func (w *world) store(self int, step func(Step)) *Store {
	s, err := Open(w.dir, Options{Clock: w.clk, Prober: w.prober, Self: fp(self), Poll: time.Second, MaxPoll: 4 * time.Second, Step: step})
	require.NoError(w.t, err)
	return s
}

func (w *world) state() *mq.State {
	data, err := os.ReadFile(filepath.Join(w.dir, StateFile))
	require.NoError(w.t, err)
	st, err := mq.Decode(data)
	require.NoError(w.t, err)
	return st
}

func req(id string, k, owner int) Request { return Request{HolderID: id, Slots: k, Owner: fp(owner)} }

func TestTakeAndRelease(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := w.store(1001, nil)
	g, err := a.Take(context.Background(), req("a", 2, 1))
	require.NoError(t, err)
	assert.Equal(t, Grant{Slot: 1, Slots: 2, QueuedAt: t0, AdmittedAt: t0}, g)
	g, err = a.Take(context.Background(), req("a", 2, 1))
	require.NoError(t, err)
	assert.True(t, g.AlreadyHeld)
	assert.Equal(t, 1, g.Slot)

	b := w.store(1002, nil)
	g, err = b.Take(context.Background(), req("b", 2, 2))
	require.NoError(t, err)
	assert.Equal(t, 2, g.Slot)

	st := w.state()
	require.Len(t, st.Holders, 2)
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(filepath.Join(w.dir, StateFile))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o664), fi.Mode().Perm(), "readable by every runner account of the directory's group")
	}

	dec, err := a.Release(context.Background(), "a", fp(1))
	require.NoError(t, err)
	assert.Equal(t, mq.ReleaseFreed, dec.Outcome)
	dec, err = a.Release(context.Background(), "a", fp(1))
	require.NoError(t, err)
	assert.Equal(t, mq.ReleaseNotFound, dec.Outcome)
	_, err = a.Release(context.Background(), "b", fp(1))
	assert.Equal(t, mq.CodeHolderConflict, mq.CodeOf(err), "another owner's slot")
	assert.Len(t, w.state().Holders, 1)
}

// TestWaitingPollsWriteNothing: a waiter polls read-only, is handed the
// slot by the holder's release and returns the wait recorded in the state.
func TestWaitingPollsWriteNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	holder := w.store(1001, nil)
	_, err := holder.Take(context.Background(), req("h", 1, 1))
	require.NoError(t, err)

	var writes, polls int
	var releaseErr error
	waiter := w.store(1002, func(s Step) {
		switch {
		case s.Name == StepRenamed:
			writes++
		case s.Op == "poll" && s.Name == StepUnlocked:
			polls++
			if polls == 3 {
				w.clk.Advance(500 * time.Millisecond)
				_, releaseErr = holder.Release(context.Background(), "h", fp(1))
			}
		}
	})
	g, err := waiter.Take(context.Background(), req("w", 1, 2))
	require.NoError(t, err)
	require.NoError(t, releaseErr)
	assert.Equal(t, 1, writes, "only the join is written; the handoff is the holder's write")
	assert.Equal(t, 4, polls, "the fourth poll sees the handoff")
	assert.Equal(t, 1, g.Position)
	assert.Equal(t, 1, g.Slot)
	assert.Equal(t, t0, g.QueuedAt)
	// Three polls of 1 s passed before the release, plus 500 ms.
	assert.Equal(t, 3500*time.Millisecond, g.Waited)
	assert.Equal(t, []time.Duration{time.Second, time.Second, time.Second, time.Second}, w.clk.Sleeps())
}

func TestPollIntervalsArePositionAware(t *testing.T) {
	t.Parallel()
	s := &Store{opts: Options{Poll: time.Second, MaxPoll: 4 * time.Second}}
	var got []time.Duration
	for p := 1; p <= 6; p++ {
		got = append(got, s.interval(p))
	}
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second, 4 * time.Second, 4 * time.Second}, got)
}

func TestDeadHolderIsReclaimedByAWaiter(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	_, err := w.store(1001, nil).Take(context.Background(), req("h", 1, 1))
	require.NoError(t, err)
	polls := 0
	var reclaimed []string
	waiter := w.store(1002, func(s Step) {
		if s.Op == "poll" && s.Name == StepUnlocked {
			polls++
			if polls == 2 {
				// The holder's job process dies.
				w.prober.set(fp(1), mq.VerdictDead)
			}
		}
	})
	g, err := waiter.Take(context.Background(), req("w", 1, 2))
	require.NoError(t, err)
	assert.Equal(t, 1, g.Slot)
	st := w.state()
	for _, h := range st.Holders {
		reclaimed = append(reclaimed, h.HolderID)
	}
	assert.Equal(t, []string{"w"}, reclaimed)
}

func TestUnknownLivenessKeepsTheHolder(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	_, err := w.store(1001, nil).Take(context.Background(), req("h", 1, 1))
	require.NoError(t, err)
	w.prober.set(fp(1), mq.VerdictUnknown)
	ctx, cancel := context.WithCancel(context.Background())
	polls := 0
	waiter := w.store(1002, func(s Step) {
		if s.Op == "poll" && s.Name == StepUnlocked {
			if polls++; polls == 5 {
				cancel()
			}
		}
	})
	_, err = waiter.Take(ctx, req("w", 1, 2))
	assert.Equal(t, mq.CodeCancelled, mq.CodeOf(err))
	st := w.state()
	require.Len(t, st.Holders, 1)
	assert.Equal(t, "h", st.Holders[0].HolderID)
	assert.Empty(t, st.Queue, "the cancelled waiter removed its entry")
}

func TestCancellationRemovesTheEntry(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	_, err := w.store(1001, nil).Take(context.Background(), req("h", 1, 1))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	waiter := w.store(1002, func(s Step) {
		if s.Op == "poll" && s.Name == StepUnlocked {
			cancel()
		}
	})
	_, err = waiter.Take(ctx, req("w", 1, 2))
	require.Error(t, err)
	assert.Equal(t, mq.CodeCancelled, mq.CodeOf(err))
	assert.True(t, errors.Is(err, context.Canceled))
	var reasoned interface{ ReasonCode() string }
	require.ErrorAs(t, err, &reasoned)
	assert.Equal(t, "machine-queue-cancelled", reasoned.ReasonCode())
	assert.Empty(t, w.state().Queue)

	// Cancelled before joining: nothing is written.
	done, cancel2 := context.WithCancel(context.Background())
	cancel2()
	_, err = waiter.Take(done, req("x", 1, 3))
	assert.Equal(t, mq.CodeCancelled, mq.CodeOf(err))
	assert.Empty(t, w.state().Queue)
}

func TestCancellationAfterAdmissionFreesTheSlot(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	holder := w.store(1001, nil)
	_, err := holder.Take(context.Background(), req("h", 1, 1))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	polls := 0
	waiter := w.store(1002, func(s Step) {
		if s.Op == "poll" && s.Name == StepUnlocked {
			if polls++; polls == 1 {
				// The slot is handed over and the job is cancelled before
				// its next poll notices.
				_, err := holder.Release(context.Background(), "h", fp(1))
				assert.NoError(t, err)
				cancel()
			}
		}
	})
	_, err = waiter.Take(ctx, req("w", 1, 2))
	assert.Equal(t, mq.CodeCancelled, mq.CodeOf(err))
	st := w.state()
	assert.Empty(t, st.Holders, "the slot taken at the cancellation is freed")
	assert.Empty(t, st.Queue)
}

func TestEntryRemovedWhileWaiting(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	_, err := w.store(1001, nil).Take(context.Background(), req("h", 1, 1))
	require.NoError(t, err)
	other := w.store(1003, nil)
	waiter := w.store(1002, func(s Step) {
		if s.Op == "poll" && s.Name == StepUnlocked {
			// The job's release step runs while its acquire still waits.
			_, err := other.Release(context.Background(), "w", fp(2))
			assert.NoError(t, err)
		}
	})
	_, err = waiter.Take(context.Background(), req("w", 1, 2))
	assert.Equal(t, mq.CodeEntryRemoved, mq.CodeOf(err))
	assert.Empty(t, w.state().Queue)
}

func TestRefusalsChangeNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := w.store(1001, nil)
	_, err := s.Take(context.Background(), req("h", 1, 1))
	require.NoError(t, err)
	before, err := os.ReadFile(filepath.Join(w.dir, StateFile))
	require.NoError(t, err)

	_, err = s.Take(context.Background(), req("h", 1, 9))
	assert.Equal(t, mq.CodeHolderConflict, mq.CodeOf(err))
	_, err = s.Take(context.Background(), req("x", 65, 9))
	assert.Equal(t, mq.CodeInvalidRequest, mq.CodeOf(err))
	w.prober.set(fp(7), mq.VerdictDead)
	_, err = s.Take(context.Background(), req("x", 1, 7))
	assert.Equal(t, mq.CodeOwnerDead, mq.CodeOf(err), "an owner that already exited")

	after, err := os.ReadFile(filepath.Join(w.dir, StateFile))
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))
}

func TestCorruptStateIsRefusedAndKept(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	path := filepath.Join(w.dir, StateFile)
	require.NoError(t, os.WriteFile(path, []byte(`{"format":"buildlock-machine-queue","version":1,"holders":[],"queue":[],"x":1}`), 0o644))
	s := w.store(1001, nil)
	_, err := s.Take(context.Background(), req("a", 1, 1))
	require.Error(t, err)
	assert.Equal(t, mq.CodeCorrupt, mq.CodeOf(err))
	assert.Contains(t, err.Error(), path)
	assert.Contains(t, err.Error(), "docs/machine-queue.md")
	_, err = s.Snapshot(context.Background())
	assert.Equal(t, mq.CodeCorrupt, mq.CodeOf(err))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"x":1`, "a refused file is never rewritten")

	require.NoError(t, os.WriteFile(path, []byte(`{"format":"buildlock-machine-queue","version":2}`), 0o644))
	_, err = s.Release(context.Background(), "a", fp(1))
	assert.Equal(t, mq.CodeNewerFormat, mq.CodeOf(err))
}

func TestLeftoverTempFilesAreRemoved(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	left := filepath.Join(w.dir, "queue-123.tmp")
	require.NoError(t, os.WriteFile(left, []byte(`{"torn`), 0o600))
	_, err := w.store(1001, nil).Take(context.Background(), req("a", 1, 1))
	require.NoError(t, err)
	_, err = os.Stat(left)
	assert.True(t, errors.Is(err, os.ErrNotExist))
	names, err := filepath.Glob(filepath.Join(w.dir, "*"))
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{filepath.Join(w.dir, LockFile), filepath.Join(w.dir, StateFile)}, names)
}

func TestOpen(t *testing.T) {
	t.Parallel()
	_, err := Open("relative/dir", Options{Self: fp(1)})
	assert.Equal(t, mq.CodeUnavailable, mq.CodeOf(err))
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	_, err = Open(file, Options{Self: fp(1)})
	assert.Equal(t, mq.CodeUnavailable, mq.CodeOf(err))
	nested := filepath.Join(t.TempDir(), "a", "b")
	s, err := Open(nested, Options{})
	require.NoError(t, err)
	assert.Equal(t, nested, s.Dir())
	assert.Positive(t, s.opts.Self.PID, "Self defaults to this process")
	st, err := s.Snapshot(context.Background())
	require.NoError(t, err)
	assert.Equal(t, mq.New(), st, "no file is the empty queue")
}

func TestSymlinkedStateIsNotFollowed(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("O_NOFOLLOW is a Unix flag")
	}
	w := newWorld(t)
	target := filepath.Join(t.TempDir(), "elsewhere.json")
	data, err := mq.Encode(mq.New())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(target, data, 0o644))
	require.NoError(t, os.Symlink(target, filepath.Join(w.dir, StateFile)))
	_, err = w.store(1001, nil).Take(context.Background(), req("a", 1, 1))
	assert.Equal(t, mq.CodeUnavailable, mq.CodeOf(err))
}

func TestDefaultDir(t *testing.T) {
	t.Parallel()
	assert.Equal(t, `D:\PD\buildlock\machine-queue`, DefaultDir("windows", `D:\PD`))
	assert.Equal(t, `C:\ProgramData\buildlock\machine-queue`, DefaultDir("windows", ""))
	assert.Equal(t, "/Users/Shared/buildlock/machine-queue", DefaultDir("darwin", "x"))
	assert.Equal(t, "/var/lib/buildlock/machine-queue", DefaultDir("linux", ""))
}
