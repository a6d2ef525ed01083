package enroll_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy/enroll"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy/registry"
)

// branchRegistry reads the registry on the onboarding branch through the
// emulator.
func (w *world) branchRegistry(branch string) *registry.Registry {
	w.t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet,
		"https://api.emulator.test/repos/"+lockRepo+"/contents/"+registry.Path+"?ref="+branch, nil)
	require.NoError(w.t, err)
	req.Header.Set("Authorization", "Bearer "+wfToken)
	resp, err := w.em.Transport().RoundTrip(req)
	require.NoError(w.t, err)
	defer resp.Body.Close()
	require.Equal(w.t, http.StatusOK, resp.StatusCode)
	var body struct{ Content string }
	require.NoError(w.t, json.NewDecoder(resp.Body).Decode(&body))
	data, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(body.Content, "\n", ""))
	require.NoError(w.t, err)
	reg, err := registry.Decode(data, registry.DecodeOptions{Organization: org})
	require.NoError(w.t, err)
	return reg
}

func TestOnboardOpensTheRegistryPullRequest(t *testing.T) {
	t.Parallel()
	w := newWorld(t, []string{"game", "New-Game"}, "game")
	w.em.AddRepo(org, "New-Game", 3000, "develop")
	_, err := w.em.PutFile(org, "New-Game", "develop", unityPath, []byte(consumer(t)))
	require.NoError(t, err)

	w.env["ENROLLMENT_EVIDENCE_URL"] = "https://github.com/" + lockRepo + "/actions/runs/41"
	out, err := w.run("onboard", "--repository", "acme/new-game", "--fork", "false", "--default-branch", "develop")
	require.NoError(t, err, out)
	assert.Contains(t, out, "acme/New-Game registered on branch enrollment/acme-new-game")
	assert.Contains(t, out, "(opened; 1 findings)", "the preview audit runs against the new registry row (push to main is not develop)")

	reg := w.branchRegistry("enrollment/acme-new-game")
	row, ok := reg.Lookup("acme/New-Game")
	require.True(t, ok)
	assert.Equal(t, registry.Repository{Repository: "acme/New-Game", DefaultBranch: "develop"}, row, "GitHub's spelling and default branch")
	main := w.branchRegistry("main")
	_, ok = main.Lookup("acme/New-Game")
	assert.False(t, ok, "the default branch changes only by review")

	body, ok := w.em.PullRequestBody(org, lockName, 1)
	require.True(t, ok)
	for _, item := range enroll.Checklist {
		assert.Contains(t, body, "- [ ] "+item)
	}
	head, _ := w.em.BranchHead(org, "New-Game", "develop")
	assert.Contains(t, body, "`"+head+"`")
	assert.Contains(t, body, "ineligible-unity-trigger")
	assert.Contains(t, body, "[evidence](https://github.com/"+lockRepo+"/actions/runs/41)")

	out, err = w.run("onboard", "--repository", "acme/new-game")
	require.NoError(t, err)
	assert.Contains(t, out, "already open", "a rerun finds the open pull request and writes nothing")
}

func TestOnboardRefusals(t *testing.T) {
	t.Parallel()
	w := newWorld(t, []string{"game", "forked", "new"}, "game")
	w.em.AddRepo(org, "forked", 3001, "main")
	require.NoError(t, w.em.SetRepoFork(org, "forked", true))
	w.em.AddRepo(org, "hidden", 3002, "main")
	w.em.AddRepo(org, "new", 3003, "main")
	w.em.AddRepo("globex", "theirs", 4000, "main")
	for name, args := range map[string][]string{
		"other owner":    {"--repository", "globex/theirs"},
		"registered":     {"--repository", "acme/GAME"},
		"fork":           {"--repository", "acme/forked"},
		"not readable":   {"--repository", "acme/hidden"},
		"missing":        {"--repository", "acme/nope"},
		"branch differs": {"--repository", "acme/new", "--default-branch", "develop"},
		"fork differs":   {"--repository", "acme/new", "--fork", "true"},
		"bad fork flag":  {"--repository", "acme/new", "--fork", "yes"},
		"bad dispatch":   {"--repository", "acme/new", "--allow-workflow-dispatch", "1"},
		"bad name":       {"--repository", "acme/../x"},
	} {
		w.em.ResetMetrics()
		_, err := w.run(append([]string{"onboard"}, args...)...)
		assert.Equal(t, 2, enroll.ExitCode(err), "%s: %v", name, err)
		assert.Zero(t, w.em.Metrics().Writes, "%s: a refusal writes nothing", name)
	}
}

func TestOnboardFromRequestFile(t *testing.T) {
	t.Parallel()
	w := newWorld(t, []string{"game", "next"}, "game")
	w.em.AddRepo(org, "next", 3000, "main")
	file := filepath.Join(w.dir, "enrollment-request.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"repository":"acme/next","defaultBranch":"main","fork":"false","allowWorkflowDispatch":true}`), 0o600))
	out, err := w.run("onboard", "--request", file)
	require.NoError(t, err, out)
	row, ok := w.branchRegistry(enroll.BranchFor("acme/next")).Lookup("acme/next")
	require.True(t, ok)
	assert.True(t, row.AllowWorkflowDispatch)
	for _, bad := range []string{`{"repository":"acme/next"}`, `{"repository":"acme/next","defaultBranch":"main","fork":"false","allowWorkflowDispatch":true,"x":1}`, `[]`} {
		require.NoError(t, os.WriteFile(file, []byte(bad), 0o600))
		_, err := w.run("onboard", "--request", file)
		assert.Equal(t, 2, enroll.ExitCode(err), bad)
	}
}
