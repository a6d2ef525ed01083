package release

import (
	"fmt"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// Input names (spec §1.4).
const (
	InputLockName                    = "lock-name"
	InputHolderIDSuffix              = "holder-id-suffix"
	InputHolderID                    = "holder-id"
	InputRunnerID                    = "runner-id"
	InputResourceSafe                = "resource-safe"
	InputResourceCleanupStatus       = "resource-cleanup-status"
	InputResourceHealth              = "resource-health"
	InputResourceReason              = "resource-reason"
	InputReleaseRetryDeadlineSeconds = "release-retry-deadline-seconds"
	InputAPIMaxAttempts              = "api-max-attempts"
	InputAPIRetryBaseMS              = "api-retry-base-ms"
	InputAPIRetryMaxMS               = "api-retry-max-ms"
)

// Release retry deadline (spec §1.4 "Release Retry Budget").
const (
	// DefaultDeadlineSeconds is the wall-clock budget for reaching the
	// lock-state file; 0 restores the attempt-bounded budget.
	DefaultDeadlineSeconds = 120
	// MinDeadlineSeconds and MaxDeadlineSeconds bound a positive deadline;
	// a smaller one would leave its narrowest phase too little time to mint
	// a token and make one call.
	MinDeadlineSeconds = 30
	MaxDeadlineSeconds = 3600
	// DefaultHolderIDSuffix matches acquire's default.
	DefaultHolderIDSuffix = lockaction.DefaultHolderIDSuffix
)

// Settings are everything one release process reads from its environment,
// parsed and validated once by LoadSettings before any request. Nothing
// below Run reads the environment.
type Settings struct {
	// Target is the lock and where GitHub is; Run the caller's run and
	// runner.
	Target lockaction.Target
	Run    lockaction.Run
	// HolderID is the holder-id input, or the one this job's acquire
	// computed (<repository>:<run id>:<job>:<holder-id-suffix>).
	HolderID string
	// Explicit is true when holder-id was given (a fallback job): the
	// cleanup then does not compare the recorded runner.
	Explicit bool
	// RunnerID is runner-id, defaulting to RUNNER_NAME.
	RunnerID string
	// Report is the cleanup report; DegradedCode the code of a report
	// that failed validation (the release then runs with unknown evidence
	// and fails afterwards: never a settings problem).
	Report       lockstate.Report
	DegradedCode lockstate.Code
	// DeadlineSecs is release-retry-deadline-seconds (0: attempt-bounded).
	DeadlineSecs int
	// AttemptCap is the effective api-max-attempts (input, else
	// BUILD_LOCK_API_MAX_ATTEMPTS; 0 when unset).
	AttemptCap int
	// Credentials are the writer App's; Knobs the client's retry knobs,
	// the api-* inputs overriding BUILD_LOCK_API_*.
	Credentials lockaction.AppCredentials
	Knobs       lockaction.Knobs
	// RunnerTemp is where this job's acquire left its HeldMarker.
	RunnerTemp string
	// Warnings are the tolerated problems (a degraded report, an ignored
	// deadline or knob input), printed before the first request.
	Warnings []string
}

// LoadSettings parses every input (both spellings), runner and GitHub
// variable, credential and knob release reads, in the order the checks
// always ran: the target and caller authorization, the identity inputs and
// runner environment, the holder id, then the App credentials. Report and
// knob problems never fail: the report degrades and a knob is reported and
// ignored, so the exact cleanup always runs. On bad input it returns one
// *lockaction.SettingsError listing every problem (its reason code is the
// first problem's); the Settings still carry the Credentials' Masks.
func LoadSettings(getenv func(string) string) (Settings, error) {
	var s Settings
	var p lockaction.Problems
	s.Target = lockaction.ParseTargetSettings(getenv, &p)
	identity := lockaction.ParseIdentityInput(getenv, lockaction.Run{}, &p)
	s.Run = lockaction.ParseRun(getenv, &p)
	s.RunnerID = identity.RunnerID
	if s.RunnerID == "" {
		s.RunnerID = s.Run.Runner.Name
	}
	in := lockaction.Inputs(getenv)
	explicit, err := explicitHolderID(in.RawInput(InputHolderID), s.Run)
	p.Add(err)
	s.HolderID, s.Explicit = explicit, explicit != ""
	if s.HolderID == "" {
		s.HolderID = fmt.Sprintf("%s:%s:%s:%s", s.Run.Repository, s.Run.RunID, s.Run.Job, identity.Suffix)
	}
	if p.Len() == 0 {
		p.Add(actionio.CheckOutput(OutputHolderID, s.HolderID))
	}
	raw := lockstate.Report{Status: in.Input(InputResourceCleanupStatus), Health: in.Input(InputResourceHealth), Reason: in.Input(InputResourceReason)}
	report, code := lockstate.ValidateReport(raw, in.Input(InputResourceSafe))
	if code != "" {
		report = lockstate.DegradedReport()
		s.DegradedCode = code
		s.Warnings = append(s.Warnings, fmt.Sprintf("The cleanup report failed validation (%s); releasing with unknown cleanup evidence, which quarantines a held slot, and failing afterwards.", code))
	}
	s.Report = report
	dl := in.IntInRangeTolerant(InputReleaseRetryDeadlineSeconds, DefaultDeadlineSeconds, MinDeadlineSeconds, MaxDeadlineSeconds, 0)
	if dl.Warning != "" {
		s.Warnings = append(s.Warnings, dl.Warning)
	}
	s.DeadlineSecs = dl.Value
	overrides := map[string]string{}
	for _, k := range []struct {
		input, env string
		lo, hi     int
	}{
		{InputAPIMaxAttempts, ghclient.EnvMaxAttempts, ghclient.MinMaxAttempts, ghclient.MaxMaxAttempts},
		{InputAPIRetryBaseMS, ghclient.EnvRetryBaseMS, int(ghclient.MinRetryBase.Milliseconds()), int(ghclient.MaxRetryBase.Milliseconds())},
		{InputAPIRetryMaxMS, ghclient.EnvRetryMaxMS, int(ghclient.MinRetryMax.Milliseconds()), int(ghclient.MaxRetryMax.Milliseconds())},
	} {
		raw := in.Input(k.input)
		if raw == "" {
			continue
		}
		if _, ok, _ := ghclient.ParseKnob(k.env, raw, k.lo, k.hi); ok {
			overrides[k.env] = raw
		} else {
			s.Warnings = append(s.Warnings, fmt.Sprintf("Ignoring invalid input %s; expected an integer between %d and %d.", k.input, k.lo, k.hi))
		}
	}
	attempts := overrides[ghclient.EnvMaxAttempts]
	if attempts == "" {
		attempts = strings.TrimSpace(getenv(ghclient.EnvMaxAttempts))
	}
	if n, ok, _ := ghclient.ParseKnob(ghclient.EnvMaxAttempts, attempts, ghclient.MinMaxAttempts, ghclient.MaxMaxAttempts); ok {
		s.AttemptCap = n
	}
	s.Knobs = lockaction.ParseKnobs(func(k string) string {
		if v, ok := overrides[k]; ok {
			return v
		}
		return getenv(k)
	})
	s.Credentials = lockaction.ParseCredentials(getenv, lockaction.EnvAppID, lockaction.EnvAppPrivateKey, &p)
	s.RunnerTemp = lockaction.RunnerTemp(getenv)
	return s, p.Err()
}

// explicitHolderID validates the holder-id input raw (spec §1.4): it must
// be <GITHUB_REPOSITORY>:<GITHUB_RUN_ID>:<job>:<suffix> of run with a
// non-empty job and suffix and no line break, so a fallback job can only
// release its own run's identity.
func explicitHolderID(raw string, run lockaction.Run) (string, error) {
	if raw == "" {
		return "", nil
	}
	bad := &actionio.InputError{Input: InputHolderID, Code: actionio.CodePatternMismatch,
		Message: "must be <GITHUB_REPOSITORY>:<GITHUB_RUN_ID>:<job>:<suffix> of this run, with a non-empty job and suffix and no line break"}
	if strings.ContainsAny(raw, "\r\n") {
		return "", bad
	}
	v := strings.TrimSpace(raw)
	prefix := strings.TrimSpace(run.RawRepository) + ":" + strings.TrimSpace(run.RawRunID) + ":"
	rest, ok := strings.CutPrefix(v, prefix)
	if !ok || prefix == "::" {
		return "", bad
	}
	job, suffix, ok := strings.Cut(rest, ":")
	if !ok || job == "" || suffix == "" {
		return "", bad
	}
	return v, nil
}
