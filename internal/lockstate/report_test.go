package lockstate

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestValidateReport(t *testing.T) {
	t.Parallel()
	blocked := Report{StatusUnknown, HealthBlocked, ReasonAccountLimit}
	cases := []struct {
		name   string
		in     Report
		legacy string
		want   Report
		code   Code
	}{
		{"nothing given", Report{}, "", Report{StatusUnknown, HealthHealthy, ReasonCleanupEvidenceUnknown}, ""},
		{"legacy true", Report{}, "true", Report{StatusConfirmed, HealthHealthy, ReasonCleanupConfirmed}, ""},
		{"legacy false", Report{}, "false", Report{StatusUnknown, HealthHealthy, ReasonCleanupEvidenceUnknown}, ""},
		{"typed confirmed", Report{StatusConfirmed, HealthHealthy, ReasonCleanupConfirmed}, "", Report{StatusConfirmed, HealthHealthy, ReasonCleanupConfirmed}, ""},
		{"typed blocked", blocked, "", blocked, ""},
		{"status only", Report{Status: StatusConfirmed}, "", Report{StatusConfirmed, HealthHealthy, ReasonCleanupConfirmed}, ""},
		{"unknown with allowlisted reason", Report{StatusUnknown, HealthHealthy, "return-timeout"}, "", Report{StatusUnknown, HealthHealthy, "return-timeout"}, ""},
		{"legacy not boolean", Report{}, "yes", Report{}, CodeInvalidResourceSafe},
		{"bad status", Report{Status: "done"}, "", Report{}, CodeInvalidResourceCleanupStatus},
		{"bad health", Report{StatusUnknown, "sick", ReasonCleanupEvidenceUnknown}, "", Report{}, CodeInvalidResourceHealth},
		{"bad reason", Report{StatusUnknown, HealthHealthy, "token=abc"}, "", Report{}, CodeInvalidResourceReason},
		{"blocked wrong reason", Report{StatusUnknown, HealthBlocked, "return-timeout"}, "", Report{}, CodeBlockedHealthReasonMismatch},
		{"20111 healthy", Report{StatusUnknown, HealthHealthy, ReasonAccountLimit}, "", Report{}, CodeAccountLimitHealthMismatch},
		{"20111 blocked confirmed", Report{StatusConfirmed, HealthBlocked, ReasonAccountLimit}, "", Report{}, CodeAccountLimitCleanupStatusMismatch},
		{"confirmed wrong reason", Report{StatusConfirmed, HealthHealthy, "return-timeout"}, "", Report{}, CodeConfirmedCleanupReasonMismatch},
		{"unknown with cleanup-confirmed", Report{StatusUnknown, HealthHealthy, ReasonCleanupConfirmed}, "", Report{}, CodeCleanupConfirmedStatusMismatch},
		{"legacy contradicts status", Report{StatusUnknown, HealthHealthy, ReasonCleanupEvidenceUnknown}, "true", Report{}, CodeResourceSafeContradiction},
		{"legacy contradicts health", blocked, "false", Report{}, CodeResourceSafeContradiction},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, code := ValidateReport(c.in, c.legacy)
			assert.Equal(t, c.code, code)
			assert.Equal(t, c.want, got)
		})
	}
	assert.Equal(t, Report{StatusUnknown, HealthHealthy, ReasonCleanupEvidenceUnknown}, DegradedReport())
}
