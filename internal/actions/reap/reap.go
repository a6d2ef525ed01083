// Package reap is the scheduled reaper of the build lock (cmd/reap, the
// "Reap stale build locks" workflow; spec §4.1, §4.2, build-lock-reference
// "Stale Recovery"). It is the only component that observes other
// repositories' workflow runs and the only one that turns a live-looking
// entry into a stale one.
//
// One run, inside a 10-minute job:
//
//  1. Read the state (scan deadline: 8 minutes from start).
//  2. Holders first (they hold capacity), earliest lease first: read each
//     holder's run (and exact job) with the reader App and evaluate the
//     rules of lockstate.EvaluateHolder. Once the holders are read, every
//     proven stale holder is checkpointed in one compare-and-swap write
//     ("Reap capacity-critical stale state for <lock>"): a quarantine at
//     schema >= 4, a freed slot below. Unlike the reference, which stops
//     after one holder, every proven stale holder is reaped in one run.
//  3. At schema 5 without an active incident, every quarantine older than
//     the lease grace whose owning run is proven finished is checkpointed
//     as a cooldown ("Auto-recover stale quarantine for <lock>"), or freed
//     when the configured cooldown is 0.
//  4. Routine queue cleanup: the FIFO queue is scanned in order and every
//     entry proven finished is removed in one write ("Reap completed queue
//     entries for <lock>"), together with expired cooldowns; the others
//     keep their order.
//
// Writes use a separate deadline (9 minutes from start), so a scan that ran
// out still leaves a minute to checkpoint what it proved. A conflicting
// write is re-applied to the fresh state with only the proven changes: an
// entry that changed in any run-identity field (for example a rerun's fresh
// holder) is left alone.
//
// Bounded work: before any per-entry work, a document with more
// than MaxStateEntries entries (holders, queue entries and reservations) or
// a canonical encoding over MaxStateBytes is refused with
// REAP_STATE_TOO_LARGE (docs/runbook.md "Oversized lock state"). Every run
// has a request budget (input request-budget or BUILD_LOCK_REQUEST_BUDGET,
// default DefaultRequestBudget) counted at the transport: every request
// that leaves the process, 304 revalidations, installation lookups and
// token mints included. The status scan may use the budget minus a reserve
// kept for checkpoint writes (WriteReserve), and it also stops once GitHub
// reports that less than RateFloorPercent of an installation's hourly limit
// is left. A spent budget is not a failure: what was proven is
// checkpointed, the rest is kept unchanged, and the run warns with
// REAP_REQUEST_BUDGET_SPENT and exits 0, so the next scheduled run
// continues. Evidence reads are memoized per owner, repository, run and
// attempt (Evidencer), so only a document with hundreds of distinct runs
// reaches the budget.
//
// Failing closed: unknown evidence never proves anything (except an
// expired holder lease with an unavailable run status, which quarantines
// but never frees at schema >= 4). When the scan deadline expires, nothing
// unverified changes, the already proven prefix of the queue is still
// checkpointed, and the run fails visibly with REAP_DEADLINE_ELAPSED so
// delivery monitoring escalates. A status read that is neither proof nor
// "unknown" (a 403, an unverifiable repository) keeps its entry, the rest of
// the scan continues, and the run fails with REAP_EVIDENCE_UNAVAILABLE.
//
// Every decision is reported in the job summary with the evidence it was
// based on, and as outputs reaped and state-sha. operation=recover and
// operation=recover-incident are delegated to internal/actions/recover, so
// the reap-stale-locks action keeps serving every operation.
package reap

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/plant"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/recovery"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/requestbudget"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/store"
)

// Budgets (spec §4.1, Appendix A). ScanBudget < TotalBudget < the
// workflow's 10-minute timeout, so a run that exhausts its scan still has a
// minute to checkpoint and a minute to report before the job is killed.
const (
	// ScanBudget bounds every state and status read, from the start.
	ScanBudget = 8 * time.Minute
	// TotalBudget bounds every checkpoint write, from the start.
	TotalBudget = 9 * time.Minute
	// DefaultLeaseGrace is the quarantine auto-recovery grace: the default
	// holder lease (lease-minutes 240), so a quarantine is only recovered
	// once its holder could no longer legitimately hold the seat.
	DefaultLeaseGrace = 240 * time.Minute
	// OperationReap is the scheduled operation.
	OperationReap = "reap"
)

