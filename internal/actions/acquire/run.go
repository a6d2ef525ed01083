package acquire

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/prhead"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/store"
)

// Deps are the injected edges of a run (see actionkit.Deps).
type Deps = actionkit.Deps

// Modes selected by BUILD_LOCK_MODE.
const (
	ModeAcquire            = "acquire"
	ModeAcquireWithCleanup = "acquire-with-cleanup"
	ModePostCleanup        = "post-cleanup"
)

// Run is the acquire binary: acquire, acquire-with-cleanup (main step) or
// post-cleanup, by BUILD_LOCK_MODE. It returns nil when the lock is held
// (or, for post-cleanup, always). Every other exit of an acquire step
// writes the whole output set with acquired=false (the licensed steps,
// guarded on acquired == 'true', do not run, and the cleanup gate reads
// "no seat was taken"): a refusal with its typed admission-result, any
// other failure with its reason code as admission-result, cancellation
// with "cancelled". Only a process killed outright writes nothing.
func Run(ctx context.Context, deps Deps) error {
	if ctx == nil {
		return errors.New("acquire: nil context")
	}
	d := deps.WithDefaults()
	a := edgesettings.IO(d.Getenv, d.Stdout)
	s, err := LoadSettings(d.Getenv)
	switch s.Mode {
	case ModeAcquire, ModeAcquireWithCleanup:
	case ModePostCleanup:
		runPost(ctx, d, a, s, err)
		return nil
	default:
		return err
	}
	s.Credentials.MaskIn(a)
	if s.PR.Request.Token != "" {
		a.Mask(s.PR.Request.Token)
	}
	// poll-seconds counts Deps.PollUnit units (one second but in the demo).
	s.Poll = time.Duration(s.Poll/time.Second) * d.PollUnit
	q := &acquirer{d: d, a: a, register: s.Register, started: d.Clock.Now()}
	err = q.main(ctx, s, err)
	q.freeMachineSlotAfterFailure(ctx, err)
	if err != nil && !q.reported {
		q.reportFailure(ctx, err)
	}
	return err
}

// main takes the settings (or their problems) and runs the acquire.
func (q *acquirer) main(ctx context.Context, s Settings, serr error) error {
	q.s = s
	if s.identityValid {
		q.id = lockaction.IdentityFor(s.Run, s.Target, s.Identity.Suffix, s.Identity.RunnerID, "", q.started)
	}
	for _, w := range s.Warnings {
		q.a.Warning(w)
	}
	if serr != nil {
		return serr
	}
	err := q.run(ctx, s.Credentials)
	if err != nil && ctx.Err() != nil && q.mayNeedCleanup {
		q.cancellationCleanup(ctx)
	}
	return err
}

