package acquire

import (
	"time"

	"context"
	"fmt"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/plant"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/store"
)

// cleanupKind selects how this run's own state is removed.
type cleanupKind int

const (
	// cleanupDefault removes queue entries and held slots; a held slot
	// becomes a quarantine (its resource cleanup is unproven).
	cleanupDefault cleanupKind = iota
	// cleanupQueueOnly removes only queue entries (incident while queued).
	cleanupQueueOnly
	// cleanupPreActivation retracts this invocation's own admission before
	// any licensed step ran: no reservation, a consumed quarantine restored.
	cleanupPreActivation
)

// retractKind upgrades kind to pre-activation retraction when this
// invocation wrote (or may have written) its own admission.
func (q *acquirer) retractKind(kind cleanupKind) cleanupKind {
	if q.admissionWritten {
		return cleanupPreActivation
	}
	return kind
}

// failureCleanup runs exact cleanup after a refusal or timeout: 3 CAS
// rounds, 500 ms apart, on a context that survives cancellation but ends
// inside the runner's signal window.
func (q *acquirer) failureCleanup(ctx context.Context, kind cleanupKind) (lockstate.CleanupDecision, error) {
	q.cleanupAttempted = true
	cctx, cancel := actionkit.CleanupContext(ctx, q.d.Signals, failureCleanupWindow)
	defer cancel()
	return q.cleanup(cctx, kind, ghclient.Budget{}, failureCleanupRounds, failureConflictDelay)
}

// cancellationCleanup removes this run's state after a runner signal
// (spec §3.9): one attempt per request, two CAS rounds, inside 5 s after
// SIGINT or 1.5 s after SIGTERM. It only warns.
func (q *acquirer) cancellationCleanup(ctx context.Context) {
	if q.client == nil || q.cleanupAttempted {
		return
	}
	q.cleanupAttempted = true
	name := "cancellation"
	switch q.d.Signals.Code() {
	case lockaction.ExitSIGINT:
		name = "SIGINT"
	case lockaction.ExitSIGTERM:
		name = "SIGTERM"
	}
	q.a.Warning(fmt.Sprintf("Received %s; stopping acquire before build-lock cleanup.", name))
	budget := actionkit.SignalBudget(q.d.Signals)
	cctx, cancel := actionkit.CleanupContext(ctx, q.d.Signals, budget)
	defer cancel()
	dec, err := q.cleanup(cctx, q.retractKind(cleanupDefault), ghclient.Budget{MaxAttempts: 1}, cancelCleanupRounds, cancelConflictDelay)
	if err != nil {
		q.a.Warning("Build-lock cleanup after " + name + " failed: " + err.Error())
		return
	}
	q.a.Printf("Build-lock cleanup after %s: %s.", name, dec.Result)
}

// cleanup is one exact cleanupIdentity of this run's identity.
func (q *acquirer) cleanup(ctx context.Context, kind cleanupKind, budget ghclient.Budget, rounds int, delay time.Duration) (lockstate.CleanupDecision, error) {
	st, err := newStore(q.client, q.s.Target, q.d, budget, rounds, delay, nil)
	if err != nil {
		return lockstate.CleanupDecision{}, err
	}
	// Never decide the cleanup on a replica older than what this run
	// already saw or wrote (GitHub's replica lag; store/monotonic.go).
	st.Inherit(q.st)
	// And never on one older than the run's first read, which no SHA it
	// knows can order: the cleanup reads at the branch head, and a race it
	// loses is decided there again (store.UpdateRounds). A failed head read
	// leaves the ordinary read to the Update.
	var herr error
	if !plant.Enabled(plant.CleanupBehindHead) { // planted bug (tests only)
		_, _, herr = st.LoadFresh(ctx)
	}
	if herr != nil && ctx.Err() != nil {
		return lockstate.CleanupDecision{}, herr
	}
	req := lockstate.CleanupRequest{
		HolderID:      q.id.HolderID,
		RunAttempt:    q.id.RunAttempt,
		RunnerID:      q.id.RunnerID,
		QueueOnly:     kind == cleanupQueueOnly,
		PreActivation: kind == cleanupPreActivation,
		ReservationID: actionkit.NewReservationID(),
		Identity:      q.id,
		ServerURL:     q.s.Target.ServerURL,
		RunnerName:    q.id.RunnerName,
	}
	if kind == cleanupPreActivation {
		req.RestoreQuarantine = q.consumedQuarantine
	}
	var dec lockstate.CleanupDecision
	res, err := st.Update(ctx, "Release "+q.s.Target.Lock, func(s *lockstate.State) error {
		next, d, err := lockstate.Cleanup(s, q.cfg, req, q.now())
		if err != nil {
			return err
		}
		dec = d
		if !d.Changed {
			return store.ErrNoChange
		}
		*s = *next
		return nil
	})
	if err == nil && (herr == nil || res.Written) {
		// Nothing of this run is left at the branch head: the later steps
		// need not confirm it there again.
		_ = lockaction.RemoveEntryMarkers(q.s.RunnerTemp, q.s.Target, q.id.HolderID)
	}
	if err == nil && dec.QuarantineSubsumed != "" {
		q.a.Printf("Quarantine %s was not put back: its machine seated another job while this run held the seat it reclaimed, and that job answers for the machine now.", dec.QuarantineSubsumed)
	}
	if err == nil && dec.QuarantineReattributed && dec.Reservation != nil {
		q.a.Printf("Quarantine %s was put back under this runner's id: its own runner id holds another seat now.", dec.Reservation.ReservationID)
	}
	return dec, err
}
