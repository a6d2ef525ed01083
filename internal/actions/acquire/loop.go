package acquire

import (
	"context"
	"errors"
	"fmt"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/plant"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/store"
)

// errReplan ends a write round whose fresh state would admit the caller
// before its pull request head was checked in this iteration.
var errReplan = errors.New("acquire: admission needs a fresh pull request head check")

// errDeadline ends the wait loop at timeout-minutes; run reports the
// timeout on the caller's context (not the expired deadline-bound one).
var errDeadline = errors.New("acquire: timeout-minutes elapsed")

// errStaleRound ends a write round whose re-read, after a lost race, went
// back in time (staleRead).
var errStaleRound = errors.New("acquire: the re-read after a lost race is older than the state this run decided on")

// errPaced ends a newcomer's write round whose re-read, after a lost race,
// shows a burst this run did not see at its first read (planHerd): its
// first write is paced from then on.
var errPaced = errors.New("acquire: a burst shows; the first write is paced")

// errStaleConfig ends a write round whose state is at a schema above what
// this run's config snapshot asks for (staleConfig): another writer, with a
// newer config, upgraded it since this run's read.
var errStaleConfig = errors.New("acquire: the state was upgraded past this run's config snapshot")

// errBlocked ends a write round that found an active incident.
var errBlocked = errors.New("acquire: an active incident blocks admission")

// loop is the wait loop (spec §3.5 "Each loop iteration").
func (q *acquirer) loop(ctx context.Context) error {
	for {
		if !q.now().Before(q.deadline) {
			return errDeadline
		}
		q.attempts++
		if err := q.maybeCheckPR(ctx); err != nil {
			return err
		}
		if err := q.refreshConfig(ctx, false); err != nil {
			return err
		}
		readAt := q.now()
		snap, err := q.st.Load(ctx)
		if err == nil {
			q.rtt.note(q.now().Sub(readAt))
		}
		if err != nil {
			if ghclient.IsSecondaryLimit(err) && ctx.Err() == nil {
				if err := q.waitSecondary(ctx, err); err != nil {
					return err
				}
				continue
			}
			if retry, gerr := q.authGrace(ctx, err); retry {
				if gerr != nil {
					return gerr
				}
				continue
			}
			if (q.admissionWritten || q.mayBeHandedOff()) && ctx.Err() == nil {
				_, _, err = q.decide(ctx, err)
			}
			return err
		}
		q.authFailedSince = time.Time{}
		if q.staleRead(snap.State) {
			if err := q.sleep(ctx, q.staleReadWait()); err != nil {
				return err
			}
			continue
		}
		q.last = snap.State
		if q.arrival == nil {
			q.arrival = lockstate.NewArrival(snap.State)
			if q.client != nil {
				if t, ok := mintTicket(q.client.Usage()); ok {
					q.ticket = &t
				}
			}
			q.herd = q.planHerd(snap.State, true) // after q.ticket: a burst is ordered by it
		}
		q.observe(snap.State)
		q.holds.observe(snap.State, q.now())
		done, again, err := q.step(ctx, snap)
		if done || err != nil {
			return err
		}
		if again {
			continue
		}
		if err := q.sleep(ctx, q.pollDelay(q.last)); err != nil {
			return err
		}
	}
}

