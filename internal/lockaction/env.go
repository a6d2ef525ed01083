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

// Identity builds the caller's run identity from the runner environment
// (spec §2.5): holderId = <GITHUB_REPOSITORY>:<GITHUB_RUN_ID>:<GITHUB_JOB>:<suffix>,
// excluding GITHUB_RUN_ATTEMPT so a rerun shares it. queuedAt is now.
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
		QueuedAt:   now,
	}
	id.HolderID = fmt.Sprintf("%s:%s:%s:%s", id.Repository, id.RunID, id.Job, suffix)
	id.RunURL = fmt.Sprintf("%s/%s/actions/runs/%s", t.ServerURL, id.Repository, id.RunID)
	return id
}
