package acttest_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/acttest"
)

func TestParseUses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want acttest.Uses
		ok   bool
	}{
		{"actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683", acttest.Uses{Owner: "actions", Repo: "checkout", Ref: "11bd71901bbe5b1630ceea73d27597364c9af683"}, true},
		{"O/R/.github/actions/acquire-build-lock@" + strings.Repeat("0", 40), acttest.Uses{Owner: "O", Repo: "R", Path: ".github/actions/acquire-build-lock", Ref: strings.Repeat("0", 40)}, true},
		{"o/r/.github/workflows/x.yml@v1", acttest.Uses{Owner: "o", Repo: "r", Path: ".github/workflows/x.yml", Ref: "v1"}, true},
		{"./.github/actions/x", acttest.Uses{}, false},
		{"docker://alpine:3", acttest.Uses{}, false},
		{"no-ref", acttest.Uses{}, false},
		{"o/r@", acttest.Uses{}, false},
		{"o@v1", acttest.Uses{}, false},
		{"o/../r@v1", acttest.Uses{}, false},
		{"o/r@v1 x", acttest.Uses{}, false},
	} {
		got, ok := acttest.ParseUses(tc.in)
		assert.Equal(t, tc.ok, ok, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
		if ok {
			assert.Equal(t, tc.in, got.String(), "String round-trips")
			assert.Equal(t, got.Owner+"/"+got.Repo+"@"+got.Ref, got.Key())
		}
	}
}

// FuzzParseUses: any string either is refused or round-trips, and a
// parsed key is always OWNER/REPO@REF without a path.
func FuzzParseUses(f *testing.F) {
	for _, s := range []string{"actions/checkout@v4", "o/r/p/q@ref", "./x", "docker://a@sha256:x", "@", "a/b@c@d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, ok := acttest.ParseUses(s)
		if !ok {
			return
		}
		if u.String() != s {
			t.Fatalf("%q parsed to %+v, which prints %q", s, u, u.String())
		}
		if strings.Count(u.Key(), "@") != 1 || strings.Count(u.Key(), "/") != 1+strings.Count(u.Ref, "/") {
			t.Fatalf("key %q of %q", u.Key(), s)
		}
	})
}

const offlineWorkflow = `name: W
on: workflow_dispatch
jobs:
  a:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683
      - uses: ./.github/actions/local
      - uses: O/R/.github/actions/acquire-build-lock@0000000000000000000000000000000000000000
      - run: echo hi
  b:
    uses: O/R/.github/workflows/reusable.yml@v1
  c:
    uses: ./.github/workflows/local.yml
  d:
    runs-on: ubuntu-latest
    steps:
      - uses: docker://alpine:3
`

func TestCheckOffline(t *testing.T) {
	t.Parallel()
	err := acttest.CheckOffline([]byte(offlineWorkflow), nil)
	var oe *acttest.OfflineError
	require.ErrorAs(t, err, &oe)
	text := strings.Join(oe.Problems, "\n")
	assert.Len(t, oe.Problems, 4, text)
	assert.Contains(t, text, `line 7 (job a): actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 is not mapped`)
	assert.Contains(t, text, `Actions["O/R@0000000000000000000000000000000000000000"]`)
	assert.Contains(t, text, "line 12 (job b): O/R/.github/workflows/reusable.yml@v1 is not mapped")
	assert.Contains(t, text, "line 18 (job d): docker://alpine:3: docker:// actions need a Docker engine")
	assert.NotContains(t, text, "./.github", "local actions and workflows are read from the checkout")

	mapped := map[string]string{
		"actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683": "/x",
		"O/R@0000000000000000000000000000000000000000":              "/y",
		"O/R@v1": "/z",
	}
	err = acttest.CheckOffline([]byte(offlineWorkflow), mapped)
	require.ErrorAs(t, err, &oe)
	assert.Len(t, oe.Problems, 1, "only the docker action remains")
	assert.NoError(t, acttest.CheckOffline([]byte(strings.Split(offlineWorkflow, "  d:\n")[0]), mapped))

	_, err = acttest.Run{Act: "act", Dir: t.TempDir(), Workflow: "w.yml", Event: "push", WorkDir: t.TempDir()}.Args()
	assert.Error(t, err, "a missing workflow file is an error, not a run")
}

