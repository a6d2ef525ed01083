package cleanup_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/cleanup"
)

const incident = "incident-0123456789abcdef01234567"

// cooldown is a safe acquired job whose release started a cooldown.
func cooldown() cleanup.Inputs {
	return cleanup.Inputs{
		Acquired: "true", ClassificationComplete: "true",
		CleanupStatus: "confirmed", CleanupHealth: "healthy", CleanupReason: "cleanup-confirmed",
		ReleaseOutcome: "success", CleanupResult: "cooldown-started", Released: "true",
		ReleaseHealth: "healthy", ReleaseReason: "cleanup-confirmed",
		ReservationState: "cooldown", ReservationID: "3f2b8a9e-5a7c-4d2e-9b1f-0c1d2e3f4a5b",
	}
}

func direct() cleanup.Inputs {
	in := cooldown()
	in.CleanupResult, in.ReservationState, in.ReservationID = "released", "", ""
	return in
}

func global(withReservation bool) cleanup.Inputs {
	in := cooldown()
	in.CleanupResult, in.IncidentID = "global-quarantined", incident
	if !withReservation {
		in.ReservationState, in.ReservationID = "none", "missing"
	}
	return in
}

func mod(in cleanup.Inputs, f func(*cleanup.Inputs)) cleanup.Inputs { f(&in); return in }

// TestEvaluateEveryRule has one row per rule of §1.11 (and per branch of
// the incident and reservation rules).
func TestEvaluateEveryRule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      cleanup.Inputs
		safe    bool
		code    cleanup.Code
		warning bool
	}{
		{"not acquired is safe whatever else says", cleanup.Inputs{Acquired: "false", ClassificationComplete: "false", ReleaseOutcome: "failure"}, true, cleanup.CodeNotAcquired, false},
		{"acquired false padded", cleanup.Inputs{Acquired: " false\n"}, true, cleanup.CodeNotAcquired, false},
		{"acquired empty", mod(cooldown(), func(i *cleanup.Inputs) { i.Acquired = "" }), false, cleanup.CodeAcquiredInvalid, false},
		{"acquired TRUE is not true", mod(cooldown(), func(i *cleanup.Inputs) { i.Acquired = "TRUE" }), false, cleanup.CodeAcquiredInvalid, false},
		{"acquired missing", mod(cooldown(), func(i *cleanup.Inputs) { i.Acquired = "missing" }), false, cleanup.CodeAcquiredInvalid, false},
		{"classification incomplete", mod(cooldown(), func(i *cleanup.Inputs) { i.ClassificationComplete = "false" }), false, cleanup.CodeClassificationIncomplete, false},
		{"classification empty", mod(cooldown(), func(i *cleanup.Inputs) { i.ClassificationComplete = "" }), false, cleanup.CodeClassificationIncomplete, false},
		{"cleanup unknown", mod(cooldown(), func(i *cleanup.Inputs) { i.CleanupStatus, i.CleanupReason = "unknown", "return-timeout" }), false, cleanup.CodeCleanupNotConfirmed, false},
		{"cleanup blocked", mod(cooldown(), func(i *cleanup.Inputs) {
			i.CleanupStatus, i.CleanupHealth, i.CleanupReason = "unknown", "blocked", "unity-account-limit-20111"
		}), false, cleanup.CodeCleanupNotConfirmed, false},
		{"cleanup reason wrong", mod(cooldown(), func(i *cleanup.Inputs) { i.CleanupReason = "cleanup-evidence-unknown" }), false, cleanup.CodeCleanupNotConfirmed, false},
		{"lock-release-unreachable is named", mod(cooldown(), func(i *cleanup.Inputs) {
			i.ReleaseOutcome, i.CleanupResult, i.Released, i.ReservationState, i.ReservationID = "failure", "lock-release-unreachable", "false", "", ""
		}), false, cleanup.CodeLockReleaseUnreachable, false},
		{"release failed", mod(cooldown(), func(i *cleanup.Inputs) { i.ReleaseOutcome = "failure" }), false, cleanup.CodeReleaseFailed, false},
		{"release cancelled", mod(cooldown(), func(i *cleanup.Inputs) { i.ReleaseOutcome = "cancelled" }), false, cleanup.CodeReleaseFailed, false},
		{"quarantined", mod(cooldown(), func(i *cleanup.Inputs) { i.CleanupResult, i.ReservationState = "quarantined", "quarantine" }), false, cleanup.CodeCleanupResultUnsafe, false},
		{"noop", mod(direct(), func(i *cleanup.Inputs) { i.CleanupResult, i.Released = "noop", "false" }), false, cleanup.CodeCleanupResultUnsafe, false},
		{"queue-cleaned", mod(direct(), func(i *cleanup.Inputs) { i.CleanupResult, i.Released = "queue-cleaned", "false" }), false, cleanup.CodeCleanupResultUnsafe, false},
		{"empty cleanup-result", mod(direct(), func(i *cleanup.Inputs) { i.CleanupResult = "" }), false, cleanup.CodeCleanupResultUnsafe, false},
		{"released false", mod(cooldown(), func(i *cleanup.Inputs) { i.Released = "false" }), false, cleanup.CodeNotReleased, false},
		{"release health blocked", mod(cooldown(), func(i *cleanup.Inputs) { i.ReleaseHealth = "blocked" }), false, cleanup.CodeReleaseReportMismatch, false},
		{"release reason unknown", mod(cooldown(), func(i *cleanup.Inputs) { i.ReleaseReason = "cleanup-evidence-unknown" }), false, cleanup.CodeReleaseReportMismatch, false},
		{"global without incident id", mod(global(true), func(i *cleanup.Inputs) { i.IncidentID = "" }), false, cleanup.CodeIncidentIDMissing, false},
		{"global with incident id none", mod(global(true), func(i *cleanup.Inputs) { i.IncidentID = "none" }), false, cleanup.CodeIncidentIDMissing, false},
		{"global with an uppercase incident id", mod(global(true), func(i *cleanup.Inputs) { i.IncidentID = strings.ToUpper(incident) }), false, cleanup.CodeIncidentIDInvalid, false},
		{"global with a short incident id", mod(global(true), func(i *cleanup.Inputs) { i.IncidentID = "incident-0123" }), false, cleanup.CodeIncidentIDInvalid, false},
		{"global with an unanchored incident id", mod(global(true), func(i *cleanup.Inputs) { i.IncidentID = incident + "x" }), false, cleanup.CodeIncidentIDInvalid, false},
		{"incident id with a line break", mod(global(true), func(i *cleanup.Inputs) { i.IncidentID = incident + "\nx" }), false, cleanup.CodeIncidentIDInvalid, false},
		{"incident id without global", mod(cooldown(), func(i *cleanup.Inputs) { i.IncidentID = incident }), false, cleanup.CodeIncidentIDUnexpected, false},
		{"cooldown without reservation id", mod(cooldown(), func(i *cleanup.Inputs) { i.ReservationID = "" }), false, cleanup.CodeReservationMissing, false},
		{"cooldown without reservation state", mod(cooldown(), func(i *cleanup.Inputs) { i.ReservationState = "none" }), false, cleanup.CodeReservationMissing, false},
		{"cooldown with quarantine state", mod(cooldown(), func(i *cleanup.Inputs) { i.ReservationState = "quarantine" }), false, cleanup.CodeReservationStateMismatch, false},
		{"reservation id with a space", mod(cooldown(), func(i *cleanup.Inputs) { i.ReservationID = "a b" }), false, cleanup.CodeReservationIDInvalid, false},
		{"reservation id too long", mod(cooldown(), func(i *cleanup.Inputs) { i.ReservationID = strings.Repeat("a", 257) }), false, cleanup.CodeReservationIDInvalid, false},
		{"global with half a reservation", mod(global(true), func(i *cleanup.Inputs) { i.ReservationID = "" }), false, cleanup.CodeReservationMissing, false},
		{"global with a quarantine reservation", mod(global(true), func(i *cleanup.Inputs) { i.ReservationState = "quarantine" }), false, cleanup.CodeReservationStateMismatch, false},
		{"released with a reservation", mod(direct(), func(i *cleanup.Inputs) { i.ReservationID = "r1" }), false, cleanup.CodeReservationUnexpected, false},
		{"released with a reservation state", mod(direct(), func(i *cleanup.Inputs) { i.ReservationState = "cooldown" }), false, cleanup.CodeReservationUnexpected, false},
		{"cooldown is safe", cooldown(), true, cleanup.CodeConfirmed, false},
		{"direct release is safe", direct(), true, cleanup.CodeConfirmed, false},
		{"direct release with none/missing is safe", mod(direct(), func(i *cleanup.Inputs) { i.ReservationState, i.ReservationID, i.IncidentID = "none", "missing", "none" }), true, cleanup.CodeConfirmed, false},
		{"global with cooldown warns", global(true), true, cleanup.CodeConfirmedUnderIncident, true},
		{"global direct release warns", global(false), true, cleanup.CodeConfirmedUnderIncident, true},
		{"padded values are trimmed", mod(cooldown(), func(i *cleanup.Inputs) { i.Released, i.ReleaseOutcome = " true ", "success\n" }), true, cleanup.CodeConfirmed, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := cleanup.Evaluate(tt.in)
			assert.Equal(t, tt.safe, d.Safe, d.Message)
			assert.Equal(t, tt.code, d.Code, d.Message)
			assert.Equal(t, tt.warning, d.Warning != "", d.Warning)
			assert.NotEmpty(t, d.Message)
		})
	}
}

