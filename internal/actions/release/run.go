package release

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/store"
)

// Deps are the injected edges of a run (see actionkit.Deps).
type Deps = actionkit.Deps

// CodeLockStateUnverified marks a release that could prove nothing: the
// state branch was never verified and the cleanup found no state.
const CodeLockStateUnverified = "LOCK_STATE_UNVERIFIED"

// Compare-and-swap budget of the cleanup phase (spec §3.7).
const (
	// cleanupRounds is the reference's round budget, kept for a release
	// without a retry deadline (release-retry-deadline-seconds 0).
	cleanupRounds = 10
	// deadlineCleanupRounds bounds the rounds of a release that has a
	// retry deadline: the deadline ends it, not a count of lost races
	// (docs/divergences.md "A release retries its write until its
	// deadline"). A burst of joins and admissions can win ten races in a
	// row against one release (make bench: 1 release in about 100 of the
	// 40-job, 4-seat burst), and a release that gives up leaves its seat
	// held until the reaper quarantines it, for every job that waits.
	// The cap only guards against a deadline far in the future.
	deadlineCleanupRounds = 100
	cleanupConflictDelay  = time.Second
	// attemptBoundedWindow bounds a release run with deadline 0.
	attemptBoundedWindow = 5 * time.Minute
	// SecondaryOverrun is how far past release-retry-deadline-seconds a
	// release waits out a secondary rate limit that GitHub says ends then
	// (divergences R12): giving up leaves the seat recorded as held until
	// the reaper quarantines it, which is worse for everyone waiting than
	// a release a minute late.
	SecondaryOverrun = 10 * time.Minute
)

// Run is the release-build-lock action. It writes every output whenever
// the cleanup completed (and for lock-release-unreachable); other failures
// write none. The work runs on a context that survives a runner signal
// (releasing is what cancellation cleanup is for) but ends inside the
// signal window.
func Run(ctx context.Context, deps Deps) error {
	if ctx == nil {
		return errors.New("release: nil context")
	}
	d := deps.WithDefaults()
	a := edgesettings.IO(d.Getenv, d.Stdout)
	s, err := LoadSettings(d.Getenv)
	s.Credentials.MaskIn(a)
	for _, w := range s.Warnings {
		a.Warning(w)
	}
	if err != nil {
		return err
	}
	window := attemptBoundedWindow
	if s.DeadlineSecs > 0 {
		window = time.Duration(s.DeadlineSecs)*time.Second + ghclient.LateAttemptTimeout + cleanupConflictDelay*2
	}
	wctx, cancel := actionkit.CleanupContext(ctx, d.Signals, window)
	defer cancel()
	r := &releaser{d: d, a: a, s: s, start: d.Clock.Now()}
	// Only a release that a secondary limit held back runs past the
	// window, on a context of its own (outlastSecondary, at most once).
	cancelExtended := func() {}
	defer func() { cancelExtended() }()
	r.extend = func(normal time.Duration) context.Context {
		ectx, ecancel := actionkit.CleanupContext(ctx, d.Signals, normal)
		cancelExtended = ecancel
		return ectx
	}
	return r.run(wctx, s.Credentials)
}

// releaser is the state of one release.
type releaser struct {
	d     Deps
	a     *actionio.IO
	s     Settings
	start time.Time
	// attempted are the decisions of every cleanup write sent, answered
	// or not (reconcile merges them with the state read afterwards).
	attempted []lockstate.CleanupDecision
	// extend returns a cleanup context of its own that ends after normal
	// (Run's window ends before a secondary limit's wait does); Run
	// cancels the one it returned last.
	extend func(normal time.Duration) context.Context
}

// SettleWindow bounds the read that decides a cleanup write whose every
// answer was lost until the release deadline: reads only, at most this
// long past the deadline.
const SettleWindow = 30 * time.Second

// settled is what settle found at the branch head.
type settled int

