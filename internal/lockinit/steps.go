package lockinit

import (
	"fmt"
	"strings"
)

// Rulesets are the two branch rulesets a lock repository needs, as request
// bodies of GitHub's "Create a repository ruleset"
// (POST /repos/{owner}/{repo}/rulesets). The state branch refuses deletion
// and force pushes and nothing else: a pull-request, status-check,
// signed-commit or update rule would refuse the writer App's Contents API
// commits and stall every acquire and release (buildlock doctor fails on
// one). A ruleset protects a branch name before the branch exists, so the
// first acquire creates lock-state already protected.
const (
	StateBranchRuleset = `{"name":"build lock state","target":"branch","enforcement":"active",` +
		`"conditions":{"ref_name":{"include":["refs/heads/lock-state"],"exclude":[]}},` +
		`"rules":[{"type":"deletion"},{"type":"non_fast_forward"}]}`
	DefaultBranchRuleset = `{"name":"reviewed lock configs","target":"branch","enforcement":"active",` +
		`"conditions":{"ref_name":{"include":["~DEFAULT_BRANCH"],"exclude":[]}},` +
		`"rules":[{"type":"deletion"},{"type":"non_fast_forward"},{"type":"pull_request","parameters":` +
		`{"required_approving_review_count":1,"dismiss_stale_reviews_on_push":true,"require_code_owner_review":false,` +
		`"require_last_push_approval":false,"required_review_thread_resolution":false}}]}`
)

// NextSteps is what remains by hand after init, in order, with the exact
// commands (gh, the GitHub CLI) and the doctor command that checks them.
// files are the paths init wrote (for the commit step).
func NextSteps(o Options, files []string) string {
	repo := o.Repository
	if repo == "" {
		repo = "OWNER/REPO"
	}
	owner, name, _ := strings.Cut(repo, "/")
	var b strings.Builder
	step := 0
	p := func(format string, a ...any) {
		step++
		fmt.Fprintf(&b, "\n%d. %s\n", step, fmt.Sprintf(format, a...))
	}
	b.WriteString("What remains by hand (docs/adopting.md explains each step):\n")
	p("Commit the files on a branch and merge them by pull request (the lock config is reviewed like code):\n"+
		"     git switch -c add-%[1]s-lock && git add %[2]s && git commit -m \"Add the %[1]s build lock\" && git push -u origin add-%[1]s-lock",
		o.Lock, strings.Join(files, " "))
	p("Create two GitHub Apps at https://github.com/organizations/%s/settings/apps/new (webhook off), each with a private key:\n"+
		"     writer: Repository permissions -> Contents: Read and write (Metadata: Read comes with it); install it on %s only\n"+
		"     reader: Repository permissions -> Actions: Read, Contents: Read; Organization permissions -> Self-hosted runners: Read;\n"+
		"             install it on the consumer repositories and on %s\n"+
		"     Nothing more: buildlock doctor fails on any extra permission.", owner, repo, repo)
	p("Store them as organization secrets (list your consumer repositories after %s):\n"+
		"     gh secret set BUILD_LOCK_APP_ID --org %s --repos %s --body <writer App id>\n"+
		"     gh secret set BUILD_LOCK_APP_PRIVATE_KEY --org %s --repos %s < writer.private-key.pem\n"+
		"     gh secret set BUILD_LOCK_READER_APP_ID --org %s --repos %s --body <reader App id>\n"+
		"     gh secret set BUILD_LOCK_READER_APP_PRIVATE_KEY --org %s --repos %s < reader.private-key.pem",
		name, owner, name, owner, name, owner, name, owner, name)
	p("Tell the reaper and the recover workflow which lock they serve:\n"+
		"     gh variable set BUILD_LOCK_NAME --body %s -R %s", o.Lock, repo)
	p("Protect the branches with two rulesets:\n"+
		"     gh api repos/%[1]s/rulesets --method POST --input - <<'JSON'\n     %[2]s\nJSON\n"+
		"     gh api repos/%[1]s/rulesets --method POST --input - <<'JSON'\n     %[3]s\nJSON",
		repo, StateBranchRuleset, DefaultBranchRuleset)
	p("Keep the reaper enabled (Actions -> Reap stale build locks); GitHub disables scheduled workflows of a public\n" +
		"   repository after 60 days without activity.")
	p("Check everything (it only reads, and prints the fix of every failed check):\n"+
		"     export BUILD_LOCK_APP_ID=<writer App id> BUILD_LOCK_APP_PRIVATE_KEY=\"$(cat writer.private-key.pem)\"\n"+
		"     export BUILD_LOCK_READER_APP_ID=<reader App id> BUILD_LOCK_READER_APP_PRIVATE_KEY=\"$(cat reader.private-key.pem)\"\n"+
		"     buildlock doctor --lock-repository %s --lock %s", repo, o.Lock)
	p("In a consumer repository, copy the README's workflow (docs/examples/consumer-workflow.yml), replace\n"+
		"   Ambiguous-Interactive/ambiguous-organization-build-lock with %s, the all-zero commit with the commit\n"+
		"   you reviewed, and set lock-name: %s. The lock's state file is created by its first acquire.", repo, o.Lock)
	return b.String()
}
