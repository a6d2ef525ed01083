package cleanup

import (
	"fmt"
	"regexp"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/jsstr"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// Inputs are the gate's inputs, one per action input, as the workflow passes
// them (outputs of acquire, the classifier and release; release-outcome is
// steps.<release>.outcome). Values are compared after trimming.
type Inputs struct {
	Acquired               string
	ClassificationComplete string
	CleanupStatus          string
	CleanupHealth          string
	CleanupReason          string
	ReleaseOutcome         string
	CleanupResult          string
	Released               string
	ReleaseHealth          string
	ReleaseReason          string
	ReservationState       string
	ReservationID          string
	IncidentID             string
}

// Code is the stable reason of a gate decision.
type Code string

// Decision codes. The two safe ones are CodeNotAcquired and CodeConfirmed
// (CodeConfirmedUnderIncident is safe with a warning).
const (
	CodeNotAcquired              Code = "not-acquired"
	CodeConfirmed                Code = "cleanup-confirmed"
	CodeConfirmedUnderIncident   Code = "cleanup-confirmed-under-incident"
	CodeAcquiredInvalid          Code = "acquired-invalid"
	CodeClassificationIncomplete Code = "classification-incomplete"
	CodeCleanupNotConfirmed      Code = "cleanup-not-confirmed"
	CodeLockReleaseUnreachable   Code = "lock-release-unreachable"
	CodeReleaseFailed            Code = "release-failed"
	CodeCleanupResultUnsafe      Code = "cleanup-result-unsafe"
	CodeNotReleased              Code = "holder-not-released"
	CodeReleaseReportMismatch    Code = "release-report-not-confirmed"
	CodeIncidentIDMissing        Code = "incident-id-missing"
	CodeIncidentIDUnexpected     Code = "incident-id-unexpected"
	CodeIncidentIDInvalid        Code = "incident-id-invalid"
	CodeReservationIDInvalid     Code = "reservation-id-invalid"
	CodeReservationMissing       Code = "reservation-missing"
	CodeReservationStateMismatch Code = "reservation-state-mismatch"
	CodeReservationUnexpected    Code = "reservation-unexpected"
)

// Release cleanup-result values the gate knows (spec §1.4).
const (
	ResultCooldownStarted        = "cooldown-started"
	ResultGlobalQuarantined      = "global-quarantined"
	ResultReleased               = "released"
	ResultLockReleaseUnreachable = "lock-release-unreachable"
	reservationCooldown          = "cooldown"
	outcomeSuccess               = "success"
)

var (
	incidentIDRE = regexp.MustCompile(`^incident-[a-f0-9]{24}$`)
	opaqueIDRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,255}$`)
)

// Decision is the gate's verdict. Message explains it to an operator and
// quotes only values the gate validated against a closed vocabulary or an
// id pattern (never free text).
type Decision struct {
	Safe    bool
	Code    Code
	Message string
	// Warning is set when the job is safe but an account incident is active.
	Warning string
}

// absent reports the reference's "absent" values: "", "missing", "none".
func absent(v string) bool { return v == "" || v == "missing" || v == "none" }

func unsafe(code Code, format string, args ...any) Decision {
	return Decision{Code: code, Message: fmt.Sprintf(format, args...)}
}

// oneOf returns v when it is in the allowed vocabulary, else a placeholder,
// so messages never echo arbitrary input.
func oneOf(v string, allowed ...string) string {
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	if v == "" {
		return "(empty)"
	}
	return "(unrecognized value)"
}

var releaseResults = []string{"global-quarantined", "cooldown-started", "quarantined", "released", "queue-cleaned", "noop", "lock-release-unreachable"}

// Evaluate applies §1.11 in order; the first failing rule decides.
func Evaluate(raw Inputs) Decision {
	in := trimmed(raw)
	switch in.Acquired {
	case "false":
		return Decision{Safe: true, Code: CodeNotAcquired, Message: "acquired=false: this job never held a seat, so there is no cleanup to confirm."}
	case "true":
	default:
		return unsafe(CodeAcquiredInvalid, "acquired is %s, not true or false: the acquisition state is unknown, so the seat cannot be called clean.", oneOf(in.Acquired))
	}
	if in.ClassificationComplete != "true" {
		return unsafe(CodeClassificationIncomplete, "classification-complete is %s: the cleanup evidence was not fully classified and deleted.", oneOf(in.ClassificationComplete, "false"))
	}
	if in.CleanupStatus != lockstate.StatusConfirmed || in.CleanupHealth != lockstate.HealthHealthy || in.CleanupReason != lockstate.ReasonCleanupConfirmed {
		return unsafe(CodeCleanupNotConfirmed, "the classifier reported %s/%s/%s, not confirmed/healthy/cleanup-confirmed: the license return was not proven.",
			oneOf(in.CleanupStatus, lockstate.StatusConfirmed, lockstate.StatusUnknown), oneOf(in.CleanupHealth, lockstate.HealthHealthy, lockstate.HealthBlocked),
			oneOf(in.CleanupReason, lockstate.AllowedReasons...))
	}
	if in.CleanupResult == ResultLockReleaseUnreachable {
		return unsafe(CodeLockReleaseUnreachable, "cleanup-result=lock-release-unreachable: the license was returned but the lock state could not be reached to record it; "+
			"the scheduled reaper will quarantine the holder entry if the removal did not land (see the Release Retry Budget docs).")
	}
	if in.ReleaseOutcome != outcomeSuccess {
		return unsafe(CodeReleaseFailed, "release-outcome is %s, not success.", oneOf(in.ReleaseOutcome, "failure", "cancelled", "skipped"))
	}
	if in.CleanupResult != ResultCooldownStarted && in.CleanupResult != ResultGlobalQuarantined && in.CleanupResult != ResultReleased {
		return unsafe(CodeCleanupResultUnsafe, "cleanup-result is %s; only cooldown-started, global-quarantined or released prove the holder was removed with confirmed cleanup.",
			oneOf(in.CleanupResult, releaseResults...))
	}
	if in.Released != "true" {
		return unsafe(CodeNotReleased, "released is %s with cleanup-result=%s: the holder was not removed.", oneOf(in.Released, "false"), in.CleanupResult)
	}
	if in.ReleaseHealth != lockstate.HealthHealthy || in.ReleaseReason != lockstate.ReasonCleanupConfirmed {
		return unsafe(CodeReleaseReportMismatch, "release recorded %s/%s, not healthy/cleanup-confirmed.",
			oneOf(in.ReleaseHealth, lockstate.HealthHealthy, lockstate.HealthBlocked), oneOf(in.ReleaseReason, lockstate.AllowedReasons...))
	}
	global := in.CleanupResult == ResultGlobalQuarantined
	switch {
	case !absent(in.IncidentID) && !opaqueIDRE.MatchString(in.IncidentID):
		return unsafe(CodeIncidentIDInvalid, "incident-id is not a valid id.")
	case global && absent(in.IncidentID):
		return unsafe(CodeIncidentIDMissing, "cleanup-result=global-quarantined without an incident-id.")
	case global && !incidentIDRE.MatchString(in.IncidentID):
		return unsafe(CodeIncidentIDInvalid, "incident-id does not match ^incident-[a-f0-9]{24}$.")
	case !global && !absent(in.IncidentID):
		return unsafe(CodeIncidentIDUnexpected, "incident-id is set but cleanup-result=%s is not global-quarantined.", in.CleanupResult)
	}
	hasState, hasID := !absent(in.ReservationState), !absent(in.ReservationID)
	if hasID && !opaqueIDRE.MatchString(in.ReservationID) {
		return unsafe(CodeReservationIDInvalid, "reservation-id is not a valid id.")
	}
	switch {
	case in.CleanupResult == ResultReleased && (hasState || hasID):
		return unsafe(CodeReservationUnexpected, "cleanup-result=released must leave no reservation, but reservation-state or reservation-id is set.")
	case in.CleanupResult == ResultCooldownStarted || (global && (hasState || hasID)):
		if !hasState || !hasID {
			return unsafe(CodeReservationMissing, "cleanup-result=%s needs reservation-state=cooldown and a reservation-id.", in.CleanupResult)
		}
		if in.ReservationState != reservationCooldown {
			return unsafe(CodeReservationStateMismatch, "reservation-state is %s, not cooldown: confirmed cleanup must start a cooldown.", oneOf(in.ReservationState, "quarantine"))
		}
	}
	if global {
		return Decision{Safe: true, Code: CodeConfirmedUnderIncident,
			Message: "Cleanup confirmed: the holder was removed with confirmed, healthy cleanup.",
			Warning: fmt.Sprintf("Account incident %s is active: this job's cleanup is confirmed, but the lock admits no new holder until an operator recovers the incident (Recover build lock, operation=recover-incident).", in.IncidentID)}
	}
	return Decision{Safe: true, Code: CodeConfirmed, Message: fmt.Sprintf("Cleanup confirmed: cleanup-result=%s with confirmed, healthy cleanup.", in.CleanupResult)}
}

func trimmed(in Inputs) Inputs {
	t := jsstr.Trim
	return Inputs{t(in.Acquired), t(in.ClassificationComplete), t(in.CleanupStatus), t(in.CleanupHealth), t(in.CleanupReason),
		t(in.ReleaseOutcome), t(in.CleanupResult), t(in.Released), t(in.ReleaseHealth), t(in.ReleaseReason),
		t(in.ReservationState), t(in.ReservationID), t(in.IncidentID)}
}