// Request budget of one reap run (docs/runbook.md "Request budget").
const (
	// DefaultRequestBudget is 6% of the 5,000 requests an hour a GitHub
	// App installation gets at minimum: a run with a normal queue needs a
	// few dozen requests (memoized evidence, one checkpoint per stale
	// holder); only a huge or hostile document reaches it.
	DefaultRequestBudget = 300
	// MinRequestBudget leaves room for the fixed cost of a run (two
	// installation lookups and token mints, the state and config reads, a
	// checkpoint) and a few evidence reads.
	MinRequestBudget = 25
	// MaxRequestBudget is a fifth of the minimum hourly limit: an operator
	// may raise the budget for a one-off cleanup, never further.
	MaxRequestBudget = 1000
	// MinWriteReserve is the least of the budget kept back from the status
	// scan for checkpoint writes; see WriteReserve.
	MinWriteReserve = 10
	// RateFloorPercent stops the status scan once a response reports that
	// less than this share of its installation's hourly limit is left:
	// the last fifth of the hour belongs to the organization's jobs.
	RateFloorPercent = 20
)

// RequestBudget is the reaper's request-budget setting.
var RequestBudget = requestbudget.Knob{Default: DefaultRequestBudget, Min: MinRequestBudget, Max: MaxRequestBudget}

// WriteReserve is the part of a budget the status scan leaves for
// checkpoint writes: a tenth, at least MinWriteReserve (a checkpoint costs
// one request, plus a read and a write per lost compare-and-swap round).
func WriteReserve(budget int) int { return max(MinWriteReserve, budget/10) }

// Bounds of a document the reaper works on (docs/state-schema.md "Size
// bounds"), checked before any per-entry work.
const (
	// MaxStateEntries bounds holders + queue entries + reservations. Real
	// locks hold a few dozen (one per licensed seat and per waiting job);
	// a full scan of 1,000 entries from distinct runs costs at most about
	// 3,000 requests (run, repository probe and job list each), under one
	// installation's minimum hourly limit, spread by the budget over
	// several runs.
	MaxStateEntries = 1000
	// MaxStateBytes bounds the canonical encoding of the document (what a
	// checkpoint writes): 1 MiB, the largest file the Contents API still
	// returns inline, and far above 1,000 real entries (about 400 bytes
	// each).
	MaxStateBytes = 1 << 20
)

// Stable failure codes (spec §1.15).
const (
	// CodeDeadlineElapsed: the scan deadline expired; unverified entries
	// were kept and the proven part was checkpointed.
	CodeDeadlineElapsed = "REAP_DEADLINE_ELAPSED"
	// CodeEvidenceUnavailable: some status reads failed in a way that is
	// neither proof nor "unknown" (for example 403: the reader App lacks
	// actions: read); those entries were kept.
	CodeEvidenceUnavailable = "REAP_EVIDENCE_UNAVAILABLE"
	// CodeCheckpointFailed: a proven transition could not be written.
	CodeCheckpointFailed = "REAP_CHECKPOINT_FAILED"
	// CodeRequestBudgetSpent: the run's request budget (or the rate-limit
	// floor) stopped the status scan; proven changes were checkpointed,
	// the rest was kept, and the next run continues. A warning, not a
	// failure: the run exits 0 unless something else failed.
	CodeRequestBudgetSpent = "REAP_REQUEST_BUDGET_SPENT"
	// CodeStateTooLarge: the document is over MaxStateEntries or
	// MaxStateBytes and was refused before any per-entry work.
	CodeStateTooLarge = "REAP_STATE_TOO_LARGE"
	// RuleReaderCredentials: the reader App credentials are missing or
	// invalid; there is deliberately no fallback to the writer App.
	RuleReaderCredentials = "reader-credentials"
)

// Commit messages (spec §2.1).
const (
	msgHolder     = "Reap capacity-critical stale state for "
	msgQuarantine = "Auto-recover stale quarantine for "
	msgQueue      = "Reap completed queue entries for "
	msgPrune      = "Prune expired cooldowns for "
)

// Deps are the injectable edges of the reaper: Getenv and Stdout are
// required; Clock, Jitter, Transport and NewID default to the real ones.
// Deadlines are context deadlines on the runtime clock (virtual inside a
// testing/synctest bubble).
type Deps = recovery.Deps

