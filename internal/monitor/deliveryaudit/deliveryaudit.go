// Package deliveryaudit is the Reaper delivery audit
// (cmd/reaper-delivery-audit; spec §4.5, build-lock-reference "Stale
// Recovery"). GitHub's schedule delivery is best effort, so the scheduled
// reaper's */5 cadence is not a guarantee; this independent monitor reads
// the latest scheduled runs of reap-stale-locks.yml and keeps one
// operational issue open while delivery is outside its SLO and closed while
// it is within.
//
// It lists GET /repos/{repo}/actions/workflows/{file}/runs?event=schedule&
// per_page=2 and classifies, in this order:
//
//   - scheduled-run-missing: there is no scheduled run at all;
//   - workflow-evidence-invalid: more than two runs, a run with invalid
//     fields (id, event, status, conclusion, timestamps, workflow path), or
//     two runs with identical created_at. This fails red without syncing;
//   - scheduled-run-overdue: the newest run was created more than
//     MaxDeliveryDelay (30 m) before now;
//   - scheduled-run-stalled: a listed run is not completed and started more
//     than MaxRunDuration (15 m) before now;
//   - scheduled-run-unsuccessful: the newest completed run's conclusion is
//     not success;
//   - healthy.
//
// The issue body depends only on the evidence (run ids, timestamps,
// statuses) and the thresholds, never on the audit's own clock, so a
// persisting problem does not churn the issue. While healthy an already
// closed issue is left alone (ClosedIsTerminal); an unhealthy result
// re-opens it.
package deliveryaudit

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/githubissue"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockview"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor"
)

// Issue identity and defaults (spec §4.5, operations facts: delivery
// ≤ 1800 s, run ≤ 900 s).
const (
	// Marker identifies the operational issue (with its author and title).
	Marker = "<!-- build-lock-reaper-delivery-monitor -->"
	// Title is the issue title; it is also matched exactly.
	Title = "ops: scheduled reaper delivery outside SLO"
	// DefaultWorkflow is the scheduled reaper's workflow file.
	DefaultWorkflow = "reap-stale-locks.yml"
	// DefaultMaxDeliveryDelay is the delivery SLO: six missed */5 slots.
	DefaultMaxDeliveryDelay = 30 * time.Minute
	// DefaultMaxRunDuration is the run SLO: the reaper's own ten-minute
	// timeout plus queueing slack.
	DefaultMaxRunDuration = 15 * time.Minute
	// RunsPerPage is how many of the newest scheduled runs are read: the
	// newest (possibly pending behind the concurrency group) and the one
	// before it.
	RunsPerPage = 2
	// MaxFutureSkew tolerates API/runner clock disagreement on created_at.
	MaxFutureSkew = 5 * time.Minute
)

// Classification is the audit's verdict.
type Classification string

// Classifications.
const (
	// Healthy means delivery is within its SLO.
	Healthy Classification = "healthy"
	// ScheduledRunMissing means no scheduled run exists.
	ScheduledRunMissing Classification = "scheduled-run-missing"
	// WorkflowEvidenceInvalid means the API answer cannot be trusted.
	WorkflowEvidenceInvalid Classification = "workflow-evidence-invalid"
	// ScheduledRunOverdue means the newest scheduled run is too old.
	ScheduledRunOverdue Classification = "scheduled-run-overdue"
	// ScheduledRunStalled means a scheduled run has been active too long.
	ScheduledRunStalled Classification = "scheduled-run-stalled"
	// ScheduledRunUnsuccessful means the newest completed run failed.
	ScheduledRunUnsuccessful Classification = "scheduled-run-unsuccessful"
	// WorkflowAPIUnavailable means the runs could not be listed.
	WorkflowAPIUnavailable Classification = "workflow-api-unavailable"
)

// Error is returned when the audit cannot reach a trustworthy verdict
// (workflow-evidence-invalid or workflow-api-unavailable): the run fails red
// and the issue is not touched.
type Error struct {
	Classification Classification
	Detail         string
}