// TestEvaluateNeverEchoesArbitraryInput: whatever the inputs, the message
// and warning never contain a caller-supplied value outside the gate's
// vocabulary (the inputs may have been wired to anything).
func TestEvaluateNeverEchoesArbitraryInput(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		secret := "S3CRET" + rapid.StringMatching(`[a-z]{4}`).Draw(t, "secret")
		base := cooldown()
		fields := []*string{&base.Acquired, &base.ClassificationComplete, &base.CleanupStatus, &base.CleanupHealth, &base.CleanupReason,
			&base.ReleaseOutcome, &base.CleanupResult, &base.Released, &base.ReleaseHealth, &base.ReleaseReason,
			&base.ReservationState, &base.ReservationID, &base.IncidentID}
		*fields[rapid.IntRange(0, len(fields)-1).Draw(t, "field")] = secret
		d := cleanup.Evaluate(base)
		if strings.Contains(d.Message+d.Warning, secret) {
			// A well-formed reservation id is an id the gate validated; only it may appear.
			if !(d.Safe && base.ReservationID == secret) {
				t.Fatalf("message echoes input: %q", d.Message)
			}
		}
		if d.Safe && base.Acquired == "true" && (base.CleanupStatus != "confirmed" || base.Released != "true") {
			t.Fatalf("safe without confirmed cleanup: %+v", base)
		}
	})
}