// Run executes the reap-stale-locks action described by the environment
// d.Getenv returns: operation=reap (the default) reaps; recover and
// recover-incident are delegated to internal/actions/recover. It is usable
// in-process (demos, tests): point GITHUB_API_URL and d.Transport at an
// emulator. It returns nil or the failure; outputs and the summary are
// written either way where possible.
func Run(ctx context.Context, d Deps) error {
	d, err := d.WithDefaults()
	if err != nil {
		return err
	}
	a := edgesettings.IO(d.Getenv, d.Stdout)
	s, err := LoadSettings(d.Getenv)
	return run(ctx, a, d, s, err)
}

// Main runs the action and maps the result to the process exit code (0, 1,
// or 130/143 after a runner signal), reporting a failure as one ::error::
// line.
func Main(ctx context.Context, d Deps, sig *lockaction.Signals) int {
	d, err := d.WithDefaults()
	if err != nil {
		return lockaction.ExitFailure
	}
	a := edgesettings.IO(d.Getenv, d.Stdout)
	s, err := LoadSettings(d.Getenv)
	return lockaction.Finish(a, sig, run(ctx, a, d, s, err))
}

// run is the action on its settings; serr is LoadSettings' error, returned
// once the secrets are masked and before any request.
func run(ctx context.Context, a *actionio.IO, d Deps, s Settings, serr error) error {
	if ctx == nil {
		return errors.New("reap: nil context")
	}
	if s.Operation == recovery.OperationRecover || s.Operation == recovery.OperationRecoverIncident {
		return recovery.Execute(ctx, a, d, s.Recover, serr)
	}
	for _, m := range s.Masks() {
		a.Mask(m)
	}
	for _, w := range s.Budget.Warnings {
		a.Warning(w)
	}
	if serr != nil {
		return serr
	}
	start := d.Clock.Now()
	budget, err := requestbudget.New(s.Budget.Limit)
	if err != nil {
		return err
	}
	d.Transport = budget.Transport(d.Transport)
	lk, err := recovery.OpenLock(ctx, a, d, s.Lock)
	if err != nil {
		return err
	}
	creds := s.Reader
	// Every request of the run is under runCtx (the whole budget); the
	// status scan is under scanCtx, which stops at the budget minus the
	// write reserve, or when stopScan is called (the rate-limit floor).
	runCtx, cancelRun := budget.Within(ctx, budget.Limit())
	defer cancelRun()
	scanCtx, cancelScan := context.WithTimeout(runCtx, ScanBudget)
	defer cancelScan()
	scanCtx, stopScan := context.WithCancelCause(scanCtx)
	defer stopScan(nil)
	scanCtx, cancelPhase := budget.Within(scanCtx, budget.Limit()-WriteReserve(budget.Limit()))
	defer cancelPhase()
	writeCtx, cancelWrite := context.WithTimeout(runCtx, TotalBudget)
	defer cancelWrite()

	// The knobs' warnings were reported by the writer client.
	readers := &readerClients{a: a, d: d, t: lk.Target, creds: creds, knobs: s.Lock.Knobs.API, byOwner: map[string]*ghclient.Client{}}
	r := &reaper{
		a: a, d: d, lk: lk, start: start,
		ev:       NewEvidencer(readers.get, d.Clock, a.Warning),
		cfg:      lockstate.DefaultConfig(),
		grace:    DefaultLeaseGrace,
		budget:   budget,
		stopScan: stopScan,
	}
	return r.run(ctx, scanCtx, writeCtx)
}

// reaper is the state of one reap run.
type reaper struct {
	a     *actionio.IO
	d     Deps
	lk    *recovery.Lock
	ev    *Evidencer
	start time.Time
	cfg   lockstate.Config
	grace time.Duration

	cfgLoaded bool
	latest    store.Snapshot
	rows      []row
	reaped    bool // a checkpoint landed (or may have: ambiguous)
	commits   int
	notes     []string

	deadline      bool // the scan deadline expired
	evidenceErrs  []error
	checkpointErr []error

	budget   *requestbudget.Budget
	stopScan context.CancelCauseFunc // stops the status scan with a cause
	// budgetStop: the request budget or the rate-limit floor stopped the
	// scan; budgetKept counts the entries it left unverified.
	budgetStop bool
	floorStop  bool
	// secondaryStop: a secondary rate limit stopped the run (errSecondaryLimit).
	secondaryStop bool
	budgetKept    int
	// refusal is the REAP_STATE_TOO_LARGE refusal, if any.
	refusal *Error
}