// Error implements error.
func (e *Error) Error() string { return string(e.Classification) + ": " + e.Detail }

// Run is one scheduled run as evidence.
type Run struct {
	ID         int64
	RunNumber  int
	Attempt    int
	Event      string
	Status     string
	Conclusion string
	Path       string
	CreatedAt  time.Time
	StartedAt  time.Time
}

// Config is one audit's target and thresholds.
type Config struct {
	// Owner and Repo name the lock repository.
	Owner, Repo string
	// Workflow is the reaper's workflow file name.
	Workflow string
	// MaxDeliveryDelay and MaxRunDuration are the SLO thresholds.
	MaxDeliveryDelay, MaxRunDuration time.Duration
	// ServerURL is GITHUB_SERVER_URL, for run links.
	ServerURL string
}

var workflowRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}\.ya?ml$`)

// Validate checks the configuration (the first problem; LoadSettings lists
// them all).
func (c Config) Validate() error {
	var p edgesettings.Problems
	c.problems(&p)
	if err := p.Err(); err != nil {
		return err.(*edgesettings.Error).Problems[0]
	}
	return nil
}

// problems adds every configuration problem to p.
func (c Config) problems(p *edgesettings.Problems) {
	if !workflowRE.MatchString(c.Workflow) {
		p.Add(fmt.Errorf("%w: --workflow %q must be a workflow file name like reap-stale-locks.yml", monitor.ErrUsage, c.Workflow))
	}
	if c.MaxDeliveryDelay <= 0 || c.MaxRunDuration <= 0 {
		p.Add(fmt.Errorf("%w: --max-delivery-delay and --max-run-duration must be positive", monitor.ErrUsage))
	}
}

// Verdict is a classification with its evidence.
type Verdict struct {
	Classification Classification
	// Subject is the run the classification is about (nil for missing and
	// healthy-without-subject).
	Subject *Run
	// Runs are the listed runs, newest first.
	Runs []Run
}

// Healthy reports whether the verdict is within SLO.
func (v Verdict) Healthy() bool { return v.Classification == Healthy }

var (
	activeStatuses = map[string]bool{"queued": true, "in_progress": true, "waiting": true, "requested": true, "pending": true}
	conclusions    = map[string]bool{"success": true, "failure": true, "cancelled": true, "skipped": true, "timed_out": true,
		"action_required": true, "neutral": true, "stale": true, "startup_failure": true}
)

// Classify is the pure classification of the runs listed (in any order) at
// now. It returns an *Error for workflow-evidence-invalid.
func Classify(runs []Run, now time.Time, cfg Config) (Verdict, error) {
	invalid := func(format string, args ...any) (Verdict, error) {
		return Verdict{Classification: WorkflowEvidenceInvalid}, &Error{Classification: WorkflowEvidenceInvalid, Detail: fmt.Sprintf(format, args...)}
	}
	if len(runs) == 0 {
		return Verdict{Classification: ScheduledRunMissing}, nil
	}
	if len(runs) > RunsPerPage {
		return invalid("the API returned %d runs for per_page=%d", len(runs), RunsPerPage)
	}
	wantPath := ".github/workflows/" + cfg.Workflow
	for _, r := range runs {
		switch {
		case r.ID <= 0:
			return invalid("a run has no positive id")
		case r.Event != "schedule":
			return invalid("run %d has event %q, want schedule", r.ID, r.Event)
		case r.Path != "" && r.Path != wantPath && !strings.HasPrefix(r.Path, wantPath+"@"):
			return invalid("run %d belongs to %q, want %s", r.ID, r.Path, wantPath)
		case r.CreatedAt.IsZero():
			return invalid("run %d has no created_at", r.ID)
		case r.CreatedAt.After(now.Add(MaxFutureSkew)):
			return invalid("run %d was created at %s, in the future", r.ID, r.CreatedAt.UTC().Format(time.RFC3339))
		case r.Status == "completed":
			if !conclusions[r.Conclusion] {
				return invalid("completed run %d has conclusion %q", r.ID, r.Conclusion)
			}
		case activeStatuses[r.Status]:
			if r.Conclusion != "" {
				return invalid("active run %d already has conclusion %q", r.ID, r.Conclusion)
			}
		default:
			return invalid("run %d has unknown status %q", r.ID, r.Status)
		}
	}
	sorted := append([]Run(nil), runs...)
	sort.SliceStable(sorted, func(a, b int) bool { return sorted[a].CreatedAt.After(sorted[b].CreatedAt) })
	for i := 1; i < len(sorted); i++ {
		if sorted[i].CreatedAt.Equal(sorted[i-1].CreatedAt) {
			return invalid("runs %d and %d have identical created_at %s", sorted[i-1].ID, sorted[i].ID, sorted[i].CreatedAt.UTC().Format(time.RFC3339))
		}
	}
	v := Verdict{Runs: sorted}
	newest := sorted[0]
	if now.Sub(newest.CreatedAt) > cfg.MaxDeliveryDelay {
		v.Classification, v.Subject = ScheduledRunOverdue, &newest
		return v, nil
	}
	for _, r := range sorted {
		if r.Status == "completed" {
			continue
		}
		start := r.StartedAt
		if start.IsZero() {
			start = r.CreatedAt
		}
		if now.Sub(start) > cfg.MaxRunDuration {
			v.Classification, v.Subject = ScheduledRunStalled, &r
			return v, nil
		}
	}
	for _, r := range sorted {
		if r.Status != "completed" {
			continue
		}
		if r.Conclusion != "success" {
			v.Classification, v.Subject = ScheduledRunUnsuccessful, &r
			return v, nil
		}
		break
	}
	v.Classification = Healthy
	return v, nil
}

// Body renders the deterministic issue body for a verdict: it depends on
// the evidence and thresholds only, never on the audit's clock.
func Body(cfg Config, v Verdict) string {
	var b strings.Builder
	b.WriteString(Marker + "\n")
	if v.Healthy() {
		b.WriteString("## Scheduled reaper delivery is back within SLO\n\n")
	} else {
		b.WriteString("## Scheduled reaper delivery is outside SLO\n\n")
	}
	fmt.Fprintf(&b, "Classification: **`%s`** for `%s` in `%s/%s`.\n\n", v.Classification, cfg.Workflow, cfg.Owner, cfg.Repo)
	switch v.Classification {
	case ScheduledRunMissing:
		b.WriteString("GitHub reports no scheduled run of the reaper at all. Scheduled workflows only run from the default branch, and GitHub disables schedules in repositories without recent activity.\n\n")
	case ScheduledRunOverdue:
		fmt.Fprintf(&b, "The newest scheduled run (%s) was created at %s, more than %s before this audit. Stale holders, quarantines and finished queue entries are not being reconciled.\n\n",
			runRef(cfg, v.Subject), v.Subject.CreatedAt.UTC().Format(time.RFC3339), lockview.Duration(cfg.MaxDeliveryDelay))
	case ScheduledRunStalled:
		fmt.Fprintf(&b, "Scheduled run %s has been `%s` for more than %s (created %s). A stalled reaper holds its concurrency group, so later schedules wait behind it.\n\n",
			runRef(cfg, v.Subject), v.Subject.Status, lockview.Duration(cfg.MaxRunDuration), v.Subject.CreatedAt.UTC().Format(time.RFC3339))
	case ScheduledRunUnsuccessful:
		fmt.Fprintf(&b, "The newest completed scheduled run %s concluded `%s`. A failed reap (for example an expired status-scan deadline) leaves stale state in place until a run succeeds.\n\n",
			runRef(cfg, v.Subject), v.Subject.Conclusion)
	case Healthy:
		b.WriteString("The newest scheduled run was delivered in time and the newest completed run succeeded. This issue stays closed while delivery is healthy and re-opens if it leaves the SLO again.\n\n")
	}
	fmt.Fprintf(&b, "SLO: a scheduled run at least every %s; no run active longer than %s.\n\n", lockview.Duration(cfg.MaxDeliveryDelay), lockview.Duration(cfg.MaxRunDuration))
	if len(v.Runs) > 0 {
		b.WriteString("| Run | Attempt | Status | Conclusion | Created | Started |\n|---|---:|---|---|---|---|\n")
		for i := range v.Runs {
			r := &v.Runs[i]
			fmt.Fprintf(&b, "| %s | %d | `%s` | %s | %s | %s |\n", runRef(cfg, r), r.Attempt, r.Status, orDash(r.Conclusion),
				r.CreatedAt.UTC().Format(time.RFC3339), timeOrDash(r.StartedAt))
		}
		b.WriteString("\n")
	}
	if !v.Healthy() {
		b.WriteString("### What to do\n\n")
		fmt.Fprintf(&b, "1. Open the [%s runs](%s/%s/%s/actions/workflows/%s) and check that the schedule is enabled and the latest run's logs.\n",
			cfg.Workflow, strings.TrimRight(cfg.ServerURL, "/"), cfg.Owner, cfg.Repo, cfg.Workflow)
		b.WriteString("2. Cancel a stalled run; the next schedule starts a fresh one (recovery runs use a separate, uncancellable workflow).\n")
		fmt.Fprintf(&b, "3. To reap now: `gh workflow run %s`.\n", cfg.Workflow)
		b.WriteString("4. This issue closes automatically once delivery is back within SLO.\n\n")
	}
	b.WriteString("_Maintained by the Reaper delivery audit (`reaper-delivery-audit.yml`)._\n")
	return b.String()
}

func runRef(cfg Config, r *Run) string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("[#%d](%s/%s/%s/actions/runs/%d)", r.RunNumber, strings.TrimRight(cfg.ServerURL, "/"), cfg.Owner, cfg.Repo, r.ID)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return "`" + s + "`"
}

func timeOrDash(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// Report is the outcome of one audit run.
type Report struct {
	Verdict
	Sync githubissue.Result
}

// Auditor runs the delivery audit.
type Auditor struct {
	cfg    Config
	gh     *ghclient.Client
	issues *monitor.IssueSync
	now    func() time.Time
}

// New returns an Auditor; now is the injected clock.
func New(cfg Config, gh *ghclient.Client, issueOpts githubissue.Options, now func() time.Time) (*Auditor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.ServerURL == "" {
		cfg.ServerURL = monitor.DefaultServerURL
	}
	ic, err := monitor.NewIssueSync(gh, cfg.Owner, cfg.Repo, issueOpts, "delivery issue")
	if err != nil {
		return nil, err
	}
	return &Auditor{cfg: cfg, gh: gh, issues: ic, now: now}, nil
}

// Run lists, classifies and synchronizes the issue. An unavailable API or
// invalid evidence returns an *Error without touching the issue.
func (a *Auditor) Run(ctx context.Context) (Report, error) {
	runs, err := a.list(ctx)
	if err != nil {
		return Report{Verdict: Verdict{Classification: WorkflowAPIUnavailable}},
			&Error{Classification: WorkflowAPIUnavailable, Detail: err.Error()}
	}
	v, err := Classify(runs, a.now(), a.cfg)
	if err != nil {
		return Report{Verdict: v}, err
	}
	spec := githubissue.Spec{Marker: Marker, Title: Title, MatchTitle: true, ClosedIsTerminal: true, Body: Body(a.cfg, v)}
	spec.State = githubissue.Open
	if v.Healthy() {
		spec.State = githubissue.Closed
	}
	res, err := a.issues.Sync(ctx, spec)
	return Report{Verdict: v, Sync: res}, err
}

func (a *Auditor) list(ctx context.Context) ([]Run, error) {
	gh := a.gh.GitHub()
	var got *github.WorkflowRuns
	err := a.gh.Do(ctx, ghclient.Op{Name: "GET workflow runs " + a.cfg.Workflow}, func(ctx context.Context) (*github.Response, error) {
		actx, cancel := context.WithTimeout(ctx, monitor.DefaultRequestTimeout)
		defer cancel()
		runs, resp, err := gh.Actions.ListWorkflowRunsByFileName(actx, a.cfg.Owner, a.cfg.Repo, a.cfg.Workflow,
			&github.ListWorkflowRunsOptions{Event: "schedule", ListOptions: github.ListOptions{PerPage: RunsPerPage}})
		got = runs
		return resp, err
	})
	if err != nil {
		return nil, err
	}
	if got == nil {
		return nil, errors.New("the API returned no workflow_runs object")
	}
	out := make([]Run, 0, len(got.WorkflowRuns))
	for _, r := range got.WorkflowRuns {
		if r == nil {
			continue
		}
		out = append(out, Run{
			ID: r.GetID(), RunNumber: r.GetRunNumber(), Attempt: r.GetRunAttempt(), Event: r.GetEvent(),
			Status: r.GetStatus(), Conclusion: r.GetConclusion(), Path: r.GetPath(),
			CreatedAt: r.GetCreatedAt().Time, StartedAt: r.GetRunStartedAt().Time,
		})
	}
	return out, nil
}

// Main is the reaper-delivery-audit command: flags --workflow,
// --max-delivery-delay, --max-run-duration and --repo (default
// GITHUB_REPOSITORY), read with the environment once by LoadSettings.
// Errors are also reported as ::error:: workflow commands; the returned
// error decides the exit code (monitor.ExitCode). A known unhealthy state
// is not an error once the issue is synced.
func Main(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, deps monitor.Deps) error {
	err := run(ctx, args, getenv, stdout, stderr, deps)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		monitor.Commands(stdout).Error("Reaper delivery audit: " + err.Error())
		fmt.Fprintln(stderr, "reaper-delivery-audit:", actionio.EscapeData(err.Error()))
	}
	return err
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, deps monitor.Deps) error {
	s, err := LoadSettings(args, getenv, stderr)
	if err != nil {
		return err
	}
	return Execute(ctx, s, stdout, deps)
}

// Execute is one audit over settled settings: start the run, list,
// classify, sync the issue and print the one-line report.
func Execute(ctx context.Context, s Settings, stdout io.Writer, deps monitor.Deps) error {
	sess, err := monitor.Start(ctx, s.Monitor, deps, monitor.Commands(stdout).Warning)
	if err != nil {
		return err
	}
	defer sess.Close()
	a, err := New(s.Config, sess.GH, githubissue.Options{Clock: sess.Clock}, sess.Now)
	if err != nil {
		return err
	}
	rep, err := a.Run(sess.Ctx)
	if err != nil {
		return sess.Budget.Explain(sess.Ctx, monitor.CodeRequestBudgetSpent, err)
	}
	line := fmt.Sprintf("reaper-delivery-audit: workflow=%s classification=%s", s.Config.Workflow, rep.Classification)
	if rep.Subject != nil {
		line += fmt.Sprintf(" run=%d age=%s", rep.Subject.ID, lockview.Duration(sess.Now().Sub(rep.Subject.CreatedAt)))
	}
	line += " issue=" + string(rep.Sync.Action)
	if rep.Sync.Issue != nil {
		line += fmt.Sprintf(" #%d %s", rep.Sync.Issue.Number, rep.Sync.Issue.HTMLURL)
	}
	fmt.Fprintln(stdout, actionio.EscapeData(line))
	return nil
}