// step decides one iteration from snap; it writes only when the decision
// changes the state. done ends the loop; again repeats the iteration at once.
func (q *acquirer) step(ctx context.Context, snap store.Snapshot) (done, again bool, err error) {
	_, dec, err := lockstate.Acquire(snap.State, q.cfg, q.req(), q.now())
	if err != nil {
		return true, false, err
	}
	if q.drainUnseen(snap.State) {
		// Another waiter recorded its runner id for an upgrade this run's
		// config snapshot does not ask for: read the config again, so this
		// run's entry records one too instead of holding the drain until
		// its snapshot expires.
		q.cfgAt = time.Time{}
		if err := q.refreshConfig(ctx, false); err != nil {
			return true, false, err
		}
		return false, true, nil
	}
	if dec.Changed && q.holdWrites(snap.State) {
		q.logConfigUnread()
		return false, false, nil
	}
	if dec.Changed && q.staleConfig(snap.State) {
		// The state is at a schema above what this run's config snapshot
		// asks for: another writer read a newer config (one that may name
		// seats). Read the config again before writing.
		return q.rereadConfig(ctx)
	}
	q.notePosition(dec)
	q.upgrade = dec.Upgrade
	if dec.Changed && (dec.Outcome == lockstate.OutcomeQueued || dec.Outcome == lockstate.OutcomeAdmitted) {
		// A paced burst's first write waits for its slot (herd.go), and
		// is decided at the branch head once the slot has come.
		if slept, err := q.herdWait(ctx, snap.State); slept || err != nil {
			return err != nil, slept, err
		}
		if fresh := q.herdFresh(ctx, snap); fresh != nil {
			return q.step(ctx, *fresh)
		}
	}
	prChecked := false
	switch dec.Outcome {
	case lockstate.OutcomeAccountBlocked:
		return true, false, q.blocked(ctx, dec)
	case lockstate.OutcomeAlreadyHolder:
		q.touched()
		if !dec.Changed {
			return true, false, q.admitted(ctx, snap.SHA, snap.State, dec)
		}
	case lockstate.OutcomeAdmitted:
		if plant.Enabled(plant.TrustStaleRead) { // planted bug (tests only)
			return true, false, q.admitted(ctx, snap.SHA, snap.State, dec)
		}
		if err := q.checkPR(ctx, "before the admission write"); err != nil {
			return true, false, err
		}
		prChecked = true
	case lockstate.OutcomeQueued:
		q.touched()
		if !dec.Changed {
			q.logWaiting(snap.State, dec)
			return false, false, nil
		}
		if lockstate.QueuePosition(snap.State, q.id.HolderID) == 0 && !q.joinSpread {
			// The first join of a burst: spread it out (burst.go), then
			// decide again on a fresh read.
			q.joinSpread = true
			if w := q.joinWindow(snap.State); w > 0 {
				return false, true, q.sleep(ctx, time.Duration(q.d.Jitter()*float64(w)))
			}
		}
	}
	return q.write(ctx, prChecked, dec.Outcome == lockstate.OutcomeQueued)
}