// errRateFloor is the cause that stops the status scan at the rate-limit
// floor.
var errRateFloor = errors.New("rate-limit floor reached")

// errSecondaryLimit stops the status scan when GitHub's secondary rate
// limit holds the run's requests back past its deadline (ghclient sends
// nothing inside the wait): the run stops cleanly and says so, and the next
// scheduled run continues.
var errSecondaryLimit = errors.New("secondary rate limit")

// row is one line of the decision report.
type row struct {
	kind      lockstate.ReapKind
	id        string
	runURL    string
	obs       *Observation
	times     string
	verdict   string
	action    string
	unchecked bool // not verified: kept unchanged
}

func (r *reaper) lock() string { return r.lk.Target.Lock }

// observeRow reads the evidence for one row. When the scan deadline has
// elapsed or the read fails, it records rw as "kept unchanged" (never
// verified, so never changed) and reports false; otherwise rw carries the
// observation.
func (r *reaper) observeRow(ctx, scanCtx context.Context, rw *row, read func(context.Context) (Observation, error)) (Observation, bool) {
	if r.deadline || ctx.Err() != nil {
		rw.unchecked, rw.verdict, rw.action = true, "not verified: scan deadline elapsed", "kept unchanged"
		r.rows = append(r.rows, *rw)
		return Observation{}, false
	}
	o, why, ok := r.observe(ctx, scanCtx, read)
	if !ok {
		rw.unchecked, rw.verdict, rw.action = true, why, "kept unchanged"
		r.rows = append(r.rows, *rw)
		return Observation{}, false
	}
	rw.obs = &o
	return o, true
}

func (r *reaper) run(ctx, scanCtx, writeCtx context.Context) error {
	if err := recovery.VerifyLockRepository(scanCtx, r.lk); err != nil {
		return err
	}
	// The state is read at the branch head (refs API, then the file at that
	// commit): a lagging replica could otherwise hide the newest holders and
	// let the run conclude "No stale state found" from an old version.
	snap, _, err := r.lk.Store.LoadFresh(scanCtx)
	if err != nil {
		switch {
		case ctx.Err() == nil && ghclient.IsSecondaryLimit(err):
			r.secondaryStop, r.budgetStop = true, true
			return r.finish()
		case ctx.Err() == nil && r.scanStopped(scanCtx):
			r.budgetStop = true
			return r.finish()
		case ctx.Err() == nil && scanCtx.Err() != nil:
			r.deadline = true
			return r.finish()
		}
		return err
	}
	r.latest = snap
	if r.refusal = CheckStateBounds(snap.State, r.lock()); r.refusal != nil {
		return r.finish()
	}

	r.scanHolders(ctx, scanCtx, writeCtx)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	r.scanQuarantines(ctx, scanCtx, writeCtx)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	r.scanQueue(ctx, scanCtx, writeCtx)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return r.finish()
}

// CheckStateBounds refuses a document over MaxStateEntries entries or
// MaxStateBytes of canonical encoding (REAP_STATE_TOO_LARGE), before any
// per-entry work: such a document is a runaway or hostile writer, and
// verifying it entry by entry would spend the installation's hourly
// budget. It returns nil for a document within both bounds.
func CheckStateBounds(st *lockstate.State, lock string) *Error {
	if st == nil {
		return nil
	}
	n := len(st.Holders) + len(st.Queue) + len(st.Reservations)
	what := ""
	if n > MaxStateEntries {
		what = fmt.Sprintf("holds %d entries (%d holders, %d queued, %d reservations), over the reaper's bound of %d",
			n, len(st.Holders), len(st.Queue), len(st.Reservations), MaxStateEntries)
	} else if data, err := lockstate.Encode(st); err == nil && len(data) > MaxStateBytes {
		what = fmt.Sprintf("encodes to %d bytes, over the reaper's bound of %d", len(data), MaxStateBytes)
	}
	if what == "" {
		return nil
	}
	return &Error{Code: CodeStateTooLarge, Message: fmt.Sprintf(
		"refused to reap: the state document of %s %s, so nothing was read per entry and nothing was written. "+
			"No real lock comes close: find the writer in the state branch's history, then repair the document by a reviewed commit "+
			"(docs/runbook.md \"Oversized lock state\")", lock, what)}
}

