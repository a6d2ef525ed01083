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

// settings are the validated inputs of one release.
type settings struct {
	target   lockaction.Target
	holderID string
	// explicit is true when holder-id was given (a fallback job): the
	// cleanup then does not compare the recorded runner.
	explicit      bool
	runnerID      string
	report        lockstate.Report
	degradedCode  lockstate.Code
	deadlineSecs  int
	knobOverrides map[string]string
	attemptCap    int
}

// readSettings validates every input before any credential is parsed.
// Report and knob problems never fail: the report degrades and a knob is
// reported and ignored, so the exact cleanup always runs.
func readSettings(a *actionio.IO) (settings, error) {
	var s settings
	policy, err := lockaction.LoadPolicy(a)
	if err != nil {
		return s, err
	}
	if s.target, err = lockaction.ParseTarget(a, policy); err != nil {
		return s, err
	}
	suffix, runnerID, err := lockaction.IdentityInputs(a)
	if err != nil {
		return s, err
	}
	explicit, err := explicitHolderID(a)
	if err != nil {
		return s, err
	}
	s.runnerID = runnerID
	s.holderID = explicit
	s.explicit = explicit != ""
	if s.holderID == "" {
		s.holderID = fmt.Sprintf("%s:%s:%s:%s", envOr(a, "GITHUB_REPOSITORY", "unknown/unknown"), envOr(a, "GITHUB_RUN_ID", "0"), envOr(a, "GITHUB_JOB", "unknown"), suffix)
	}
	if err := actionio.CheckOutput(OutputHolderID, s.holderID); err != nil {
		return s, err
	}
	raw := lockstate.Report{Status: a.Input(InputResourceCleanupStatus), Health: a.Input(InputResourceHealth), Reason: a.Input(InputResourceReason)}
	report, code := lockstate.ValidateReport(raw, a.Input(InputResourceSafe))
	if code != "" {
		report = lockstate.DegradedReport()
		s.degradedCode = code
		a.Warning(fmt.Sprintf("The cleanup report failed validation (%s); releasing with unknown cleanup evidence, which quarantines a held slot, and failing afterwards.", code))
	}
	s.report = report
	dl := a.IntInRangeTolerant(InputReleaseRetryDeadlineSeconds, DefaultDeadlineSeconds, MinDeadlineSeconds, MaxDeadlineSeconds, 0)
	if dl.Warning != "" {
		a.Warning(dl.Warning)
	}
	s.deadlineSecs = dl.Value
	s.knobOverrides = map[string]string{}
	for _, k := range []struct {
		input, env string
		lo, hi     int
	}{
		{InputAPIMaxAttempts, ghclient.EnvMaxAttempts, ghclient.MinMaxAttempts, ghclient.MaxMaxAttempts},
		{InputAPIRetryBaseMS, ghclient.EnvRetryBaseMS, int(ghclient.MinRetryBase.Milliseconds()), int(ghclient.MaxRetryBase.Milliseconds())},
		{InputAPIRetryMaxMS, ghclient.EnvRetryMaxMS, int(ghclient.MinRetryMax.Milliseconds()), int(ghclient.MaxRetryMax.Milliseconds())},
	} {
		raw := a.Input(k.input)
		if raw == "" {
			continue
		}
		if _, ok, _ := ghclient.ParseKnob(k.env, raw, k.lo, k.hi); ok {
			s.knobOverrides[k.env] = raw
		} else {
			a.Warning(fmt.Sprintf("Ignoring invalid input %s; expected an integer between %d and %d.", k.input, k.lo, k.hi))
		}
	}
	attempts := s.knobOverrides[ghclient.EnvMaxAttempts]
	if attempts == "" {
		attempts = strings.TrimSpace(a.Getenv(ghclient.EnvMaxAttempts))
	}
	if n, ok, _ := ghclient.ParseKnob(ghclient.EnvMaxAttempts, attempts, ghclient.MinMaxAttempts, ghclient.MaxMaxAttempts); ok {
		s.attemptCap = n
	}
	return s, nil
}

// explicitHolderID validates the holder-id input (spec §1.4): it must be
// <GITHUB_REPOSITORY>:<GITHUB_RUN_ID>:<job>:<suffix> with a non-empty job
// and suffix and no line break, so a fallback job can only release its own
// run's identity.
func explicitHolderID(a *actionio.IO) (string, error) {
	raw := a.RawInput(InputHolderID)
	if raw == "" {
		return "", nil
	}
	bad := &actionio.InputError{Input: InputHolderID, Code: actionio.CodePatternMismatch,
		Message: "must be <GITHUB_REPOSITORY>:<GITHUB_RUN_ID>:<job>:<suffix> of this run, with a non-empty job and suffix and no line break"}
	if strings.ContainsAny(raw, "\r\n") {
		return "", bad
	}
	v := strings.TrimSpace(raw)
	prefix := strings.TrimSpace(a.Getenv("GITHUB_REPOSITORY")) + ":" + strings.TrimSpace(a.Getenv("GITHUB_RUN_ID")) + ":"
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

func envOr(a *actionio.IO, name, def string) string {
	if v := strings.TrimSpace(a.Getenv(name)); v != "" {
		return v
	}
	return def
}
