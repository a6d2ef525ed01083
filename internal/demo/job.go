package demo

import (
	"context"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/acquire"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/release"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

// job is one simulated workflow job that needs a licensed seat.
type job struct {
	name    string
	repo    string
	repoID  int64
	arrival time.Duration
	hold    time.Duration
	dies    bool
	seed    uint64

	// guarded by world.mu
	state  string // pending, running, holding, released, dead, failed
	runner string

	// written only by the job's goroutine, read after the run
	holderID     string
	diedAt       time.Time
	rebooted     bool // guarded by world.mu
	admittedAt   time.Time
	waitedFor    time.Duration
	fencingToken string
	// reclaimed: the admission swapped its runner's quarantine for this
	// holder (outputs quarantine-recovered=true).
	reclaimed bool
	log       *actionio.SyncBuffer
}

// runJob takes a free runner and runs the real acquire action, holds the
// seat, and runs the real release action (or dies holding the seat), each
// step with the environment a GitHub runner gives a composite step.
func (w *world) runJob(ctx context.Context, j *job) error {
	if err := (clock.Real{}).Sleep(ctx, j.arrival); err != nil {
		return err
	}
	var runner string
	select {
	case runner = <-w.runners:
	case <-ctx.Done():
		return ctx.Err()
	}
	w.mu.Lock()
	j.runner, j.state = runner, "running"
	w.mu.Unlock()
	rng := mrand.New(mrand.NewPCG(j.seed, 1))

	runID := w.em.CreateRun(owner, j.repo, emulator.Run{Workflow: "unity.yml", Event: "push", Status: "in_progress", RunAttempt: 1})
	jobID := w.em.AddJob(owner, j.repo, runID, 1, emulator.Job{Name: "build", RunnerName: runner, Status: "in_progress"})
	env, err := w.stepEnv(j, runID, runner)
	if err != nil {
		return err
	}
	// The runner fills job-check-run-id in from its default,
	// ${{ job.check_run_id }}, as on github.com.
	env["INPUT_JOB_CHECK_RUN_ID"] = strconv.FormatInt(jobID, 10)
	j.holderID = fmt.Sprintf("%s/%s:%d:build:default", owner, j.repo, runID)
	deps := actionkit.Deps{
		Getenv:    func(k string) string { return env[k] },
		Stdout:    j.log,
		Clock:     clock.Real{},
		Jitter:    rng.Float64,
		Transport: w.transport,
		PollUnit:  w.opts.Poll / pollSeconds,
	}

	w.logf("%s (%s) starts acquire on %s", j.name, j.repo, runner)
	start := time.Now()
	err = acquire.Run(ctx, deps)
	outs, _ := actionio.ReadFileCommands(env["GITHUB_OUTPUT"])
	if err != nil || outs["acquired"] != "true" {
		w.setState(j, "failed")
		w.logf("%s on %s FAILED to acquire (admission-result=%q): %v", j.name, runner, outs["admission-result"], err)
		return fmt.Errorf("%s: acquire: %w\n%s", j.name, err, j.log.Tail(20))
	}
	j.admittedAt = time.Now()
	j.waitedFor = j.admittedAt.Sub(start)
	j.fencingToken = outs["fencing-token"]
	w.setState(j, "holding")
	reclaimed := ""
	if outs["quarantine-recovered"] == "true" {
		j.reclaimed = true
		reclaimed = " by reclaiming the quarantined seat on its runner"
	}
	w.logf("%s on %s ACQUIRED a seat%s after %v (attempts=%s, fencing-token=%s) — holding for %v",
		j.name, runner, reclaimed, j.waitedFor.Round(time.Millisecond), outs["attempts"], orDash(j.fencingToken), j.hold.Round(time.Millisecond))

	if err := (clock.Real{}).Sleep(ctx, j.hold); err != nil {
		return err
	}
	if j.dies {
		j.diedAt = time.Now()
		// From now on the run is terminal: the reaper may remove the holder.
		w.addRemoval(j.holderID)
		w.setState(j, "dead")
		_ = w.em.SetJobStatus(owner, j.repo, jobID, "completed", "failure")
		_ = w.em.SetRunStatus(owner, j.repo, runID, "completed", "failure")
		w.logf("%s on %s DIED while holding its seat (runner lost; the seat stays held until the reaper recovers it)", j.name, runner)
		return nil // the runner is not returned: it died with the job
	}

	// The release step: a fresh output file, and the cleanup report a
	// classifier would pass after a confirmed license return.
	env["GITHUB_OUTPUT"] = filepath.Join(filepath.Dir(env["GITHUB_OUTPUT"]), "release-output")
	env["INPUT_RESOURCE_CLEANUP_STATUS"] = "confirmed"
	env["INPUT_RESOURCE_HEALTH"] = "healthy"
	env["INPUT_RESOURCE_REASON"] = "cleanup-confirmed"
	w.addRemoval(j.holderID)
	err = release.Run(ctx, deps)
	outs, _ = actionio.ReadFileCommands(env["GITHUB_OUTPUT"])
	if err != nil || outs["released"] != "true" {
		w.setState(j, "failed")
		return fmt.Errorf("%s: release (cleanup-result=%q): %w\n%s", j.name, outs["cleanup-result"], err, j.log.Tail(20))
	}
	w.setState(j, "released")
	w.logf("%s on %s RELEASED its seat (cleanup-result=%s)", j.name, runner, outs["cleanup-result"])
	_ = w.em.SetJobStatus(owner, j.repo, jobID, "completed", "success")
	_ = w.em.SetRunStatus(owner, j.repo, runID, "completed", "success")
	w.runners <- runner
	return nil
}

// pollSeconds is the poll-seconds input every demo job passes: the
// production default. The demo compresses time by shrinking the unit, so
// Options.Poll is what 15 s becomes.
const pollSeconds = 15

// stepEnv is the environment of one composite step of job j, as the runner
// and the action.yml mapping provide it.
func (w *world) stepEnv(j *job, runID int64, runner string) (map[string]string, error) {
	dir, err := os.MkdirTemp(w.dir, j.name+"-")
	if err != nil {
		return nil, err
	}
	return map[string]string{
		"GITHUB_ACTION_REPOSITORY":         owner + "/" + lockRep,
		"GITHUB_REPOSITORY":                owner + "/" + j.repo,
		"GITHUB_REPOSITORY_ID":             strconv.FormatInt(j.repoID, 10),
		"GITHUB_REPOSITORY_OWNER_ID":       strconv.Itoa(ownerID),
		"GITHUB_RUN_ID":                    strconv.FormatInt(runID, 10),
		"GITHUB_RUN_ATTEMPT":               "1",
		"GITHUB_JOB":                       "build",
		"GITHUB_WORKFLOW":                  "Unity build",
		"GITHUB_EVENT_NAME":                "push",
		"GITHUB_SERVER_URL":                "https://github.com",
		"GITHUB_API_URL":                   w.apiURL,
		"RUNNER_NAME":                      runner,
		"GITHUB_OUTPUT":                    filepath.Join(dir, "acquire-output"),
		"GITHUB_STATE":                     filepath.Join(dir, "state"),
		"GITHUB_STEP_SUMMARY":              filepath.Join(dir, "summary.md"),
		lockaction.EnvAppID:                strconv.Itoa(appID),
		lockaction.EnvAppPrivateKey:        string(w.keyPEM),
		"INPUT_LOCK_NAME":                  lock,
		"INPUT_RUNNER_ID":                  runner,
		"INPUT_GITHUB_TOKEN":               w.repoTokens[j.repo],
		"INPUT_POLL_SECONDS":               strconv.Itoa(pollSeconds),
		"INPUT_TIMEOUT_MINUTES":            "30",
		"INPUT_HOLDER_ID_SUFFIX":           "default",
		"INPUT_REQUIRE_RESOURCE_LIFECYCLE": "false",
	}, nil
}

func orDash(s string) string {
	if strings.TrimSpace(s) == "" || s == "0" {
		return "-"
	}
	return s
}