// scanStopped reports whether the status scan was stopped by the request
// budget or the rate-limit floor (not by its deadline or the runner).
func (r *reaper) scanStopped(scanCtx context.Context) bool {
	return requestbudget.Spent(scanCtx) || errors.Is(context.Cause(scanCtx), errRateFloor) || errors.Is(context.Cause(scanCtx), errSecondaryLimit)
}

// checkFloor stops the status scan when GitHub reported that less than
// RateFloorPercent of an installation's hourly limit is left.
func (r *reaper) checkFloor(scanCtx context.Context) {
	if scanCtx.Err() == nil && r.budget.BelowFloor(RateFloorPercent) {
		r.floorStop = true
		r.stopScan(errRateFloor)
	}
}

// observe runs one status read and classifies its failure: the scan
// deadline (stop scanning), a cancelled run (stop everything) or an
// evidence error (keep this entry, continue).
func (r *reaper) observe(ctx, scanCtx context.Context, read func(context.Context) (Observation, error)) (Observation, string, bool) {
	r.checkFloor(scanCtx)
	stopped := r.scanStopped(scanCtx)
	if scanCtx.Err() != nil && !stopped {
		r.deadline = ctx.Err() == nil
		return Observation{}, "scan deadline elapsed before this entry was read", false
	}
	// After the budget stopped the scan, reads still run: a memoized
	// answer costs nothing and can still prove an entry; any other read
	// fails at once without a request.
	o, err := read(scanCtx)
	if err == nil {
		return o, "", true
	}
	switch {
	case ctx.Err() != nil:
		return o, "cancelled", false
	case ghclient.IsSecondaryLimit(err):
		r.secondaryStop, r.budgetStop = true, true
		r.budgetKept++
		r.stopScan(errSecondaryLimit)
		return o, "not verified: " + r.stopReason(scanCtx), false
	case r.scanStopped(scanCtx):
		r.budgetStop = true
		r.budgetKept++
		return o, "not verified: " + r.stopReason(scanCtx), false
	case scanCtx.Err() != nil:
		r.deadline = true
		return o, "scan deadline elapsed during the status read", false
	}
	r.evidenceErrs = append(r.evidenceErrs, err)
	return o, "status unavailable: " + err.Error(), false
}

// stopReason says why the status scan stopped before the deadline.
func (r *reaper) stopReason(scanCtx context.Context) string {
	if errors.Is(context.Cause(scanCtx), errSecondaryLimit) {
		return "GitHub's secondary rate limit holds this App's requests back past the scan deadline"
	}
	if errors.Is(context.Cause(scanCtx), errRateFloor) {
		return fmt.Sprintf("an installation's rate limit fell below %d%% of its hourly limit (%s)", RateFloorPercent, CodeRequestBudgetSpent)
	}
	return fmt.Sprintf("the run's request budget was spent (%d of %d requests, %d kept for checkpoint writes; %s)",
		r.budget.Used(), r.budget.Limit(), WriteReserve(r.budget.Limit()), CodeRequestBudgetSpent)
}

