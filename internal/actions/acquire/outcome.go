package acquire

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// admitted finishes a verified admission (or an existing holding): the
// post-admission pull request check, then every output.
func (q *acquirer) admitted(ctx context.Context, sha string, s *lockstate.State, dec lockstate.AcquireDecision) error {
	q.touched()
	if s != nil {
		q.last = s
	}
	if err := q.checkPR(ctx, "after admission"); err != nil {
		return err
	}
	o := outcome{
		result:              resultAcquired,
		stateSHA:            sha,
		quarantineRecovered: dec.QuarantineRecovered || q.consumedQuarantine != nil,
		fencing:             fencingToken(dec),
		seat:                heldSeat(s, q.id.HolderID, dec),
	}
	// Evidence for this job's release and post steps that it holds a seat,
	// so a stale read there cannot pass for "nothing to release".
	if err := lockaction.WriteHeldMarker(q.s.RunnerTemp, q.s.Target, lockaction.HeldMarker{HolderID: q.id.HolderID, StateSHA: sha, FencingToken: o.fencing, StateUpdatedAt: updatedAt(s), NoticedAt: lockstate.FormatTime(q.now())}); err != nil {
		q.a.Warning("Could not record this job's admission for its release step: " + err.Error())
	}
	// The release and post steps use this step's installation token while
	// it is fresh instead of minting their own.
	if err := lockaction.RememberToken(q.s.RunnerTemp, q.s.Target, q.s.Credentials, q.client); err != nil {
		q.a.Warning("Could not note this step's installation token for the job's release step (it mints its own): " + err.Error())
	}
	q.a.Printf("Acquired %s as %s after %s ms (%d attempts).",
		q.s.Target.Lock, q.id.HolderID, actionkit.FormatMillis(q.now().Sub(q.started)), q.attempts)
	return q.report(o)
}

// maybeCheckPR re-checks the pull request head once PRHeadTTL has passed.
func (q *acquirer) maybeCheckPR(ctx context.Context) error {
	if !q.s.PR.Scoped || q.now().Sub(q.prAt) < PRHeadTTL {
		return nil
	}
	return q.checkPR(ctx, "while queued")
}

// checkPR verifies the pull request head now (no-op outside a pull request
// run). A stale or unverifiable head retracts this run's state and ends the
// acquire with superseded, pr-head-check-failed or pr-head-cleanup-failed.
// Cancellation returns the context error without outputs.
func (q *acquirer) checkPR(ctx context.Context, when string) error {
	if !q.s.PR.Scoped {
		return nil
	}
	res, err := q.checker.Check(ctx, q.s.PR.Request)
	q.prAt = q.now()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return q.prRefusal(ctx, resultPRHeadCheckFailed, fmt.Errorf("verify the pull request head %s: %w", when, err))
	}
	if !res.Current {
		return q.prRefusal(ctx, resultSuperseded, fmt.Errorf("superseded pull request run for %s: pull request #%s now points to %s (checked %s)",
			q.s.PR.Request.ExpectedSHA, q.s.PR.Request.Number, res.HeadSHA, when))
	}
	return nil
}

// prRefusal cleans up this run's own state, then reports result.
func (q *acquirer) prRefusal(ctx context.Context, result string, cause error) error {
	if q.mayNeedCleanup {
		if _, err := q.failureCleanup(ctx, q.retractKind(cleanupDefault)); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return q.refuse(ctx, resultPRHeadCleanupFailed, nil, fmt.Errorf("%w; exact cleanup of this run's lock state also failed: %v", cause, err))
		}
	}
	return q.refuse(ctx, result, nil, cause)
}

// blocked handles an active schema-5 incident: never enqueue, remove only
// this run's own pre-activation state, report account-blocked.
func (q *acquirer) blocked(ctx context.Context, dec lockstate.AcquireDecision) error {
	inc := dec.Incident
	result := resultAccountBlocked
	if q.admissionWritten || q.mayNeedCleanup || dec.Position > 0 {
		if _, err := q.failureCleanup(ctx, q.retractKind(cleanupQueueOnly)); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			q.a.Warning("Exact cleanup of this run's queued request failed: " + err.Error())
			result = resultAccountBlockedCleanupFailed
		}
	}
	return q.refuse(ctx, result, inc, errors.New(incidentMessage(q.s.Target.Lock, inc, result == resultAccountBlockedCleanupFailed)))
}