const (
	// settleUnknown: the head could not be read.
	settleUnknown settled = iota
	// settleNotLanded: an entry of the holder id is still there.
	settleNotLanded
	// settleLanded: no entry is left, so the release landed.
	settleLanded
)

// settle reads the state at the branch head after a cleanup write whose
// outcome is unknown (cause) and decides it: when no entry of the holder id
// is left, the release landed and is reported from that state
// (settleLanded). An entry still there (settleNotLanded), or a failed read
// (settleUnknown), leaves the failure as it was.
func (r *releaser) settle(ctx context.Context, st *store.Store, cause error) (store.Result, lockstate.CleanupDecision, settled) {
	snap, commit, err := st.LoadFresh(ctx)
	if err != nil {
		r.a.Warning(fmt.Sprintf("The release write's answer was lost and reading %s at the branch head to decide it failed: %v", r.s.Target.Lock, err))
		return store.Result{}, lockstate.CleanupDecision{}, settleUnknown
	}
	if lockstate.HolderIndex(snap.State, r.s.HolderID) >= 0 || lockstate.QueuePosition(snap.State, r.s.HolderID) > 0 {
		return store.Result{}, lockstate.CleanupDecision{}, settleNotLanded
	}
	r.a.Warning(fmt.Sprintf("Every answer to the release write of %s was lost (%v); the state at the branch head, commit %s, shows no entry of %s, so the release landed.",
		r.s.Target.Lock, cause, shortSHA(commit), r.s.HolderID))
	dec := reconcile(lockstate.CleanupDecision{}, r.attempted, snap.State)
	return store.Result{Snapshot: snap, Ambiguous: true}, dec, settleLanded
}

// CleanupRounds is the compare-and-swap round budget of the cleanup write:
// the reference's 10 without a retry deadline, else as many as the
// deadline allows (deadlineCleanupRounds at most).
func CleanupRounds(deadlineSeconds int) int {
	if deadlineSeconds <= 0 {
		return cleanupRounds
	}
	return deadlineCleanupRounds
}

// maybeApplied reports a failed call whose write GitHub may have applied.
func maybeApplied(err error) bool {
	var ge *ghclient.Error
	return errors.As(err, &ge) && ge.MaybeApplied
}