// write applies Acquire by compare-and-swap. Each round re-decides on the
// freshest state; an admission is only written when the pull request head
// was checked in this iteration.
//
// A join (queued) is written in one round: on a lost race the loop re-reads
// after a contention-aware wait (pollDelay) instead of colliding again at
// once, and its arrival insertion keeps its place.
func (q *acquirer) write(ctx context.Context, prChecked, join bool) (done, again bool, err error) {
	var dec, admit lockstate.AcquireDecision
	q.registerPost()
	rounds := acquireCASRounds
	paced := q.herd != nil && q.newcomer(q.last)
	if join || paced {
		// A paced first write is also one round: a lost race waits for
		// the pacing's backoff (herd.go), not the store's.
		rounds = 1
	}
	// A pending-write marker while the write is out: if this step dies
	// before the answer, the job's release waits for the write to land
	// (lockaction.AwaitInFlightWrite). The store's BeforeWrite (run.go)
	// stamps it again before every attempt it sends, so the window counts
	// from the last one, not from the first of several rounds.
	q.notePendingWrite()
	q.writing.Store(true)
	defer func() {
		q.writing.Store(false)
		_ = lockaction.RemovePendingMarker(q.s.RunnerTemp, q.s.Target, q.id.HolderID)
	}()
	round := 0
	res, err := q.st.UpdateRounds(ctx, rounds, func(s *lockstate.State) (string, error) {
		round++
		if round > 1 && q.herd == nil && q.ticket != nil && q.newcomer(s) {
			// A lost first write: a lagging replica may have served the
			// first read from before the burst's first writes were
			// logged (logRate), or nothing had been logged yet.
			if q.herd = q.planHerd(s, false); q.herd != nil {
				return "", errPaced
			}
		}
		if q.staleRead(s) {
			// A round after a lost race read a version older than the
			// one this run decided on (staleread.go): decided on, it is
			// a join or an admission certain to lose again, or a "no
			// change" that sleeps a poll while a seat may be free.
			return "", errStaleRound
		}
		next, d, err := lockstate.Acquire(s, q.cfg, q.req(), q.now())
		if err != nil {
			return "", err
		}
		dec = d
		switch {
		case d.Outcome == lockstate.OutcomeAccountBlocked:
			return "", errBlocked
		case !d.Changed:
			return "", store.ErrNoChange
		case q.holdWrites(s):
			return "", errConfigUnread
		case q.staleConfig(s):
			// The read was at the snapshot's schema, but a writer with a
			// newer config (one that may name seats) upgraded the state
			// before this round (sim seat seed 297): decided on the old
			// snapshot, an admission on the upgraded state names no seat.
			return "", errStaleConfig
		case d.Outcome == lockstate.OutcomeAdmitted && q.s.PR.Scoped && !prChecked:
			return "", errReplan
		}
		wasNewcomer := q.newcomer(s)
		*s = *next
		q.noteArrival(s, wasNewcomer)
		switch d.Outcome {
		case lockstate.OutcomeAdmitted:
			admit = d
			return "Acquire " + q.s.Target.Lock, nil
		case lockstate.OutcomeAlreadyHolder:
			return "Backfill exact job for " + q.s.Target.Lock, nil
		}
		return "Queue for " + q.s.Target.Lock, nil
	})
	landed := res.Written || res.Ambiguous || maybeApplied(err)
	if landed || dec.Outcome == lockstate.OutcomeAlreadyHolder {
		q.touched()
	}
	if landed && admit.Outcome == lockstate.OutcomeAdmitted {
		// Some round wrote (or may have written) this run's admission.
		q.admissionWritten = true
		if admit.ConsumedQuarantine != nil {
			c := *admit.ConsumedQuarantine
			q.consumedQuarantine = &c
		}
	}
	switch {
	case errors.Is(err, errStaleRound) && !landed:
		// Read again soon (staleReadWait), and decide on that read.
		return false, true, q.sleep(ctx, q.staleReadWait())
	case errors.Is(err, errStaleConfig) && !landed:
		return q.rereadConfig(ctx)
	case errors.Is(err, errConfigUnread):
		q.logConfigUnread()
		return false, false, nil
	case errors.Is(err, errReplan), errors.Is(err, errPaced) && !landed:
		return false, true, nil
	case errors.Is(err, errBlocked):
		return true, false, q.blocked(ctx, dec)
	case errors.Is(err, store.ErrTooManyConflicts):
		if paced {
			q.herd.lost(q.now(), q.cfg.Share(), q.d.Jitter)
			return false, true, nil
		}
		q.firstLost = q.firstLost || q.newcomer(q.last)
		q.conflictStreak++
		return false, false, nil
	case ghclient.IsSecondaryLimit(err) && !landed && ctx.Err() == nil:
		// Nothing was written: wait out the limit inside timeout-minutes,
		// then decide again on a fresh read.
		return false, true, q.waitSecondary(ctx, err)
	case err != nil && landed && ctx.Err() == nil:
		// The write may have landed: the next read decides.
		return q.decide(ctx, err)
	case err != nil:
		return true, false, err
	}
	q.conflictStreak = 0
	q.last = res.State
	q.observe(res.State)
	q.notePosition(dec)
	q.upgrade = dec.Upgrade
	if dec.Inserted && dec.Rank >= 0 && dec.Rank < lockstate.FreeSlots(res.State, q.cfg) {
		// Joined by arrival ahead of later arrivals with a seat free: the
		// next write admits it.
		q.logWaiting(res.State, dec)
		return false, true, nil
	}
	switch dec.Outcome {
	case lockstate.OutcomeAdmitted, lockstate.OutcomeAlreadyHolder:
		// An acknowledged write proves the admission: its CAS base had no
		// incident. A reconciled ambiguous write shows the caller as a
		// holder in the state it re-read.
		return true, false, q.admitted(ctx, res.SHA, res.State, dec)
	}
	q.logWaiting(res.State, dec)
	return false, false, nil
}

// mayBeHandedOff reports a queued job that a release may have handed a seat
// (lockstate.Handoff, schema <= 3) since its last read: when it can no
// longer read the state it must not exit as if it held nothing, so it
// decides like an admission write whose answer was lost (admission-unknown,
// retraction, and the always() release).
func (q *acquirer) mayBeHandedOff() bool {
	return q.last != nil && q.last.SchemaVersion <= lockstate.HandoffMaxSchema &&
		lockstate.QueuePosition(q.last, q.id.HolderID) > 0
}

