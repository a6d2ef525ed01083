package lockstate

// Resource report vocabulary (spec §1.4, §1.15).
const (
	// StatusConfirmed means external resource cleanup was proven.
	StatusConfirmed = "confirmed"
	// StatusUnknown means external resource cleanup was not proven.
	StatusUnknown = "unknown"
	// HealthHealthy means the licensed account is usable.
	HealthHealthy = "healthy"
	// HealthBlocked means the licensed account hit its activation limit.
	HealthBlocked = "blocked"
	// ReasonCleanupConfirmed is the reason of a confirmed, healthy report.
	ReasonCleanupConfirmed = "cleanup-confirmed"
	// ReasonCleanupEvidenceUnknown is the default reason of an unproven report.
	ReasonCleanupEvidenceUnknown = "cleanup-evidence-unknown"
	// ReasonAccountLimit is the only reason that raises a global incident.
	ReasonAccountLimit = "unity-account-limit-20111"
)

// AllowedReasons is the resource-reason allowlist (spec §1.15).
var AllowedReasons = []string{
	ReasonCleanupConfirmed, ReasonCleanupEvidenceUnknown,
	ReasonAccountLimit, "unity-20113-unclassified", "unity-return-400006",
	"return-timeout", "return-log-truncated", "return-terminated", "return-missing-positive-evidence", "return-ulf-skipped",
	"activation-timeout", "activation-terminated",
}

// Report is a caller's cleanup evidence: Status (StatusConfirmed or
// StatusUnknown), Health (HealthHealthy or HealthBlocked) and an allowlisted
// Reason.
type Report struct {
	Status, Health, Reason string
}

// DegradedReport is what release falls back to when its report fails
// validation: exact cleanup still runs and quarantines a held slot.
func DegradedReport() Report {
	return Report{Status: StatusUnknown, Health: HealthHealthy, Reason: ReasonCleanupEvidenceUnknown}
}

// ValidateReport implements parseReleaseReport (spec §1.4). r holds the typed
// inputs (resource-cleanup-status, resource-health, resource-reason) and
// resourceSafe the deprecated resource-safe input ("", "true" or "false").
// It returns the effective report and "" or the first failing validation
// code, in the reference's order.
//
// Assumption: when some typed fields are given and others are empty, the
// empty ones default (status from resource-safe or unknown, health healthy,
// reason derived from status) before validation.
func ValidateReport(r Report, resourceSafe string) (Report, Code) {
	if resourceSafe != "" && resourceSafe != "true" && resourceSafe != "false" {
		return Report{}, CodeInvalidResourceSafe
	}
	legacyStatus := StatusUnknown
	if resourceSafe == "true" {
		legacyStatus = StatusConfirmed
	}
	defaultReason := func(status string) string {
		if status == StatusConfirmed {
			return ReasonCleanupConfirmed
		}
		return ReasonCleanupEvidenceUnknown
	}
	if r.Status == "" && r.Health == "" && r.Reason == "" {
		return Report{Status: legacyStatus, Health: HealthHealthy, Reason: defaultReason(legacyStatus)}, ""
	}
	out := r
	if out.Status == "" {
		out.Status = legacyStatus
	}
	if out.Health == "" {
		out.Health = HealthHealthy
	}
	if out.Reason == "" {
		out.Reason = defaultReason(out.Status)
	}
	switch {
	case out.Status != StatusConfirmed && out.Status != StatusUnknown:
		return Report{}, CodeInvalidResourceCleanupStatus
	case out.Health != HealthHealthy && out.Health != HealthBlocked:
		return Report{}, CodeInvalidResourceHealth
	case !reasonAllowed(out.Reason):
		return Report{}, CodeInvalidResourceReason
	case out.Health == HealthBlocked && out.Reason != ReasonAccountLimit:
		return Report{}, CodeBlockedHealthReasonMismatch
	case out.Reason == ReasonAccountLimit && out.Health == HealthHealthy:
		return Report{}, CodeAccountLimitHealthMismatch
	case out.Reason == ReasonAccountLimit && out.Health == HealthBlocked && out.Status != StatusUnknown:
		return Report{}, CodeAccountLimitCleanupStatusMismatch
	case out.Health == HealthHealthy && out.Status == StatusConfirmed && out.Reason != ReasonCleanupConfirmed:
		return Report{}, CodeConfirmedCleanupReasonMismatch
	case out.Status == StatusUnknown && out.Reason == ReasonCleanupConfirmed:
		return Report{}, CodeCleanupConfirmedStatusMismatch
	case resourceSafe != "" && (out.Status != legacyStatus || out.Health != HealthHealthy):
		return Report{}, CodeResourceSafeContradiction
	}
	return out, ""
}

func reasonAllowed(reason string) bool {
	for _, a := range AllowedReasons {
		if a == reason {
			return true
		}
	}
	return false
}
