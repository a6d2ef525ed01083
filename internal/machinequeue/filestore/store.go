package filestore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	mq "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue/liveness"
)

// File names inside the machine queue directory.
const (
	StateFile   = "queue.json"
	LockFile    = "queue.lock"
	tempPattern = "queue-*.tmp"
)

// Defaults of Options.
const (
	DefaultPoll         = 250 * time.Millisecond
	DefaultMaxPoll      = 2 * time.Second
	DefaultLockRetry    = 5 * time.Millisecond
	DefaultCancelWindow = 10 * time.Second
)

// Prober proves whether a recorded process still runs (liveness.System in
// production).
type Prober interface {
	Probe(p mq.Process) mq.Verdict
}

// Step is one step boundary of the store: Op is the operation (take,
// poll, release, reclaim, cancel, snapshot), Name the boundary. The crash
// tests kill a process at each one.
type Step struct {
	Op, Name string
}

// Step names, in the order a read-modify-write passes them. A read-only
// poll or snapshot passes "read-locked", "read" and "unlocked"; a
// read-modify-write that changes nothing skips the temp and rename steps.
const (
	StepLocked = "locked"
	// StepReadLocked is the lock of a read-only poll or snapshot.
	StepReadLocked  = "read-locked"
	StepRead        = "read"
	StepDecided     = "decided"
	StepTempCreated = "temp-created"
	StepTempWritten = "temp-written"
	StepTempSynced  = "temp-synced"
	StepRenamed     = "renamed"
	StepUnlocked    = "unlocked"
)

// Options tune a Store. The zero value is the production setting.
type Options struct {
	// Clock tells the time written to the state and paces the polls
	// (clock.Real when nil).
	Clock clock.Clock
	// Prober judges recorded processes (liveness.System when nil).
	Prober Prober
	// Self is the process that waits in Take (recorded as the waiter);
	// liveness.Self() when zero.
	Self mq.Process
	// Poll is the queue head's poll interval, MaxPoll the longest interval
	// of a waiter further back (DefaultPoll, DefaultMaxPoll).
	Poll, MaxPoll time.Duration
	// LockRetry is how often a contended file lock is tried again
	// (DefaultLockRetry). Critical sections last a few milliseconds.
	LockRetry time.Duration
	// CancelWindow bounds the removal of the caller's entry after its
	// context ended (DefaultCancelWindow).
	CancelWindow time.Duration
	// Step, when set, is called at every step boundary (tests).
	Step func(Step)
	// Observe, when set, receives the bytes of queue.json as read under the
	// exclusive lock (nil when it did not exist): every committed state
	// is read by the next writer, so an observer sees them all (tests).
	Observe func(state []byte)
}

// Store is the machine queue in one directory. Its methods may be called
// from several goroutines and processes at once.
type Store struct {
	dir  string
	opts Options
}

