package enroll_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v4"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy/enroll"
)

type wfDoc struct {
	Name        string         `yaml:"name"`
	On          map[string]any `yaml:"on"`
	Permissions map[string]any `yaml:"permissions"`
	Concurrency *struct {
		Group            string `yaml:"group"`
		CancelInProgress bool   `yaml:"cancel-in-progress"`
	} `yaml:"concurrency"`
	Jobs map[string]struct {
		If          string            `yaml:"if"`
		Needs       any               `yaml:"needs"`
		Permissions map[string]string `yaml:"permissions"`
		Steps       []struct {
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			Env  map[string]string `yaml:"env"`
			With map[string]any    `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

func loadWF(t *testing.T, name string) wfDoc {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", ".github", "workflows", name))
	require.NoError(t, err)
	var w wfDoc
	require.NoError(t, yaml.Unmarshal(data, &w))
	assert.Empty(t, w.Permissions, "%s: empty top-level permissions", name)
	return w
}

// TestEnrollmentWorkflows pins the least-privilege shape of the four
// enrollment workflows: the reader App's secrets only where the audit and
// onboarding read consumer repositories, issues: write only in the job that
// syncs the issue, the secret-bearing workflows started only through
// workflow_run of a secretless launcher (so never dispatched at a feature
// branch), and the commands they run.
func TestEnrollmentWorkflows(t *testing.T) {
	t.Parallel()
	audit := loadWF(t, "enrollment-audit.yml")
	assert.Equal(t, "Organization Unity enrollment audit", audit.Name)
	assert.Contains(t, audit.On, "schedule")
	assert.Contains(t, audit.On, "push")
	assert.NotContains(t, audit.On, "workflow_dispatch", "the secret-bearing audit is requested through the launcher")
	launcher := loadWF(t, "request-enrollment-audit.yml")
	assert.Equal(t, []any{launcher.Name}, audit.On["workflow_run"].(map[string]any)["workflows"])
	require.NotNil(t, audit.Concurrency)
	assert.False(t, audit.Concurrency.CancelInProgress)
	assert.Equal(t, map[string]string{"contents": "read"}, audit.Jobs["audit"].Permissions)
	assert.Equal(t, map[string]string{"contents": "read", "issues": "write"}, audit.Jobs["sync"].Permissions)
	assert.Equal(t, "audit", audit.Jobs["sync"].Needs)
	var auditRun, syncRun string
	for _, s := range audit.Jobs["audit"].Steps {
		if strings.Contains(s.Run, " audit --out ") {
			auditRun = s.Run
			assert.Equal(t, "${{ secrets.BUILD_LOCK_READER_APP_PRIVATE_KEY }}", s.Env["BUILD_LOCK_READER_APP_PRIVATE_KEY"])
		}
		if strings.HasPrefix(s.Uses, "actions/upload-artifact@") {
			assert.EqualValues(t, 30, s.With["retention-days"])
		}
	}
	for _, s := range audit.Jobs["sync"].Steps {
		for k := range s.Env {
			assert.NotContains(t, k, "READER_APP", "the sync job never sees the reader App")
		}
		if strings.Contains(s.Run, "sync-issue") {
			syncRun = s.Run
		}
	}
	assert.Contains(t, auditRun, `"$RUNNER_TEMP/audit-enrollment" audit --out enrollment-audit.json`)
	assert.Contains(t, auditRun, `if [ "$rc" -gt 1 ]; then exit "$rc"; fi`, "findings and incomplete audits go on to the sync; usage and registry errors stop")
	assert.Equal(t, "go run ./cmd/audit-enrollment sync-issue --audit enrollment-audit.json", syncRun)
	for _, j := range launcher.Jobs {
		for _, s := range j.Steps {
			for _, v := range s.Env {
				assert.NotContains(t, v, "secrets.", "the launcher is secretless")
			}
		}
		assert.Empty(t, j.Permissions)
	}

	request := loadWF(t, "request-enrollment.yml")
	assert.Contains(t, request.On, "workflow_dispatch")
	onboard := loadWF(t, "onboard-repository.yml")
	assert.Equal(t, []any{request.Name}, onboard.On["workflow_run"].(map[string]any)["workflows"])
	assert.NotContains(t, onboard.On, "workflow_dispatch")
	job := onboard.Jobs["onboard"]
	assert.Contains(t, job.If, "github.event.workflow_run.conclusion == 'success'")
	assert.Contains(t, job.If, "github.event.workflow_run.head_branch == github.event.repository.default_branch")
	assert.Equal(t, map[string]string{"actions": "read", "contents": "write", "pull-requests": "write"}, job.Permissions)
	var tests, program bool
	for _, s := range job.Steps {
		tests = tests || s.Run == "go test ./internal/policy/..."
		program = program || s.Run == "go run ./cmd/audit-enrollment onboard --request enrollment-request.json"
	}
	assert.True(t, tests && program, "runs the tests, then the onboarding program")
	for _, j := range request.Jobs {
		assert.Empty(t, j.Permissions, "the request is secretless")
	}
}

// TestRequestScriptWritesADecodableRequest runs the request workflow's
// validation script with bash and decodes what it writes with the
// onboarding program's decoder.
func TestRequestScriptWritesADecodableRequest(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	request := loadWF(t, "request-enrollment.yml")
	script := request.Jobs["request"].Steps[0].Run
	require.Contains(t, script, "enrollment-request.json")
	run := func(env map[string]string) (string, error) {
		dir := t.TempDir()
		cmd := exec.Command(bash, "-c", script)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=/usr/bin:/bin", "GITHUB_REF=refs/heads/main", "DEFAULT_REF=refs/heads/main",
			"REPOSITORY=acme/new-game", "BRANCH=", "FORK=false", "DISPATCH=false"}
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			return string(out), err
		}
		b, err := os.ReadFile(filepath.Join(dir, "enrollment-request.json"))
		return string(b), err
	}
	out, err := run(map[string]string{"BRANCH": "release/v2", "DISPATCH": "true"})
	require.NoError(t, err, out)
	req, err := enroll.DecodeRequest([]byte(out))
	require.NoError(t, err)
	assert.Equal(t, enroll.Request{Repository: "acme/new-game", DefaultBranch: "release/v2", Fork: "false", AllowWorkflowDispatch: true}, req)
	for name, env := range map[string]map[string]string{
		"feature branch": {"GITHUB_REF": "refs/heads/feature"},
		"bad repository": {"REPOSITORY": `acme/x","fork":"true`},
		"bad branch":     {"BRANCH": `main"`},
		"bad fork":       {"FORK": "maybe"},
		"bad dispatch":   {"DISPATCH": "1"},
	} {
		out, err := run(env)
		assert.Error(t, err, "%s: %s", name, out)
		assert.Contains(t, out, "::error::", name)
	}
}
