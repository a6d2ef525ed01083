package lockaction

import (
	"io"
	"path/filepath"
	"strings"

	"github.com/google/uuid"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
)

// This file is the only place in lockaction that reads the environment:
// the shared pieces of every lock action's settings (Target, Run and the
// identity inputs, AppCredentials, Knobs), each parsed by one function that
// takes getenv and appends its problems to a shared Problems list, so an
// action's LoadSettings reports every invalid input in one pass.

// Problems collects every problem one settings parse found, in the order
// the checks ran (the order of today's first-error refusals): the one list
// type of every binary's settings (internal/edgesettings).
type Problems = edgesettings.Problems

// SettingsError is every problem of one action's settings. Its reason code
// is its first problem's (the code a first-error refusal had), so the
// ::error title and the admission-result are unchanged; its message lists
// every problem, each with its own code (internal/edgesettings).
type SettingsError = edgesettings.Error

// Inputs returns a reader of the action inputs (INPUT_X-Y, then INPUT_X_Y)
// behind getenv. It writes nothing: secrets read through it are masked by
// the caller once its settings are parsed.
func Inputs(getenv func(string) string) *actionio.IO {
	return actionio.New(getenv, io.Discard)
}

// NewReservationID returns a random RFC 4122 version 4 UUID, the
// reservation ID format of the reference (crypto.randomUUID): the one UUID
// generator of the lock actions (acquire and release quarantines, recover).
func NewReservationID() string { return uuid.NewString() }

// ActionRoot returns the lock repository checkout containing the running
// action (BUILD_LOCK_ACTION_ROOT, else three levels above
// GITHUB_ACTION_PATH, which is .github/actions/<name>), or "" when not
// running as an action.
func ActionRoot(getenv func(string) string) string {
	if v := strings.TrimSpace(getenv("BUILD_LOCK_ACTION_ROOT")); v != "" {
		return v
	}
	p := strings.TrimSpace(getenv("GITHUB_ACTION_PATH"))
	if p == "" {
		return ""
	}
	return filepath.Clean(filepath.Join(p, "..", "..", ".."))
}

// RunnerTemp returns the job's RUNNER_TEMP (trimmed; "" in a local run),
// where acquire leaves its HeldMarker for the job's later steps.
func RunnerTemp(getenv func(string) string) string {
	return strings.TrimSpace(getenv("RUNNER_TEMP"))
}

// ParseTargetSettings loads the caller policy from the action's checkout,
// validates lock-name, lock-repository and state-branch and the runner's
// URLs, and authorizes the calling repository against the lock repository,
// appending every problem to p. It reads no credential and sends no
// request.
func ParseTargetSettings(getenv func(string) string, p *Problems) Target {
	policy, err := LoadPolicyFile(ActionRoot(getenv))
	if err != nil {
		p.Add(err)
		return Target{}
	}
	return parseTarget(getenv, policy, p)
}

func parseTarget(getenv func(string) string, policy Policy, p *Problems) Target {
	in := Inputs(getenv)
	var t Target
	ok := true
	lock, err := in.Required("lock-name")
	if err == nil {
		err = ValidateLockName(lock)
	}
	if err != nil {
		p.Add(err)
		ok = false
	}
	repo := strings.TrimSpace(in.Input("lock-repository"))
	if repo == "" {
		repo = in.ActionRepository()
	}
	if repo == "" {
		repo = strings.TrimSpace(getenv("GITHUB_REPOSITORY"))
	}
	owner, name, err := splitRepository(repo)
	if err != nil {
		p.Add(refuse("lock-repository-pattern", "lock-repository must be OWNER/NAME: %v", err))
		ok = false
	}
	branch := strings.TrimSpace(in.Input("state-branch"))
	if branch == "" {
		branch = DefaultStateBranch
	}
	if err := ValidateStateBranch(branch); err != nil {
		p.Add(err)
		ok = false
	}
	// in.APIURL is GITHUB_API_URL, or the self-test emulator for a local
	// action only (actionio.SelfTestAPIURLEnv).
	apiURL, err := urlFromValue(strings.TrimSpace(in.APIURL()), "GITHUB_API_URL", DefaultAPIURL, true)
	if err != nil {
		p.Add(err)
		ok = false
	}
	serverURL, err := urlFromValue(strings.TrimSpace(getenv("GITHUB_SERVER_URL")), "GITHUB_SERVER_URL", DefaultServerURL, false)
	if err != nil {
		p.Add(err)
		ok = false
	}
	t = Target{Owner: owner, Repo: name, Lock: lock, Branch: branch, APIURL: apiURL, ServerURL: serverURL}
	caller, callerOK := parseCaller(getenv("GITHUB_REPOSITORY"), getenv("GITHUB_REPOSITORY_ID"), getenv("GITHUB_REPOSITORY_OWNER_ID"), p)
	if !callerOK || owner == "" {
		return Target{}
	}
	if err := authorizeCaller(caller, &t, policy); err != nil {
		p.Add(err)
		return Target{}
	}
	if !ok {
		return Target{}
	}
	return t
}