// maybeApplied reports a failed write that GitHub may still have applied.
func maybeApplied(err error) bool {
	var ge *ghclient.Error
	return errors.As(err, &ge) && ge.MaybeApplied
}

// notePosition remembers the first queue position this invocation saw.
func (q *acquirer) notePosition(dec lockstate.AcquireDecision) {
	if q.entryPosition == 0 && dec.Position > 0 {
		q.entryPosition = dec.Position
	}
}

// pollDelay is the position-aware wait before the next poll.
func (q *acquirer) pollDelay(s *lockstate.State) time.Duration {
	now := q.now()
	_, burst := q.burst(s)
	sch := Schedule{Base: q.s.Poll, Unit: q.d.PollUnit, Rank: q.pollRank(s, now), Seats: q.cfg.MaxHolders,
		Queued: len(s.Queue), OldestHold: oldestHold(s, now), Burst: burst, HoldEstimate: q.holdEstimate(s), Share: q.cfg.Share(),
		PaceSeen: q.observedHold > 0}
	q.releaseForecast(s, &sch)
	sch.LoggedHold = loggedHold(s, now, q.s.Poll)
	q.handWindow(s, &sch, now)
	q.handing = inHandWindow(sch)
	if t, ok := lockstate.NextCooldownExpiry(s, now); ok {
		sch.UntilCooldown = t.Sub(now)
	}
	d := PollDelay(sch, q.d.Jitter())
	if sch.HandWindow {
		d = q.bank.spend(now, d, fastShare(sch))
	}
	if q.conflictStreak > 0 {
		d = max(d, q.conflictDelay(s))
	}
	return d
}

// loggedHold is the hold the lock's releases logged (recentHolds), as a
// waiter paces its polls by it (Schedule.LoggedHold): the median once two
// holds are logged, and the one hold logged so far when it is shorter
// than poll. Else 0, and the waiter paces by what it saw itself
// (HoldEstimate, at least poll).
//
// One short hold is enough to wake a far waiter sooner, never later: the
// estimate it replaces is at least poll-seconds a hold. Between the first
// release and the second a waiter that had already seen the queue move
// (so the cold lock's rule, by the holders' age, no longer applied) paced
// 5 s holds at 15 s a turn: in a 10-job burst on one seat, 1 s apart, the
// rank-3 waiter slept 39 s and noticed the seat it was handed 15 s late
// (make bench-class BURST=10x1@1s; docs/performance.md §28). A single
// hold of poll-seconds or more is not taken alone: on one sample it would
// end the cold lock's pacing by the holders' age (PollDelay) and move the
// far waiters of locks with holds of minutes. Taken alone, it cost bench
// burst 0.1 charged requests a job against its target of 20.
func loggedHold(s *lockstate.State, now time.Time, poll time.Duration) time.Duration {
	typical, _, n := s.HoldRange(now)
	if n >= 2 || (n == 1 && typical < poll) {
		return typical
	}
	return 0
}

// pollRank is the admissible rank the poll schedule paces this run by: its
// own in s, or, for a run with no entry whose last write lost its race, the
// rank its join would take in s (inserted by arrival, so the lost race
// costs no place) when that is a fast rank. Paced as a rank unknown, at
// poll-seconds and more, a job of bench handoff (6 jobs arriving within 2 s
// on 2 seats) that lost three joins in a row slept 15-20 s while a seat sat
// free: the handoff's p95 reached 12-15 s in two or three seed sets of six.
// A farther rank stays unknown: a rank-based tail interval grows to
// 8 × poll-seconds, and a queue that moves at once (an upgrade's drain
// ending) would pass it asleep.
func (q *acquirer) pollRank(s *lockstate.State, now time.Time) int {
	rank := admissibleRank(s, q.cfg, q.id.HolderID)
	if rank >= 0 || q.conflictStreak == 0 || lockstate.QueuePosition(s, q.id.HolderID) > 0 {
		return rank
	}
	_, dec, err := lockstate.Acquire(s, q.cfg, q.req(), now)
	if err == nil && dec.Outcome == lockstate.OutcomeQueued && dec.Rank >= 0 && dec.Rank < FastRanks(q.cfg.MaxHolders) {
		return dec.Rank
	}
	return rank
}

