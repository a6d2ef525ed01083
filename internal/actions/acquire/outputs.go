package acquire

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/markdown"
)

// Output names (spec §1.2), written together in this order, plus the
// project's fencing-token.
const (
	OutputAcquired            = "acquired"
	OutputLockName            = "lock-name"
	OutputHolderID            = "holder-id"
	OutputStateSHA            = "state-sha"
	OutputWaitMS              = "wait-ms"
	OutputAttempts            = "attempts"
	OutputStaleRecovered      = "stale-recovered"
	OutputQuarantineRecovered = "quarantine-recovered"
	OutputAdmissionResult     = "admission-result"
	OutputIncidentID          = "incident-id"
	OutputResourceHealth      = "resource-health"
	OutputResourceReason      = "resource-reason"
	OutputFencingToken        = "fencing-token"
	// OutputSeat and OutputSeatLabels (issue 25): the named seat this run
	// holds and the labels the lock config gives it ("" when the config
	// names no seats, or the run holds none).
	OutputSeat       = "seat"
	OutputSeatLabels = "seat-labels"
	// OutputSeatSecretSuffix is the seat as a secret-name part
	// (lockstate.SeatSecretSuffix: PRO_A_1 for pro-a-1), for
	// secrets[format('UNITY_SERIAL_{0}', ...)]: GitHub secret names hold
	// only letters, digits and underscores.
	OutputSeatSecretSuffix = "seat-secret-suffix"
)

// admission-result values (spec §1.2).
const (
	resultAcquired                    = "acquired"
	resultTimeout                     = "timeout"
	resultAccountBlocked              = "account-blocked"
	resultAccountBlockedCleanupFailed = "account-blocked-cleanup-failed"
	resultSuperseded                  = "superseded"
	resultPRHeadCheckFailed           = "pr-head-check-failed"
	resultPRHeadCleanupFailed         = "pr-head-cleanup-failed"
	// resultAdmissionUnknown: a write that may have admitted this run got
	// no answer and no later read could decide (acquired=false).
	resultAdmissionUnknown = "admission-unknown"
)

// outcome is what an acquire reports.
type outcome struct {
	result              string
	stateSHA            string
	quarantineRecovered bool
	incident            *lockstate.Incident
	fencing             int64
	// seat is the named seat this run holds ("" without named seats).
	seat string
}

// report writes every output and the job summary.
func (q *acquirer) report(o outcome) error {
	health, reason, incidentID := lockstate.HealthHealthy, "", ""
	if o.incident != nil {
		incidentID = o.incident.IncidentID
		health, reason = lockstate.HealthBlocked, o.incident.Reason
	}
	fencing := ""
	if o.fencing > 0 {
		fencing = strconv.FormatInt(o.fencing, 10)
	}
	wait := q.now().Sub(q.started)
	if o.result == resultAcquired {
		q.noteDrain(nil, q.now())
	}
	outs := [][2]string{
		{OutputAcquired, strconv.FormatBool(o.result == resultAcquired)},
		{OutputLockName, q.s.Target.Lock},
		{OutputHolderID, q.id.HolderID},
		{OutputStateSHA, o.stateSHA},
		{OutputWaitMS, actionkit.FormatMillis(wait)},
		{OutputAttempts, strconv.Itoa(q.attempts)},
		{OutputStaleRecovered, "false"},
		{OutputQuarantineRecovered, strconv.FormatBool(o.quarantineRecovered)},
		{OutputAdmissionResult, o.result},
		{OutputIncidentID, incidentID},
		{OutputResourceHealth, health},
		{OutputResourceReason, reason},
		{OutputFencingToken, fencing},
		{OutputSeat, o.seat},
		{OutputSeatLabels, q.seatLabels(o.seat)},
		{OutputSeatSecretSuffix, seatSecretSuffix(o.seat)},
	}
	outs = append(outs, q.machineOutputs(o.result == resultAcquired)...)
	err := q.a.SetOutputs(outs)
	q.reported = true
	q.summary(o, wait)
	return err
}

// seatLabels is the comma-separated labels the config in force gives the
// named seat ("" for none).
func (q *acquirer) seatLabels(seat string) string {
	if seat == "" {
		return ""
	}
	sc, ok := q.cfg.Seat(seat)
	if !ok {
		return ""
	}
	return strings.Join(sc.Labels, ",")
}

// seatSecretSuffix is OutputSeatSecretSuffix's value ("" without a seat).
func seatSecretSuffix(seat string) string {
	if seat == "" {
		return ""
	}
	return lockstate.SeatSecretSuffix(seat)
}

// resultCancelled is the admission-result of an acquire cancelled by the
// runner (SIGINT, SIGTERM) before it held a seat.
const resultCancelled = "cancelled"