func (r *releaser) run(ctx context.Context, creds lockaction.AppCredentials) error {
	client, err := lockaction.NewJobWriterClient(ctx, r.a, r.s.Target, creds, r.s.Knobs, r.d.ClientOptions(), r.s.RunnerTemp)
	if err != nil {
		return err
	}
	if r.s.AttemptCap > 0 && r.s.DeadlineSecs > 0 {
		r.a.Warning(fmt.Sprintf("An attempt ceiling of %d bounds the %ds release retry deadline: a call stops after %d attempts even with time left.",
			r.s.AttemptCap, r.s.DeadlineSecs, r.s.AttemptCap))
	}
	ph := PhaseDeadlines(r.start, r.s.DeadlineSecs)
	mk := func(deadline time.Time, rounds int) (*store.Store, error) {
		t := r.s.Target
		st, err := store.New(store.Options{Client: client, Owner: t.Owner, Repo: t.Repo, Branch: t.Branch, Lock: t.Lock, ServerURL: t.ServerURL,
			Clock: r.d.Clock, Jitter: r.d.Jitter, Budget: budget(deadline), MaxRounds: rounds, ConflictDelay: cleanupConflictDelay})
		if err == nil {
			// Never decide on a version older than the one this job's
			// acquire saw itself admitted in.
			lockaction.SeedAdmissionFloor(st, r.s.RunnerTemp, t, r.s.HolderID)
		}
		return st, err
	}
	if r.s.Target.Branch != lockaction.DefaultStateBranch {
		// Never write onto the default branch (see acquire's guardTarget).
		branchStore, err := mk(ph.Branch, 1)
		if err != nil {
			return err
		}
		if err := branchStore.CheckStateBranch(ctx); err != nil {
			return err
		}
	}
	cfg, warnings, err := r.config(ctx, creds, client, func() (*store.Store, error) { return mk(ph.Config, 1) })
	if err != nil {
		return err
	}
	for _, w := range warnings {
		r.a.Warning(w)
	}
	// The branch and config reads looked the writer App's installation up
	// (or its note named it): its account pins the lock repository owner's
	// id before the write.
	if err := lockaction.CheckOwnerPin(r.s.Target, client); err != nil {
		return err
	}
	st, err := mk(ph.Cleanup, CleanupRounds(r.s.DeadlineSecs))
	if err != nil {
		return err
	}
	res, dec, err := r.cleanup(ctx, st, cfg)
	ctx, res, dec, err = r.outlastSecondary(ctx, client, mk, ph, cfg, res, dec, err)
	if err != nil && (res.Ambiguous || maybeApplied(err)) && len(r.attempted) > 0 {
		// A write may have landed although no answer said so (every answer
		// lost until the deadline): one read at the branch head decides,
		// as acquire's decide does, instead of failing a release that
		// happened.
		settleStore, serr := mk(r.d.Clock.Now().Add(SettleWindow), 1)
		if serr == nil {
			if sres, sdec, how := r.settle(ctx, settleStore, err); how == settleLanded {
				res, dec, err = sres, sdec, nil
			}
		}
	}
	confirmed := r.s.Report.Status == lockstate.StatusConfirmed && r.s.DegradedCode == ""
	switch {
	case err != nil && unrecorded(err) && confirmed:
		return r.unreachable(err)
	case err != nil:
		return err
	}
	if err := r.report(dec, res.SHA); err != nil {
		return err
	}
	if dec.ForeignKept > 0 {
		r.a.Warning(foreignKeptMessage(r.s.HolderID, r.s.Target.Lock, dec.ForeignKept))
	}
	if err := lockaction.RemoveEntryMarkers(r.s.RunnerTemp, r.s.Target, r.s.HolderID); err != nil {
		r.a.Warning("Could not remove this job's admission and entry markers: " + err.Error())
	}
	// The organization seat first, then the machine slot (machineslot.go).
	r.freeMachineSlot(ctx)
	r.log(dec)
	if r.s.DegradedCode != "" {
		return fmt.Errorf("build lock exact cleanup completed with cleanup-result=%s after report validation failed: %s", dec.Result, r.s.DegradedCode)
	}
	return nil
}

// config is the lock config the cleanup decides with: acquire's read of it
// when that is younger than lockaction.ConfigNoteMaxAge (one request less,
// confignote.go), else a read; an unreadable file is the safe defaults.
func (r *releaser) config(ctx context.Context, creds lockaction.AppCredentials, client *ghclient.Client, mk func() (*store.Store, error)) (lockstate.Config, []string, error) {
	if snap, age, ok := lockaction.NotedConfig(r.s.RunnerTemp, r.s.Target, creds, client, r.d.Clock.Now()); ok {
		r.a.Println(fmt.Sprintf("Using the lock config this job's acquire read %s ago.", age.Round(time.Second)))
		return snap.Config, snap.Warnings, nil
	}
	cfgStore, err := mk()
	if err != nil {
		return lockstate.Config{}, nil, err
	}
	// A conditional read with acquire's answer: a 304, which costs no
	// primary rate limit, while the file is unchanged and this step uses
	// acquire's token (lockaction.SeedNotedConfig).
	lockaction.SeedNotedConfig(r.s.RunnerTemp, r.s.Target, creds, cfgStore)
	cfg, warnings, err := cfgStore.LoadConfig(ctx)
	if err != nil {
		if !unrecorded(err) {
			return lockstate.Config{}, nil, err
		}
		warnings = append(warnings, "Unable to read the lock config; using safe defaults: "+err.Error())
		cfg = lockstate.DefaultConfig()
	}
	return cfg, warnings, nil
}