// sleep waits d, capped at the deadline (boundedRetryDelayMs).
func (q *acquirer) sleep(ctx context.Context, d time.Duration) error {
	d = max(0, min(d, q.deadline.Sub(q.now())))
	return q.d.Clock.Sleep(ctx, d)
}

// authGrace keeps polling through 401s (auth replica lag) for up to
// BUILD_LOCK_AUTH_GRACE_MS of consecutive failures (spec §3.5 "401 grace").
// retry is false when err is not a 401 or the window is spent.
func (q *acquirer) authGrace(ctx context.Context, err error) (retry bool, _ error) {
	if ghclient.StatusOf(err) != 401 || q.s.AuthGrace <= 0 || ctx.Err() != nil {
		return false, nil
	}
	now := q.now()
	if q.authFailedSince.IsZero() {
		q.authFailedSince = now
	}
	limit := q.authFailedSince.Add(q.s.AuthGrace)
	if !now.Before(limit) || !now.Before(q.deadline) {
		return false, nil
	}
	q.a.Warning(fmt.Sprintf("Reading %s was rejected with HTTP 401; keeping this run's place and polling again within the %s auth grace window.",
		q.st.StatePath(), q.s.AuthGrace))
	wait := min(q.d.Jittered(q.s.Poll, max(250*time.Millisecond, q.s.Poll/3)), limit.Sub(now))
	return true, q.sleep(ctx, wait)
}

// decideWindow bounds how long acquire keeps trying to read the state after
// a write that may have landed, before it reports admission-unknown.
const decideWindow = 2 * time.Minute

// decide settles a write whose outcome is unknown (its response was lost and
// the re-read failed) by the next read that succeeds: the iteration is
// re-decided on that fresh state, so the job's own admission, if it landed,
// is reported as acquired, and otherwise the wait goes on. Reads are retried
// for at most decideWindow (and never past timeout-minutes); if none
// succeeds, the outcome stays unknown and is reported as admission-unknown
// with acquired=false: no licensed step runs, and the consumer's always()
// release, which is given the holder id, removes the admission if it landed.
func (q *acquirer) decide(ctx context.Context, cause error) (done, again bool, err error) {
	limit := q.now().Add(decideWindow)
	if q.deadline.Before(limit) {
		limit = q.deadline
	}
	q.touched()
	for {
		snap, lerr := q.st.Load(ctx)
		if lerr == nil {
			q.authFailedSince = time.Time{}
			q.last = snap.State
			return q.step(ctx, snap)
		}
		if ctx.Err() != nil {
			return true, false, ctx.Err()
		}
		if !q.now().Before(limit) {
			return true, false, q.unknown(ctx, fmt.Errorf("%w; the state could not be read afterwards to decide whether it landed: %v", cause, lerr))
		}
		q.a.Warning(fmt.Sprintf("A lock-state write for %s may have landed without an answer, and reading the state to decide failed (%v); reading again.", q.s.Target.Lock, lerr))
		wait := min(q.d.Jittered(q.s.Poll, max(250*time.Millisecond, q.s.Poll/3)), max(0, limit.Sub(q.now())))
		if err := q.d.Clock.Sleep(ctx, wait); err != nil {
			return true, false, err
		}
	}
}

// unknown reports an admission whose outcome could not be decided: the
// outputs say admission-unknown (acquired=false), a bounded pre-activation
// retraction is attempted, and cause is returned.
func (q *acquirer) unknown(ctx context.Context, cause error) error {
	err := q.refuse(ctx, resultAdmissionUnknown, nil, fmt.Errorf(
		"could not decide whether this run was admitted to %s: %w. acquired=false, so no licensed step runs; the always() release step (holder-id %s) removes the admission if it landed",
		q.s.Target.Lock, cause, q.id.HolderID))
	if _, cerr := q.failureCleanup(ctx, q.retractKind(cleanupDefault)); cerr != nil {
		q.a.Warning("Retracting the undecided admission also failed (the release step will retry): " + cerr.Error())
	}
	return err
}

