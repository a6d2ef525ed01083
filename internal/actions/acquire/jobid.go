package acquire

import (
	"context"
	"fmt"
	"regexp"
	"strconv"

	"github.com/google/go-github/v66/github"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
)

// maxJobPages caps the job listing (the reference's page 1000 ceiling).
const maxJobPages = 1000

var canonicalRE = regexp.MustCompile(`^[1-9][0-9]*$`)

// activeJobStatuses are the statuses of a job that is still running.
var activeJobStatuses = map[string]bool{"queued": true, "in_progress": true, "requested": true, "waiting": true, "pending": true}

// resolveJobID finds this job's exact numeric id (spec §2.5). On github.com
// the runner has already given it: the job-check-run-id input defaults to
// ${{ job.check_run_id }}, and an Actions job and its check run share one
// id, so no request is made (divergences I11). Otherwise, with the
// consumer's github-token it lists the jobs of this run attempt and keeps
// the one active job on this runner. The runner is the one this process
// really runs on (RUNNER_NAME), falling back to the runner-id input outside
// Actions; the reference matched runner-id only, which misses the job when
// a workflow passes another value. Anything else (no token, no runner name,
// no match, several matches, an API failure) warns and continues without a
// job id; only cancellation is an error. Without the id the reaper can prove
// a crashed holder stale only from its whole run's status or its lease.
func (q *acquirer) resolveJobID(ctx context.Context) (string, error) {
	if id := q.s.JobCheckRunID; id != "" {
		// The reaper proves it again (the job of that id in this run
		// attempt, on this runner) before it counts as evidence, so a
		// wrong value given to the input proves nothing.
		return id, nil
	}
	token, runner := q.s.PR.Request.Token, q.id.RunnerName
	if runner == "" {
		runner = q.id.RunnerID
	}
	runID, attempt := q.s.Run.RawRunID, q.s.Run.RawRunAttempt
	switch {
	case token == "":
		q.a.Warning("No github-token: the exact job id of this holder is not recorded, so the scheduled reaper can prove it stale only from its whole workflow run or its lease. Pass github-token (actions: read) to record it.")
		return "", nil
	case runner == "":
		q.a.Warning("Neither RUNNER_NAME nor runner-id is set: the exact job id of this holder cannot be looked up, so the scheduled reaper can prove it stale only from its whole workflow run or its lease.")
		return "", nil
	}
	if !canonicalRE.MatchString(runID) || !canonicalRE.MatchString(attempt) {
		q.a.Warning("GITHUB_RUN_ID and GITHUB_RUN_ATTEMPT must be canonical to resolve the exact job id; continuing without it.")
		return "", nil
	}
	rid, _ := strconv.ParseInt(runID, 10, 64)
	att, _ := strconv.ParseInt(attempt, 10, 64)
	owner, repo := splitRepo(q.id.Repository)
	c, err := ghclient.New(ctx, ghclient.Config{APIURL: q.s.Target.APIURL, Token: token, Transport: q.d.Transport,
		Clock: q.d.Clock, Jitter: q.d.Jitter, Warn: q.a.Warning, Mask: q.a.Mask, ETagCacheEntries: -1})
	if err != nil {
		q.a.Warning("Cannot resolve the exact job id: " + err.Error())
		return "", nil
	}
	q.consumer = c
	var matches []int64
	seen := 0
	for page := 1; page <= maxJobPages; page++ {
		var jobs *github.Jobs
		err := c.Do(ctx, ghclient.Op{Name: "GET run attempt jobs"}, func(ctx context.Context) (*github.Response, error) {
			var resp *github.Response
			var err error
			jobs, resp, err = c.GitHub().Actions.ListWorkflowJobsAttempt(ctx, owner, repo, rid, att, &github.ListOptions{Page: page, PerPage: 100})
			return resp, err
		})
		if err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			q.a.Warning("Cannot resolve the exact job id; continuing without it: " + err.Error())
			return "", nil
		}
		for _, j := range jobs.Jobs {
			if j.GetRunnerName() == runner && activeJobStatuses[j.GetStatus()] && j.GetID() > 0 {
				matches = append(matches, j.GetID())
			}
		}
		seen += len(jobs.Jobs)
		if len(jobs.Jobs) == 0 || seen >= jobs.GetTotalCount() {
			break
		}
	}
	if len(matches) != 1 {
		q.a.Warning(fmt.Sprintf("Found %d active jobs of this run attempt on runner %q; continuing without an exact job id.", len(matches), runner))
		return "", nil
	}
	return strconv.FormatInt(matches[0], 10), nil
}

// splitRepo splits owner/name (already validated by ParseTarget).
func splitRepo(full string) (string, string) {
	for i := 0; i < len(full); i++ {
		if full[i] == '/' {
			return full[:i], full[i+1:]
		}
	}
	return full, ""
}
