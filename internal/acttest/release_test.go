package acttest_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/acttest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
)

const (
	thisRepository = "Ambiguous-Interactive/ambiguous-organization-build-lock"
	pinPlaceholder = "0000000000000000000000000000000000000000"
	repoRoot       = "../.."
)

// actBinary returns the act binary, or skips: without BUILD_LOCK_ACT a
// developer's go test skips these runs, but under CI=true (.ci/run, GitHub
// CI) a missing act fails, so CI can never skip them silently.
func actBinary(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("act's host mode runs bash steps; the Windows entry points run in CI's Windows self-test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := acttest.Find(ctx, os.LookupEnv)
	if errors.Is(err, acttest.ErrNoAct) && os.Getenv("CI") != "true" {
		t.Skip(err.Error())
	}
	require.NoError(t, err)
	return p
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null",
		"GIT_AUTHOR_NAME=acttest", "GIT_AUTHOR_EMAIL=acttest@example.invalid", "GIT_COMMITTER_NAME=acttest", "GIT_COMMITTER_EMAIL=acttest@example.invalid")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %s:\n%s", strings.Join(args, " "), out)
	return strings.TrimSpace(string(out))
}

// startEmulator serves a fresh in-process GitHub emulator on loopback.
func startEmulator(t *testing.T) (*emulator.Emulator, string) {
	t.Helper()
	e := emulator.New(emulator.Options{Seed: 1})
	srv := httptest.NewServer(e.Handler())
	t.Cleanup(srv.Close)
	return e, srv.URL
}

// newFixture makes a git repository from this work tree (Snapshot), with
// the origin remote act reads the repository name from, and one
// conventional commit.
func newFixture(t *testing.T, keep func(rel string) bool, subject string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	require.NoError(t, acttest.Snapshot(context.Background(), repoRoot, dir, keep))
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "remote", "add", "origin", "https://github.com/"+thisRepository+".git")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", subject)
	return dir
}

