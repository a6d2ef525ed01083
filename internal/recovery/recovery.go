// Package recovery is operator recovery of a build lock (spec §4.3, §4.4),
// shared by the two actions that run it: recover-build-lock (cmd/recover,
// dispatched by hand through the "Recover build lock" workflow) and
// reap-stale-locks with operation=recover or recover-incident. It lives
// below both, so neither action reaches into the other's package:
//
//   - operation=recover moves the quarantine with the exact reservation-id
//     to a cooldown (or frees its slot when the configured cooldown is 0),
//     only with resource-safe=true proof that the external resource was
//     returned.
//   - operation=recover-incident clears the schema-5 account incident, only
//     with portal-cleanup-confirmed=true proof. The incident is the exact
//     incident-id, or, when that input is empty, the single active incident
//     of the first canonical read; that ID is frozen and compared again
//     before every compare-and-swap write.
//
// Every refusal (missing proof, wrong ID, no incident, wrong schema, a
// runner that is still occupied) fails closed before anything is written,
// with a typed error naming the rule: *lockaction.RefusalError or
// *actionio.InputError for inputs, *lockstate.Error (Code) for state.
// Recovery reads no workflow run and needs no reader credentials: it uses
// only the state-writer App, and it runs only in the lock repository.
//
// A write whose outcome was ambiguous (sent, no answer, then a conflict) is
// reconciled from the next read: when the quarantine or incident is gone,
// the earlier write (or a concurrent identical recovery) did it, and the
// operation succeeds without writing again.
//
// Every run has a request budget (input request-budget or
// BUILD_LOCK_REQUEST_BUDGET, default DefaultRequestBudget), counted at the
// transport like the reaper's (internal/requestbudget): a recovery needs
// about ten requests, a few more per lost compare-and-swap round. A
// recovery cannot stop part-way, so a spent budget fails the run with
// RECOVER_REQUEST_BUDGET_SPENT; the refused request was not sent, so a
// refused write never landed, and re-running is safe.
package recovery

import (
	"context"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"regexp"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/requestbudget"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/store"
)

// Operations this package performs.
const (
	OperationRecover         = "recover"
	OperationRecoverIncident = "recover-incident"
)

// Input names (action.yml of recover-build-lock and reap-stale-locks).
const (
	InputOperation              = "operation"
	InputReservationID          = "reservation-id"
	InputResourceSafe           = "resource-safe"
	InputIncidentID             = "incident-id"
	InputPortalCleanupConfirmed = "portal-cleanup-confirmed"
)

// Output names.
const (
	OutputReaped   = "reaped"
	OutputStateSHA = "state-sha"
)

// Refusal rules (lockaction.RefusalError.Rule) specific to recovery.
const (
	RuleOperation               = "operation"
	RuleLockRepositoryOnly      = "lock-repository-only"
	RuleReservationIDRequired   = "reservation-id-required"
	RuleResourceSafeRequired    = "resource-safe-required"
	RulePortalCleanupConfirmed  = "portal-cleanup-confirmed-required"
	RuleIncidentIDPattern       = "incident-id-pattern"
	RuleNoActiveIncident        = "no-active-incident"
	RuleReservationIDLineBreaks = "reservation-id-pattern"
)

// Request budget of one recovery run (docs/runbook.md "Request budget").
const (
	// DefaultRequestBudget is 2% of an installation's minimum hourly
	// limit of 5,000, ten times what a recovery needs.
	DefaultRequestBudget = 100
	// MinRequestBudget and MaxRequestBudget bound the setting.
	MinRequestBudget = 25
	MaxRequestBudget = 1000
	// CodeRequestBudgetSpent is the failure code of a recovery that spent
	// its budget (*requestbudget.ExhaustedError).
	CodeRequestBudgetSpent = "RECOVER_REQUEST_BUDGET_SPENT"
)

// RequestBudget is recovery's request-budget setting.
var RequestBudget = requestbudget.Knob{Default: DefaultRequestBudget, Min: MinRequestBudget, Max: MaxRequestBudget}

var incidentIDRE = regexp.MustCompile(`^incident-[a-f0-9]{24}$`)