// errConfigUnread ends a write round that holdWrites held back.
var errConfigUnread = errors.New("acquire: the lock config has not been read yet")

// holdWrites reports whether this run must not write s's next version yet:
// no usable read of the lock config (cfgUnread), and the safe defaults (one
// anonymous seat) could be wrong for this lock: the run asked for seat
// labels or a priority class, the state is at schema 6 (where the config
// may name seats: an admission on the defaults would record no seat and
// output none), or nothing is in it yet (its first write creates it at the
// schema the config asks for). An older lock with anonymous seats is
// admitted on the defaults, as the reference does.
//
// A failed refresh (cfgCapped: the snapshot is older than the config
// TTL) holds the same writes at schema 6 too: the config may have named
// seats since the snapshot was read, and the one-seat cap does not apply
// to a seat list.
func (q *acquirer) holdWrites(s *lockstate.State) bool {
	asked := len(q.s.SeatLabels) > 0 || q.s.Priority > 0
	fenced := s.SchemaVersion >= lockstate.FencedSchemaVersion
	if q.cfgCapped && (asked || fenced) {
		return true
	}
	if !q.cfgUnread {
		return false
	}
	empty := len(s.Holders) == 0 && len(s.Queue) == 0 && len(s.Reservations) == 0 && s.ActiveIncident == nil
	return asked || fenced || empty
}

// logConfigUnread says why this run waits without writing, at most once a
// minute.
func (q *acquirer) logConfigUnread() {
	if !q.cfgUnreadLogged.IsZero() && q.now().Sub(q.cfgUnreadLogged) < time.Minute {
		return
	}
	q.cfgUnreadLogged = q.now()
	q.a.Printf("Waiting for the lock config of %s: no read of %s has succeeded yet, and this lock is not admitted on the safe defaults (named seats, a seat request or a new lock); reading it again at the next poll.",
		q.s.Target.Lock, q.st.ConfigPath())
}

// rereadConfig reads the config again at once (staleConfig) and repeats the
// iteration on a fresh read.
func (q *acquirer) rereadConfig(ctx context.Context) (done, again bool, err error) {
	q.cfgAt = time.Time{}
	if err := q.refreshConfig(ctx, false); err != nil {
		return true, false, err
	}
	return false, true, nil
}

// staleConfigAge is how old a config snapshot may be before a state at a
// schema above the snapshot's target makes acquire read it again before
// writing (the operator may really have turned a feature off: a fresher
// snapshot is then trusted).
const staleConfigAge = 30 * time.Second

// staleConfig reports a config snapshot older than staleConfigAge whose
// target schema is below s's: a newer config was read by the writer that
// upgraded s (schema never goes down).
func (q *acquirer) staleConfig(s *lockstate.State) bool {
	return !q.cfgCapped && s.SchemaVersion > lockstate.TargetSchema(q.cfg) && q.now().Sub(q.cfgAt) >= staleConfigAge
}

// drainUnseen reports a config snapshot older than staleConfigAge that does
// not ask for the upgrade to runner serialization which s shows under way: a
// schema-2 queue entry with a recorded runner id, written by a job that read
// a config asking for it. That drain ends only when every queued job has
// recorded one, each with a snapshot that asks for it.
func (q *acquirer) drainUnseen(s *lockstate.State) bool {
	if q.cfgCapped || s.SchemaVersion >= 3 || lockstate.TargetSchema(q.cfg) >= 3 || q.now().Sub(q.cfgAt) < staleConfigAge {
		return false
	}
	for _, e := range s.Queue {
		if e.PendingRunnerID != "" {
			return true
		}
	}
	return false
}

// beforeWrite is the store's BeforeWrite: inside write, every attempt sent
// stamps the pending-write marker again.
func (q *acquirer) beforeWrite() {
	if q.writing.Load() {
		q.notePendingWrite()
	}
}

// notePendingWrite stamps this job's pending-write marker with the time now.
// Failing to write it only weakens the release's later check, so it goes on.
func (q *acquirer) notePendingWrite() {
	_ = lockaction.WritePendingMarker(q.s.RunnerTemp, q.s.Target, q.id.HolderID, q.d.Clock.Now())
}