// Open returns the store in dir, an absolute path, creating the directory
// (and its parents) when missing.
func Open(dir string, opts Options) (*Store, error) {
	if !filepath.IsAbs(dir) {
		return nil, mq.Errorf(mq.CodeUnavailable, "machine queue directory %q must be an absolute path", dir)
	}
	if err := os.MkdirAll(dir, 0o775); err != nil {
		return nil, unavailable(dir, "create the machine queue directory", err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		if err == nil {
			err = errors.New("not a directory")
		}
		return nil, unavailable(dir, "use the machine queue directory", err)
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Prober == nil {
		opts.Prober = liveness.System{}
	}
	if opts.Self.IsZero() {
		self, err := liveness.Self()
		if err != nil {
			return nil, &mq.Error{Code: mq.CodeUnavailable, Message: "identify this process for the machine queue", Err: err}
		}
		opts.Self = self
	}
	if opts.Poll <= 0 {
		opts.Poll = DefaultPoll
	}
	if opts.MaxPoll < opts.Poll {
		opts.MaxPoll = max(DefaultMaxPoll, opts.Poll)
	}
	if opts.LockRetry <= 0 {
		opts.LockRetry = DefaultLockRetry
	}
	if opts.CancelWindow <= 0 {
		opts.CancelWindow = DefaultCancelWindow
	}
	return &Store{dir: dir, opts: opts}, nil
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

func unavailable(dir, verb string, err error) error {
	return &mq.Error{Code: mq.CodeUnavailable, Message: fmt.Sprintf("%s %s (every runner agent on this machine must be able to create and replace files there; see docs/machine-queue.md)", verb, dir), Err: err}
}

func (s *Store) step(op, name string) {
	if s.opts.Step != nil {
		s.opts.Step(Step{Op: op, Name: name})
	}
}

// evidence probes every process recorded in st (and extra ones); this
// process itself is alive without asking.
func (s *Store) evidence(st *mq.State, extra ...mq.Process) mq.Evidence {
	ev := mq.Evidence{}
	for _, p := range append(mq.Processes(st), extra...) {
		if _, done := ev[p]; done {
			continue
		}
		if p == s.opts.Self {
			ev[p] = mq.VerdictAlive
			continue
		}
		ev[p] = s.opts.Prober.Probe(p)
	}
	return ev
}

func (s *Store) lock() *flock.Flock {
	return flock.New(filepath.Join(s.dir, LockFile), flock.SetFlag(os.O_CREATE|os.O_RDONLY|noFollow), flock.SetPermissions(0o664))
}

// read reads and decodes queue.json; a missing file is the empty state.
func (s *Store) read() (*mq.State, []byte, error) {
	path := filepath.Join(s.dir, StateFile)
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return mq.New(), nil, nil
	}
	if err != nil {
		return nil, nil, unavailable(path, "read", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxStateBytes+1))
	if err != nil {
		return nil, nil, unavailable(path, "read", err)
	}
	if len(data) > maxStateBytes {
		return nil, data, mq.Errorf(mq.CodeCorrupt, "read the machine queue %s: larger than %d bytes", path, maxStateBytes)
	}
	st, err := mq.Decode(data)
	if err != nil {
		var e *mq.Error
		if errors.As(err, &e) && e.Code == mq.CodeCorrupt {
			e.Message += fmt.Sprintf(" (file %s; nothing was written: see docs/machine-queue.md, \"A stuck or corrupt machine queue\")", path)
		}
		return nil, data, err
	}
	return st, data, nil
}

// maxStateBytes bounds queue.json: MaxEntries entries of about 600 bytes.
const maxStateBytes = 1 << 20

// transition is one pure step: the state read, the evidence, now; it
// returns the next state and whether it changed.
type transition func(st *mq.State, ev mq.Evidence, now time.Time) (*mq.State, bool, error)

// update is the read-modify-write under the exclusive lock.
func (s *Store) update(ctx context.Context, op string, fn transition) (err error) {
	lk := s.lock()
	ok, err := lk.TryLockContext(ctx, s.opts.LockRetry)
	if err != nil || !ok {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		return unavailable(filepath.Join(s.dir, LockFile), "lock", err)
	}
	defer func() {
		if uerr := lk.Unlock(); uerr != nil && err == nil {
			err = unavailable(filepath.Join(s.dir, LockFile), "unlock", uerr)
		}
		s.step(op, StepUnlocked)
	}()
	s.step(op, StepLocked)
	s.removeTemps()
	st, raw, err := s.read()
	if s.opts.Observe != nil {
		s.opts.Observe(raw)
	}
	if err != nil {
		return err
	}
	s.step(op, StepRead)
	next, changed, err := fn(st, s.evidence(st), s.opts.Clock.Now())
	if err != nil {
		return err
	}
	s.step(op, StepDecided)
	if !changed {
		return nil
	}
	data, err := mq.Encode(next)
	if err != nil {
		return err
	}
	return s.replace(op, data)
}

// replace writes data to a fresh temp file, syncs it and renames it over
// queue.json.
func (s *Store) replace(op string, data []byte) error {
	f, err := os.CreateTemp(s.dir, tempPattern)
	if err != nil {
		return unavailable(s.dir, "create a temp file in", err)
	}
	tmp := f.Name()
	s.step(op, StepTempCreated)
	fail := func(verb string, err error) error {
		_ = f.Close()
		_ = os.Remove(tmp)
		return unavailable(tmp, verb, err)
	}
	if err := shareMode(f); err != nil {
		return fail("set the mode of", err)
	}
	if _, err := f.Write(data); err != nil {
		return fail("write", err)
	}
	s.step(op, StepTempWritten)
	if err := f.Sync(); err != nil {
		return fail("sync", err)
	}
	s.step(op, StepTempSynced)
	if err := f.Close(); err != nil {
		_ = os.Remove(tmp)
		return unavailable(tmp, "close", err)
	}
	if err := os.Rename(tmp, filepath.Join(s.dir, StateFile)); err != nil {
		_ = os.Remove(tmp)
		return unavailable(filepath.Join(s.dir, StateFile), "replace", err)
	}
	s.step(op, StepRenamed)
	return nil
}

// removeTemps removes temp files a dead writer left. Only called under the
// exclusive lock, when no writer is between CreateTemp and rename.
func (s *Store) removeTemps() {
	left, _ := filepath.Glob(filepath.Join(s.dir, tempPattern))
	for _, p := range left {
		_ = os.Remove(p)
	}
}

// view reads the state under the lock (a waiting poll, a snapshot). It
// takes the exclusive lock, not a shared one: flock and LockFileEx grant a
// new shared lock while a writer waits, so the overlapping reads of many
// waiting pollers left no gap for a writer (80 processes stalled the
// process test); exclusive reads only add up, and each lasts a read of a
// small file.
func (s *Store) view(ctx context.Context, op string) (st *mq.State, err error) {
	lk := s.lock()
	ok, err := lk.TryLockContext(ctx, s.opts.LockRetry)
	if err != nil || !ok {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, unavailable(filepath.Join(s.dir, LockFile), "lock", err)
	}
	defer func() {
		if uerr := lk.Unlock(); uerr != nil && err == nil {
			err = unavailable(filepath.Join(s.dir, LockFile), "unlock", uerr)
		}
		s.step(op, StepUnlocked)
	}()
	s.step(op, StepReadLocked)
	st, _, err = s.read()
	if err != nil {
		return nil, err
	}
	s.step(op, StepRead)
	return st, nil
}

// Snapshot returns the current state.
func (s *Store) Snapshot(ctx context.Context) (*mq.State, error) {
	return s.view(ctx, "snapshot")
}
