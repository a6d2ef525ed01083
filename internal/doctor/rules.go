package doctor

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/rhysd/actionlint"
)

// Check IDs: the stable reason codes of the report.
const (
	CheckWriterInstalled         = "writer-app-installed"
	CheckWriterPermissions       = "writer-app-permissions"
	CheckWriterRepositories      = "writer-app-repositories"
	CheckReaderInstalled         = "reader-app-installed"
	CheckReaderPermissions       = "reader-app-permissions"
	CheckReaderRepositories      = "reader-app-repositories"
	CheckStateBranch             = "state-branch"
	CheckStateBranchProtection   = "state-branch-protection"
	CheckDefaultBranchProtection = "default-branch-protection"
	CheckLockConfig              = "lock-config"
	CheckReaperWorkflow          = "reaper-workflow"
	CheckReaperEnabled           = "reaper-enabled"
)

// WriterPermissions are exactly the state-writer App's permissions: it
// commits lock state to the lock repository and nothing else
// (spec: "a state-writer GitHub App whose tokens are restricted to this
// repository with contents: write"; metadata: read is granted with every
// App).
var WriterPermissions = map[string]string{"contents": "write", "metadata": "read"}

// ReaderPermissions are exactly the reader App's permissions: the reaper
// reads workflow runs and jobs (actions), the policy audit reads exact
// commits (contents), the runner preflight reads organization runners.
var ReaderPermissions = map[string]string{
	"actions": "read", "contents": "read", "metadata": "read", "organization_self_hosted_runners": "read",
}

// ReaperWorkflowPath is the scheduled reaper the lock repository runs.
const ReaperWorkflowPath = ".github/workflows/reap-stale-locks.yml"

// Status is a check's outcome.
type Status string

// The outcomes.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	Skip Status = "skip"
)