// scanHolders reads every holder's evidence in lease order, then reaps
// every one proven stale in one commit. One commit, not one per holder as
// they are proven: each commit changed the state under the waiters the
// previous one had just freed a seat for, and the admission they wrote on
// the version between two checkpoints lost its compare-and-swap to the
// second (docs/performance.md §12). The reads are sequential: concurrent
// reads on one client could not all honor a Retry-After that one of them
// was answered with (the simulation's checker caught a read sent inside
// one), and the few holders of a lock are read in a second or two.
func (r *reaper) scanHolders(ctx, scanCtx, writeCtx context.Context) {
	holders := append([]lockstate.Holder(nil), r.latest.State.Holders...)
	// Capacity-critical first: earliest lease first, so a scan deadline
	// leaves the likeliest stale holders already proven.
	sort.SliceStable(holders, func(i, j int) bool { return leaseBefore(holders[i].ExpiresAt, holders[j].ExpiresAt) })
	var req lockstate.ReapRequest
	var provenRows []int
	for _, h := range holders {
		rw := row{kind: lockstate.ReapHolder, id: h.HolderID, runURL: h.RunURL,
			times: fmt.Sprintf("acquired %s, lease until %s", orDash(h.AcquiredAt), orDash(h.ExpiresAt))}
		o, ok := r.observeRow(ctx, scanCtx, &rw, func(c context.Context) (Observation, error) { return r.ev.ForHolder(c, h) })
		if !ok {
			continue
		}
		v := lockstate.EvaluateHolder(h, o.Evidence, r.d.Clock.Now())
		rw.verdict = verdictText(v)
		rw.action = "kept"
		if v.Stale {
			req.Holders = append(req.Holders, lockstate.HolderEvidence{Holder: h, Evidence: o.Evidence, ReservationID: r.d.NewID()})
			provenRows = append(provenRows, len(r.rows))
		}
		r.rows = append(r.rows, rw)
	}
	if len(req.Holders) == 0 || ctx.Err() != nil {
		return
	}
	actions := r.checkpoint(writeCtx, msgHolder+r.lock(), req)
	for k, i := range provenRows {
		r.rows[i].action = actions[k]
	}
}

func (r *reaper) scanQuarantines(ctx, scanCtx, writeCtx context.Context) {
	st := r.latest.State
	if st.SchemaVersion < 5 {
		return
	}
	now := r.d.Clock.Now()
	for _, q := range st.Reservations {
		if q.State != lockstate.ReservationQuarantine {
			continue
		}
		rw := row{kind: lockstate.ReapQuarantine, id: q.ReservationID, runURL: q.RunURL,
			times: fmt.Sprintf("created %s", orDash(q.CreatedAt))}
		created, ok := lockstate.ParseTime(q.CreatedAt)
		switch {
		case st.ActiveIncident != nil:
			rw.verdict, rw.action = "auto-recovery skipped: account incident "+st.ActiveIncident.IncidentID+" is active", "kept"
		case !ok || created.Add(r.grace).After(now):
			rw.verdict, rw.action = fmt.Sprintf("younger than the %s auto-recovery grace", r.grace), "kept"
		}
		if rw.action != "" {
			r.rows = append(r.rows, rw)
			continue
		}
		o, ok := r.observeRow(ctx, scanCtx, &rw, func(c context.Context) (Observation, error) { return r.ev.ForReservation(c, q) })
		if !ok {
			continue
		}
		v := lockstate.QuarantineOwnerFinished(q, o.Evidence)
		rw.verdict = verdictText(v)
		if !v.Stale && !plant.Enabled(plant.QuarantineOnTimeAlone) { // planted bug (tests only)
			rw.action = "kept"
			r.rows = append(r.rows, rw)
			continue
		}
		if !r.cfgLoaded {
			cfg, warnings, err := r.lk.Store.LoadConfig(scanCtx)
			for _, w := range warnings {
				r.a.Warning(w)
			}
			if err != nil {
				why := "lock config unavailable: " + err.Error()
				switch {
				case ctx.Err() == nil && r.scanStopped(scanCtx):
					r.budgetStop = true
					r.budgetKept++
					why = "not verified: lock config not read: " + r.stopReason(scanCtx)
				case ctx.Err() == nil && scanCtx.Err() != nil:
					r.deadline = true
				default:
					r.evidenceErrs = append(r.evidenceErrs, err)
				}
				rw.unchecked, rw.verdict, rw.action = true, why, "kept unchanged"
				r.rows = append(r.rows, rw)
				continue
			}
			r.cfg, r.cfgLoaded = cfg, true
		}
		req := lockstate.ReapRequest{LeaseGrace: r.grace, Quarantines: []lockstate.QuarantineEvidence{{Reservation: q, Evidence: o.Evidence}}}
		rw.action = r.checkpoint(writeCtx, msgQuarantine+r.lock(), req)[0]
		r.rows = append(r.rows, rw)
	}
}