// TestReleaseWorkflowUnderAct runs .github/workflows/release.yml, as
// committed, under act on a fixture of this repository: the version is
// decided from the fixture's conventional commit, make dist-verify builds
// and byte-compares the binaries of the six targets, the manifest is
// written and committed in a release commit that is tagged, the tag and
// the major alias are pushed (to a local bare repository standing in for
// GitHub's git host), and the release is created with the binaries
// (gh, stubbed: the emulator does not answer the Releases API; the stub
// checks --verify-tag against the pushed tags and records the assets).
// actions/checkout (act copies the workspace) and actions/setup-go (the
// host's Go, checked against go.mod) are stubs; GITHUB_API_URL points at
// the emulator, which the workflow must not need.
//
// To keep make test fast, the fixture ships one command
// (require-unity-validation): the release list is every cmd/ of the tree
// (internal/releaseset), so the fixture's releases are complete for its
// one command on six targets, and the same workflow, scripts and tools run
// as for the real tree.
func TestReleaseWorkflowUnderAct(t *testing.T) {
	t.Parallel()
	act := actBinary(t)
	const keepCmd = "require-unity-validation"
	fixture := newFixture(t, func(rel string) bool {
		if c, ok := strings.CutPrefix(rel, "cmd/"); ok {
			return strings.HasPrefix(c, keepCmd+"/")
		}
		return !strings.HasPrefix(rel, "tools/workflow-parser/node_modules/")
	}, "feat: the fixture's first release")
	head := git(t, fixture, "rev-parse", "HEAD")

	work := t.TempDir()
	bare := filepath.Join(work, "remote.git")
	git(t, work, "init", "-q", "--bare", bare)
	git(t, fixture, "push", "-q", bare, "main")

	wf, err := os.ReadFile(filepath.Join(fixture, ".github", "workflows", "release.yml"))
	require.NoError(t, err)
	uses, err := acttest.RemoteUses(wf)
	require.NoError(t, err)
	actions, err := acttest.Stubs(filepath.Join(work, "stubs"), thisRepository, uses)
	require.NoError(t, err)

	em, apiURL := startEmulator(t)
	ghLog := filepath.Join(work, "gh")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	res, err := acttest.Run{
		Act:          act,
		Dir:          fixture,
		Workflow:     ".github/workflows/release.yml",
		Event:        "workflow_dispatch",
		EventPayload: map[string]any{"repository": map[string]any{"full_name": thisRepository, "default_branch": "main"}},
		Actions:      actions,
		Env:          map[string]string{"GITHUB_API_URL": apiURL, "ACTTEST_GH_LOG": ghLog},
		BaseEnv:      os.Environ(),
		Commands:     map[string]string{"gh": ghStub},
		GitRemotes:   map[string]string{"https://github.com/" + thisRepository + ".git": bare},
		WorkDir:      filepath.Join(work, "act"),
	}.Exec(ctx)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "act failed:\n%s", res.Log)
	assert.Equal(t, map[string]string{"release": "succeeded"}, res.Jobs)
	assert.Contains(t, res.Log, "dist-verify: builds are byte-identical")

	// The tag and the alias are on the "GitHub" remote, on a release
	// commit whose only change is the manifest.
	tagCommit := git(t, bare, "rev-parse", "v1.0.0^{commit}")
	assert.Equal(t, "tag", git(t, bare, "cat-file", "-t", "v1.0.0"), "the release tag is annotated")
	assert.Equal(t, tagCommit, git(t, bare, "rev-parse", "v1^{commit}"), "the major alias points to the release commit")
	assert.Equal(t, head, git(t, bare, "rev-parse", tagCommit+"^"), "the release commit's parent is the released main")
	assert.Equal(t, ".github/dist/manifest.json", git(t, bare, "diff", "--name-only", head, tagCommit))
	assert.Equal(t, head, git(t, bare, "rev-parse", "main"), "main is not moved by a release")

	// The manifest is complete and canonical for the fixture's release
	// list, and pins exactly the bytes published as release assets.
	manifest := filepath.Join(work, "manifest.json")
	require.NoError(t, os.WriteFile(manifest, []byte(git(t, bare, "show", tagCommit+":.github/dist/manifest.json")+"\n"), 0o644))
	cmd := exec.Command("go", "run", "./tools/manifest", "-root", fixture, "-check", manifest)
	cmd.Dir = repoRoot
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "tools/manifest -check:\n%s", out)
	m := readFile(t, manifest)
	assets := parseAssetLog(t, readFile(t, ghLog+".assets"))
	entry := regexp.MustCompile(`"(` + keepCmd + `_[a-z]+_[a-z0-9]+)": \{"sha256": "([0-9a-f]{64})", "url": "([^"]+)"\}`)
	found := entry.FindAllStringSubmatch(m, -1)
	require.Len(t, found, 6, "six targets:\n%s", m)
	for _, e := range found {
		file := e[1]
		if strings.Contains(file, "_windows_") {
			file += ".exe"
		}
		assert.Equal(t, "https://github.com/"+thisRepository+"/releases/download/v1.0.0/"+file, e[3])
		assert.Equal(t, e[2], assets[file], "the published %s is the one the manifest pins", file)
	}
	assert.Contains(t, assets, "SHA256SUMS")
	args := readFile(t, ghLog+".args")
	assert.Regexp(t, `(?m)^release create v1\.0\.0 --repo `+regexp.QuoteMeta(thisRepository)+` --verify-tag --title v1\.0\.0 --notes-file \S+release-notes\.md `, args)
	assert.Zero(t, em.Metrics().Requests, "the release workflow makes no REST call of its own (gh's is stubbed)")
}

