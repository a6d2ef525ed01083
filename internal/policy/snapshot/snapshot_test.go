package snapshot_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy/snapshot"
)

const workflow = `on: push
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: ./.github/actions/setup
      - run: echo
  shared:
    uses: ./.github/workflows/shared.yml
  remote:
    uses: acme/shared/.github/workflows/r.yml@0123456789abcdef0123456789abcdef01234567
`

const setup = `name: setup
description: x
runs:
  using: composite
  steps:
    - uses: ./.github/actions/inner
`

const inner = `name: inner
description: x
runs:
  using: composite
  steps:
    - run: echo
      shell: bash
`

var repoFiles = map[string]string{
	".github/workflows/ci.yml":          workflow,
	".github/workflows/README.md":       "not a workflow",
	".github/workflows/shared.yml":      "on: workflow_call\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo\n",
	".github/actions/setup/action.yml":  setup,
	".github/actions/inner/action.yaml": inner,
	".github/actions/unused/action.yml": inner,
	"src/big.bin":                       strings.Repeat("x", 1000),
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(c), 0o644))
	}
	return root
}

func TestLoadLocalFollowsReferences(t *testing.T) {
	t.Parallel()
	root := writeTree(t, repoFiles)
	remote := func(_ context.Context, owner, repo, commit, p string) ([]byte, error) {
		assert.Equal(t, "acme/shared", owner+"/"+repo)
		assert.Equal(t, "0123456789abcdef0123456789abcdef01234567", commit)
		assert.Equal(t, ".github/workflows/r.yml", p)
		return []byte("on: workflow_call\njobs:\n  r:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo\n"), nil
	}
	snap, err := snapshot.Load(context.Background(), "acme/game", "", snapshot.Dir{Root: root}, remote)
	require.NoError(t, err)
	var paths []string
	for p := range snap.Files {
		paths = append(paths, p)
	}
	assert.ElementsMatch(t, []string{".github/workflows/ci.yml", ".github/workflows/shared.yml", ".github/actions/setup/action.yml", ".github/actions/inner/action.yaml"}, paths,
		"workflows plus what they use, transitively; nothing else")
	assert.Contains(t, snap.Remote, "acme/shared/.github/workflows/r.yml@0123456789abcdef0123456789abcdef01234567")
	assert.Empty(t, snap.Incomplete)
	assert.Empty(t, policy.References(snap))
}

func TestLoadLocalGaps(t *testing.T) {
	t.Parallel()
	root := writeTree(t, map[string]string{".github/workflows/ok.yml": "on: push\njobs: {}\n",
		".github/workflows/big.yml": strings.Repeat("#", snapshot.MaxFileBytes+1)})
	want := []policy.Gap{{Path: ".github/workflows/big.yml", Reason: snapshot.ReasonTooLarge}}
	// Creating a symlink needs a privilege on Windows; where it cannot be
	// made there is nothing to check.
	if os.Symlink(filepath.Join(root, ".github", "workflows", "ok.yml"), filepath.Join(root, ".github", "workflows", "link.yml")) == nil {
		want = append(want, policy.Gap{Path: ".github/workflows/link.yml", Reason: snapshot.ReasonNotRegular})
	}
	snap, err := snapshot.Load(context.Background(), "acme/game", "", snapshot.Dir{Root: root}, nil)
	require.NoError(t, err)
	assert.Equal(t, want, snap.Incomplete)
	res := policy.Analyze(snap, policy.Policy{LockRepository: "acme/lock"})
	assert.Contains(t, res.Codes(), policy.RepositoryRetrievalIncomplete)

	empty, err := snapshot.Load(context.Background(), "acme/game", "", snapshot.Dir{Root: t.TempDir()}, nil)
	require.NoError(t, err)
	assert.Empty(t, empty.Files)
	assert.Empty(t, empty.Incomplete, "a repository without workflows has nothing to audit")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = snapshot.Load(ctx, "acme/game", "", snapshot.Dir{Root: root}, nil)
	assert.ErrorIs(t, err, context.Canceled)
}

type ghFixture struct {
	em  *emulator.Emulator
	gh  *ghclient.Client
	sha string
}

