package acquire

import (
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/prhead"
)

// Input names (spec §1.2). The with-cleanup variant reads the same set.
const (
	InputLockName                      = "lock-name"
	InputHolderIDSuffix                = "holder-id-suffix"
	InputRunnerID                      = "runner-id"
	InputTimeoutMinutes                = "timeout-minutes"
	InputLeaseMinutes                  = "lease-minutes"
	InputPollSeconds                   = "poll-seconds"
	InputRequireResourceLifecycle      = "require-resource-lifecycle"
	InputMinimumReleaseCooldownSeconds = "minimum-release-cooldown-seconds"
)

// Defaults of the inputs and environment knobs (spec §1.2, §3.6, Appendix A).
const (
	// DefaultHolderIDSuffix distinguishes nothing: one acquire per job.
	DefaultHolderIDSuffix = lockaction.DefaultHolderIDSuffix
	// DefaultTimeoutMinutes bounds the wait (3 h).
	DefaultTimeoutMinutes = 180
	// DefaultLeaseMinutes is the holder's lease hint for the reaper (4 h).
	DefaultLeaseMinutes = 240
	// DefaultPollSeconds is the base poll interval.
	DefaultPollSeconds = 15
	// DefaultAuthGrace keeps a queued job polling through 401 bursts (auth
	// replica lag) for this long; BUILD_LOCK_AUTH_GRACE_MS=0 fails fast.
	DefaultAuthGrace = 5 * time.Minute
	// DefaultConfigTTL is how often a waiting job re-reads the lock config,
	// so a raised maxHolders unblocks queued runs.
	DefaultConfigTTL = 5 * time.Minute
	// PRHeadTTL is how often a waiting pull request run re-checks its head.
	PRHeadTTL = time.Minute
)

// Environment variables read by acquire besides the inputs.
const (
	EnvMode                = "BUILD_LOCK_MODE"
	EnvRegisterPostCleanup = "BUILD_LOCK_REGISTER_POST_CLEANUP"
	EnvAuthGraceMS         = "BUILD_LOCK_AUTH_GRACE_MS"
	EnvConfigTTLMS         = "BUILD_LOCK_CONFIG_TTL_MS"
	// StateCleanup is the GITHUB_STATE key the post step reads.
	StateCleanup = "build_lock_cleanup"
)

// settings are the validated inputs of one acquire.
type settings struct {
	target           lockaction.Target
	suffix, runnerID string
	pr               prhead.Inputs
	prErr            error
	timeout, lease   time.Duration
	poll             time.Duration
	requireLifecycle bool
	minCooldown      int
	authGrace        time.Duration
	configTTL        time.Duration
}

// Upper bounds of the duration inputs. The reference accepts any positive
// integer; beyond these the duration arithmetic overflows, and no GitHub job
// lives that long anyway (a workflow run ends after 35 days).
const (
	// MaxMinutes bounds timeout-minutes and lease-minutes (one year).
	MaxMinutes = 525600
	// MaxPollSeconds bounds poll-seconds (one day).
	MaxPollSeconds = 86400
)

// readSettings validates every input before any credential is parsed or
// request sent: lockaction.ParseTarget first, then the identity, timing
// and requirement inputs. An invalid pull-request input is not returned as
// an error but kept in prErr: it is reported as pr-head-check-failed with
// outputs, like a failed lookup.
func readSettings(a *actionio.IO, d Deps) (settings, error) {
	var s settings
	policy, err := lockaction.LoadPolicy(a)
	if err != nil {
		return s, err
	}
	if s.target, err = lockaction.ParseTarget(a, policy); err != nil {
		return s, err
	}
	if s.suffix, s.runnerID, err = lockaction.IdentityInputs(a); err != nil {
		return s, err
	}
	s.pr, s.prErr = prhead.ReadInputs(a, s.target.APIURL)
	minutes, err := a.PositiveIntMax(InputTimeoutMinutes, DefaultTimeoutMinutes, MaxMinutes)
	if err != nil {
		return s, err
	}
	s.timeout = time.Duration(minutes) * time.Minute
	if minutes, err = a.PositiveIntMax(InputLeaseMinutes, DefaultLeaseMinutes, MaxMinutes); err != nil {
		return s, err
	}
	s.lease = time.Duration(minutes) * time.Minute
	seconds, err := a.PositiveIntMax(InputPollSeconds, DefaultPollSeconds, MaxPollSeconds)
	if err != nil {
		return s, err
	}
	s.poll = time.Duration(seconds) * d.PollUnit
	if s.requireLifecycle, err = a.Bool(InputRequireResourceLifecycle, false); err != nil {
		return s, err
	}
	if s.minCooldown, err = a.NonNegativeIntMax(InputMinimumReleaseCooldownSeconds, 0, lockstate.MaxReleaseCooldownSeconds); err != nil {
		return s, err
	}
	var warn string
	if s.authGrace, warn = actionkit.EnvMillis(a.Getenv, EnvAuthGraceMS, DefaultAuthGrace); warn != "" {
		a.Warning(warn)
	}
	if s.configTTL, warn = actionkit.EnvMillis(a.Getenv, EnvConfigTTLMS, DefaultConfigTTL); warn != "" {
		a.Warning(warn)
	}
	return s, nil
}