// timeout ends the wait at timeout-minutes: exact cleanup, outputs, error.
// When an admission write of this run may have landed without an answer
// (admissionWritten) and the cleanup that would retract it failed too, the
// outcome is not a plain timeout: it is admission-unknown (acquired=false,
// the always() release removes the admission if it landed).
func (q *acquirer) timeout(ctx context.Context) error {
	q.timedOut = true
	var cerr error
	if q.mayNeedCleanup {
		if _, cerr = q.failureCleanup(ctx, q.retractKind(cleanupDefault)); cerr != nil {
			q.a.Warning("Cleanup after the acquire timeout failed: " + cerr.Error())
		}
	}
	result := resultTimeout
	msg := fmt.Sprintf("timed out waiting for build lock %s after %d attempt(s) and %s ms. %s",
		q.s.Target.Lock, q.attempts, actionkit.FormatMillis(q.now().Sub(q.started)), q.holderContext())
	if q.admissionWritten && cerr != nil {
		result = resultAdmissionUnknown
		msg = fmt.Sprintf("could not decide whether this run was admitted to %s before timeout-minutes ran out: an admission write got no answer and retracting it failed (%v). acquired=false, so no licensed step runs; the always() release step (holder-id %s) removes the admission if it landed. %s",
			q.s.Target.Lock, cerr, q.id.HolderID, q.holderContext())
	}
	if err := q.report(outcome{result: result}); err != nil {
		return &resultError{result: result, err: fmt.Errorf("%s (and writing outputs failed: %v)", msg, err)}
	}
	return &resultError{result: result, err: errors.New(msg)}
}

// refuse writes the outputs of a failed admission and returns cause with
// result as its reason code.
func (q *acquirer) refuse(_ context.Context, result string, inc *lockstate.Incident, cause error) error {
	if err := q.report(outcome{result: result, incident: inc}); err != nil {
		return &resultError{result: result, err: fmt.Errorf("%w (and writing outputs failed: %v)", cause, err)}
	}
	return &resultError{result: result, err: cause}
}

// resultError is a failed admission whose admission-result output is its
// stable reason code (lockaction.Reasoned): the ::error title and the job
// summary carry timeout, superseded, account-blocked, ...
type resultError struct {
	result string
	err    error
}

func (e *resultError) Error() string { return e.err.Error() }

func (e *resultError) Unwrap() error { return e.err }

// ReasonCode returns the admission-result.
func (e *resultError) ReasonCode() string { return e.result }

// holderContext describes who holds the lock, for the timeout message.
func (q *acquirer) holderContext() string {
	s := q.last
	if s == nil {
		return "The lock state was never read."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Holders: %d", len(s.Holders))
	for _, h := range s.Holders {
		fmt.Fprintf(&b, "; %s (%s)", h.HolderID, h.RunURL)
	}
	if pos := lockstate.QueuePosition(s, q.id.HolderID); pos > 0 {
		fmt.Fprintf(&b, ". Queue position %d of %d", pos, len(s.Queue))
	}
	for _, r := range s.Reservations {
		fmt.Fprintf(&b, ". Reservation %s (%s on %s: %s)", r.ReservationID, r.State, r.RunnerID, r.Reason)
	}
	b.WriteString(".")
	if q.wait.blocker != "" {
		b.WriteString(" " + q.wait.blocker)
	}
	return b.String()
}

// incidentMessage is the operator-actionable denial (spec §1.2,
// activeIncidentAdmissionMessage). It never includes the evidence digest.
func incidentMessage(lock string, inc *lockstate.Incident, cleanupFailed bool) string {
	if inc == nil {
		return fmt.Sprintf("build lock %s is blocked by an active account incident", lock)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Build lock %s is blocked by active account incident %s (reason %s) reported at %s by %s, workflow %s, job %s, run attempt %s, runner %s: %s.",
		lock, inc.IncidentID, inc.Reason, inc.ReportedAt, inc.Repository, inc.Workflow, inc.Job, inc.RunAttempt, inc.RunnerID, inc.RunURL)
	if cleanupFailed {
		b.WriteString(" This run's own queued or admitted request could not be removed: do not recover the incident or rerun until supported release, post-action, or fallback cleanup has removed this run from both holders and queue and a fresh lock-state read confirms it.")
	}
	fmt.Fprintf(&b, " Reconcile every Unity Portal activation, then dispatch Recover build lock (.github/workflows/recover-build-lock.yml) with operation=recover-incident, incident-id=%s, and portal-cleanup-confirmed=true.", inc.IncidentID)
	return b.String()
}

// heldSeat is the named seat holderID holds: the holder's seat in the
// state that admitted it, else the decision's ("" without named seats).
func heldSeat(s *lockstate.State, holderID string, dec lockstate.AcquireDecision) string {
	if s != nil {
		if i := lockstate.HolderIndex(s, holderID); i >= 0 && s.Holders[i].Seat != "" {
			return s.Holders[i].Seat
		}
	}
	return dec.Seat
}

// updatedAt is s's updatedAt, "" without a state.
func updatedAt(s *lockstate.State) string {
	if s == nil {
		return ""
	}
	return s.UpdatedAt
}
