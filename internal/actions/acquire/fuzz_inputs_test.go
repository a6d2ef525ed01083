package acquire

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
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
		a := actionio.New(func(k string) string { return env[k] }, &bytes.Buffer{})
		s, err := readSettings(a, Deps{PollUnit: time.Second})
		if err != nil {
			return
		}
		if s.timeout <= 0 || s.lease <= 0 || s.poll <= 0 || s.timeout > 366*24*time.Hour || s.lease > 366*24*time.Hour || s.poll > 24*time.Hour {
			t.Fatalf("accepted non-positive durations: timeout %v lease %v poll %v", s.timeout, s.lease, s.poll)
		}
		if bytes.ContainsAny([]byte(s.suffix), "\r\n") {
			t.Fatalf("accepted a holder suffix with a line break: %q", s.suffix)
		}
		if s.minCooldown < 0 || s.minCooldown > 86400 {
			t.Fatalf("accepted minimum-release-cooldown-seconds %d", s.minCooldown)
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
		a := actionio.New(func(k string) string { return env[k] }, &bytes.Buffer{})
		_, err := readSettings(a, Deps{PollUnit: time.Second})
		var ie *actionio.InputError
		if !errors.As(err, &ie) {
			t.Fatalf("%s: want an input error, got %v", input, err)
		}
	}
}
