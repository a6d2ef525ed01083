package policy

import (
	"regexp"
	"strings"

	"go.yaml.in/yaml/v4"
)

// ---- credential and pull-request hygiene, in every workflow ----

// These rules hold for every workflow of a consumer repository (and of the
// lock repository, whose own audit shares them): a secret interpolated
// into a script, a shell line or an actions/github-script script is part
// of the program text (written to disk, visible to the process list and
// to anything that prints the command), not an environment value the
// runner masks and scopes; an expression in uses: is never a reviewed
// pin; write-all hands every job every scope; and a pull_request_target
// workflow runs with this repository's secrets, so it must never check out
// or fetch the pull request's code, however the ref reaches the command.

var (
	ghPRCheckoutRE = regexp.MustCompile(`(?i)\bgh\s+pr\s+checkout\b`)
	pullRefRE      = regexp.MustCompile(`(?i)(refs/pull/|\bpull/[^\s/'"]+/(head|merge)\b)`)
	gitFetchRE     = regexp.MustCompile(`(?i)\bgit\b.*\b(fetch|checkout|switch|pull|clone|reset|worktree|merge|rebase|cherry-pick)\b`)
	shellVarRE     = regexp.MustCompile(`\$\{?(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}?`)
)

// secretRef reports whether a template references a secret or the
// workflow token (secrets.*, github.token).
func secretRef(s string) bool {
	for _, r := range contextRefs(s) {
		if r == "secrets" || strings.HasPrefix(r, "secrets.") || strings.HasPrefix(r, "secrets[") || r == "github.token" {
			return true
		}
	}
	return false
}

// isGitHubScript reports whether u is actions/github-script.
func (u usesRef) isGitHubScript() bool {
	return u.kind == usesRemote && strings.EqualFold(u.repository(), "actions/github-script") && u.path == ""
}

// hygieneRules applies the credential and pull-request rules to every job
// and step of w (lockRepo: the lock repository's own audit, whose run:
// rule refuses every expression).
func (a *analysis) hygieneRules(w *workflow, lockRepo bool) {
	for _, n := range []*yaml.Node{rawGet(w.raw, "permissions")} {
		if n != nil && n.Kind == yaml.ScalarNode && n.Value == "write-all" {
			a.add(ExcessivePermissions, w.path, "", n.Line)
		}
	}
	if d := rawPath(w.raw, "defaults", "run", "shell"); d != nil && secretRef(d.Value) {
		a.add(SecretInShell, w.path, "", d.Line)
	}
	prTarget := false
	for _, t := range w.triggers(map[*workflow]bool{}) {
		if t.name == "pull_request_target" {
			prTarget = true
		}
	}
	for _, j := range w.jobs {
		if p := rawGet(j.raw, "permissions"); p != nil && p.Kind == yaml.ScalarNode && p.Value == "write-all" {
			a.add(ExcessivePermissions, w.path, j.id, p.Line)
		}
		if d := rawPath(j.raw, "defaults", "run", "shell"); d != nil && secretRef(d.Value) {
			a.add(SecretInShell, w.path, j.id, d.Line)
		}
		if j.call != nil && strings.Contains(j.call.raw, "${{") {
			a.add(ExpressionInUses, w.path, j.id, j.line())
		}
		excluded := false
		if conds, _, _ := j.jobConds(); conds != nil {
			for _, c := range conds {
				if isNotEquals(c, "github.event_name", "pull_request_target") {
					excluded = true
				}
			}
		}
		for _, s := range j.steps {
			a.stepHygiene(w.path, j.id, s.line(), s.run, shellOf(s.raw), s.uses, s.with, lockRepo)
			if prTarget && !excluded && prCheckout(w, j, s) {
				a.add(PullRequestTargetCheckout, w.path, j.id, s.line())
			}
		}
	}
}

func shellOf(n *yaml.Node) string {
	if sh := rawGet(n, "shell"); sh != nil && sh.Kind == yaml.ScalarNode {
		return sh.Value
	}
	return ""
}

// stepHygiene checks one step (of a workflow or a composite action):
// secrets in run:, shell: or a github-script script:, and an expression
// in uses:. lockRepo marks the lock repository's own audit, whose run:
// rule also refuses every other expression.
func (a *analysis) stepHygiene(p, jobID string, line int, run, shell string, u *usesRef, with map[string]string, lockRepo bool) {
	if lockRepo {
		a.runAudit(p, jobID, line, run)
	} else if secretRef(run) {
		a.add(SecretInRun, p, jobID, line)
	}
	if secretRef(shell) {
		a.add(SecretInShell, p, jobID, line)
	}
	if u == nil {
		return
	}
	if strings.Contains(u.raw, "${{") {
		a.add(ExpressionInUses, p, jobID, line)
	}
	if u.isGitHubScript() && secretRef(with["script"]) {
		a.add(SecretInScript, p, jobID, line)
	}
}

// prCheckout reports whether step s checks out or fetches the pull
// request's code: actions/checkout of the head (or merge) ref or of the
// head repository, directly or through an env: variable; gh pr checkout;
// a git command naming refs/pull/ or pull/<n>/head; or a git command
// given the head ref through an expression or an env: variable.
func prCheckout(w *workflow, j *job, s *step) bool {
	if s.uses != nil && s.uses.isCheckout() {
		return prControlled(s.with["ref"], w, j, s, 0) || prControlled(s.with["repository"], w, j, s, 0)
	}
	if s.run == "" {
		return false
	}
	if ghPRCheckoutRE.MatchString(s.run) {
		return true
	}
	for _, line := range strings.Split(s.run, "\n") {
		if !gitFetchRE.MatchString(line) {
			continue
		}
		if pullRefRE.MatchString(line) || prControlled(line, w, j, s, 0) {
			return true
		}
		for _, m := range shellVarRE.FindAllStringSubmatch(line, -1) {
			if v, ok := envValue(m[1], w, j, s); ok && prControlled(v, w, j, s, 1) {
				return true
			}
		}
	}
	return false
}

// prControlled reports whether a value names the pull request's code: its
// head or merge ref, sha or repository, or refs/pull/, directly or through
// ${{ env.NAME }} (followed a few levels).
func prControlled(v string, w *workflow, j *job, s *step, depth int) bool {
	if v == "" || depth > 4 {
		return false
	}
	if pullRefRE.MatchString(v) {
		return true
	}
	for _, r := range contextRefs(v) {
		switch {
		case strings.HasPrefix(r, "github.event.pull_request.head"), strings.HasPrefix(r, "github.event.pull_request.merge"),
			r == "github.head_ref":
			return true
		case strings.HasPrefix(r, "env."):
			if ev, ok := envValue(strings.TrimPrefix(r, "env."), w, j, s); ok && prControlled(ev, w, j, s, depth+1) {
				return true
			}
		}
	}
	return false
}

// envValue looks an environment variable up as the runner scopes it: the
// step's env:, then the job's, then the workflow's (names compared without
// case, as Windows runners and the env context do).
func envValue(name string, w *workflow, j *job, s *step) (string, bool) {
	for k, v := range s.env {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	for _, env := range []*yaml.Node{rawGet(j.raw, "env"), rawGet(w.raw, "env")} {
		if env == nil || env.Kind != yaml.MappingNode {
			continue
		}
		for i := 0; i+1 < len(env.Content); i += 2 {
			if strings.EqualFold(env.Content[i].Value, name) && env.Content[i+1].Kind == yaml.ScalarNode {
				return env.Content[i+1].Value, true
			}
		}
	}
	return "", false
}