// ParseRun reads the run variables the runner sets for every step and
// validates the runner environment (rule runner-environment), appending a
// problem to p.
func ParseRun(getenv func(string) string, p *Problems) Run {
	env := func(name, def string) string {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
		return def
	}
	r := Run{
		Repository:    env("GITHUB_REPOSITORY", DefaultRepository),
		Workflow:      env("GITHUB_WORKFLOW", DefaultRunName),
		Job:           env("GITHUB_JOB", DefaultRunName),
		RunID:         env("GITHUB_RUN_ID", DefaultRunNumber),
		RunAttempt:    env("GITHUB_RUN_ATTEMPT", DefaultRunNumber),
		RawRepository: getenv("GITHUB_REPOSITORY"),
		RawRunID:      getenv("GITHUB_RUN_ID"),
		RawRunAttempt: getenv("GITHUB_RUN_ATTEMPT"),
		EventName:     strings.TrimSpace(getenv("GITHUB_EVENT_NAME")),
		Runner:        Runner{Name: getenv("RUNNER_NAME"), OS: getenv("RUNNER_OS"), Arch: getenv("RUNNER_ARCH")},
	}
	if err := r.Runner.Validate(); err != nil {
		p.Add(err)
	}
	return r
}

// IdentityInput is holder-id-suffix and runner-id as validated.
type IdentityInput struct {
	// Suffix is holder-id-suffix (raw: no edge whitespace), default
	// DefaultHolderIDSuffix.
	Suffix string
	// RunnerID is runner-id (trimmed), defaulting to RUNNER_NAME.
	RunnerID string
}

// ParseIdentityInput reads holder-id-suffix and runner-id, refusing control
// characters, the file-command delimiter and over-long values
// (actionio.Identifier); an empty runner-id is r's runner name. Problems
// are appended to p.
func ParseIdentityInput(getenv func(string) string, r Run, p *Problems) IdentityInput {
	in := Inputs(getenv)
	var id IdentityInput
	var err error
	if id.Suffix, err = in.Identifier("holder-id-suffix", DefaultHolderIDSuffix, MaxHolderIDSuffixBytes, false); err != nil {
		p.Add(err)
	}
	if id.RunnerID, err = in.Identifier("runner-id", "", MaxRunnerIDBytes, true); err != nil {
		p.Add(err)
	}
	if id.RunnerID == "" {
		// The physical runner is the runner the step runs on: GitHub's
		// runner.name, which the runner also sets as RUNNER_NAME. A local
		// runner that has no runner.name (nektos/act) still has a name.
		id.RunnerID = r.Runner.Name
	}
	return id
}

// ParseCredentials reads the App id and key from idVar and keyVar and
// refuses a set BUILD_LOCK_TOKEN, appending a problem to p. The returned
// Masks are filled whatever the outcome.
func ParseCredentials(getenv func(string) string, idVar, keyVar string, p *Problems) AppCredentials {
	c, err := parseAppCredentials(getenv(idVar), getenv(keyVar), getenv(EnvLegacyToken), idVar, keyVar)
	p.Add(err)
	return c
}

// Knobs are the GitHub client's retry knobs (BUILD_LOCK_API_MAX_ATTEMPTS,
// BUILD_LOCK_API_RETRY_BASE_MS, BUILD_LOCK_API_RETRY_MAX_MS). An invalid
// knob is never fatal (spec §3.6): it is ignored with a warning, printed
// when the client is built.
type Knobs struct {
	API      ghclient.Knobs
	Warnings []string
}

// ParseKnobs reads the retry knobs.
func ParseKnobs(getenv func(string) string) Knobs {
	k, w := ghclient.KnobsFromValues(getenv(ghclient.EnvMaxAttempts), getenv(ghclient.EnvRetryBaseMS), getenv(ghclient.EnvRetryMaxMS))
	return Knobs{API: k, Warnings: w}
}

// ParseTargetWithPolicy is ParseTargetSettings with the caller policy
// already loaded (tests, and callers that read it elsewhere).
func ParseTargetWithPolicy(getenv func(string) string, policy Policy, p *Problems) Target {
	return parseTarget(getenv, policy, p)
}