// Deps are the injectable edges of the recovery and reaper binaries.
type Deps struct {
	// Getenv reads the runner environment (os.Getenv in main). Required.
	Getenv func(string) string
	// Stdout receives workflow commands (::warning:: ...). Required.
	Stdout io.Writer
	// Clock tells the time and sleeps; default clock.Real (the fake clock
	// inside a testing/synctest bubble). Deadlines are context deadlines,
	// so a manually advanced clock.Fake does not expire them.
	Clock clock.Clock
	// Jitter returns values in [0,1) for backoff and conflict spreading;
	// default math/rand/v2.
	Jitter func() float64
	// Transport is the base HTTP transport (the emulator's in-memory one in
	// tests and demos); default http.DefaultTransport.
	Transport http.RoundTripper
	// NewID returns a fresh reservation ID; default a random UUID v4.
	NewID func() string
}

// WithDefaults returns d with every optional edge filled in.
func (d Deps) WithDefaults() (Deps, error) {
	if d.Getenv == nil || d.Stdout == nil {
		return d, errNoEnvironment
	}
	if d.Clock == nil {
		d.Clock = clock.Real{}
	}
	if d.Jitter == nil {
		d.Jitter = mrand.Float64
	}
	if d.NewID == nil {
		d.NewID = lockaction.NewReservationID
	}
	return d, nil
}

// Lock is the state-writer side shared by the lock-repository operations
// (reap, recover, recover-incident): the validated target, the writer
// client and the compare-and-swap store.
type Lock struct {
	Target lockaction.Target
	Client *ghclient.Client
	Store  *store.Store
}

// RequireLockRepository refuses to run anywhere but in the lock repository
// itself (rule lock-repository-only): the reaper and recovery are central
// operations, never consumer steps. caller is GITHUB_REPOSITORY.
func RequireLockRepository(caller string, t lockaction.Target) error {
	if !strings.EqualFold(caller, t.Repository()) {
		return &lockaction.RefusalError{Rule: RuleLockRepositoryOnly, Message: fmt.Sprintf(
			"the reaper and operator recovery run only in the lock repository %s; this run is in %q", t.Repository(), caller)}
	}
	return nil
}

// VerifyLockRepository proves by id what OpenLock checked by name, with one
// repository read (GET /repos/{owner}/{repo}, memoized by the store) before
// anything is written: the running repository (GITHUB_REPOSITORY_ID) is the
// lock repository, the state branch is not its default branch, and the
// writer App's installation belongs to the repository's owner with the
// owner id the runner reports (lockaction.CheckOwnerPin). A repository
// renamed or re-created under the same name fails here.
func VerifyLockRepository(ctx context.Context, lk *Lock) error {
	if err := lk.Store.CheckStateBranch(ctx); err != nil {
		return err
	}
	id, err := lk.Store.RepositoryID(ctx)
	if err != nil {
		return err
	}
	if id != lk.Target.CallerRepoID {
		return &lockaction.RefusalError{Rule: RuleLockRepositoryOnly, Message: fmt.Sprintf(
			"the reaper and operator recovery run only in the lock repository %s (id %d); this run's GITHUB_REPOSITORY_ID is %d",
			lk.Target.Repository(), id, lk.Target.CallerRepoID)}
	}
	return lockaction.CheckOwnerPin(lk.Target, lk.Client)
}

// OpenLock builds the writer client and store of the lock ls describes
// (validated by ParseLockSettings). It sends no request.
func OpenLock(ctx context.Context, a *actionio.IO, d Deps, ls LockSettings) (*Lock, error) {
	opts := lockaction.ClientOptions{Clock: d.Clock, Jitter: d.Jitter, Transport: d.Transport}
	c, err := lockaction.NewWriterClientWith(ctx, a, ls.Target, ls.Credentials, ls.Knobs, opts)
	if err != nil {
		return nil, err
	}
	s, err := lockaction.NewStore(c, ls.Target, opts, ghclient.Budget{})
	if err != nil {
		return nil, err
	}
	return &Lock{Target: ls.Target, Client: c, Store: s}, nil
}

