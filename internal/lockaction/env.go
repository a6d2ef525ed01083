package lockaction

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// urlFromValue validates raw, the trimmed value of the runner variable name
// (def when empty): an absolute http(s) URL. The API URL may carry a path
// (GitHub Enterprise Server's /api/v3); the server URL must be a bare origin
// (spec §2.5).
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

// Validate refuses (rule runner-environment) a runner variable that is not
// printable, has surrounding whitespace or exceeds its bound. The runner
// always sets them; a value that fails is not the runner's.
func (r Runner) Validate() error {
	for _, f := range [...]struct {
		name, value string
		max         int
	}{{"RUNNER_NAME", r.Name, lockstate.MaxRunnerNameBytes}, {"RUNNER_OS", r.OS, lockstate.MaxRunnerPlatformBytes}, {"RUNNER_ARCH", r.Arch, lockstate.MaxRunnerPlatformBytes}} {
		if problem := lockstate.RunnerFieldProblem(f.value, f.max); f.value != "" && problem != "" {
			return refuse("runner-environment", "%s %s; it must be the name the runner set", f.name, problem)
		}
	}
	return nil
}

// Defaults of the run variables outside Actions (a local run sets none).
const (
	// DefaultRepository stands in for GITHUB_REPOSITORY in an identity.
	DefaultRepository = "unknown/unknown"
	// DefaultRunName stands in for GITHUB_WORKFLOW and GITHUB_JOB.
	DefaultRunName = "unknown"
	// DefaultRunNumber stands in for GITHUB_RUN_ID and GITHUB_RUN_ATTEMPT.
	DefaultRunNumber = "0"
)

// Run is the caller's run as the runner reports it (GITHUB_REPOSITORY,
// GITHUB_WORKFLOW, GITHUB_JOB, GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT, trimmed
// and defaulted) and the runner it runs on.
type Run struct {
	Repository, Workflow, Job, RunID, RunAttempt string
	// RawRepository, RawRunID and RawRunAttempt are the variables as set
	// (the job-id lookup and release's holder-id check require them
	// without defaults).
	RawRepository, RawRunID, RawRunAttempt string
	// EventName is GITHUB_EVENT_NAME (trimmed).
	EventName string
	// Runner is the validated runner environment.
	Runner Runner
}

// IdentityFor builds the caller's run identity (spec §2.5):
// holderId = <GITHUB_REPOSITORY>:<GITHUB_RUN_ID>:<GITHUB_JOB>:<suffix>,
// excluding GITHUB_RUN_ATTEMPT so a rerun shares it. queuedAt is now. The
// runner this process runs on is recorded with it.
func IdentityFor(r Run, t Target, suffix, runnerID, jobID string, now time.Time) lockstate.Identity {
	id := lockstate.Identity{
		Repository: r.Repository,
		Workflow:   r.Workflow,
		Job:        r.Job,
		RunID:      r.RunID,
		RunAttempt: r.RunAttempt,
		RunnerID:   strings.TrimSpace(runnerID),
		JobID:      jobID,
		RunnerName: r.Runner.Name,
		RunnerOS:   r.Runner.OS,
		RunnerArch: r.Runner.Arch,
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