// ghStub stands in for gh: it records its arguments and, for release
// create, checks --verify-tag against the remote and hashes each asset.
const ghStub = `set -euo pipefail
log=${ACTTEST_GH_LOG:?}
printf '%s\n' "$*" >>"$log.args"
if [ "${1:-} ${2:-}" = "release create" ]; then
	git ls-remote --exit-code --tags "https://github.com/$GITHUB_REPOSITORY.git" "refs/tags/$3" >/dev/null ||
		{ echo "gh (acttest stub): tag $3 is not on the remote; --verify-tag refuses" >&2; exit 1; }
	shift 3
	while [ "$#" -gt 0 ]; do
		case $1 in
		--repo | --title | --notes-file) shift 2; continue ;;
		--*) shift; continue ;;
		esac
		sha256sum "$1" | sed 's#  .*/#  #' >>"$log.assets"
		shift
	done
fi
`

func parseAssetLog(t *testing.T, s string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		require.True(t, ok, "asset log line %q", line)
		out[name] = sum
	}
	return out
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

// TestConsumerActionUnderAct: a consumer workflow that pins one of this
// repository's actions to the README's placeholder runs under act with the
// placeholder mapped to a clean snapshot of this work tree: act reads the
// composite action.yml, its bash step runs launch.sh, which builds the
// binary from source (Go on the runner, as before a first release) and
// writes the action's output. This is the path the README's consumer
// workflow takes under the harness.
func TestConsumerActionUnderAct(t *testing.T) {
	t.Parallel()
	act := actBinary(t)
	work := t.TempDir()
	checkout := filepath.Join(work, "build-lock")
	require.NoError(t, acttest.Snapshot(context.Background(), repoRoot, checkout, func(rel string) bool {
		return !strings.HasPrefix(rel, "tools/workflow-parser/node_modules/")
	}))
	consumer := filepath.Join(work, "consumer")
	require.NoError(t, os.MkdirAll(filepath.Join(consumer, ".github", "workflows"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(consumer, ".github", "workflows", "gate.yml"), []byte(`name: Gate
on: workflow_dispatch
permissions: {}
jobs:
  gate:
    runs-on: ubuntu-latest
    steps:
      - id: gate
        uses: `+thisRepository+`/.github/actions/require-unity-validation@`+pinPlaceholder+`
        with:
          static-validation-result: success
          classifier-result: success
          unity-required: "false"
          trusted-revision: "true"
          preflight-result: success
          unity-result: skipped
          fallback-result: skipped
          fallback-cleanup-result: ""
      - env:
          SAFE: ${{ steps.gate.outputs.validation-safe }}
        run: echo "validation-safe=$SAFE" >> "$OUT_FILE"
`), 0o644))
	git(t, consumer, "init", "-q", "-b", "main")
	git(t, consumer, "remote", "add", "origin", "https://github.com/example-org/game.git")
	git(t, consumer, "add", "-A")
	git(t, consumer, "commit", "-q", "-m", "ci: gate")

	_, apiURL := startEmulator(t)
	out := filepath.Join(work, "out")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res, err := acttest.Run{
		Act:      act,
		Dir:      consumer,
		Workflow: ".github/workflows/gate.yml",
		Event:    "workflow_dispatch",
		Actions:  map[string]string{thisRepository + "@" + pinPlaceholder: checkout},
		Env:      map[string]string{"GITHUB_API_URL": apiURL, "OUT_FILE": out},
		BaseEnv:  os.Environ(),
		WorkDir:  filepath.Join(work, "act"),
	}.Exec(ctx)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "act failed:\n%s", res.Log)
	assert.Equal(t, map[string]string{"gate": "succeeded"}, res.Jobs, res.Log)
	assert.Contains(t, res.Log, "built from source", "before a release the launcher builds from the pinned sources")
	outs, err := actionio.ReadFileCommands(out)
	require.NoError(t, err)
	assert.Equal(t, "true", outs["validation-safe"], "the audited non-Unity skip is safe, and the output reached the next step")
}