// reportFailure writes the output set of a failure that no typed refusal
// reported: acquired=false, and the failure's stable reason code (the
// ::error title's) as admission-result, so the cleanup gate reads "no
// seat was taken" instead of finding acquired empty. Values that could
// not be trusted (a holder id that failed its output check) stay empty.
func (q *acquirer) reportFailure(ctx context.Context, err error) {
	result := lockaction.ReasonCode(err)
	switch {
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		result = resultCancelled
	case result == "":
		result = "failed"
	}
	if werr := q.report(outcome{result: result}); werr != nil {
		q.a.Warning("Could not write the outputs of the failed acquire: " + werr.Error())
	}
}

// summary appends the job summary table; a missing GITHUB_STEP_SUMMARY
// (local runs) is not a failure.
func (q *acquirer) summary(o outcome, wait time.Duration) {
	rows := []actionkit.Row{
		{Field: "Outcome", Value: markdown.Code(o.result)},
		{Field: "Lock", Value: markdown.Code(q.s.Target.Lock)},
		{Field: "Holder ID", Value: markdown.Code(q.id.HolderID)},
		{Field: "Waited", Value: wait.Round(time.Second).String() + fmt.Sprintf(" (%d polls)", q.attempts)},
	}
	entry := "not queued (admitted at the first read)"
	if q.entryPosition > 0 {
		entry = strconv.Itoa(q.entryPosition)
	}
	rows = append(rows, actionkit.Row{Field: "Queue position at entry", Value: entry})
	if o.fencing > 0 {
		rows = append(rows, actionkit.Row{Field: "Fencing token", Value: markdown.Code(strconv.FormatInt(o.fencing, 10))})
	}
	if o.seat != "" {
		seat := markdown.Code(o.seat)
		if l := q.seatLabels(o.seat); l != "" {
			seat += " (labels " + markdown.Code(l) + ")"
		}
		rows = append(rows, actionkit.Row{Field: "Seat", Value: seat})
	}
	if len(q.s.SeatLabels) > 0 || q.s.Priority > 0 {
		asked := "any seat"
		if len(q.s.SeatLabels) > 0 {
			asked = "labels " + markdown.Code(strings.Join(q.s.SeatLabels, ","))
		}
		rows = append(rows, actionkit.Row{Field: "Asked for", Value: asked + fmt.Sprintf(", priority %d", q.s.Priority)})
	}
	if o.quarantineRecovered {
		rows = append(rows, actionkit.Row{Field: "Quarantine recovered", Value: "yes (same runner)"})
	}
	if q.configMissing {
		rows = append(rows, actionkit.Row{Field: "Lock config", Value: markdown.Code(q.st.ConfigPath()) + " is missing: defaults (one seat)"})
	}
	if d := q.drainWaited + q.drainOngoing(); d > 0 {
		rows = append(rows, actionkit.Row{Field: "Waited for an upgrade", Value: d.Round(time.Second).String() + " (admission paused while the lock drained)"})
	}
	if o.result != resultAcquired && q.wait.blocker != "" {
		rows = append(rows, actionkit.Row{Field: "Blocked by", Value: markdown.Message(q.wait.blocker)})
	}
	rows = append(rows, q.machineRows()...)
	rows = append(rows, stateRows(q.last)...)
	if o.incident != nil {
		rows = append(rows, actionkit.Row{Field: "Incident", Value: markdown.Code(o.incident.IncidentID) + " " +
			markdown.Text(o.incident.Reason) + " " + markdown.Link("source run", o.incident.RunURL)})
	}
	if o.stateSHA != "" {
		rows = append(rows, actionkit.Row{Field: "State SHA", Value: markdown.Code(o.stateSHA)})
	}
	err := q.a.Summary(actionkit.Table("Build lock "+q.s.Target.Lock+": "+o.result, rows))
	if err != nil && !errors.Is(err, actionio.ErrFileCommandUnavailable) {
		q.a.Warning("Could not write the job summary: " + err.Error())
	}
}

// stateRows renders holders, queue length and reservations of s.
func stateRows(s *lockstate.State) []actionkit.Row {
	if s == nil {
		return nil
	}
	var holders []string
	for _, h := range s.Holders {
		holders = append(holders, markdown.Link(h.HolderID, h.RunURL)+" on "+markdown.Code(h.RunnerID))
	}
	var res []string
	for _, r := range s.Reservations {
		v := markdown.Code(r.State) + " " + markdown.Text(r.RunnerID)
		if r.AvailableAt != "" {
			v += " until " + markdown.Text(r.AvailableAt)
		}
		res = append(res, v+" ("+markdown.Link(r.HolderID, r.RunURL)+")")
	}
	return []actionkit.Row{
		{Field: "Current holders", Value: strings.Join(holders, "<br>")},
		{Field: "Queued requests", Value: strconv.Itoa(len(s.Queue))},
		{Field: "Reservations", Value: strings.Join(res, "<br>")},
	}
}