// Execute performs the recovery s describes; serr is LoadSettings' error
// (the secrets are masked and the budget warnings printed first, then a
// settings problem is returned before any request).
func Execute(ctx context.Context, a *actionio.IO, d Deps, s Settings, serr error) error {
	if ctx == nil {
		return errors.New("recover: nil context")
	}
	d, err := d.WithDefaults()
	if err != nil {
		return err
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
	budget, err := requestbudget.New(s.Budget.Limit)
	if err != nil {
		return err
	}
	d.Transport = budget.Transport(d.Transport)
	ctx, cancel := budget.Within(ctx, budget.Limit())
	defer cancel()
	return budget.Explain(ctx, CodeRequestBudgetSpent, dispatch(ctx, a, d, s))
}

// dispatch opens the lock and performs the operation.
func dispatch(ctx context.Context, a *actionio.IO, d Deps, s Settings) error {
	lk, err := OpenLock(ctx, a, d, s.Lock)
	if err != nil {
		return err
	}
	switch s.Operation {
	case OperationRecover:
		return recoverQuarantine(ctx, a, d, lk, s.ReservationID)
	case OperationRecoverIncident:
		return recoverIncident(ctx, a, d, lk, s.IncidentID)
	}
	return &lockaction.RefusalError{Rule: RuleOperation, Message: fmt.Sprintf(
		"operation must be %s or %s for operator recovery", OperationRecover, OperationRecoverIncident)}
}

// loadConfig reads the lock config for the cooldown; an unavailable config
// falls back to the safe defaults with a warning (spec §2.8).
func loadConfig(ctx context.Context, a *actionio.IO, lk *Lock) (lockstate.Config, error) {
	cfg, warnings, err := lk.Store.LoadConfig(ctx)
	for _, w := range warnings {
		a.Warning(w)
	}
	return cfg, err
}

func recoverQuarantine(ctx context.Context, a *actionio.IO, d Deps, lk *Lock, id string) error {
	lock := lk.Target.Lock
	if err := VerifyLockRepository(ctx, lk); err != nil {
		return err
	}
	// The first read is at the branch head (store.LoadFresh): a lagging
	// replica must not turn an active quarantine into "not found".
	snap, _, err := lk.Store.LoadFresh(ctx)
	if err != nil {
		return err
	}
	// Fail closed on the first canonical read, before any other call: wrong
	// schema, unknown ID or an ID that is not a quarantine.
	if _, _, err := lockstate.RecoverQuarantine(snap.State, lockstate.DefaultConfig(), id, d.Clock.Now()); err != nil {
		return err
	}
	cfg, err := loadConfig(ctx, a, lk)
	if err != nil {
		return err
	}
	var dec lockstate.RecoverDecision
	res, err := lk.Store.Update(ctx, "Recover reservation "+id, func(st *lockstate.State) error {
		out, dd, err := lockstate.RecoverQuarantine(st, cfg, id, d.Clock.Now())
		if err != nil {
			return err
		}
		dec = dd
		*st = *out
		return nil
	})
	reconciled := false
	if err != nil {
		if !res.Ambiguous || lockstate.CodeOf(err) != lockstate.CodeReservationNotFound {
			return err
		}
		// Idempotent ambiguity (spec §4.3): an earlier round's write may
		// have landed; the quarantine is gone or already a cooldown.
		reconciled = true
		if res, err = pruneAfterReconcile(ctx, d, lk, "Prune recovered reservation "+id); err != nil {
			return err
		}
	}
	if err := setOutputs(a, true, res.SHA); err != nil {
		return err
	}
	var msg string
	switch {
	case reconciled:
		msg = fmt.Sprintf("Quarantine %s of %s is no longer active after an ambiguous write: the recovery landed (or a concurrent identical recovery did); nothing more was written.", id, lock)
	case dec.Freed:
		msg = fmt.Sprintf("Freed quarantine %s of %s: releaseCooldownSeconds is 0, so the slot is available now.", id, lock)
	default:
		msg = fmt.Sprintf("Moved quarantine %s to cooldown for %s; the slot becomes available at %s.", id, lock, dec.Reservation.AvailableAt)
	}
	return summarize(a, d, "Recover build lock", msg, lk.Target, res.SHA)
}

func recoverIncident(ctx context.Context, a *actionio.IO, d Deps, lk *Lock, input string) error {
	lock := lk.Target.Lock
	if err := VerifyLockRepository(ctx, lk); err != nil {
		return err
	}
	// At the branch head, so "no active incident" is not a stale answer.
	snap, _, err := lk.Store.LoadFresh(ctx)
	if err != nil {
		return err
	}
	if snap.State.SchemaVersion < 5 {
		_, _, err := lockstate.RecoverIncident(snap.State, lockstate.DefaultConfig(), "incident-unbound", d.Clock.Now(), "")
		return err
	}
	bound := input
	if bound == "" {
		if snap.State.ActiveIncident == nil {
			return &lockaction.RefusalError{Rule: RuleNoActiveIncident, Message: fmt.Sprintf(
				"recover-incident on %s requires an active incident to bind as the exact incident-id; none is active", lock)}
		}
		bound = snap.State.ActiveIncident.IncidentID
		a.Notice(fmt.Sprintf("Bound recover-incident to the single active incident %s of %s from the canonical state read.", bound, lock))
	}
	reservationID := d.NewID()
	if _, _, err := lockstate.RecoverIncident(snap.State, lockstate.DefaultConfig(), bound, d.Clock.Now(), reservationID); err != nil {
		return err
	}
	cfg, err := loadConfig(ctx, a, lk)
	if err != nil {
		return err
	}
	var (
		dec  lockstate.RecoverDecision
		seen *lockstate.State
	)
	res, err := lk.Store.Update(ctx, "Recover global incident "+bound, func(st *lockstate.State) error {
		seen = st.Clone()
		// The frozen incident ID is compared again on every round.
		out, dd, err := lockstate.RecoverIncident(st, cfg, bound, d.Clock.Now(), reservationID)
		if err != nil {
			return err
		}
		dec = dd
		*st = *out
		return nil
	})
	reconciled := false
	if err != nil {
		gone := seen != nil && seen.SchemaVersion >= 5 && (seen.ActiveIncident == nil || seen.ActiveIncident.IncidentID != bound)
		if !res.Ambiguous || lockstate.CodeOf(err) != lockstate.CodeIncidentNotFound || !gone {
			return err
		}
		// Idempotent ambiguity (spec §4.4): the bound incident is gone, and
		// only a recovery clears an incident.
		reconciled = true
		if res, err = pruneAfterReconcile(ctx, d, lk, "Prune recovered incident "+bound); err != nil {
			return err
		}
	}
	if err := setOutputs(a, true, res.SHA); err != nil {
		return err
	}
	var msg string
	switch {
	case reconciled:
		msg = fmt.Sprintf("Global incident %s of %s is no longer active after an ambiguous write: the recovery landed; nothing more was written.", bound, lock)
	case dec.NoFreeSeat:
		msg = fmt.Sprintf("Recovered global incident %s without a recovery cooldown: every seat of %s is held or reserved, so a cooldown would count one seat more than maxHolders; the next activation waits for one of those seats, and its release writes its own cooldown.", bound, lock)
	case dec.Freed:
		msg = fmt.Sprintf("Recovered global incident %s; releaseCooldownSeconds is 0, so %s admits again immediately without a cooldown reservation.", bound, lock)
	default:
		msg = fmt.Sprintf("Recovered global incident %s; %s entered cooldown %s on runner %s until %s.", bound, lock, dec.Reservation.ReservationID, dec.Reservation.RunnerID, dec.Reservation.AvailableAt)
	}
	return summarize(a, d, "Recover build lock", msg, lk.Target, res.SHA)
}

// pruneAfterReconcile persists cooldowns that expired by the reconciling
// read, as the reference does after an ambiguous recovery, and returns the
// resulting snapshot.
func pruneAfterReconcile(ctx context.Context, d Deps, lk *Lock, message string) (store.Result, error) {
	return lk.Store.Update(ctx, message, func(st *lockstate.State) error {
		out, n := lockstate.PruneExpiredCooldowns(st, d.Clock.Now())
		if n == 0 {
			return store.ErrNoChange
		}
		*st = *out
		return nil
	})
}

func setOutputs(a *actionio.IO, reaped bool, sha string) error {
	if err := a.SetOutput(OutputReaped, fmt.Sprint(reaped)); err != nil {
		return err
	}
	return a.SetOutput(OutputStateSHA, sha)
}

// summarize logs msg and appends it to the job summary (or to stdout when
// the step has no summary file, e.g. a local run).
func summarize(a *actionio.IO, d Deps, title, msg string, t lockaction.Target, sha string) error {
	a.Notice(msg)
	md := fmt.Sprintf("## %s\n\n%s\n\nLock `%s` in `%s` (branch `%s`), state `%s` at %s.\n",
		title, msg, t.Lock, t.Repository(), t.Branch, sha, lockstate.FormatTime(d.Clock.Now()))
	if err := a.Summary(md); err != nil {
		if errors.Is(err, actionio.ErrFileCommandUnavailable) {
			a.PrintLines(md)
			err = nil
		}
		return err
	}
	return nil
}
