package lockaction

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// urlFromEnv validates an absolute http(s) URL from the runner environment.
// The API URL may carry a path (GitHub Enterprise Server's /api/v3); the
// server URL must be a bare origin (spec §2.5).
func urlFromEnv(a *actionio.IO, name, def string, allowPath bool) (string, error) {
	return urlFromValue(strings.TrimSpace(a.Getenv(name)), name, def, allowPath)
}

// urlFromValue validates raw, the value of the variable name (def when
// empty), as urlFromEnv does.
func urlFromValue(raw, name, def string, allowPath bool) (string, error) {
	if raw == "" {
		return def, nil
	}
	if !allowPath {
		origin, err := lockstate.ServerOrigin(raw)
		if err != nil {
			return "", refuse("runner-url", "%s must be an absolute http(s) origin without credentials, path, query or fragment", name)
		}
		return origin, nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", refuse("runner-url", "%s must be an absolute http(s) URL without credentials, query or fragment", name)
	}
	return strings.TrimRight(raw, "/"), nil
}

// Runner is the runner a step really runs on, from the variables the runner
// sets for every step (RUNNER_NAME, RUNNER_OS, RUNNER_ARCH; see
// https://docs.github.com/en/actions/reference/workflows-and-actions/variables).
// Unlike the runner-id input it cannot be chosen by the workflow author.
// Empty fields are unknown (a run outside Actions).
type Runner struct {
	Name, OS, Arch string
}

// RunnerEnvironment reads and validates the runner variables: each must be
// printable, without surrounding whitespace and within its bound, else the
// step is refused (rule runner-environment) before any request. The runner
// always sets them; a value that fails is not the runner's.
func RunnerEnvironment(a *actionio.IO) (Runner, error) {
	r := Runner{Name: a.Getenv("RUNNER_NAME"), OS: a.Getenv("RUNNER_OS"), Arch: a.Getenv("RUNNER_ARCH")}
	for _, f := range [...]struct {
		name, value string
		max         int
	}{{"RUNNER_NAME", r.Name, lockstate.MaxRunnerNameBytes}, {"RUNNER_OS", r.OS, lockstate.MaxRunnerPlatformBytes}, {"RUNNER_ARCH", r.Arch, lockstate.MaxRunnerPlatformBytes}} {
		if problem := lockstate.RunnerFieldProblem(f.value, f.max); f.value != "" && problem != "" {
			return Runner{}, refuse("runner-environment", "%s %s; it must be the name the runner set", f.name, problem)
		}
	}
	return r, nil
}

// Identity builds the caller's run identity from the runner environment
// (spec §2.5): holderId = <GITHUB_REPOSITORY>:<GITHUB_RUN_ID>:<GITHUB_JOB>:<suffix>,
// excluding GITHUB_RUN_ATTEMPT so a rerun shares it. queuedAt is now. The
// runner this process runs on (RunnerEnvironment, already validated by the
// caller's settings) is recorded with it.
func Identity(a *actionio.IO, t Target, suffix, runnerID, jobID string, now time.Time) lockstate.Identity {
	env := func(name, def string) string {
		if v := strings.TrimSpace(a.Getenv(name)); v != "" {
			return v
		}
		return def
	}
	id := lockstate.Identity{
		Repository: env("GITHUB_REPOSITORY", "unknown/unknown"),
		Workflow:   env("GITHUB_WORKFLOW", "unknown"),
		Job:        env("GITHUB_JOB", "unknown"),
		RunID:      env("GITHUB_RUN_ID", "0"),
		RunAttempt: env("GITHUB_RUN_ATTEMPT", "0"),
		RunnerID:   strings.TrimSpace(runnerID),
		JobID:      jobID,
		RunnerName: a.Getenv("RUNNER_NAME"),
		RunnerOS:   a.Getenv("RUNNER_OS"),
		RunnerArch: a.Getenv("RUNNER_ARCH"),
		QueuedAt:   now,
	}
	id.HolderID = fmt.Sprintf("%s:%s:%s:%s", id.Repository, id.RunID, id.Job, suffix)
	id.RunURL = fmt.Sprintf("%s/%s/actions/runs/%s", t.ServerURL, id.Repository, id.RunID)
	return id
}

// Bounds of the identity inputs.
const (
	// DefaultHolderIDSuffix distinguishes nothing: one acquire per job.
	DefaultHolderIDSuffix = "default"
	// MaxHolderIDSuffixBytes caps holder-id-suffix. The holder id
	// (<repository>:<run id>:<job>:<suffix>) is an output, a state field and
	// part of every log line; a matrix suffix such as
	// "6000.0.40f1-playmode-windows" needs a few dozen bytes.
	MaxHolderIDSuffixBytes = 128
	// MaxRunnerIDBytes caps runner-id (runner names are at most 64
	// characters; see lockstate.MaxRunnerNameBytes).
	MaxRunnerIDBytes = lockstate.MaxRunnerNameBytes
)

// IdentityInputs reads holder-id-suffix (raw: no edge whitespace) and
// runner-id (trimmed), refusing control characters, the file-command
// delimiter and over-long values before any request (actionio.Identifier),
// and validates the runner environment (RunnerEnvironment). An empty
// runner-id is the runner's own RUNNER_NAME.
func IdentityInputs(a *actionio.IO) (suffix, runnerID string, err error) {
	if suffix, err = a.Identifier("holder-id-suffix", DefaultHolderIDSuffix, MaxHolderIDSuffixBytes, false); err != nil {
		return "", "", err
	}
	if runnerID, err = a.Identifier("runner-id", "", MaxRunnerIDBytes, true); err != nil {
		return "", "", err
	}
	r, err := RunnerEnvironment(a)
	if err != nil {
		return "", "", err
	}
	if runnerID == "" {
		// The physical runner is the runner the step runs on: GitHub's
		// runner.name, which the runner also sets as RUNNER_NAME. A local
		// runner that has no runner.name (nektos/act) still has a name.
		runnerID = r.Name
	}
	return suffix, runnerID, nil
}
