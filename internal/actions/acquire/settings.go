package acquire

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit/machineslot"
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
	// InputSeatLabels is the seat-label expression (issue 25): one label,
	// or "a,b" for a seat carrying all of them; empty means any seat.
	InputSeatLabels = "seat-labels"
	// InputPriority is the priority class, 0 (default) to
	// lockstate.MaxPriority; the lock config says who may use which.
	InputPriority = "priority"
	// InputJobCheckRunID is the job's check run id, which GitHub also uses
	// as its job id (the actions/jobs API answers for it). Its default in
	// action.yml is ${{ job.check_run_id }}, so on github.com the runner
	// fills it in; empty (GitHub Enterprise Server without the property, or
	// nektos/act) means acquire looks the job id up in the run attempt's
	// job list instead (jobid.go).
	InputJobCheckRunID = "job-check-run-id"
)

// jobIDRE is the form of a job id: a positive decimal without a leading
// zero, at most 19 digits (LoadSettings also requires it to fit an int64,
// as the API's ids do), or empty.
var jobIDRE = regexp.MustCompile(`^(?:[1-9][0-9]{0,18})?$`)

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
	// DefaultRequireLifecycle: a consumer that needs resourceLifecycle asks
	// for it; by default any config is accepted.
	DefaultRequireLifecycle = false
	// DefaultMinCooldownSeconds: no release cooldown is required by default.
	DefaultMinCooldownSeconds = 0
	// DefaultPriority: every job is in the lowest class unless it asks
	// for more (and the lock config allows it).
	DefaultPriority = 0
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

// Upper bounds of the duration inputs. The reference accepts any positive
// integer; beyond these the duration arithmetic overflows, and no GitHub job
// lives that long anyway (a workflow run ends after 35 days).
const (
	// MaxMinutes bounds timeout-minutes and lease-minutes (one year).
	MaxMinutes = 525600
	// MaxPollSeconds bounds poll-seconds (one day).
	MaxPollSeconds = 86400
)

// Settings are everything one acquire process reads from its environment,
// parsed and validated once by LoadSettings before any request. Nothing
// below Run reads the environment.
type Settings struct {
	// Mode is BUILD_LOCK_MODE: ModeAcquire (also when empty),
	// ModeAcquireWithCleanup or ModePostCleanup.
	Mode string
	// Register: save build_lock_cleanup=enabled before the first write
	// (the with-cleanup main step, or BUILD_LOCK_REGISTER_POST_CLEANUP=1).
	Register bool
	// PostEnabled: the main step saved build_lock_cleanup=enabled (read by
	// the post step from STATE_build_lock_cleanup).
	PostEnabled bool

	// Target is the lock and where GitHub is; Run the caller's run and
	// runner; Identity the holder-id-suffix and runner-id inputs.
	Target   lockaction.Target
	Run      lockaction.Run
	Identity lockaction.IdentityInput
	// PR are the pull request inputs. PRErr is an invalid one, listed among
	// the problems with reason code pr-head-check-failed.
	PR    prhead.Inputs
	PRErr error

	// Timeout is timeout-minutes, Lease lease-minutes, Poll poll-seconds
	// (in seconds; Run rescales it to Deps.PollUnit).
	Timeout, Lease, Poll time.Duration
	// RequireLifecycle is require-resource-lifecycle; MinCooldown is
	// minimum-release-cooldown-seconds.
	RequireLifecycle bool
	MinCooldown      int
	// SeatLabels are the seat-labels input, normalized (nil: any seat);
	// Priority the priority input; Caller what the priority privilege
	// depends on, from the runner's own GITHUB_REPOSITORY and
	// GITHUB_EVENT_NAME (never from inputs).
	SeatLabels []string
	Priority   int
	Caller     lockstate.PriorityCaller
	// JobCheckRunID is the job-check-run-id input: this job's own id, as
	// the runner evaluated ${{ job.check_run_id }}, or "" (look it up).
	JobCheckRunID string
	// Machine is machine-slots and BUILD_LOCK_MACHINE_DIR (machineslot.go).
	Machine machineslot.Settings
	// AuthGrace and ConfigTTL are the BUILD_LOCK_AUTH_GRACE_MS and
	// BUILD_LOCK_CONFIG_TTL_MS knobs.
	AuthGrace, ConfigTTL time.Duration

	// Credentials are the writer App's; Knobs the client's retry knobs.
	Credentials lockaction.AppCredentials
	Knobs       lockaction.Knobs
	// RunnerTemp is where this job's HeldMarker lives ("" locally).
	RunnerTemp string
	// Warnings are ignored knob values, printed before the first request.
	Warnings []string
	// identityValid: the target and identity are valid, so the outputs of
	// a refusal carry the holder id.
	identityValid bool
}