// TestCheckOfflineRefusesEveryUnmappedRemote (property): for any set of
// remote actions and any subset mapped, exactly the unmapped ones are
// refused.
func TestCheckOfflineRefusesEveryUnmappedRemote(t *testing.T) {
	t.Parallel()
	name := rapid.StringMatching(`[a-z][a-z0-9-]{0,8}`)
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 6).Draw(t, "n")
		var steps strings.Builder
		mapped := map[string]string{}
		want := 0
		for i := 0; i < n; i++ {
			u := name.Draw(t, "owner") + "/" + name.Draw(t, "repo") + "@" + name.Draw(t, "ref")
			steps.WriteString("      - uses: " + u + "\n")
			if rapid.Bool().Draw(t, "mapped") {
				mapped[u] = "/dir"
			}
		}
		wf := "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n" + steps.String()
		for _, line := range strings.Split(steps.String(), "\n") {
			if u, ok := strings.CutPrefix(strings.TrimSpace(line), "- uses: "); ok {
				if _, ok := mapped[u]; !ok {
					want++
				}
			}
		}
		err := acttest.CheckOffline([]byte(wf), mapped)
		if want == 0 {
			if err != nil {
				t.Fatalf("all mapped, got %v", err)
			}
			return
		}
		var oe *acttest.OfflineError
		if !assert.ErrorAs(t, err, &oe) || len(oe.Problems) != want {
			t.Fatalf("want %d problems, got %v", want, err)
		}
	})
}

func TestStubs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	uses := []acttest.Uses{
		{Owner: "actions", Repo: "checkout", Ref: "abc"},
		{Owner: "actions", Repo: "setup-go", Ref: "def"},
		{Owner: "Own", Repo: "Repo", Path: ".github/actions/x", Ref: "000"},
	}
	m, err := acttest.Stubs(dir, "own/repo", uses)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"actions/checkout@abc": filepath.Join(dir, "actions_checkout_abc"),
		"actions/setup-go@def": filepath.Join(dir, "actions_setup-go_def"),
	}, m, "the own repository is the caller's to map")
	b, err := os.ReadFile(filepath.Join(dir, "actions_setup-go_def", "action.yml"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "using: composite")

	_, err = acttest.Stubs(dir, "own/repo", []acttest.Uses{{Owner: "third", Repo: "party", Ref: "v1"}})
	assert.ErrorContains(t, err, "no stub for third/party@v1")
}

// TestActVersionIsPinned: the harness's act version is the one
// tools/versions.env pins (make test installs that one).
func TestActVersionIsPinned(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "tools", "versions.env"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^ACT_VERSION=(\S+)$`).FindSubmatch(b)
	require.NotNil(t, m, "tools/versions.env has no ACT_VERSION")
	assert.Equal(t, acttest.Version, string(m[1]))
}

func TestEnvironDropsTheCallersRunnerContext(t *testing.T) {
	t.Parallel()
	r := acttest.Run{
		WorkDir:    t.TempDir(),
		BaseEnv:    []string{"PATH=/usr/bin", "HOME=/h", "GITHUB_TOKEN=x", "RUNNER_TEMP=/t", "ACTIONS_RUNTIME_TOKEN=y", "BUILD_LOCK_APP_ID=1", "MAKEFLAGS=-j2", "GIT_CONFIG_COUNT=9"},
		Commands:   map[string]string{"gh": "exit 0\n"},
		GitRemotes: map[string]string{"https://github.com/o/r.git": "/bare/r.git"},
	}
	env, err := r.Environ()
	require.NoError(t, err)
	joined := "\n" + strings.Join(env, "\n") + "\n"
	for _, gone := range []string{"GITHUB_TOKEN", "RUNNER_TEMP", "ACTIONS_RUNTIME_TOKEN", "BUILD_LOCK_APP_ID", "MAKEFLAGS", "GIT_CONFIG_COUNT=9"} {
		assert.NotContains(t, joined, "\n"+gone, gone)
	}
	assert.Contains(t, joined, "\nHOME=/h\n")
	assert.Contains(t, joined, "\nPATH="+filepath.Join(r.WorkDir, "stub-bin")+string(os.PathListSeparator)+"/usr/bin\n")
	assert.Contains(t, joined, "\nGIT_CONFIG_COUNT=1\nGIT_CONFIG_KEY_0=url./bare/r.git.insteadOf\nGIT_CONFIG_VALUE_0=https://github.com/o/r.git\n")
	st, err := os.Stat(filepath.Join(r.WorkDir, "stub-bin", "gh"))
	require.NoError(t, err)
	assert.NotZero(t, st.Mode()&0o100, "a stub command is executable")
}
