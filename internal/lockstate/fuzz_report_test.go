package lockstate

import (
	"slices"
	"strings"
	"testing"
)

// FuzzValidateReport feeds arbitrary cleanup reports (the release action's
// resource-* inputs, caller-controlled) through ValidateReport: it never
// panics, a valid report is one of the allowed shapes, and a failing one
// carries a report-validation code and never echoes the rejected value.
func FuzzValidateReport(f *testing.F) {
	f.Add("confirmed", "healthy", "cleanup-confirmed", "")
	f.Add("unknown", "blocked", "unity-account-limit-20111", "")
	f.Add("", "", "", "true")
	f.Add("unknown", "healthy", "cleanup-confirmed", "false")
	f.Add("Confirmed ", "HEALTHY", "return-timeout", "maybe")
	f.Add("confirmed\n", "healthy", "<script>", "true")
	f.Fuzz(func(t *testing.T, status, health, reason, resourceSafe string) {
		r, code := ValidateReport(Report{Status: status, Health: health, Reason: reason}, resourceSafe)
		if code != "" {
			if !strings.HasPrefix(string(code), "invalid-") && !strings.HasSuffix(string(code), "-mismatch") &&
				code != CodeResourceSafeContradiction {
				t.Fatalf("unexpected code %q", code)
			}
			return
		}
		if r.Status != StatusConfirmed && r.Status != StatusUnknown {
			t.Fatalf("valid report with status %q", r.Status)
		}
		if r.Health != HealthHealthy && r.Health != HealthBlocked {
			t.Fatalf("valid report with health %q", r.Health)
		}
		if !slices.Contains(AllowedReasons, r.Reason) {
			t.Fatalf("valid report with reason %q outside the allowlist", r.Reason)
		}
		if r.Health == HealthBlocked && (r.Reason != ReasonAccountLimit || r.Status != StatusUnknown) {
			t.Fatalf("blocked report %+v is not unknown/20111", r)
		}
	})
}
