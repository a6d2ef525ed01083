package filestore

import (
	"context"
	"errors"
	"fmt"
	"time"

	mq "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue"
)

// Request asks Take for a slot.
type Request struct {
	// HolderID names the job (unique per job on the machine).
	HolderID string
	// Slots is K, 1..64: the machine runs at most K such jobs at once.
	Slots int
	// Owner is the process whose life bounds the slot: a job's long-lived
	// process (the runner's worker), not a step that exits after Take.
	// liveness.Lookup gives it from a pid.
	Owner mq.Process
}

// Grant is a held slot: what a later action outputs.
type Grant struct {
	// Slot is the slot number, 1..Slots.
	Slot, Slots int
	// QueuedAt is when the job joined the queue, AdmittedAt when it was
	// given the slot (from the state, so a handoff by another process's
	// write is timed when it happened, not when this poll noticed it).
	QueuedAt, AdmittedAt time.Time
	// Waited is AdmittedAt − QueuedAt.
	Waited time.Duration
	// Position is the queue position at joining (0: admitted at once).
	Position int
	// AlreadyHeld is true when the job held the slot before this Take.
	AlreadyHeld bool
}

func grantOf(h *mq.Holder, position int, already bool) Grant {
	q, _ := mq.ParseTime(h.QueuedAt)
	a, _ := mq.ParseTime(h.AdmittedAt)
	return Grant{Slot: h.Slot, Slots: h.Slots, QueuedAt: q, AdmittedAt: a, Waited: a.Sub(q), Position: position, AlreadyHeld: already}
}

// Take waits, FIFO across every process using the directory, until the
// job holds one of req.Slots slots, and returns the grant. When ctx ends
// first, the job's entry is removed again (see the package comment) and
// the error has CodeCancelled and wraps ctx.Err(). Refusals of the pure
// core (machinequeue codes) change nothing.
func (s *Store) Take(ctx context.Context, req Request) (Grant, error) {
	if err := ctx.Err(); err != nil {
		return Grant{}, &mq.Error{Code: mq.CodeCancelled, Message: fmt.Sprintf("take a machine slot for %q: cancelled before joining the queue", req.HolderID), Err: err}
	}
	tr := mq.TakeRequest{HolderID: req.HolderID, Slots: req.Slots, Owner: req.Owner, Waiter: s.opts.Self}
	var dec mq.TakeDecision
	take := func(st *mq.State, ev mq.Evidence, now time.Time) (*mq.State, bool, error) {
		if _, probed := ev[req.Owner]; !probed && req.Owner != s.opts.Self {
			ev[req.Owner] = s.opts.Prober.Probe(req.Owner)
		}
		next, d, err := mq.Take(st, tr, ev, now)
		dec = d
		return next, d.Changed, err
	}
	if err := s.update(ctx, "take", take); err != nil {
		return Grant{}, s.abandon(ctx, req, err)
	}
	joined := dec.Position
	if dec.Outcome != mq.TakeQueued {
		return grantOf(dec.Holder, 0, dec.Outcome == mq.TakeAlreadyHolder), nil
	}
	position := dec.Position
	for {
		if err := s.opts.Clock.Sleep(ctx, s.interval(position)); err != nil {
			return Grant{}, s.abandon(ctx, req, err)
		}
		st, err := s.view(ctx, "poll")
		if err != nil {
			return Grant{}, s.abandon(ctx, req, err)
		}
		h, pos := mq.Find(st, req.HolderID)
		switch {
		case h != nil && h.Owner == req.Owner:
			// Handed the slot by another writer: nothing to write.
			return grantOf(h, joined, false), nil
		case h == nil && pos == 0:
			return Grant{}, mq.Errorf(mq.CodeEntryRemoved, "take a machine slot for %q: its queue entry was removed while it waited (a release for the same job ran); not joining again", req.HolderID)
		}
		position = pos
		if h == nil && !mq.NeedsWrite(st, s.evidence(st)) && st.Queue[pos-1].Waiter == s.opts.Self {
			continue
		}
		// A recorded process died, the head is admissible, or the entry
		// belongs to someone else: the exclusive read-modify-write decides
		// (and refuses a conflict).
		if err := s.update(ctx, "take", take); err != nil {
			return Grant{}, s.abandon(ctx, req, err)
		}
		if dec.Outcome != mq.TakeQueued {
			return grantOf(dec.Holder, joined, false), nil
		}
		position = dec.Position
	}
}