// cleanup is the cleanup phase: cleanupIdentity by compare-and-swap, with
// an ambiguous write reconciled from the state read afterwards.
func (r *releaser) cleanup(ctx context.Context, st *store.Store, cfg lockstate.Config) (store.Result, lockstate.CleanupDecision, error) {
	req := lockstate.CleanupRequest{
		HolderID:      r.s.HolderID,
		RunAttempt:    r.s.Run.RunAttempt,
		RunnerID:      r.s.RunnerID,
		Report:        r.s.Report,
		ReservationID: actionkit.NewReservationID(),
		Identity:      r.identity(),
		ServerURL:     r.s.Target.ServerURL,
	}
	if !r.s.Explicit {
		// A computed holder id is this job's own: an entry of it recorded
		// on another runner belongs to another job sharing the id.
		req.RunnerName = req.Identity.RunnerName
	}
	var final lockstate.CleanupDecision
	var handedTo []string
	noticed, haveNoticed := lockaction.NoticedAt(r.s.RunnerTemp, r.s.Target, r.s.HolderID)
	update := func() (store.Result, error) {
		return st.Update(ctx, "Release "+r.s.Target.Lock, func(s *lockstate.State) error {
			now := r.d.Clock.Now()
			next, d, err := lockstate.Cleanup(s, cfg, req, now)
			if err != nil {
				return err
			}
			final = d
			if !d.Changed {
				return store.ErrNoChange
			}
			r.attempted = append(r.attempted, d)
			handedTo = nil
			if d.Released && lockstate.HandoffAllowed(next) {
				// Direct handoff: the seat this release freed goes to the
				// next eligible waiters in this same write, so their own
				// admission writes disappear (lockstate.Handoff).
				after, h, err := lockstate.Handoff(next, cfg, now)
				if err != nil {
					return err
				}
				if h.Changed {
					next, handedTo = after, h.Admitted
				}
			}
			if d.Released && haveNoticed {
				// How long this job used the seat, from its acquire's
				// notice to this release's start: the pace waiters poll
				// by (lockstate.RecentHold). Not to this round: a release
				// whose writes lost races to a burst's joins logged 16 s
				// for a 5 s hold, and waiters paced by it slept through
				// seats handed to them (docs/performance.md §17).
				next.NoteHold(now, r.start.Sub(noticed))
			}
			*s = *next
			return nil
		})
	}
	res, err := update()
	if err != nil {
		return res, final, err
	}
	if !res.Written && !final.Released && !final.QueueCleaned {
		// The holder id may be held although the read shows nothing to
		// release: a lagging replica can serve an older version. Every such
		// conclusion is confirmed at the branch head, with this job's
		// admission marker or without it (another job releasing the id).
		fc, ferr := lockaction.CheckHeldAbsence(ctx, st, r.s.RunnerTemp, r.s.Target, r.s.HolderID)
		if ferr == nil && !fc.Checked {
			fc, ferr = lockaction.ConfirmAbsenceAtHead(ctx, st, r.s.Target, r.s.HolderID)
		}
		switch {
		case ferr != nil && res.SHA == "" && unrecorded(ferr):
			// No state file was read and the branch head could not be
			// read either: the reference's unverified branch.
			return res, final, fmt.Errorf("%s: the lock-state branch of %s could not be verified and no lock state was found for %s: %w", CodeLockStateUnverified, r.s.Target.Lock, r.s.HolderID, ferr)
		case ferr != nil:
			return res, final, ferr
		case fc.Found:
			r.a.Warning(fmt.Sprintf("The first read of %s was stale (it did not show %s); releasing from the state at the branch head, commit %s.", r.s.Target.Lock, r.s.HolderID, shortSHA(fc.Commit)))
			if res, err = update(); err != nil {
				return res, final, err
			}
		case fc.Checked:
			r.a.Notice(fmt.Sprintf("Confirmed at the branch head (commit %s) that %s holds nothing of %s.", shortSHA(fc.Commit), r.s.HolderID, r.s.Target.Lock))
		}
		if ferr == nil && !fc.Found {
			// The acquire step may have died with its write in flight.
			late, lerr := lockaction.AwaitInFlightWrite(ctx, st, r.d.Clock, r.s.RunnerTemp, r.s.Target, r.s.HolderID)
			if lerr != nil {
				return res, final, lerr
			}
			if late.Found {
				r.a.Warning(fmt.Sprintf("This job's acquire died with a write of %s in flight, and it landed after the first check (commit %s); releasing it.", r.s.Target.Lock, shortSHA(late.Commit)))
				if res, err = update(); err != nil {
					return res, final, err
				}
			}
		}
	}
	if res.Ambiguous {
		final = reconcile(final, r.attempted, res.State)
	}
	if res.Written && final.MigratedTo != 0 {
		r.a.Printf("%s had drained for its pending upgrade: this release also upgraded it to schema %d, with the waiting jobs in their order; admission resumes under the new rules.",
			r.s.Target.Lock, final.MigratedTo)
	}
	if res.Written && len(handedTo) > 0 {
		r.a.Printf("Handed the freed seat of %s directly to %s (admitted in the release write; each notices on its next poll).",
			r.s.Target.Lock, strings.Join(handedTo, ", "))
	}
	return res, final, nil
}