func newGH(t *testing.T, opts emulator.Options, files map[string]string) ghFixture {
	t.Helper()
	opts.Clock = clock.NewFake(clock.Real{}.Now())
	em := emulator.New(opts)
	em.AddOwner("acme", 1, true)
	em.AddRepo("acme", "game", 2, "main")
	for p, c := range files {
		_, err := em.PutFile("acme", "game", "main", p, []byte(c))
		require.NoError(t, err)
	}
	em.AddToken("reader-token", emulator.TokenScope{Label: "reader", Repos: []string{"acme/game"}, Permissions: map[string]string{"contents": "read"}})
	gh, err := ghclient.New(context.Background(), ghclient.Config{APIURL: "https://api.emulator.test", Token: "reader-token", Transport: em.Transport(), Clock: opts.Clock})
	require.NoError(t, err)
	sha, _ := em.BranchHead("acme", "game", "main")
	return ghFixture{em: em, gh: gh, sha: sha}
}

func TestLoadGitHubAtExactCommit(t *testing.T) {
	t.Parallel()
	f := newGH(t, emulator.Options{}, repoFiles)
	info, err := snapshot.ResolveHead(context.Background(), f.gh, "acme", "game", "")
	require.NoError(t, err)
	assert.Equal(t, snapshot.Repo{FullName: "acme/game", DefaultBranch: "main", Head: f.sha}, info)
	_, err = f.em.PutFile("acme", "game", "main", ".github/workflows/later.yml", []byte("on: push\n"))
	require.NoError(t, err)
	src, err := snapshot.NewGitHub(context.Background(), f.gh, "acme", "game", f.sha)
	require.NoError(t, err)
	snap, err := snapshot.Load(context.Background(), "acme/game", f.sha, src, nil)
	require.NoError(t, err)
	assert.NotContains(t, snap.Files, ".github/workflows/later.yml", "the snapshot is the exact commit, not the moving branch")
	assert.Len(t, snap.Files, 4)
	assert.Equal(t, workflow, string(snap.Files[".github/workflows/ci.yml"]))
	assert.Empty(t, snap.Incomplete)
	assert.Zero(t, f.em.Metrics().Writes)
}

func TestLoadGitHubTruncatedTreeIsAGap(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := 0; i < 5; i++ {
		files[".github/workflows/w"+string(rune('a'+i))+".yml"] = "on: push\n"
	}
	f := newGH(t, emulator.Options{TreeEntryLimit: 3}, files)
	src, err := snapshot.NewGitHub(context.Background(), f.gh, "acme", "game", f.sha)
	require.NoError(t, err)
	snap, err := snapshot.Load(context.Background(), "acme/game", f.sha, src, nil)
	require.NoError(t, err)
	assert.Equal(t, []policy.Gap{{Path: ".github/workflows", Reason: snapshot.ReasonTruncated}}, snap.Incomplete)
	assert.False(t, policy.Analyze(snap, policy.Policy{}).Clean())
}

func TestLoadGitHubMissingRepositoryAndCommit(t *testing.T) {
	t.Parallel()
	f := newGH(t, emulator.Options{}, repoFiles)
	_, err := snapshot.ResolveHead(context.Background(), f.gh, "acme", "nope", "")
	assert.ErrorIs(t, err, snapshot.ErrNotFound)
	_, err = snapshot.ResolveHead(context.Background(), f.gh, "acme", "game", "no-such-branch")
	assert.ErrorIs(t, err, snapshot.ErrNotFound)
	_, err = snapshot.NewGitHub(context.Background(), f.gh, "acme", "game", strings.Repeat("0", 40))
	assert.ErrorIs(t, err, snapshot.ErrNotFound)
	_, err = snapshot.NewGitHub(context.Background(), f.gh, "acme", "game", "main")
	assert.Error(t, err, "only an exact commit")
}

func TestBlobID(t *testing.T) {
	t.Parallel()
	assert.Equal(t, emulator.BlobSHA([]byte("hello\n")), snapshot.BlobID([]byte("hello\n")))
	assert.Equal(t, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391", snapshot.BlobID(nil), "git's empty blob")
}

// TestLoadLocalRefusesASymlinkedTreeOutsideTheCheckout: a .github that
// links outside the checkout is not read.
func TestLoadLocalRefusesASymlinkedTreeOutsideTheCheckout(t *testing.T) {
	t.Parallel()
	outside := writeTree(t, map[string]string{"workflows/x.yml": "on: push\n"})
	root := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, ".github")); err != nil {
		t.Skip("cannot create symlinks here:", err)
	}
	snap, err := snapshot.Load(context.Background(), "acme/game", "", snapshot.Dir{Root: root}, nil)
	require.NoError(t, err)
	assert.Empty(t, snap.Files)
	assert.Equal(t, []policy.Gap{{Path: ".github/workflows", Reason: snapshot.ReasonNotRegular}}, snap.Incomplete)
}