// LoadSettings parses every input (both spellings), runner and GitHub
// variable, credential and knob acquire reads, in the order the checks
// always ran: the target and caller authorization, the identity inputs and
// runner environment, the timing and requirement inputs, the holder id as
// an output, then the App credentials. On bad input it returns one
// *lockaction.SettingsError listing every problem (its reason code is the
// first problem's); the returned Settings still carry the Credentials'
// Masks. An unknown BUILD_LOCK_MODE is an error of its own.
func LoadSettings(getenv func(string) string) (Settings, error) {
	var s Settings
	s.Register = strings.TrimSpace(getenv(EnvRegisterPostCleanup)) == "1"
	switch s.Mode = strings.TrimSpace(getenv(EnvMode)); s.Mode {
	case "", ModeAcquire:
		s.Mode = ModeAcquire
	case ModeAcquireWithCleanup:
		s.Register = true
	case ModePostCleanup:
		s.PostEnabled = strings.TrimSpace(getenv("STATE_"+StateCleanup)) == "enabled"
	default:
		return s, fmt.Errorf("acquire: unknown %s %q; expected %s, %s or %s", EnvMode, actionio.OneLine(s.Mode), ModeAcquire, ModeAcquireWithCleanup, ModePostCleanup)
	}
	var p lockaction.Problems
	s.Target = lockaction.ParseTargetSettings(getenv, &p)
	in := lockaction.Inputs(getenv)
	s.Identity = lockaction.ParseIdentityInput(getenv, lockaction.Run{}, &p)
	s.Run = lockaction.ParseRun(getenv, &p)
	if s.Identity.RunnerID == "" {
		s.Identity.RunnerID = s.Run.Runner.Name
	}
	s.Knobs = lockaction.ParseKnobs(getenv)
	s.RunnerTemp = lockaction.RunnerTemp(getenv)
	if s.Mode == ModePostCleanup {
		// The post step reads only what its cleanup needs: the target,
		// the identity and the credentials (its problems are warnings).
		s.Credentials = lockaction.ParseCredentials(getenv, lockaction.EnvAppID, lockaction.EnvAppPrivateKey, &p)
		return s, p.Err()
	}
	s.PR, s.PRErr = prhead.ParseInputs(getenv, s.Target.APIURL)
	minutes, err := in.PositiveIntMax(InputTimeoutMinutes, DefaultTimeoutMinutes, MaxMinutes)
	p.Add(err)
	s.Timeout = time.Duration(minutes) * time.Minute
	minutes, err = in.PositiveIntMax(InputLeaseMinutes, DefaultLeaseMinutes, MaxMinutes)
	p.Add(err)
	s.Lease = time.Duration(minutes) * time.Minute
	seconds, err := in.PositiveIntMax(InputPollSeconds, DefaultPollSeconds, MaxPollSeconds)
	p.Add(err)
	s.Poll = time.Duration(seconds) * time.Second
	s.RequireLifecycle, err = in.Bool(InputRequireResourceLifecycle, DefaultRequireLifecycle)
	p.Add(err)
	s.MinCooldown, err = in.NonNegativeIntMax(InputMinimumReleaseCooldownSeconds, DefaultMinCooldownSeconds, lockstate.MaxReleaseCooldownSeconds)
	p.Add(err)
	s.SeatLabels, err = lockstate.ParseLabelExpression(in.Input(InputSeatLabels))
	if err != nil {
		p.Add(&actionio.InputError{Input: InputSeatLabels, Code: actionio.CodePatternMismatch, Message: err.Error()})
	}
	s.Priority, err = in.NonNegativeIntMax(InputPriority, DefaultPriority, lockstate.MaxPriority)
	p.Add(err)
	s.JobCheckRunID, err = in.Pattern(InputJobCheckRunID, "", jobIDRE)
	if err == nil {
		if _, perr := strconv.ParseInt(s.JobCheckRunID, 10, 64); s.JobCheckRunID != "" && perr != nil {
			err = &actionio.InputError{Input: InputJobCheckRunID, Code: actionio.CodePatternMismatch, Message: "must be a job id (a positive 64-bit integer)"}
		}
	}
	p.Add(err)
	s.Machine = machineslot.Parse(getenv, in, &p)
	s.Caller = lockstate.PriorityCaller{Repository: s.Run.Repository, PullRequest: pullRequestEvent(s.Run.EventName)}
	var warn string
	if s.AuthGrace, warn = actionkit.ParseMillis(EnvAuthGraceMS, getenv(EnvAuthGraceMS), DefaultAuthGrace); warn != "" {
		s.Warnings = append(s.Warnings, warn)
	}
	if s.ConfigTTL, warn = actionkit.ParseMillis(EnvConfigTTLMS, getenv(EnvConfigTTLMS), DefaultConfigTTL); warn != "" {
		s.Warnings = append(s.Warnings, warn)
	}
	if p.Len() == 0 {
		// Every output that comes from inputs or the environment is checked
		// before any request: a refusal after the seat is taken would leave
		// a held seat with no outputs to release it by.
		err := actionio.CheckOutput(OutputHolderID, lockaction.IdentityFor(s.Run, s.Target, s.Identity.Suffix, s.Identity.RunnerID, "", time.Time{}).HolderID)
		p.Add(err)
		s.identityValid = err == nil
	}
	if s.PRErr != nil {
		// An invalid pull-request input is reported as
		// pr-head-check-failed, like a failed lookup.
		p.Add(&resultError{result: resultPRHeadCheckFailed, err: fmt.Errorf("verify the pull request head: %w", s.PRErr)})
	}
	s.Credentials = lockaction.ParseCredentials(getenv, lockaction.EnvAppID, lockaction.EnvAppPrivateKey, &p)
	return s, p.Err()
}

// pullRequestEvent reports whether a run of event name runs code from a
// pull request (the events whose runs the priority config's
// maxForPullRequests caps).
func pullRequestEvent(name string) bool {
	switch name {
	case "pull_request", "pull_request_target", "pull_request_review", "pull_request_review_comment", "merge_group":
		return true
	}
	return false
}