// Result is one check's outcome, with what to do about a failure.
type Result struct {
	ID     string `json:"id"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

func pass(id, format string, a ...any) Result {
	return Result{ID: id, Status: Pass, Detail: fmt.Sprintf(format, a...)}
}

func fail(id, fix, format string, a ...any) Result {
	return Result{ID: id, Status: Fail, Detail: fmt.Sprintf(format, a...), Fix: fix}
}

func skip(id, format string, a ...any) Result {
	return Result{ID: id, Status: Skip, Detail: fmt.Sprintf(format, a...)}
}

// FormatPermissions renders a permission set as "a: read, b: write".
func FormatPermissions(p map[string]string) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+": "+p[k])
	}
	return strings.Join(parts, ", ")
}

// Permissions compares an installation's permissions with exactly the
// set it must have: any missing or weaker permission and any extra or
// stronger one fails.
func Permissions(id, app string, want, got map[string]string) Result {
	var missing, extra []string
	for k, v := range want {
		if got[k] != v {
			missing = append(missing, fmt.Sprintf("%s: %s (has %q)", k, v, got[k]))
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			extra = append(extra, k+": "+v)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) == 0 && len(extra) == 0 {
		return pass(id, "%s has exactly %s", app, FormatPermissions(want))
	}
	var what []string
	if len(missing) > 0 {
		what = append(what, "needs "+strings.Join(missing, ", "))
	}
	if len(extra) > 0 {
		what = append(what, "must not have "+strings.Join(extra, ", "))
	}
	return fail(id, fmt.Sprintf("In the %s's settings (Permissions & events) grant exactly %s and remove everything else, then accept the new permissions on the installation.", app, FormatPermissions(want)),
		"%s %s", app, strings.Join(what, "; "))
}

// WriterRepositories requires the writer installation to reach the
// lock repository and nothing else.
func WriterRepositories(selection string, repos []string, lockRepo string) Result {
	const fix = "Install the writer App with \"Only select repositories\" and select only the lock repository."
	if selection != "selected" {
		return fail(CheckWriterRepositories, fix, "the writer App is installed on all repositories of the owner")
	}
	if len(repos) != 1 || !strings.EqualFold(repos[0], lockRepo) {
		return fail(CheckWriterRepositories, fix, "the writer App reaches %v, not only %s", repos, lockRepo)
	}
	return pass(CheckWriterRepositories, "the writer App reaches only %s", lockRepo)
}

// ReaderRepositories requires the reader installation to be limited
// to selected repositories (the reviewed consumer set).
func ReaderRepositories(selection string, count int) Result {
	if selection != "selected" {
		return fail(CheckReaderRepositories, "Install the reader App with \"Only select repositories\": the reviewed consumer repositories.",
			"the reader App is installed on all repositories of the owner")
	}
	return pass(CheckReaderRepositories, "the reader App reaches %d selected repositories", count)
}

// StateRules requires the state branch to refuse deletion and force
// pushes, and to have no rule that blocks the writer App's Contents API
// commits (pull requests, status checks, signed commits, restricted
// updates), which would stall every acquire and release.
func StateRules(branch string, types []string) Result {
	const fix = "Add a branch ruleset for the state branch with \"Restrict deletions\" and \"Block force pushes\" only " +
		"(no pull request, status check, signed commit or update restriction: the writer App commits through the Contents API)."
	var missing, blocking []string
	for _, t := range []string{"deletion", "non_fast_forward"} {
		if !slices.Contains(types, t) {
			missing = append(missing, t)
		}
	}
	for _, t := range types {
		switch t {
		case "pull_request", "required_status_checks", "required_signatures", "update", "required_deployments", "merge_queue":
			blocking = append(blocking, t)
		}
	}
	switch {
	case len(missing) > 0:
		return fail(CheckStateBranchProtection, fix, "branch %s lacks the rules %v (it can be deleted or force-pushed, losing lock state)", branch, missing)
	case len(blocking) > 0:
		return fail(CheckStateBranchProtection, fix, "branch %s has rules %v that block the writer App's commits", branch, blocking)
	}
	return pass(CheckStateBranchProtection, "branch %s refuses deletion and force pushes", branch)
}

// DefaultRules requires the default branch (which holds the lock
// configs, reviewed like code) to need pull requests and refuse deletion
// and force pushes.
func DefaultRules(branch string, types []string) Result {
	var missing []string
	for _, t := range []string{"pull_request", "deletion", "non_fast_forward"} {
		if !slices.Contains(types, t) {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		return fail(CheckDefaultBranchProtection, "Add a branch ruleset for the default branch with \"Require a pull request before merging\", \"Restrict deletions\" and \"Block force pushes\".",
			"default branch %s lacks the rules %v", branch, missing)
	}
	return pass(CheckDefaultBranchProtection, "default branch %s needs pull requests and refuses deletion and force pushes", branch)
}

// ReaperFile requires the reaper workflow to be scheduled and to run
// the reap-stale-locks action.
func ReaperFile(content []byte) Result {
	const fix = "Keep .github/workflows/reap-stale-locks.yml from this repository: on: schedule (cron \"*/5 * * * *\") running ./.github/actions/reap-stale-locks."
	wf, errs := actionlint.Parse(content)
	if wf == nil || len(errs) > 0 {
		msg := "unparsable"
		if len(errs) > 0 {
			msg = errs[0].Message
		}
		return fail(CheckReaperWorkflow, fix, "%s is not a valid workflow: %s", ReaperWorkflowPath, msg)
	}
	var crons []string
	for _, ev := range wf.On {
		if s, ok := ev.(*actionlint.ScheduledEvent); ok {
			for _, e := range s.Schedules {
				if e.Cron != nil {
					crons = append(crons, e.Cron.Value)
				}
			}
		}
	}
	if len(crons) == 0 {
		return fail(CheckReaperWorkflow, fix, "%s has no schedule: nothing reaps crashed holders", ReaperWorkflowPath)
	}
	usesReaper := false
	for _, j := range wf.Jobs {
		for _, st := range j.Steps {
			if a, ok := st.Exec.(*actionlint.ExecAction); ok && a.Uses != nil && strings.Contains(a.Uses.Value, "reap-stale-locks") {
				usesReaper = true
			}
		}
	}
	if !usesReaper {
		return fail(CheckReaperWorkflow, fix, "%s does not run the reap-stale-locks action", ReaperWorkflowPath)
	}
	return pass(CheckReaperWorkflow, "%s is scheduled (%s)", ReaperWorkflowPath, strings.Join(crons, ", "))
}

// ReaperState requires the reaper workflow to be enabled.
func ReaperState(state string) Result {
	if state != "active" {
		return fail(CheckReaperEnabled, "Enable the workflow (Actions → Reap stale build locks → Enable workflow); GitHub disables a public repository's scheduled workflows after 60 days without activity.",
			"the reaper workflow is %s", state)
	}
	return pass(CheckReaperEnabled, "the reaper workflow is enabled")
}

// Failed reports whether any result failed.
func Failed(rs []Result) bool {
	for _, r := range rs {
		if r.Status == Fail {
			return true
		}
	}
	return false
}
