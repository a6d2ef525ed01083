package actioncontract_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v4"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actioncontract"
)

type wfStep struct {
	ID   string            `yaml:"id"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	With map[string]string `yaml:"with"`
	Env  map[string]string `yaml:"env"`
}

type wfJob struct {
	RunsOn      any               `yaml:"runs-on"`
	Timeout     any               `yaml:"timeout-minutes"`
	Permissions yaml.Node         `yaml:"permissions"`
	Env         map[string]string `yaml:"env"`
	Steps       []wfStep          `yaml:"steps"`
}

type workflowDoc struct {
	Permissions yaml.Node        `yaml:"permissions"`
	Concurrency yaml.Node        `yaml:"concurrency"`
	Env         map[string]any   `yaml:"env"`
	Jobs        map[string]wfJob `yaml:"jobs"`
}

func readWorkflows(t *testing.T) map[string]workflowDoc {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, ".github", "workflows", "*.yml"))
	require.NoError(t, err)
	ex, err := filepath.Glob(filepath.Join(repoRoot, "docs", "examples", "*.yml"))
	require.NoError(t, err)
	out := map[string]workflowDoc{}
	for _, f := range append(files, ex...) {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var wf workflowDoc
		require.NoError(t, yaml.Unmarshal(b, &wf), f)
		rel, _ := filepath.Rel(repoRoot, f)
		out[filepath.ToSlash(rel)] = wf
	}
	return out
}

var pinnedUses = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[0-9a-f]{40}$`)

// TestWorkflowHygiene: every workflow of the repository, the examples
// included: least-privilege permissions (none at the top, declared per
// job), a timeout on every job, every uses: a local action or pinned to a
// 40-hex commit, every checkout without persisted credentials, and no
// expression inside run:.
func TestWorkflowHygiene(t *testing.T) {
	t.Parallel()
	for file, wf := range readWorkflows(t) {
		assert.Equal(t, yaml.MappingNode, wf.Permissions.Kind, "%s: top-level permissions: {}", file)
		assert.Empty(t, wf.Permissions.Content, "%s: top-level permissions must be {}", file)
		for name, job := range wf.Jobs {
			where := file + " job " + name
			assert.NotNil(t, job.Timeout, "%s: timeout-minutes", where)
			assert.NotZero(t, job.Permissions.Kind, "%s: permissions", where)
			for i, st := range job.Steps {
				if st.Uses != "" && !strings.HasPrefix(st.Uses, "./") {
					assert.Regexp(t, pinnedUses, st.Uses, "%s step %d: uses: must be pinned to a 40-hex commit", where, i)
				}
				if strings.HasPrefix(st.Uses, "actions/checkout@") {
					assert.Equal(t, "false", st.With["persist-credentials"], "%s step %d: checkout must not persist credentials", where, i)
				}
				assert.NotContains(t, st.Run, "${{", "%s step %d: no expression in run:", where, i)
			}
		}
	}
}

// TestReleaseWorkflow: the release workflow's contract (docs/packaging.md
// "Automated releases").
func TestReleaseWorkflow(t *testing.T) {
	t.Parallel()
	wf := readWorkflows(t)[".github/workflows/release.yml"]
	var conc struct {
		Group  string `yaml:"group"`
		Cancel *bool  `yaml:"cancel-in-progress"`
	}
	require.NoError(t, wf.Concurrency.Decode(&conc))
	assert.Equal(t, "release", conc.Group)
	require.NotNil(t, conc.Cancel)
	assert.False(t, *conc.Cancel, "a release is never cancelled")
	for k := range wf.Env {
		assert.NotContains(t, []string{"GH_TOKEN", "GITHUB_TOKEN"}, k, "no workflow-level token")
	}
	raw, err := os.ReadFile(filepath.Join(repoRoot, ".github", "workflows", "release.yml"))
	require.NoError(t, err)
	assert.Contains(t, string(raw), "schedule:")
	assert.Contains(t, string(raw), "workflow_dispatch:")
	for name, job := range wf.Jobs {
		for k := range job.Env {
			assert.NotContains(t, []string{"GH_TOKEN", "GITHUB_TOKEN"}, k, "job %s: tokens are step-level only", name)
		}
		tokenSteps := 0
		for _, st := range job.Steps {
			if _, ok := st.Env["GH_TOKEN"]; ok {
				tokenSteps++
				assert.Contains(t, st.Run, "publish.sh", "only the publishing step gets the token")
			}
		}
		assert.Equal(t, 1, tokenSteps, "job %s", name)
		var run string
		for _, st := range job.Steps {
			run += st.Run + "\n"
		}
		assert.Contains(t, run, "go run ./tools/releaseversion", "the version is decided by the Go program")
		assert.Contains(t, run, "make dist-verify", "reproducible binaries")
	}
}

