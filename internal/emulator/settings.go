package emulator

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// BranchRule is one rule that applies to a branch, as GET
// /repos/{owner}/{repo}/rules/branches/{branch} lists it
// (https://docs.github.com/en/rest/repos/rules#get-rules-for-a-branch):
// for example "deletion", "non_fast_forward", "pull_request",
// "required_status_checks", "update".
type BranchRule struct {
	Type       string         `json:"type"`
	Parameters map[string]any `json:"parameters,omitempty"`
	// BypassAppIDs are the Apps whose installation tokens the rule lets
	// through (a ruleset's bypass list, e.g. "Restrict updates" with the
	// writer App as the only bypass actor, docs/runbook.md). GET
	// .../rules/branches/{b} does not list bypass actors, as on GitHub.
	BypassAppIDs []int64 `json:"bypass_app_ids,omitempty"`
}

// Workflow is a workflow file's registration, as GET
// /repos/{owner}/{repo}/actions/workflows/{workflow_id} returns it
// (https://docs.github.com/en/rest/actions/workflows#get-a-workflow). State
// is "active", "disabled_manually" or "disabled_inactivity" (GitHub
// disables a public repository's scheduled workflows after 60 days without
// activity).
type Workflow struct {
	Path  string `json:"path"` // .github/workflows/<file>
	Name  string `json:"name"`
	State string `json:"state"`
}

// repoSettings holds what the repository settings say (rulesets, workflow
// registrations), which the doctor reads.
type repoSettings struct {
	rules     map[string][]BranchRule // repoKey + "\x00" + branch
	workflows map[string]Workflow     // repoKey + "\x00" + file name
}

// SetBranchRules replaces the rules that apply to branch (which need not
// exist). nil rules means unprotected.
func (e *Emulator) SetBranchRules(ownerLogin, repoName, branch string, rules []BranchRule) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, err := e.repoLocked(ownerLogin, repoName); err != nil {
		return err
	}
	if e.settings.rules == nil {
		e.settings.rules = map[string][]BranchRule{}
	}
	e.settings.rules[repoKey(ownerLogin, repoName)+"\x00"+branch] = append([]BranchRule(nil), rules...)
	return nil
}

// SetWorkflow registers (or updates) a workflow of the repository; the file
// itself is committed separately with PutFile.
func (e *Emulator) SetWorkflow(ownerLogin, repoName string, w Workflow) (int64, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, err := e.repoLocked(ownerLogin, repoName)
	if err != nil {
		return 0, err
	}
	file := w.Path[strings.LastIndex(w.Path, "/")+1:]
	if !strings.HasPrefix(w.Path, ".github/workflows/") || file == "" {
		return 0, fmt.Errorf("workflow path %q is not .github/workflows/<file>", w.Path)
	}
	if w.State == "" {
		w.State = "active"
	}
	if e.settings.workflows == nil {
		e.settings.workflows = map[string]Workflow{}
	}
	e.settings.workflows[repoKey(ownerLogin, repoName)+"\x00"+file] = w
	return e.workflowIDLocked(r, file), nil
}

// GET /repos/{owner}/{repo}/rules/branches/{branch}: readable with metadata
// access; an unprotected branch has no rules.
func hGetBranchRules(c *reqCtx) *response {
	r, resp := c.repo("metadata", "read")
	if resp != nil {
		return resp
	}
	out := []any{}
	for _, rule := range c.e.settings.rules[repoKey(r.owner.Login, r.Name)+"\x00"+c.params["branch"]] {
		m := map[string]any{"type": rule.Type, "ruleset_source_type": "Repository", "ruleset_source": r.fullName(), "ruleset_id": 1}
		params := rule.Parameters
		if params == nil {
			// GitHub always sends the parameters of these rule types (and
			// go-github's decoder requires them).
			switch rule.Type {
			case "pull_request":
				params = map[string]any{"required_approving_review_count": 1, "dismiss_stale_reviews_on_push": false,
					"require_code_owner_review": false, "require_last_push_approval": false, "required_review_thread_resolution": false}
			case "required_status_checks":
				params = map[string]any{"required_status_checks": []any{}, "strict_required_status_checks_policy": false}
			}
		}
		if params != nil {
			m["parameters"] = params
		}
		out = append(out, m)
	}
	return c.json(http.StatusOK, out)
}

// GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}: by numeric id
// or file name; needs actions: read.
func hGetWorkflow(c *reqCtx) *response {
	r, resp := c.repo("actions", "read")
	if resp != nil {
		return resp
	}
	key := c.params["workflow_id"]
	if id, err := strconv.ParseInt(key, 10, 64); err == nil {
		for file, wid := range r.workflows {
			if wid == id {
				key = file
			}
		}
	}
	w, ok := c.e.settings.workflows[repoKey(r.owner.Login, r.Name)+"\x00"+key]
	if !ok {
		return c.notFound()
	}
	full := r.fullName()
	return c.json(http.StatusOK, map[string]any{
		"id": r.workflows[key], "name": w.Name, "path": w.Path, "state": w.State,
		"url":      c.api("/repos/%s/actions/workflows/%d", full, r.workflows[key]),
		"html_url": c.web("/%s/blob/%s/%s", full, r.DefaultBranch, w.Path),
	})
}

// GET /installation/repositories: the repositories an installation token
// can reach (https://docs.github.com/en/rest/apps/installations#list-repositories-accessible-to-the-app-installation).
func hListInstallationRepositories(c *reqCtx) *response {
	if c.cred == nil || c.cred.kind != credInstallation {
		return c.forbidden("", "")
	}
	repos := []any{}
	for _, k := range sortedKeys(c.e.repos) {
		if r := c.e.repos[k]; c.cred.canSee(r) {
			repos = append(repos, c.repoJSON(r))
		}
	}
	sel := "all"
	if c.cred.inst.Repos != nil {
		sel = "selected"
	}
	return c.json(http.StatusOK, map[string]any{"total_count": len(repos), "repository_selection": sel, "repositories": repos})
}
