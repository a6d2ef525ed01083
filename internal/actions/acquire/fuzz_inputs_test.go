package acquire

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

// FuzzSettings feeds arbitrary workflow inputs to acquire's input
// validation, which runs before any credential is read: it never panics, and
// whatever it accepts is usable (positive durations, no line breaks in the
// holder suffix).
func FuzzSettings(f *testing.F) {
	f.Add("seats", "default", "runner-1", "180", "240", "15", "false", "0", "", "")
	f.Add("a..b", " x", "", "0", "-1", "1e3", "TRUE", "86401", "acme", "../x")
	f.Add("seats", "unity 6: mac", "r", "99999999999999999999", "9223372036854775807", "18446744073709551616", "true", "007", "acme/build-lock", "lock-state")
	f.Fuzz(func(t *testing.T, lock, suffix, runner, timeout, lease, poll, requireLifecycle, minCooldown, lockRepo, branch string) {
		env := map[string]string{
			"INPUT_LOCK_NAME": lock, "INPUT_HOLDER_ID_SUFFIX": suffix, "INPUT_RUNNER_ID": runner,
			"INPUT_TIMEOUT_MINUTES": timeout, "INPUT_LEASE_MINUTES": lease, "INPUT_POLL_SECONDS": poll,
			"INPUT_REQUIRE_RESOURCE_LIFECYCLE": requireLifecycle, "INPUT_MINIMUM_RELEASE_COOLDOWN_SECONDS": minCooldown,
			"INPUT_LOCK_REPOSITORY": lockRepo, "INPUT_STATE_BRANCH": branch,
			"GITHUB_ACTION_REPOSITORY": "acme/build-lock", "GITHUB_REPOSITORY": "acme/game",
			"GITHUB_REPOSITORY_ID": "42", "GITHUB_REPOSITORY_OWNER_ID": "7",
		}
		s, err := LoadSettings(func(k string) string { return env[k] })
		var se *lockaction.SettingsError
		if errors.As(err, &se) && len(se.Problems) == 1 && lockaction.ReasonCode(err) == "app-credentials" {
			err = nil // the fuzzed inputs were valid; no credentials are set
		}
		if err != nil {
			return
		}
		if s.Timeout <= 0 || s.Lease <= 0 || s.Poll <= 0 || s.Timeout > 366*24*time.Hour || s.Lease > 366*24*time.Hour || s.Poll > 24*time.Hour {
			t.Fatalf("accepted non-positive durations: timeout %v lease %v poll %v", s.Timeout, s.Lease, s.Poll)
		}
		if bytes.ContainsAny([]byte(s.Identity.Suffix), "\r\n") {
			t.Fatalf("accepted a holder suffix with a line break: %q", s.Identity.Suffix)
		}
		if s.MinCooldown < 0 || s.MinCooldown > 86400 {
			t.Fatalf("accepted minimum-release-cooldown-seconds %d", s.MinCooldown)
		}
	})
}

// TestRegression_HugeDurationInputsAreRefused: found by FuzzSettings. A
// timeout-minutes of 9223372036854775807 passed "digits only, at least 1"
// and overflowed time.Duration into a garbage deadline.
func TestRegression_HugeDurationInputsAreRefused(t *testing.T) {
	t.Parallel()
	for _, input := range []string{"INPUT_TIMEOUT_MINUTES", "INPUT_LEASE_MINUTES", "INPUT_POLL_SECONDS"} {
		env := map[string]string{
			"INPUT_LOCK_NAME": "seats", input: "9223372036854775807",
			"GITHUB_ACTION_REPOSITORY": "acme/build-lock", "GITHUB_REPOSITORY": "acme/game",
			"GITHUB_REPOSITORY_ID": "42", "GITHUB_REPOSITORY_OWNER_ID": "7",
		}
		_, err := LoadSettings(func(k string) string { return env[k] })
		var ie *actionio.InputError
		if !errors.As(err, &ie) {
			t.Fatalf("%s: want an input error, got %v", input, err)
		}
	}
}
