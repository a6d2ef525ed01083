package openapi_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator/openapi"
)

// TestWholeSurface drives every operation the emulator serves with a plain
// token once and expects no violation (the operations of
// openapi.RequiredFieldsPending may lack required fields; they are listed in
// docs/emulator.md).
func TestWholeSurface(t *testing.T) {
	d := load(t)
	em := world(t)
	run := em.CreateRun("acme", "build-lock", emulator.Run{Workflow: "ci.yml", Status: "in_progress", RunAttempt: 1})
	job := em.AddJob("acme", "build-lock", run, 1, emulator.Job{Name: "build", RunnerName: "r1", Status: "in_progress"})
	_, _ = em.CreateIssue("acme", "build-lock", "octocat", "t", "b", "open")
	head, _ := em.BranchHead("acme", "build-lock", "main")
	em.SetPullRequest("acme", "build-lock", 7, "open", head)
	rec := openapi.NewRecorder(d, em.Transport())
	for _, p := range []string{
		"/repos/acme/build-lock", "/repos/acme/build-lock/git/ref/heads/main", "/repos/acme/build-lock/git/commits/" + head,
		"/repos/acme/build-lock/git/trees/main?recursive=1", "/repos/acme/build-lock/commits", "/repos/acme/build-lock/branches/main",
		"/repos/acme/build-lock/contents/locks", "/repos/acme/build-lock/contents/locks/x.json",
		"/repos/acme/build-lock/actions/runs", "/repos/acme/build-lock/actions/runs/" + itoa(run), "/repos/acme/build-lock/actions/runs/" + itoa(run) + "/attempts/1",
		"/repos/acme/build-lock/actions/runs/" + itoa(run) + "/attempts/1/jobs", "/repos/acme/build-lock/actions/runs/" + itoa(run) + "/jobs",
		"/repos/acme/build-lock/actions/jobs/" + itoa(job), "/repos/acme/build-lock/actions/workflows/ci.yml/runs",
		"/repos/acme/build-lock/pulls/7", "/repos/acme/build-lock/pulls", "/repos/acme/build-lock/issues", "/repos/acme/build-lock/issues/1",
		"/repos/acme/build-lock/rules/branches/main", "/rate_limit",
	} {
		send(t, rec, "GET", p, nil)
	}
	for _, s := range openapi.Summary(rec.Violations()) {
		t.Log(s)
	}
	assert.Empty(t, rec.Violations())
}

func itoa(n int64) string {
	const digits = "0123456789"
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{digits[n%10]}, b...)
		n /= 10
	}
	return string(b)
}
