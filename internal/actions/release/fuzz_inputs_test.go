package release

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// FuzzSettings feeds arbitrary workflow inputs to release's input
// validation: it never panics; an invalid cleanup report degrades (never an
// error) to unknown/healthy with a validation code; the rejected raw report
// values never reach the log; the deadline is 0 or within 30-3600 s.
func FuzzSettings(f *testing.F) {
	f.Add("seats", "default", "", "r1", "", "confirmed", "healthy", "cleanup-confirmed", "120", "5")
	f.Add("seats", "x", "acme/game:1:build:x", "", "maybe", "CONFIRMED", "sick", "secret-marker-123", "29", "0")
	f.Add("seats", "x", "other/repo:1:b:x", "r", "true", "unknown", "blocked", "unity-account-limit-20111", "99999999999", "abc")
	f.Fuzz(func(t *testing.T, lock, suffix, holderID, runner, resourceSafe, status, health, reason, deadline, attempts string) {
		env := map[string]string{
			"INPUT_LOCK_NAME": lock, "INPUT_HOLDER_ID_SUFFIX": suffix, "INPUT_HOLDER_ID": holderID, "INPUT_RUNNER_ID": runner,
			"INPUT_RESOURCE_SAFE": resourceSafe, "INPUT_RESOURCE_CLEANUP_STATUS": status, "INPUT_RESOURCE_HEALTH": health,
			"INPUT_RESOURCE_REASON": reason, "INPUT_RELEASE_RETRY_DEADLINE_SECONDS": deadline, "INPUT_API_MAX_ATTEMPTS": attempts,
			"GITHUB_ACTION_REPOSITORY": "acme/build-lock", "GITHUB_REPOSITORY": "acme/game", "GITHUB_RUN_ID": "1", "GITHUB_JOB": "build",
			"GITHUB_REPOSITORY_ID": "42", "GITHUB_REPOSITORY_OWNER_ID": "7",
		}
		var log bytes.Buffer
		s, err := LoadSettings(func(k string) string { return env[k] })
		for _, w := range s.Warnings {
			actionio.New(func(k string) string { return env[k] }, &log).Warning(w)
		}
		var se *lockaction.SettingsError
		if errors.As(err, &se) && len(se.Problems) == 1 && lockaction.ReasonCode(err) == "app-credentials" {
			err = nil // the fuzzed inputs were valid; no credentials are set
		}
		// A rejected reason that is not an allowlisted code is caller text: it
		// must never reach the log. (An allowlisted one, such as
		// cleanup-confirmed in a status mismatch, is part of a code name.)
		if len(reason) >= 8 && s.DegradedCode != "" && !slices.Contains(lockstate.AllowedReasons, reason) &&
			strings.Contains(log.String(), reason) {
			t.Fatalf("a rejected resource-reason reached the log: %q", log.String())
		}
		if err != nil {
			return
		}
		if s.DeadlineSecs != 0 && (s.DeadlineSecs < MinDeadlineSeconds || s.DeadlineSecs > MaxDeadlineSeconds) {
			t.Fatalf("deadline %d outside 0 or 30-3600", s.DeadlineSecs)
		}
		if s.DegradedCode != "" && (s.Report.Status != "unknown" || s.Report.Health != "healthy") {
			t.Fatalf("a degraded report must be unknown/healthy, got %+v", s.Report)
		}
		if strings.ContainsAny(s.HolderID, "\r\n") {
			t.Fatalf("holder id with a line break accepted: %q", s.HolderID)
		}
	})
}