// interval is the poll interval of queue position p: the head every Poll,
// further back p×Poll, at most MaxPoll.
func (s *Store) interval(p int) time.Duration {
	if p <= 1 {
		return s.opts.Poll
	}
	d := time.Duration(p) * s.opts.Poll
	if d > s.opts.MaxPoll || d < 0 {
		return s.opts.MaxPoll
	}
	return d
}

// abandon turns a failed Take into its error. When ctx ended it removes
// the caller's entry (queued or holding) with a fresh context bounded by
// CancelWindow.
func (s *Store) abandon(ctx context.Context, req Request, cause error) error {
	ctxErr := ctx.Err()
	if ctxErr == nil {
		return cause
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.CancelWindow)
	defer cancel()
	_, err := s.release(cctx, "cancel", req.HolderID, req.Owner)
	e := &mq.Error{Code: mq.CodeCancelled, Message: fmt.Sprintf("take a machine slot for %q: cancelled; its queue entry was removed", req.HolderID), Err: ctxErr}
	if err != nil {
		e.Message = fmt.Sprintf("take a machine slot for %q: cancelled, and removing its queue entry failed (it is reclaimed once this process has exited)", req.HolderID)
		e.Err = errors.Join(ctxErr, err)
	}
	return e
}

// Release removes the job's slot or queue entry (owner-checked) and hands
// a freed slot to the queue head in the same write. Nothing to release is
// ReleaseNotFound, not an error.
func (s *Store) Release(ctx context.Context, holderID string, owner mq.Process) (mq.ReleaseDecision, error) {
	return s.release(ctx, "release", holderID, owner)
}

func (s *Store) release(ctx context.Context, op, holderID string, owner mq.Process) (mq.ReleaseDecision, error) {
	var dec mq.ReleaseDecision
	err := s.update(ctx, op, func(st *mq.State, ev mq.Evidence, now time.Time) (*mq.State, bool, error) {
		next, d, err := mq.Release(st, mq.ReleaseRequest{HolderID: holderID, Owner: owner}, ev, now)
		dec = d
		return next, d.Changed, err
	})
	return dec, err
}

// Reclaim removes every entry whose process is proven dead and hands freed
// slots on (an operator's or a monitor's sweep).
func (s *Store) Reclaim(ctx context.Context) (mq.ReclaimDecision, error) {
	var dec mq.ReclaimDecision
	err := s.update(ctx, "reclaim", func(st *mq.State, ev mq.Evidence, now time.Time) (*mq.State, bool, error) {
		next, d, err := mq.Reclaim(st, ev, now)
		dec = d
		return next, d.Changed, err
	})
	return dec, err
}

// DefaultDir is the documented machine queue directory of an OS when
// BUILD_LOCK_MACHINE_DIR is not set (the caller reads the environment):
//
//   - windows: %ProgramData%\buildlock\machine-queue (programData is the
//     ProgramData variable; C:\ProgramData when empty)
//   - darwin: /Users/Shared/buildlock/machine-queue (shared by every user)
//   - anything else: /var/lib/buildlock/machine-queue (persistent and not
//     under /tmp, whose cleaners delete idle files such as the lock file,
//     and which systemd's PrivateTmp= gives each service its own copy of)
func DefaultDir(goos, programData string) string {
	switch goos {
	case "windows":
		if programData == "" {
			programData = `C:\ProgramData`
		}
		return programData + `\buildlock\machine-queue`
	case "darwin":
		return "/Users/Shared/buildlock/machine-queue"
	}
	return "/var/lib/buildlock/machine-queue"
}
