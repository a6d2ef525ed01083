package release

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/markdown"
)

// Output names (spec §1.4), always written together in this order.
const (
	OutputReleased              = "released"
	OutputQueueCleaned          = "queue-cleaned"
	OutputCleanupResult         = "cleanup-result"
	OutputLockName              = "lock-name"
	OutputHolderID              = "holder-id"
	OutputStateSHA              = "state-sha"
	OutputHeldBy                = "held-by"
	OutputHeldByRunURL          = "held-by-run-url"
	OutputReservationID         = "reservation-id"
	OutputReservationState      = "reservation-state"
	OutputAvailableAt           = "available-at"
	OutputIncidentID            = "incident-id"
	OutputResourceHealth        = "resource-health"
	OutputResourceReason        = "resource-reason"
	OutputReportDegraded        = "report-degraded"
	OutputReportValidationError = "report-validation-error"
)

// report writes all 16 outputs and the job summary.
func (r *releaser) report(dec lockstate.CleanupDecision, sha string) error {
	var resID, resState, availableAt string
	if dec.Reservation != nil {
		resID, resState, availableAt = dec.Reservation.ReservationID, dec.Reservation.State, dec.Reservation.AvailableAt
	}
	outs := [][2]string{
		{OutputReleased, strconv.FormatBool(dec.Released)},
		{OutputQueueCleaned, strconv.FormatBool(dec.QueueCleaned)},
		{OutputCleanupResult, string(dec.Result)},
		{OutputLockName, r.s.Target.Lock},
		{OutputHolderID, r.s.HolderID},
		{OutputStateSHA, sha},
		{OutputHeldBy, dec.HeldBy},
		{OutputHeldByRunURL, dec.HeldByRunURL},
		{OutputReservationID, resID},
		{OutputReservationState, resState},
		{OutputAvailableAt, availableAt},
		{OutputIncidentID, dec.IncidentID},
		{OutputResourceHealth, r.s.Report.Health},
		{OutputResourceReason, r.s.Report.Reason},
		{OutputReportDegraded, strconv.FormatBool(r.s.DegradedCode != "")},
		{OutputReportValidationError, string(r.s.DegradedCode)},
	}
	err := r.a.SetOutputs(outs)
	r.summary(dec, sha)
	return err
}

// summary appends the release table to the job summary.
func (r *releaser) summary(dec lockstate.CleanupDecision, sha string) {
	rows := []actionkit.Row{
		{Field: "Outcome", Value: markdown.Code(string(dec.Result))},
		{Field: "Lock", Value: markdown.Code(r.s.Target.Lock)},
		{Field: "Holder ID", Value: markdown.Code(r.s.HolderID)},
		{Field: "Report", Value: markdown.Text(r.s.Report.Status + " / " + r.s.Report.Health + " / " + r.s.Report.Reason)},
	}
	if r.s.DegradedCode != "" {
		rows = append(rows, actionkit.Row{Field: "Report validation error", Value: markdown.Code(string(r.s.DegradedCode))})
	}
	if dec.Reservation != nil {
		v := markdown.Code(dec.Reservation.State) + " " + markdown.Code(dec.Reservation.ReservationID)
		if dec.Reservation.AvailableAt != "" {
			v += " until " + markdown.Text(dec.Reservation.AvailableAt)
		}
		rows = append(rows, actionkit.Row{Field: "Reservation", Value: v})
	}
	if dec.HeldBy != "" {
		rows = append(rows, actionkit.Row{Field: "Now held by", Value: markdown.Link(dec.HeldBy, dec.HeldByRunURL)})
	}
	if dec.IncidentID != "" {
		rows = append(rows, actionkit.Row{Field: "Incident", Value: markdown.Code(dec.IncidentID)})
	}
	if sha != "" {
		rows = append(rows, actionkit.Row{Field: "State SHA", Value: markdown.Code(sha)})
	}
	err := r.a.Summary(actionkit.Table("Build lock "+r.s.Target.Lock+": "+string(dec.Result), rows))
	if err != nil && !errors.Is(err, actionio.ErrFileCommandUnavailable) {
		r.a.Warning("Could not write the job summary: " + err.Error())
	}
}

// log prints the human release message (explicitReleaseMessage).
func (r *releaser) log(dec lockstate.CleanupDecision) {
	lock := r.s.Target.Lock
	var msg string
	switch dec.Result {
	case lockstate.ResultGlobalQuarantined:
		msg = fmt.Sprintf("Removed this run's lock state for %s; global account incident %s blocks new admissions.", lock, dec.IncidentID)
	case lockstate.ResultCooldownStarted:
		msg = fmt.Sprintf("Removed lock ownership for %s; resource capacity entered cooldown.", lock)
	case lockstate.ResultQuarantined:
		msg = fmt.Sprintf("Removed lock ownership for %s; resource capacity entered quarantine.", lock)
	case lockstate.ResultReleased:
		msg = fmt.Sprintf("Released %s.", lock)
	case lockstate.ResultQueueCleaned:
		msg = fmt.Sprintf("Removed this run's queued request for %s.", lock)
	default:
		if dec.HeldBy != "" {
			msg = fmt.Sprintf("Lock is held by %s; this run is %s.", dec.HeldBy, r.s.HolderID)
		} else {
			msg = fmt.Sprintf("Nothing to release for %s on %s.", r.s.HolderID, lock)
		}
	}
	r.a.Println(msg)
}