// acquirer is the state of one acquire invocation.
type acquirer struct {
	d        Deps
	a        *actionio.IO
	s        Settings
	register bool
	id       lockstate.Identity

	client *ghclient.Client
	st     *store.Store
	// writing is set while write has a join or admission out: the store's
	// BeforeWrite stamps the pending-write marker only then.
	writing atomic.Bool
	cfg     lockstate.Config
	cfgAt   time.Time
	checker prhead.Checker
	// consumer is the github-token client of the job-id lookup (nil
	// without a token); the PR-head guard shares its waits.
	consumer *ghclient.Client
	prAt     time.Time

	started, deadline time.Time
	attempts          int
	entryPosition     int
	authFailedSince   time.Time
	last              *lockstate.State
	// wait is what the wait log last said and when (waiting.go).
	wait waitLog
	// upgrade is the pending upgrade that paused admission at the last
	// decision, or nil; drainWaited is how long this run waited for one.
	upgrade     *lockstate.Upgrade
	upgradeFrom time.Time
	drainWaited time.Duration

	// mayNeedCleanup: this invocation wrote (or may have written) a queue
	// entry or admission, or found its own entry or holder.
	mayNeedCleanup bool
	// admissionWritten: this invocation's admission write was acknowledged
	// or may have landed; retracting it is pre-activation cleanup.
	admissionWritten   bool
	consumedQuarantine *lockstate.Reservation
	registered         bool
	cleanupAttempted   bool
	// reported: the output set was written (report).
	reported bool
	// timedOut: the timeout was reported (outputs and cleanup done).
	timedOut bool
	// conflictStreak counts consecutive writes that lost every CAS round;
	// it widens the wait before the next attempt (see pollDelay).
	conflictStreak int
	// staleSkips counts the consecutive reads staleRead skipped.
	staleSkips int
	// rtt keeps the recent state reads' round trips, bank the reads sooner
	// than this run's share of the fast budget, and handing whether the
	// last poll delay was in a hand window (handwindow.go).
	rtt     rttLog
	bank    readBank
	handing bool
	// configMissing: the lock has no config file (reported in the summary).
	configMissing bool
	// cfgCapped: the last config refresh could not read the file, so
	// capacity is capped at the safe default until a read succeeds.
	cfgCapped bool
	// cfgUnread: no usable read of the lock config: the first read fell
	// back to the safe defaults, or a refresh of a config naming seats
	// failed (the one-seat cap does not apply to a seat list); see
	// holdWrites.
	cfgUnread       bool
	cfgUnreadLogged time.Time
	// arrival is the arrival snapshot of the first state read: the entry
	// is inserted by arrival (lockstate.AcquireRequest.Arrival), so a lost
	// or spread-out join never costs queue position.
	arrival *lockstate.Arrival
	// joinSpread: the first join write was already spread out (burst.go).
	joinSpread bool
	// ticket is this job's arrival ticket (herd.go; nil without one) and
	// herd its burst pacing (nil unless it arrived in a burst); herdLogged:
	// the pacing was reported.
	ticket     *ticket
	herd       *herdPlan
	herdLogged bool
	// herdHeadReads counts the reads at the branch head before a due
	// paced write (herdFresh).
	herdHeadReads int
	// firstLost: a first write of this run lost its race (planHerd may
	// pace the next).
	firstLost bool
	// secondaryWarned is the end of the secondary-limit wait last reported.
	secondaryWarned time.Time
	// ahead are the queue entries seen ahead of this waiter that have not
	// left yet, paceSince when the pace measurement began and departed how
	// many entries seen ahead left since; observedHold is the hold time
	// they imply (observe).
	ahead        map[string]bool
	paceSince    time.Time
	departed     int
	observedHold time.Duration
	// holds are the holds this waiter saw end, for the release forecast
	// (forecast.go).
	holds holdLog
	// machine is the machine slot (nil when machine-slots is off).
	machine *machineSlot
}

// run is the setup (spec §3.5 "Startup") and the wait loop, both bounded
// by timeout-minutes: a call still in flight at the deadline (a stalled or
// partitioned connection retried inside its attempt budget) is abandoned
// and the acquire times out, so it ends within timeout-minutes plus the
// failure-cleanup window (R-F5).
func (q *acquirer) run(ctx context.Context, creds lockaction.AppCredentials) error {
	q.deadline = q.started.Add(q.s.Timeout)
	wctx, cancel := context.WithDeadline(ctx, q.deadline)
	defer cancel()
	err := q.setupAndLoop(wctx, creds)
	if err != nil && !q.timedOut && ctx.Err() == nil && (errors.Is(err, errDeadline) || wctx.Err() != nil) {
		return q.timeout(ctx)
	}
	var re *resultError
	if err != nil && ctx.Err() == nil && !q.cleanupAttempted && q.mayBeHandedOff() && !errors.As(err, &re) {
		// Failing while queued where a release may have handed this job a
		// seat since its last read: retract, so no seat stays held by a
		// job that never learned it holds it.
		dec, cerr := q.failureCleanup(ctx, q.retractKind(cleanupDefault))
		if cerr != nil {
			return q.unknown(ctx, err)
		}
		if dec.Released {
			q.a.Warning(fmt.Sprintf("A release had handed this job a seat of %s before it failed; the seat was given back.", q.s.Target.Lock))
		}
	}
	return err
}

