package emulator

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Run is a workflow run as seeded with CreateRun. Zero fields get defaults:
// ID (generated), Status "queued", RunAttempt 1, CreatedAt now, Event
// "push", Name from Workflow, RunNumber sequential, HeadBranch the default
// branch.
type Run struct {
	ID         int64     `json:"id"`
	Name       string    `json:"name"`
	Workflow   string    `json:"workflow"` // workflow file name, e.g. "reap-stale-locks.yml"
	Event      string    `json:"event"`
	Status     string    `json:"status"`     // queued, in_progress, completed, waiting, requested, pending
	Conclusion string    `json:"conclusion"` // "" = null
	RunAttempt int       `json:"run_attempt"`
	RunNumber  int       `json:"run_number"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
	StartedAt  time.Time `json:"run_started_at"`
	HeadSHA    string    `json:"head_sha"`
	HeadBranch string    `json:"head_branch"`
	Actor      string    `json:"actor"`
}

// Job is a job of one run attempt as seeded with AddJob. RunnerName and
// Conclusion "" are null in JSON, as GitHub reports for queued jobs.
type Job struct {
	ID              int64     `json:"id"`
	Name            string    `json:"name"`
	RunnerName      string    `json:"runner_name"`
	RunnerID        int64     `json:"runner_id"`
	RunnerGroupName string    `json:"runner_group_name"`
	RunnerGroupID   int64     `json:"runner_group_id"`
	Labels          []string  `json:"labels"`
	Status          string    `json:"status"`
	Conclusion      string    `json:"conclusion"`
	StartedAt       time.Time `json:"started_at"`
	CompletedAt     time.Time `json:"completed_at"`
}

type runEntry struct {
	Run
	attempts map[int]Run // snapshot of earlier attempts
}

type jobEntry struct {
	Job
	runID   int64
	attempt int
}

func (e *Emulator) workflowIDLocked(r *repo, file string) int64 {
	if id, ok := r.workflows[file]; ok {
		return id
	}
	id := e.newID()
	r.workflows[file] = id
	return id
}

// CreateRun adds a workflow run and returns its id.
func (e *Emulator) CreateRun(ownerLogin, repoName string, run Run) (runID int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, err := e.repoLocked(ownerLogin, repoName)
	if err != nil {
		r = e.addRepoLocked(ownerLogin, repoName, 0, "")
	}
	now := e.now()
	if run.ID == 0 {
		run.ID = e.newID()
	}
	if run.Status == "" {
		run.Status = "queued"
	}
	if run.RunAttempt == 0 {
		run.RunAttempt = 1
	}
	if run.CreatedAt.IsZero() {
		run.CreatedAt = now
	}
	if run.UpdatedAt.IsZero() {
		run.UpdatedAt = run.CreatedAt
	}
	if run.StartedAt.IsZero() {
		run.StartedAt = run.CreatedAt
	}
	if run.Event == "" {
		run.Event = "push"
	}
	if run.Workflow == "" {
		run.Workflow = "ci.yml"
	}
	if run.Name == "" {
		run.Name = strings.TrimSuffix(strings.TrimSuffix(run.Workflow, ".yml"), ".yaml")
	}
	if run.HeadBranch == "" {
		run.HeadBranch = r.DefaultBranch
	}
	if run.HeadSHA == "" {
		run.HeadSHA = r.branches[r.DefaultBranch]
	}
	if run.Actor == "" {
		run.Actor = "octocat"
	}
	e.workflowIDLocked(r, run.Workflow)
	if run.RunNumber == 0 {
		run.RunNumber = len(r.runs) + 1
	}
	r.runs[run.ID] = &runEntry{Run: run, attempts: map[int]Run{}}
	r.runOrder = append(r.runOrder, run.ID)
	return run.ID
}

func (e *Emulator) runLocked(ownerLogin, repoName string, runID int64) (*repo, *runEntry, error) {
	r, err := e.repoLocked(ownerLogin, repoName)
	if err != nil {
		return nil, nil, err
	}
	run, ok := r.runs[runID]
	if !ok {
		return nil, nil, fmt.Errorf("emulator: run %d not found in %s", runID, r.fullName())
	}
	return r, run, nil
}

// SetRunStatus sets a run's status and conclusion ("" = null).
func (e *Emulator) SetRunStatus(ownerLogin, repoName string, runID int64, status, conclusion string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, run, err := e.runLocked(ownerLogin, repoName, runID)
	if err != nil {
		return err
	}
	run.Status, run.Conclusion, run.UpdatedAt = status, conclusion, e.now()
	return nil
}

// NewRunAttempt re-runs a run: run_attempt increments, the run is queued
// again and the previous attempt stays readable under
// /attempts/{n}. It returns the new attempt number (0 when the run is
// unknown).
func (e *Emulator) NewRunAttempt(ownerLogin, repoName string, runID int64) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, run, err := e.runLocked(ownerLogin, repoName, runID)
	if err != nil {
		return 0
	}
	run.attempts[run.RunAttempt] = run.Run
	run.RunAttempt++
	run.Status, run.Conclusion = "queued", ""
	run.UpdatedAt, run.StartedAt = e.now(), e.now()
	return run.RunAttempt
}

// AddJob adds a job to attempt (0 = the current attempt) of a run and
// returns its id (0 when the run is unknown). Status defaults to "queued".
func (e *Emulator) AddJob(ownerLogin, repoName string, runID int64, attempt int, j Job) (jobID int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, run, err := e.runLocked(ownerLogin, repoName, runID)
	if err != nil {
		return 0
	}
	if attempt == 0 {
		attempt = run.RunAttempt
	}
	if j.ID == 0 {
		j.ID = e.newID()
	}
	if j.Status == "" {
		j.Status = "queued"
	}
	if j.StartedAt.IsZero() {
		j.StartedAt = e.now()
	}
	r.jobs[j.ID] = &jobEntry{Job: j, runID: runID, attempt: attempt}
	return j.ID
}

// SetJobStatus sets a job's status and conclusion; completing a job stamps
// completed_at.
func (e *Emulator) SetJobStatus(ownerLogin, repoName string, jobID int64, status, conclusion string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, err := e.repoLocked(ownerLogin, repoName)
	if err != nil {
		return err
	}
	j, ok := r.jobs[jobID]
	if !ok {
		return fmt.Errorf("emulator: job %d not found", jobID)
	}
	j.Status, j.Conclusion = status, conclusion
	if status == "completed" && j.CompletedAt.IsZero() {
		j.CompletedAt = e.now()
	}
	return nil
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func timeOrNull(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

func (c *reqCtx) runJSON(r *repo, run Run) map[string]any {
	full := r.fullName()
	return map[string]any{
		"id": run.ID, "name": run.Name, "node_id": nodeID("WorkflowRun", strconv.FormatInt(run.ID, 10)),
		"head_branch": run.HeadBranch, "head_sha": run.HeadSHA, "path": ".github/workflows/" + run.Workflow,
		"display_title": run.Name, "run_number": run.RunNumber, "event": run.Event, "status": run.Status,
		"conclusion": nullable(run.Conclusion), "workflow_id": r.workflows[run.Workflow], "run_attempt": run.RunAttempt,
		"url":        c.api("/repos/%s/actions/runs/%d", full, run.ID),
		"html_url":   c.web("/%s/actions/runs/%d", full, run.ID),
		"jobs_url":   c.api("/repos/%s/actions/runs/%d/jobs", full, run.ID),
		"created_at": run.CreatedAt.UTC().Format(time.RFC3339), "updated_at": run.UpdatedAt.UTC().Format(time.RFC3339),
		"run_started_at":   timeOrNull(run.StartedAt),
		"actor":            c.actorJSON(run.Actor),
		"triggering_actor": c.actorJSON(run.Actor),
		"repository":       c.fullRepoJSON(r),
		"head_repository":  c.fullRepoJSON(r),
		"head_commit":      c.headCommitJSON(r, run),
		"pull_requests":    []any{},
		"artifacts_url":    c.api("/repos/%s/actions/runs/%d/artifacts", full, run.ID),
		"cancel_url":       c.api("/repos/%s/actions/runs/%d/cancel", full, run.ID),
		"check_suite_url":  c.api("/repos/%s/check-suites/%d", full, run.ID),
		"logs_url":         c.api("/repos/%s/actions/runs/%d/logs", full, run.ID),
		"rerun_url":        c.api("/repos/%s/actions/runs/%d/rerun", full, run.ID),
		"workflow_url":     c.api("/repos/%s/actions/workflows/%d", full, r.workflows[run.Workflow]),
	}
}

// actorJSON is the user who triggered a run (a login only is recorded; the
// id is derived from it so it is stable).
func (c *reqCtx) actorJSON(login string) map[string]any {
	if login == "" {
		login = "octocat"
	}
	var id int64 = 1000
	for _, ch := range login {
		id = id*31 + int64(ch)
		id %= 1 << 40
	}
	return c.userJSON(login, id, "User")
}

// headCommitJSON is a run's head commit (the commit object when the head
// SHA is a commit of the repository, else its SHA with the run's time).
func (c *reqCtx) headCommitJSON(r *repo, run Run) map[string]any {
	ts := run.CreatedAt.UTC().Format(time.RFC3339)
	msg, tree := "", ""
	if cm, ok := r.commits[run.HeadSHA]; ok {
		msg, tree, ts = cm.Message, cm.Tree, cm.Time.UTC().Format(time.RFC3339)
	}
	person := map[string]any{"name": run.Actor, "email": run.Actor + "@users.noreply.github.com"}
	return map[string]any{"id": run.HeadSHA, "tree_id": tree, "message": msg, "timestamp": ts, "author": person, "committer": person}
}

func (c *reqCtx) jobJSON(r *repo, j *jobEntry) map[string]any {
	full := r.fullName()
	run := r.runs[j.runID]
	labels := j.Labels
	if labels == nil {
		labels = []string{}
	}
	var runnerID, groupID any
	if j.RunnerID != 0 {
		runnerID = j.RunnerID
	}
	if j.RunnerGroupID != 0 {
		groupID = j.RunnerGroupID
	}
	return map[string]any{
		"id": j.ID, "run_id": j.runID, "run_attempt": j.attempt, "node_id": nodeID("CheckRun", strconv.FormatInt(j.ID, 10)),
		"head_sha": run.HeadSHA, "head_branch": run.HeadBranch, "workflow_name": run.Name,
		"url":      c.api("/repos/%s/actions/jobs/%d", full, j.ID),
		"html_url": c.web("/%s/actions/runs/%d/job/%d", full, j.runID, j.ID),
		"run_url":  c.api("/repos/%s/actions/runs/%d", full, j.runID),
		// A job is a check run: https://docs.github.com/en/rest/actions/workflow-jobs
		"check_run_url": c.api("/repos/%s/check-runs/%d", full, j.ID),
		"status":        j.Status, "conclusion": nullable(j.Conclusion), "name": j.Name,
		"created_at": timeOrNull(j.StartedAt), "started_at": timeOrNull(j.StartedAt), "completed_at": timeOrNull(j.CompletedAt),
		"steps": []any{}, "labels": labels, "runner_id": runnerID, "runner_name": nullable(j.RunnerName),
		"runner_group_id": groupID, "runner_group_name": nullable(j.RunnerGroupName),
	}
}

func (c *reqCtx) runParam(r *repo) (*runEntry, *response) {
	id, err := strconv.ParseInt(c.params["run_id"], 10, 64)
	if err != nil {
		return nil, c.notFound()
	}
	run, ok := r.runs[id]
	if !ok {
		return nil, c.notFound()
	}
	return run, nil
}

// GET /repos/{owner}/{repo}/actions/runs/{run_id} (E13):
// https://docs.github.com/en/rest/actions/workflow-runs#get-a-workflow-run
func hGetRun(c *reqCtx) *response {
	r, resp := c.repo("actions", "read")
	if resp != nil {
		return resp
	}
	run, resp := c.runParam(r)
	if resp != nil {
		return resp
	}
	return c.json(http.StatusOK, c.runJSON(r, run.Run))
}

func (c *reqCtx) attemptParam(run *runEntry) (Run, int, bool) {
	n, err := strconv.Atoi(c.params["attempt"])
	if err != nil || n < 1 || n > run.RunAttempt {
		return Run{}, 0, false
	}
	if n == run.RunAttempt {
		return run.Run, n, true
	}
	return run.attempts[n], n, true
}

// GET /repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt_number}
func hGetRunAttempt(c *reqCtx) *response {
	r, resp := c.repo("actions", "read")
	if resp != nil {
		return resp
	}
	run, resp := c.runParam(r)
	if resp != nil {
		return resp
	}
	a, _, ok := c.attemptParam(run)
	if !ok {
		return c.notFound()
	}
	return c.json(http.StatusOK, c.runJSON(r, a))
}

func (c *reqCtx) jobsPage(r *repo, match func(*jobEntry) bool) *response {
	var jobs []*jobEntry
	for _, j := range r.jobs {
		if match(j) {
			jobs = append(jobs, j)
		}
	}
	sort.Slice(jobs, func(a, b int) bool { return jobs[a].ID < jobs[b].ID })
	lo, hi, link := c.paginate(len(jobs))
	out := make([]any, 0, hi-lo)
	for _, j := range jobs[lo:hi] {
		out = append(out, c.jobJSON(r, j))
	}
	return c.paged(http.StatusOK, map[string]any{"total_count": len(jobs), "jobs": out}, link)
}

// GET /repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{n}/jobs (E12):
// https://docs.github.com/en/rest/actions/workflow-jobs#list-jobs-for-a-workflow-run-attempt
// Paginated (per_page ≤ 100) with total_count and a Link header.
func hListAttemptJobs(c *reqCtx) *response {
	r, resp := c.repo("actions", "read")
	if resp != nil {
		return resp
	}
	run, resp := c.runParam(r)
	if resp != nil {
		return resp
	}
	_, n, ok := c.attemptParam(run)
	if !ok {
		return c.notFound()
	}
	return c.jobsPage(r, func(j *jobEntry) bool { return j.runID == run.ID && j.attempt == n })
}

// GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs?filter=latest|all
// https://docs.github.com/en/rest/actions/workflow-jobs#list-jobs-for-a-workflow-run
func hListRunJobs(c *reqCtx) *response {
	r, resp := c.repo("actions", "read")
	if resp != nil {
		return resp
	}
	run, resp := c.runParam(r)
	if resp != nil {
		return resp
	}
	all := c.query.Get("filter") == "all"
	return c.jobsPage(r, func(j *jobEntry) bool { return j.runID == run.ID && (all || j.attempt == run.RunAttempt) })
}

// GET /repos/{owner}/{repo}/actions/jobs/{job_id}
// https://docs.github.com/en/rest/actions/workflow-jobs#get-a-job-for-a-workflow-run
func hGetJob(c *reqCtx) *response {
	r, resp := c.repo("actions", "read")
	if resp != nil {
		return resp
	}
	id, err := strconv.ParseInt(c.params["job_id"], 10, 64)
	if err != nil {
		return c.notFound()
	}
	j, ok := r.jobs[id]
	if !ok {
		return c.notFound()
	}
	return c.json(http.StatusOK, c.jobJSON(r, j))
}

func (c *reqCtx) runsPage(r *repo, match func(*runEntry) bool) *response {
	var runs []*runEntry
	for _, id := range r.runOrder {
		run := r.runs[id]
		if match(run) && (c.query.Get("event") == "" || run.Event == c.query.Get("event")) &&
			(c.query.Get("status") == "" || run.Status == c.query.Get("status") || run.Conclusion == c.query.Get("status")) &&
			(c.query.Get("branch") == "" || run.HeadBranch == c.query.Get("branch")) &&
			(c.query.Get("head_sha") == "" || run.HeadSHA == c.query.Get("head_sha")) {
			runs = append(runs, run)
		}
	}
	// Newest first, as GitHub lists runs.
	sort.SliceStable(runs, func(a, b int) bool {
		if !runs[a].CreatedAt.Equal(runs[b].CreatedAt) {
			return runs[a].CreatedAt.After(runs[b].CreatedAt)
		}
		return runs[a].ID > runs[b].ID
	})
	lo, hi, link := c.paginate(len(runs))
	out := make([]any, 0, hi-lo)
	for _, run := range runs[lo:hi] {
		out = append(out, c.runJSON(r, run.Run))
	}
	return c.paged(http.StatusOK, map[string]any{"total_count": len(runs), "workflow_runs": out}, link)
}

// GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs?event=&status=&per_page=
// (workflow_id is the file name or the numeric id):
// https://docs.github.com/en/rest/actions/workflow-runs#list-workflow-runs-for-a-workflow
func hListWorkflowRuns(c *reqCtx) *response {
	r, resp := c.repo("actions", "read")
	if resp != nil {
		return resp
	}
	wf := c.params["workflow_id"]
	file := ""
	for f, id := range r.workflows {
		if f == wf || strconv.FormatInt(id, 10) == wf {
			file = f
		}
	}
	if file == "" {
		return c.notFound()
	}
	return c.runsPage(r, func(run *runEntry) bool { return run.Workflow == file })
}

// GET /repos/{owner}/{repo}/actions/runs
func hListRuns(c *reqCtx) *response {
	r, resp := c.repo("actions", "read")
	if resp != nil {
		return resp
	}
	return c.runsPage(r, func(*runEntry) bool { return true })
}