// TestDependabotAutomergeWorkflow: the decision job reads and checks out the
// default branch only; the merging job has the write token and no
// checkout, and merges the exact head commit CI passed for.
func TestDependabotAutomergeWorkflow(t *testing.T) {
	t.Parallel()
	wf := readWorkflows(t)[".github/workflows/dependabot-automerge.yml"]
	raw, err := os.ReadFile(filepath.Join(repoRoot, ".github", "workflows", "dependabot-automerge.yml"))
	require.NoError(t, err)
	assert.Contains(t, string(raw), "workflow_run:")
	assert.NotContains(t, string(raw), "pull_request_target")
	decide, merge := wf.Jobs["decide"], wf.Jobs["merge"]
	var dp, mp map[string]string
	require.NoError(t, decide.Permissions.Decode(&dp))
	require.NoError(t, merge.Permissions.Decode(&mp))
	for k, v := range dp {
		assert.Equal(t, "read", v, "decide: %s must be read-only", k)
	}
	assert.Equal(t, "write", mp["contents"])
	for _, st := range decide.Steps {
		if strings.HasPrefix(st.Uses, "actions/checkout@") {
			assert.Empty(t, st.With["ref"], "decide checks out the default branch (workflow_run's), never the pull request")
			assert.Empty(t, st.With["repository"])
		}
	}
	for _, st := range merge.Steps {
		assert.Empty(t, st.Uses, "merge: no action, no checkout")
		if st.Run != "" {
			assert.Contains(t, st.Run, "--match-head-commit")
		}
	}
}

// selfTestExempt lists actions the self-test job cannot run on a hosted
// runner, each with the reason (for example one that needs a Unity editor
// installed).
var selfTestExempt = map[string]string{
	"check-unity-runner-availability": "needs a reader App installation and the organization's runner groups, which the self-test emulator does not seed; tested against the emulator in internal/actions/preflight",
	"ensure-unity-editor":             "needs a Unity editor installed on the runner (Windows only); tested against fake layouts in internal/actions/ensureeditor",
	"return-unity-license":            "needs a signed Unity editor on a Windows runner; tested against the fake editor in internal/unity/e2e",
	"classify-unity-cleanup-evidence": "needs the evidence a real return-unity-license writes; tested end to end in internal/unity/e2e",
}

// TestSelfTestUsesEveryAction: the self-test job runs every local action
// (but the documented exemptions) through `uses: ./.github/actions/<name>`
// on each OS.
func TestSelfTestUsesEveryAction(t *testing.T) {
	t.Parallel()
	job, ok := readWorkflows(t)[".github/workflows/ci.yml"].Jobs["selftest"]
	require.True(t, ok)
	used := map[string]bool{}
	for _, st := range job.Steps {
		if name, ok := strings.CutPrefix(st.Uses, "./.github/actions/"); ok {
			used[name] = true
		}
	}
	for dir := range actioncontract.Registry {
		if why, ok := selfTestExempt[dir]; ok {
			assert.NotEmpty(t, why, "exemption of %s needs its reason", dir)
			continue
		}
		assert.True(t, used[dir], "the self-test job in ci.yml must run %s (or exempt it with the reason in selfTestExempt)", dir)
	}
	raw, err := os.ReadFile(filepath.Join(repoRoot, ".github", "workflows", "ci.yml"))
	require.NoError(t, err)
	for _, os := range []string{"ubuntu-latest", "windows-latest", "macos-latest"} {
		assert.Contains(t, string(raw), os)
	}
}

// TestVerifyDryRunCatchesPinDrift copies the files the pins check reads
// into a scratch tree and proves that each kind of drift fails it.
func TestVerifyDryRunCatchesPinDrift(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	files := []string{"tools/versions.env", "go.mod", "Makefile", ".devcontainer/devcontainer.json",
		".devcontainer/scripts/verify.sh", ".devcontainer/scripts/install-tools.sh"}
	wfs, err := filepath.Glob(filepath.Join(repoRoot, ".github", "workflows", "*.yml"))
	require.NoError(t, err)
	for _, w := range wfs {
		rel, _ := filepath.Rel(repoRoot, w)
		files = append(files, filepath.ToSlash(rel))
	}
	tree := func(t *testing.T, file, old, new string) string {
		dir := t.TempDir()
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(repoRoot, f))
			require.NoError(t, err)
			if f == file {
				require.Contains(t, string(b), old)
				b = []byte(strings.Replace(string(b), old, new, 1))
			}
			require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
		}
		return dir
	}
	dry := func(dir string) (string, error) {
		out, err := exec.Command(bash, filepath.Join(dir, ".devcontainer", "scripts", "verify.sh"), "--dry-run").CombinedOutput()
		return string(out), err
	}
	out, err := dry(tree(t, "", "", ""))
	require.NoError(t, err, out)
	assert.Contains(t, out, "pins agree with CI")
	for _, tc := range []struct{ file, old, new, want string }{
		{"tools/versions.env", "NODE_VERSION=24", "NODE_VERSION=22", "node feature"},
		{"tools/versions.env", "ACTIONLINT_VERSION=v1.7.12", "ACTIONLINT_VERSION=v1.7.7", "actionlint must be"},
		{"tools/versions.env", "GO_VERSION=1.26", "GO_VERSION=1.25", "go line"},
		{".devcontainer/devcontainer.json", "@sha256:", "@sha256x", "pinned by @sha256 digest"},
		{".github/workflows/ci.yml", "go-version-file: go.mod", "go-version: \"1.26\"", "go-version-file"},
		{".github/workflows/ci.yml", "run: make vulncheck", "run: go run golang.org/x/vuln/cmd/govulncheck@v1.0.0 ./...", "never with a version"},
		{"Makefile", "govulncheck@$(GOVULNCHECK_VERSION)", "govulncheck@v1.0.0", "govulncheck must run"},
	} {
		out, err := dry(tree(t, tc.file, tc.old, tc.new))
		assert.Error(t, err, "%s: %s -> %s must fail the pins check", tc.file, tc.old, tc.new)
		assert.Contains(t, out, tc.want, tc.file)
	}
}