// setupAndLoop is the setup and the wait loop on the deadline-bound ctx.
func (q *acquirer) setupAndLoop(ctx context.Context, creds lockaction.AppCredentials) error {
	if err := q.machineOwner(); err != nil {
		return err
	}
	jobID, err := q.resolveJobID(ctx)
	if err != nil {
		return err
	}
	q.id.JobID = jobID
	q.checker = prhead.Checker{Transport: q.d.Transport, Clock: q.d.Clock}
	if q.consumer != nil {
		// The guard and the job-id lookup use the same github-token: a
		// Retry-After either is told holds back both.
		q.checker.Gate = q.consumer
	}
	if err := q.checkPR(ctx, "before setup"); err != nil {
		return err
	}
	if q.client, err = lockaction.NewJobWriterClient(ctx, q.a, q.s.Target, creds, q.s.Knobs, q.d.ClientOptions(), q.s.RunnerTemp); err != nil {
		return err
	}
	if q.st, err = newStore(q.client, q.s.Target, q.d, ghclient.Budget{}, acquireCASRounds, acquireConflictDelay, q.beforeWrite); err != nil {
		return err
	}
	if err := q.guardTarget(ctx); err != nil {
		return err
	}
	if err := q.refreshConfig(ctx, true); err != nil {
		return err
	}
	// The config read looked the writer App's installation up: its account
	// pins the lock repository owner's id before the first write.
	if err := lockaction.CheckOwnerPin(q.s.Target, q.client); err != nil {
		return err
	}
	// The job's release and post steps mint from the installation this
	// lookup found instead of looking it up again.
	if err := lockaction.RememberInstallation(q.s.RunnerTemp, q.s.Target, creds, q.client); err != nil {
		q.a.Warning("Could not note the writer App's installation for this job's later steps (each looks it up again): " + err.Error())
	}
	// The machine slot first, then the organization queue (machineslot.go).
	if err := q.takeMachineSlot(ctx); err != nil {
		return err
	}
	return q.loop(ctx)
}

// guardTarget refuses, before any write, a state branch that is the
// repository's default branch. The repository read costs one request, so
// it is made when state-branch is not the default lock-state (the only way
// a consumer can point writes elsewhere); the scheduled reaper checks the
// default name every run.
func (q *acquirer) guardTarget(ctx context.Context) error {
	if q.s.Target.Branch == lockaction.DefaultStateBranch {
		return nil
	}
	return q.st.CheckStateBranch(ctx)
}

// now reads the injected clock.
func (q *acquirer) now() time.Time { return q.d.Clock.Now() }

// req is the AcquireRequest of this invocation.
func (q *acquirer) req() lockstate.AcquireRequest {
	return lockstate.AcquireRequest{Identity: q.id, Lease: q.s.Lease, Arrival: q.arrival, Labels: q.s.SeatLabels, Priority: q.s.Priority}
}