func shortSHA(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// identity is the caller identity an incident is built from.
func (r *releaser) identity() lockstate.Identity {
	id := lockaction.IdentityFor(r.s.Run, r.s.Target, "", r.s.RunnerID, "", r.start)
	id.HolderID = r.s.HolderID
	return id
}

// reconcile merges what earlier rounds may have applied without an
// acknowledgement into the final decision, trusting only the state read
// afterwards for the reservation (it may have been consumed since).
func reconcile(final lockstate.CleanupDecision, attempted []lockstate.CleanupDecision, s *lockstate.State) lockstate.CleanupDecision {
	out := final
	for _, a := range attempted {
		out.Released = out.Released || a.Released
		out.QueueCleaned = out.QueueCleaned || a.QueueCleaned
		if out.Reservation == nil && a.Reservation != nil {
			for _, res := range s.Reservations {
				if res.ReservationID == a.Reservation.ReservationID {
					c := res
					out.Reservation = &c
				}
			}
		}
	}
	out.HeldBy, out.HeldByRunURL, out.IncidentID = "", "", ""
	if len(s.Holders) > 0 {
		out.HeldBy, out.HeldByRunURL = s.Holders[0].HolderID, s.Holders[0].RunURL
	}
	global := s.SchemaVersion >= 5 && s.ActiveIncident != nil
	if global {
		out.IncidentID = s.ActiveIncident.IncidentID
	}
	switch {
	case global:
		out.Result = lockstate.ResultGlobalQuarantined
	case out.Reservation != nil && out.Reservation.State == lockstate.ReservationCooldown:
		out.Result = lockstate.ResultCooldownStarted
	case out.Reservation != nil:
		out.Result = lockstate.ResultQuarantined
	case out.Released:
		out.Result = lockstate.ResultReleased
	case out.QueueCleaned:
		out.Result = lockstate.ResultQueueCleaned
	default:
		out.Result = lockstate.ResultNoop
	}
	return out
}

// unrecorded reports a failure that leaves the record in doubt: an
// exhausted retry budget or an elapsed phase deadline (including a request
// aborted in flight).
func unrecorded(err error) bool {
	var ge *ghclient.Error
	if errors.As(err, &ge) && ge.DeadlineElapsed {
		return true
	}
	return ghclient.IsExhausted(err) || errors.Is(err, context.DeadlineExceeded)
}

// unreachable reports lock-release-unreachable: confirmed external cleanup
// whose record could not be confirmed in the lock state.
func (r *releaser) unreachable(cause error) error {
	dec := lockstate.CleanupDecision{Result: lockstate.ResultLockReleaseUnreachable}
	if err := r.report(dec, ""); err != nil {
		return err
	}
	return fmt.Errorf("could not confirm the release of %s for %s: %v. External cleanup was confirmed, so the licensed resource was returned and only its record is in doubt (cleanup-result=%s). If the removal did not land, the scheduled reaper quarantines the stale holder entry, which keeps consuming capacity until a same-runner acquire reclaims it or an operator runs the recovery runbook",
		r.s.Target.Lock, r.s.HolderID, cause, lockstate.ResultLockReleaseUnreachable)
}

// outlastSecondary runs the cleanup again when it failed at its deadline
// (or on a secondary limit) after GitHub's secondary rate limit held this
// release back: the time GitHub told it to wait does not count against
// release-retry-deadline-seconds (divergences R12). Each secondary-limit
// wait it was held by earns one more cleanup phase of the phase's own
// length after the wait ends, and nothing runs past SecondaryOverrun after
// the deadline. When the failed run's write may have landed (its answer
// was lost), the branch head decides first: landed is reported as settle
// reports it, an entry still there runs the cleanup again, and a head that
// cannot be read leaves the failure as it was.
func (r *releaser) outlastSecondary(ctx context.Context, client *ghclient.Client, mk func(time.Time, int) (*store.Store, error), ph Phases, cfg lockstate.Config,
	res store.Result, dec lockstate.CleanupDecision, err error) (context.Context, store.Result, lockstate.CleanupDecision, error) {
	if ph.Cleanup.IsZero() {
		return ctx, res, dec, err
	}
	phase, limit, used, extended := ph.Cleanup.Sub(ph.Config), ph.Cleanup.Add(SecondaryOverrun), r.start, false
	for err != nil && (unrecorded(err) || ghclient.IsSecondaryLimit(err)) && ctx.Err() == nil {
		until := client.SecondaryHeldUntil()
		if !until.After(used) {
			break // no secondary limit held this run back: its own deadline ended it
		}
		used = until
		from := until
		if now := r.d.Clock.Now(); now.After(from) {
			from = now
		}
		if !from.Before(limit) {
			break
		}
		if !extended {
			// Run's window ends at the deadline: the rest runs on a
			// context that lasts until the overrun's limit.
			ctx, extended = r.extend(limit.Sub(r.d.Clock.Now())+ghclient.LateAttemptTimeout+cleanupConflictDelay*2), true
		}
		if (res.Ambiguous || maybeApplied(err)) && len(r.attempted) > 0 {
			// A write may have landed: run again only when the head shows
			// this job's entry still there.
			sst, serr := mk(from.Add(SettleWindow), 1)
			if serr != nil {
				return ctx, res, dec, serr
			}
			sres, sdec, how := r.settle(ctx, sst, err)
			switch how {
			case settleLanded:
				return ctx, sres, sdec, nil
			case settleUnknown:
				return ctx, res, dec, err
			}
		}
		r.a.Warning(fmt.Sprintf("GitHub's secondary rate limit held back the release of %s (until %s) and its release-retry-deadline-seconds ran out; trying again after the wait (at most %s past the deadline), because a release that gives up leaves the seat recorded as held until the reaper quarantines it.",
			r.s.Target.Lock, until.UTC().Format(time.RFC3339), SecondaryOverrun))
		deadline := from.Add(phase)
		if deadline.After(limit) {
			deadline = limit
		}
		st, merr := mk(deadline, CleanupRounds(r.s.DeadlineSecs))
		if merr != nil {
			return ctx, res, dec, merr
		}
		res, dec, err = r.cleanup(ctx, st, cfg)
	}
	return ctx, res, dec, err
}

// foreignKeptMessage explains entries of this job's holder id that belong to
// another job of the same run attempt on another runner.
func foreignKeptMessage(holderID, lock string, n int) string {
	return fmt.Sprintf("Kept %d entry(ies) of holder id %s on %s recorded on runner(s) other than this one: another job of this run attempt uses the same holder id, so they are not this job's to release (%s). Give each matrix leg a distinct holder-id-suffix.",
		n, holderID, lock, lockstate.CodeHolderIDCollision)
}
