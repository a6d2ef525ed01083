package emulator

import (
	"net/http"
	"strings"
)

// Branch rules on writes. The rules set with SetBranchRules (or the admin
// API's POST /_emulator/rules) are not only listed by GET
// /repos/{o}/{r}/rules/branches/{b}: they also refuse the writes GitHub
// refuses, with GitHub's answer.
//
// A ruleset refusal of a Contents API write is HTTP 409 with the message
// "Repository rule violations found\n\n<violation>\n\n" (measured on
// github.com by a public project, PUT contents on a branch with a
// pull_request rule: "Repository rule violations found\n\nChanges must be
// made through a pull request."; release-please reports the same text for a
// refused ref creation, "Cannot create ref due to creations being
// restricted."). The violation lines are the ones git prints for the same
// rules ("GH013: Repository rule violations found for refs/heads/<b>").
// Classic branch protection ("protected_branch", an emulator-only rule
// type) answers "Protected branch update failed for refs/heads/<b>." as
// git's GH006 does; its HTTP status on the Contents API is not documented
// and is assumed to be 422 (docs/emulator.md).

// RuleProtectedBranch is the emulator's stand-in for classic branch
// protection (not a ruleset rule type): every write to the branch is refused
// with "Protected branch update failed for refs/heads/<branch>.".
const RuleProtectedBranch = "protected_branch"

// rulesetViolationPrefix is the first line of every ruleset refusal.
const rulesetViolationPrefix = "Repository rule violations found"

// rulesetMessage renders GitHub's ruleset refusal text.
func rulesetMessage(violations []string) string {
	return rulesetViolationPrefix + "\n\n" + strings.Join(violations, "\n\n") + "\n\n"
}

// writeKind is what a write does to a branch.
type writeKind int

const (
	writeUpdate writeKind = iota // a commit on an existing branch (contents PUT/DELETE, ref PATCH)
	writeCreate                  // the branch is created (POST git/refs)
	writeDelete                  // the branch is deleted (DELETE git/refs)
	writeForce                   // a non-fast-forward ref update
)

// ruleRefusalLocked returns GitHub's refusal of a write of kind k touching
// paths on branch, or nil when the branch's rules allow it.
func (c *reqCtx) ruleRefusalLocked(r *repo, branch string, k writeKind, paths ...string) *response {
	rules := c.e.settings.rules[repoKey(r.owner.Login, r.Name)+"\x00"+branch]
	var violations []string
	for _, rule := range rules {
		if c.bypasses(rule) {
			continue
		}
		switch rule.Type {
		case RuleProtectedBranch:
			if k != writeCreate {
				resp := errorResponse(http.StatusUnprocessableEntity, "Protected branch update failed for refs/heads/"+branch+".", docsContentsPut)
				resp.ruleRefusal = true
				return resp
			}
		case "update":
			if k == writeUpdate || k == writeForce {
				violations = append(violations, "Cannot update this protected ref.")
			}
		case "pull_request":
			if k == writeUpdate || k == writeForce {
				violations = append(violations, "Changes must be made through a pull request.")
			}
		case "required_status_checks":
			if k == writeUpdate || k == writeForce {
				violations = append(violations, requiredChecksViolations(rule.Parameters)...)
			}
		case "required_deployments":
			if k == writeUpdate || k == writeForce {
				violations = append(violations, "Changes must have been successfully deployed before they can be merged.")
			}
		case "creation":
			if k == writeCreate {
				violations = append(violations, "Cannot create ref due to creations being restricted.")
			}
		case "deletion":
			if k == writeDelete {
				violations = append(violations, "Cannot delete this protected ref.")
			}
		case "non_fast_forward":
			if k == writeForce {
				violations = append(violations, "Cannot force-push to this branch.")
			}
		case "file_path_restriction":
			if k == writeUpdate && restrictedPath(rule.Parameters, paths) {
				violations = append(violations, "Cannot modify restricted file paths.")
			}
		}
	}
	if len(violations) == 0 {
		return nil
	}
	status := http.StatusConflict
	if k == writeCreate || k == writeDelete || k == writeForce {
		// The Git refs API answers refused ref changes with 422
		// (release-please: "Validation Failed ... pre_receive Repository rule
		// violations found").
		status = http.StatusUnprocessableEntity
	}
	resp := errorResponse(status, rulesetMessage(violations), docsContentsPut)
	resp.ruleRefusal = true
	return resp
}

// bypasses reports whether the request's credential is an installation of
// an App in the rule's bypass list.
func (c *reqCtx) bypasses(rule BranchRule) bool {
	if c.cred == nil || c.cred.kind != credInstallation || c.cred.inst == nil {
		return false
	}
	for _, id := range rule.BypassAppIDs {
		if id == c.cred.inst.AppID {
			return true
		}
	}
	return false
}

// requiredChecksViolations names each required check as git does ("Required
// status check \"ci\" is expected."); without parameters one generic line.
func requiredChecksViolations(params map[string]any) []string {
	var out []string
	if list, ok := params["required_status_checks"].([]any); ok {
		for _, item := range list {
			if m, ok := item.(map[string]any); ok {
				if ctx, ok := m["context"].(string); ok && ctx != "" {
					out = append(out, "Required status check \""+ctx+"\" is expected.")
				}
			}
		}
	}
	if len(out) == 0 {
		out = append(out, "Required status checks are expected.")
	}
	return out
}

// restrictedPath reports whether any path is listed in the rule's
// restricted_file_paths (exact paths; GitHub's fnmatch patterns are not
// modeled).
func restrictedPath(params map[string]any, paths []string) bool {
	list, _ := params["restricted_file_paths"].([]any)
	for _, item := range list {
		s, _ := item.(string)
		for _, p := range paths {
			if s != "" && s == p {
				return true
			}
		}
	}
	return false
}

// rulesetViolationFault is the ruleset_violation fault's answer: a write
// refused by a rule on the branch (409, or Fault.Status 422 for the Git refs
// API's form).
func rulesetViolationFault(f *Fault) *response {
	status := http.StatusConflict
	if f.Status == http.StatusUnprocessableEntity {
		status = f.Status
	}
	resp := errorResponse(status, rulesetMessage([]string{"Cannot update this protected ref."}), docsContentsPut)
	resp.ruleRefusal = true
	return resp
}