func (r *reaper) scanQueue(ctx, scanCtx, writeCtx context.Context) {
	var proven []lockstate.QueueEvidence
	var provenRows []int
	for _, e := range r.latest.State.Queue {
		rw := row{kind: lockstate.ReapQueueEntry, id: e.HolderID, runURL: e.RunURL, times: "queued " + orDash(e.QueuedAt)}
		o, ok := r.observeRow(ctx, scanCtx, &rw, func(c context.Context) (Observation, error) { return r.ev.ForEntry(c, e) })
		if !ok {
			continue
		}
		v := lockstate.QueueEntryFinished(e, o.Evidence)
		rw.verdict = verdictText(v)
		rw.action = "kept"
		if v.Stale {
			proven = append(proven, lockstate.QueueEvidence{Entry: e, Evidence: o.Evidence})
			provenRows = append(provenRows, len(r.rows))
		}
		r.rows = append(r.rows, rw)
	}
	if ctx.Err() != nil {
		return
	}
	// One write for the proven FIFO prefix and any expired cooldowns.
	msg := msgQueue + r.lock()
	if len(proven) == 0 {
		msg = msgPrune + r.lock()
	}
	actions := r.checkpoint(writeCtx, msg, lockstate.ReapRequest{Queue: proven})
	for k, i := range provenRows {
		r.rows[i].action = actions[k]
	}
}

// checkpoint writes one proven transition by compare-and-swap. On a
// conflict the store re-reads and the mutation re-applies only the proven
// changes to the fresh state (lockstate.Reap matches every run-identity
// field); if none applies any more, nothing is written. It returns the
// decision of the last round and the action text for each request item, in
// the order of lockstate.ReapDecision.Items.
func (r *reaper) checkpoint(ctx context.Context, message string, req lockstate.ReapRequest) []string {
	var dec lockstate.ReapDecision
	cfg := r.cfg
	writesBefore := r.budget.WritesSent()
	res, err := r.lk.Store.Update(ctx, message, func(st *lockstate.State) error {
		out, d, err := lockstate.Reap(st, cfg, req, r.d.Clock.Now())
		if err != nil {
			return err
		}
		dec = d
		if !d.Changed {
			return store.ErrNoChange
		}
		*st = *out
		return nil
	})
	if res.SHA != "" || res.Written {
		r.latest = res.Snapshot
	}
	if res.Ambiguous {
		r.reaped = true
	}
	n := len(req.Holders) + len(req.Quarantines) + len(req.Queue)
	actions := make([]string, n)
	fill := func(text string) []string {
		for i := range actions {
			actions[i] = text
		}
		return actions
	}
	// Every write this Update sent was answered with a conflict: the one
	// that failed was never sent (its refused token mint or the PUT itself
	// hit the budget), so nothing of it can have landed, whatever the
	// abandoned request looks like to the client.
	answered := r.budget.WritesSent()-writesBefore == res.Conflicts
	if err != nil && (!res.Ambiguous || answered) && requestbudget.Spent(ctx) {
		// Refused before it was sent: nothing landed, and the next run
		// proves the same transition again.
		r.budgetStop = true
		r.budgetKept += n
		return fill(fmt.Sprintf("not written: the run's request budget (%d requests) was spent; the next run proves it again (%s)",
			r.budget.Limit(), CodeRequestBudgetSpent))
	}
	if err != nil {
		r.checkpointErr = append(r.checkpointErr, fmt.Errorf("%s: %w", message, err))
		if res.Ambiguous {
			return fill("write outcome ambiguous, then the checkpoint failed: " + oneLine(err.Error()))
		}
		return fill("checkpoint failed, nothing written: " + oneLine(err.Error()))
	}
	if res.Written {
		r.reaped = true
		r.commits++
		if n == 0 && dec.PrunedCooldowns > 0 {
			r.notes = append(r.notes, fmt.Sprintf("Pruned %d expired cooldown(s) (commit %q, %s).", dec.PrunedCooldowns, message, shortSHA(res.SHA)))
		}
	}
	commit := fmt.Sprintf("commit %q, %s", message, shortSHA(res.SHA))
	for i, it := range dec.Items {
		if i >= n {
			break
		}
		switch {
		case it.Outcome == lockstate.ReapNoLongerMatches && res.Ambiguous:
			actions[i] = "already applied: an ambiguous write landed and the fresh state no longer holds this version"
		case it.Outcome == lockstate.ReapNoLongerMatches:
			actions[i] = "skipped: the fresh state no longer holds the proven version (changed concurrently)"
		case !it.Applied():
			actions[i] = "kept (" + string(it.Outcome) + ")"
		case it.Outcome == lockstate.ReapQuarantined:
			actions[i] = fmt.Sprintf("quarantined as %s (%s)", it.Reservation.ReservationID, commit)
		case it.Outcome == lockstate.ReapFreed && it.Kind == lockstate.ReapHolder:
			actions[i] = fmt.Sprintf("holder removed, slot freed (schema below 4; %s)", commit)
		case it.Outcome == lockstate.ReapFreed:
			actions[i] = fmt.Sprintf("quarantine removed, slot freed (releaseCooldownSeconds 0; %s)", commit)
		case it.Outcome == lockstate.ReapAutoRecovered:
			actions[i] = fmt.Sprintf("converted to cooldown until %s (%s)", it.Reservation.AvailableAt, commit)
		case it.Outcome == lockstate.ReapDropped:
			actions[i] = fmt.Sprintf("removed from the queue (%s)", commit)
		}
	}
	return actions
}