// refreshConfig reads the lock config (initially, then every configTTL)
// and re-asserts the consumer requirements on every snapshot.
//
// A refresh that could not read the file at all (transport, 401, 403, 408,
// 429, 5xx) fails closed on capacity, as the reference's safe defaults do:
// until a read succeeds, admission uses at most DefaultMaxHolders seats, so
// a maxHolders lowered during the outage can never be over-admitted from an
// outdated snapshot. Unlike the reference it keeps the previous snapshot's
// other settings (flags, cooldown), so a transient outage does not fail a
// waiting job's require-resource-lifecycle or minimum-cooldown requirement,
// and it retries the read at the next poll instead of after configTTL.
func (q *acquirer) refreshConfig(ctx context.Context, initial bool) error {
	if !initial && !q.cfgCapped && q.now().Sub(q.cfgAt) < q.s.ConfigTTL {
		return nil
	}
	snap, err := q.st.ReadConfig(ctx)
	if err != nil {
		return err
	}
	cfg, warnings := snap.Config, snap.Warnings
	if !initial && snap.Unavailable && q.cfg.Seats.Len() > 0 {
		// Named seats: capacity is the seat list, so the one-seat cap
		// cannot be applied to it (a capped config names more seats than
		// it allows and admits anonymously). Write nothing until a read
		// succeeds (holdWrites), reading again at every poll.
		if !q.cfgUnread {
			q.a.Warning(fmt.Sprintf("Unable to refresh the lock config; %s names seats, so nothing is admitted until it can be read again: %s",
				q.st.ConfigPath(), strings.Join(warnings, "; ")))
		}
		q.cfgUnread, q.cfgCapped = true, true
		return nil
	}
	if !initial && snap.Unavailable {
		if !q.cfgCapped {
			q.a.Warning(fmt.Sprintf("Unable to refresh the lock config; admitting with at most %d seat(s) (the safe default) and the previous snapshot's other settings until it can be read again: %s",
				lockstate.DefaultMaxHolders, strings.Join(warnings, "; ")))
		}
		q.cfgCapped = true
		q.cfg.MaxHolders = min(q.cfg.MaxHolders, lockstate.DefaultMaxHolders)
		return nil
	}
	if initial && snap.Unavailable {
		// The first read could not read the file at all: admit nothing on
		// the safe defaults where they could be wrong (holdWrites), and read
		// again at every poll until a read succeeds. The requirements and
		// the seat request are checked against the first config read.
		for _, w := range warnings {
			q.a.Warning(w)
		}
		q.cfg, q.cfgUnread, q.cfgCapped = cfg, true, true
		return nil
	}
	q.cfgCapped, q.cfgUnread = false, false
	q.cfgAt = q.now()
	// The job's release and post step clean up with this read while it is
	// recent instead of reading the file again (confignote.go).
	var resp *ghclient.CachedResponse
	if r, ok := q.st.ConfigResponse(); ok {
		resp = &r
	}
	if err := lockaction.RememberConfig(q.s.RunnerTemp, q.s.Target, q.s.Credentials, q.cfgAt, snap.Content, resp); err != nil {
		q.a.Warning("Could not note the lock config for this job's later steps (each reads it again): " + err.Error())
	}
	if initial && snap.Missing {
		if err := q.st.CheckLockNameCase(ctx); err != nil {
			return err
		}
		q.configMissing = true
	}
	for _, w := range warnings {
		q.a.Warning(w)
	}
	if q.s.RequireLifecycle && !cfg.ResourceLifecycle {
		return lockaction.Refuse("config-requirement", "acquire requires resourceLifecycle=true in %s (require-resource-lifecycle=true), but the lock config does not enable it",
			q.st.ConfigPath())
	}
	if cfg.ReleaseCooldownSeconds < q.s.MinCooldown {
		return lockaction.Refuse("config-requirement", "acquire requires releaseCooldownSeconds >= %d (minimum-release-cooldown-seconds), but %s sets %d",
			q.s.MinCooldown, q.st.ConfigPath(), cfg.ReleaseCooldownSeconds)
	}
	// The seat request against this config (issue 25): labels some seat
	// carries and a priority class the caller may use, refused before any
	// write (and again on every snapshot: a reviewed config change may
	// withdraw them while this job waits).
	if err := lockstate.CheckLabels(cfg, q.s.SeatLabels); err != nil {
		return err
	}
	if err := lockstate.CheckPriority(cfg, q.s.Caller, q.s.Priority); err != nil {
		return err
	}
	q.cfg = cfg
	return q.ensureMachineID(ctx)
}

// touched records that this run's own lock state exists (or may): cleanup
// is owed on failure, and the post step is registered.
func (q *acquirer) touched() {
	if !q.mayNeedCleanup {
		// The later steps of this job confirm a "nothing of this job" read
		// at the branch head (lockaction.CheckHeldAbsence).
		_ = lockaction.WriteEntryMarker(q.s.RunnerTemp, q.s.Target, q.id.HolderID)
	}
	q.mayNeedCleanup = true
	q.registerPost()
}

// registerPost saves build_lock_cleanup=enabled once, before the first
// write that may mutate lock state, when running as the with-cleanup main
// step.
func (q *acquirer) registerPost() {
	if !q.register || q.registered {
		return
	}
	q.registered = true
	if err := q.a.SaveState(StateCleanup, "enabled"); err != nil {
		q.a.Warning("Could not register the post-step cleanup: " + err.Error())
	}
}
