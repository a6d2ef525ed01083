package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/classifychanges"
)

// TestThroughTheLauncher runs exactly what classify-unity-changes/action.yml
// runs (bash tools/launcher/launch.sh classify changes, built from this
// checkout's sources) as a process, in a real git repository: the mode
// argument reaches the binary, a docs-only pull request is skipped, and a
// missing mode exits 1 listing the modes.
func TestThroughTheLauncher(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/classify")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the classifier runs on Linux and macOS runners")
	}
	git, err := classifychanges.FindGit()
	if err != nil {
		t.Skip(err)
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	repo := t.TempDir()
	gitRun := func(args ...string) string {
		cmd := exec.Command(git, append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir, cmd.Env = repo, classifychanges.GitEnv()
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return strings.TrimSpace(string(out))
	}
	gitRun("init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(repo, "README.md"), []byte("a\n"), 0o644))
	gitRun("add", "-A")
	gitRun("commit", "-q", "-m", "base")
	base := gitRun("rev-parse", "HEAD")
	require.NoError(t, os.WriteFile(filepath.Join(repo, "README.md"), []byte("b\n"), 0o644))
	gitRun("commit", "-q", "-am", "docs")
	head := gitRun("rev-parse", "HEAD")

	cache := t.TempDir()
	launch := func(args ...string) (int, string, map[string]string) {
		out := filepath.Join(t.TempDir(), "output")
		cmd := exec.Command("bash", append([]string{filepath.Join(root, "tools", "launcher", "launch.sh")}, args...)...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "BUILD_LOCK_FROM_SOURCE=1", "RUNNER_TOOL_CACHE="+cache, "GITHUB_OUTPUT="+out,
			"GITHUB_WORKSPACE="+repo, "INPUT_EVENT_NAME=pull_request", "INPUT_BASE_SHA="+base, "INPUT_HEAD_SHA="+head)
		b, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		outs, rerr := actionio.ReadFileCommands(out)
		require.NoError(t, rerr)
		return code, string(b), outs
	}
	code, stdout, outs := launch("classify", "changes")
	require.Equal(t, 0, code, stdout)
	assert.Equal(t, "false", outs["unity-required"])
	assert.Contains(t, stdout, "::notice::Unity not required")

	code, stdout, _ = launch("classify")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "::error::classify: bad mode: a mode is required as the first argument; the modes are: ")
	assert.Contains(t, stdout, "changes")
	code, stdout, _ = launch("classify", "cleanup")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, `unknown mode "cleanup"`)
}