// finish writes the outputs and the summary, then reports the run's
// failure, if any: the scan deadline first, then checkpoint failures, then
// unavailable evidence.
func (r *reaper) finish() error {
	outErr := setOutputs(r.a, r.reaped, r.latest.SHA)
	if r.budgetStop {
		r.a.Warning(r.budgetWarning())
	}
	sumErr := r.summary()
	var err error
	switch {
	case r.refusal != nil:
		err = r.refusal
	case r.deadline:
		err = &Error{Code: CodeDeadlineElapsed, Message: fmt.Sprintf(
			"scheduled reaper status scan of %s exceeded its %s deadline; unverified lock entries were retained fail-closed and proven changes were checkpointed", r.lock(), ScanBudget)}
	case len(r.checkpointErr) > 0:
		err = &Error{Code: CodeCheckpointFailed, Message: fmt.Sprintf("%d proven transition(s) of %s could not be written", len(r.checkpointErr), r.lock()), Err: r.checkpointErr[0]}
	case len(r.evidenceErrs) > 0:
		err = &Error{Code: CodeEvidenceUnavailable, Message: fmt.Sprintf("%d status read(s) for %s failed; those entries were kept unchanged", len(r.evidenceErrs), r.lock()), Err: r.evidenceErrs[0]}
	}
	if err != nil {
		return err
	}
	if outErr != nil {
		return outErr
	}
	return sumErr
}

// budgetWarning is the REAP_REQUEST_BUDGET_SPENT warning: what stopped the
// scan, how much was used, and how many entries remain for the next run.
func (r *reaper) budgetWarning() string {
	why := fmt.Sprintf("the run's request budget of %d requests was spent (%d used, %d kept for checkpoint writes)",
		r.budget.Limit(), r.budget.Used(), WriteReserve(r.budget.Limit()))
	if r.secondaryStop {
		why = "GitHub's secondary rate limit held the run's requests back (nothing is sent inside that wait); the run stopped cleanly and the next scheduled run continues"
	} else if r.floorStop {
		why = fmt.Sprintf("an installation reported less than %d%% of its hourly rate limit left", RateFloorPercent)
	}
	return fmt.Sprintf("%s: the status scan of %s stopped early: %s. Proven changes were checkpointed; %d entr%s unverified or unwritten and kept unchanged; the next scheduled run continues (docs/runbook.md \"Request budget\").",
		CodeRequestBudgetSpent, r.lock(), why, r.budgetKept, plural(r.budgetKept, "y remains", "ies remain"))
}

func setOutputs(a *actionio.IO, reaped bool, sha string) error {
	if err := a.SetOutput(recovery.OutputReaped, fmt.Sprint(reaped)); err != nil {
		return err
	}
	return a.SetOutput(recovery.OutputStateSHA, sha)
}

func leaseBefore(a, b string) bool {
	ta, oka := lockstate.ParseTime(a)
	tb, okb := lockstate.ParseTime(b)
	switch {
	case oka && okb:
		return ta.Before(tb)
	case oka != okb:
		return oka // a parseable lease sorts before an unparseable one
	}
	return false
}

func verdictText(v lockstate.Verdict) string {
	if v.Stale {
		return "stale: " + v.Reason
	}
	return "live: " + v.Reason
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func shortSHA(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

func oneLine(s string) string { return actionio.OneLine(s) }
