package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestParseCommit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		msg  string
		want Commit
	}{
		{"feat: add doctor", Commit{Type: "feat", Subject: "add doctor"}},
		{"fix(launcher): verify before exec\n\nbody", Commit{Type: "fix", Scope: "launcher", Subject: "verify before exec"}},
		{"feat(api)!: drop v1 inputs", Commit{Type: "feat", Scope: "api", Subject: "drop v1 inputs", Breaking: true}},
		{"refactor: x\n\nBREAKING CHANGE: inputs renamed", Commit{Type: "refactor", Subject: "x", Breaking: true}},
		{"fix: y\n\nBREAKING-CHANGE: z", Commit{Type: "fix", Subject: "y", Breaking: true}},
		{"Feat: capital type", Commit{Type: "feat", Subject: "capital type"}},
		{"docs: only docs", Commit{Type: "docs", Subject: "only docs"}},
		{"acquire metadata: no ${{ }} in a description", Commit{Subject: "acquire metadata: no ${{ }} in a description"}},
		{"feat:missing space", Commit{Subject: "feat:missing space"}},
		{"feat(a(b)): nested", Commit{Subject: "feat(a(b)): nested"}},
		{"Merge branch 'x'\n\nBREAKING CHANGE: not conventional", Commit{Subject: "Merge branch 'x'"}},
		{"fix: windows line\r\n\r\nBREAKING CHANGE: crlf", Commit{Type: "fix", Subject: "windows line", Breaking: true}},
		{"fix: mentions BREAKING CHANGE: in the header only", Commit{Type: "fix", Subject: "mentions BREAKING CHANGE: in the header only"}},
	} {
		got := ParseCommit("", tc.msg)
		assert.Equal(t, tc.want, got, "%q", tc.msg)
	}
}

// TestDecide is the bump table: feat, fix, breaking and nothing, before
// and after 1.0.0, and the first release.
func TestDecide(t *testing.T) {
	t.Parallel()
	c := func(msgs ...string) []Commit {
		var out []Commit
		for i, m := range msgs {
			out = append(out, ParseCommit(strings.Repeat(string(rune('a'+i)), 40), m))
		}
		return out
	}
	v1 := Version{1, 0, 0}
	for _, tc := range []struct {
		name           string
		tags           []string
		commits        []Commit
		release        bool
		version, alias string
		previous       string
		bump           Bump
	}{
		{"fix is a patch", []string{"v1.2.3"}, c("fix: a", "docs: b"), true, "v1.2.4", "v1", "v1.2.3", BumpPatch},
		{"perf is a patch", []string{"v1.2.3"}, c("perf: a"), true, "v1.2.4", "v1", "v1.2.3", BumpPatch},
		{"feat is a minor", []string{"v1.2.3"}, c("fix: a", "feat: b"), true, "v1.3.0", "v1", "v1.2.3", BumpMinor},
		{"breaking is a major", []string{"v1.2.3"}, c("feat!: a", "fix: b"), true, "v2.0.0", "v2", "v1.2.3", BumpMajor},
		{"breaking footer is a major", []string{"v2.0.1"}, c("fix: a\n\nBREAKING CHANGE: b"), true, "v3.0.0", "v3", "v2.0.1", BumpMajor},
		{"nothing to release", []string{"v1.2.3"}, c("docs: a", "ci: b", "chore(deps): c", "not conventional"), false, "v1.2.3", "", "v1.2.3", BumpNone},
		{"no commits at all", []string{"v1.2.3"}, nil, false, "v1.2.3", "", "v1.2.3", BumpNone},
		{"pre-1.0 breaking is a minor", []string{"v0.3.2"}, c("feat!: a"), true, "v0.4.0", "", "v0.3.2", BumpMajor},
		{"pre-1.0 feat is a minor", []string{"v0.3.2"}, c("feat: a"), true, "v0.4.0", "", "v0.3.2", BumpMinor},
		{"pre-1.0 fix is a patch", []string{"v0.3.2"}, c("fix: a"), true, "v0.3.3", "", "v0.3.2", BumpPatch},
		{"first release", nil, c("fix: a"), true, "v1.0.0", "v1", "", BumpPatch},
		{"first release needs something releasable", nil, c("docs: a"), false, "", "", "", BumpNone},
		{"latest tag wins, aliases and pre-releases ignored", []string{"v1", "v1.9.0", "v1.10.0", "v2.0.0-rc.1", "v1.2.3"}, c("fix: a"), true, "v1.10.1", "v1", "v1.10.0", BumpPatch},
	} {
		d := Decide(tc.tags, tc.commits, v1)
		assert.Equal(t, tc.release, d.Release, tc.name)
		assert.Equal(t, tc.version, d.Version, tc.name)
		assert.Equal(t, tc.alias, d.Alias, tc.name)
		assert.Equal(t, tc.previous, d.Previous, tc.name)
		assert.Equal(t, tc.bump, d.Bump, tc.name)
	}
}

// TestApplyIsMonotonic: every bump of every version moves it forward, and
// only a breaking change after 1.0.0 changes the major version.
func TestApplyIsMonotonic(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		v := Version{rapid.IntRange(0, 50).Draw(t, "major"), rapid.IntRange(0, 50).Draw(t, "minor"), rapid.IntRange(0, 50).Draw(t, "patch")}
		b := Bump(rapid.IntRange(1, 3).Draw(t, "bump"))
		n := v.Apply(b)
		if !v.Less(n) {
			t.Fatalf("%v %v -> %v does not move forward", v, b, n)
		}
		if (n.Major != v.Major) != (b == BumpMajor && v.Major > 0) {
			t.Fatalf("%v %v -> %v: wrong major", v, b, n)
		}
		if back, ok := ParseTag(n.String()); !ok || back != n {
			t.Fatalf("%v does not round-trip", n)
		}
	})
}

func TestParseTag(t *testing.T) {
	t.Parallel()
	for tag, ok := range map[string]bool{"v1.2.3": true, "v0.0.0": true, "v10.20.30": true, "1.2.3": false, "v1.2": false, "v1": false,
		"v01.2.3": false, "v1.2.3-rc.1": false, "v1.2.3+meta": false, "v1.2.3\n": false} {
		_, got := ParseTag(tag)
		assert.Equal(t, ok, got, tag)
	}
}

func TestDefangAndNotes(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "fixes (see #12) and closes (see o/r#3), mentions #4", Defang("fixes #12 and closes o/r#3, mentions #4"))
	assert.Equal(t, "Resolved (see #7)", Defang("Resolved: #7"))
	d := Decide([]string{"v1.0.0"}, []Commit{
		ParseCommit(strings.Repeat("a", 40), "feat(doctor): check Apps, fixes #12"),
		ParseCommit(strings.Repeat("b", 40), "fix!: rename input"),
		ParseCommit(strings.Repeat("c", 40), "perf: fewer reads"),
		ParseCommit(strings.Repeat("d", 40), "docs: ignored"),
	}, Version{1, 0, 0})
	n := Notes(d)
	assert.Contains(t, n, "## v2.0.0")
	assert.Contains(t, n, "Changes since v1.0.0.")
	assert.Contains(t, n, "### Breaking changes\n\n- rename input (bbbbbbbbbbbb)")
	assert.Contains(t, n, "### Features\n\n- **doctor:** check Apps, fixes (see #12) (aaaaaaaaaaaa)")
	assert.Contains(t, n, "### Fixes\n\n- fewer reads (cccccccccccc)")
	assert.NotContains(t, n, "ignored")
	assert.NotRegexp(t, closing, n, "no closing keyword may reach a release notice")
}

func TestCheckRef(t *testing.T) {
	t.Parallel()
	assert.NoError(t, CheckRef("refs/heads/main", "main"))
	assert.Error(t, CheckRef("refs/heads/feature", "main"))
	assert.Error(t, CheckRef("refs/tags/v1.0.0", "main"))
	assert.Error(t, CheckRef("", "main"))
}

// TestRunOnARealRepository drives the program against a real git
// repository laid out like a released one: the release commit (manifest
// only) is reachable through its tag, not from the default branch.
func TestRunOnARealRepository(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	g := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
		return strings.TrimSpace(string(out))
	}
	commit := func(msg string) {
		t.Helper()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), []byte(msg), 0o644))
		g("add", "f")
		g("commit", "-q", "-m", msg)
	}
	g("init", "-q", "-b", "main")
	commit("docs: start")
	out := func() string {
		t.Helper()
		var b strings.Builder
		require.NoError(t, run([]string{"-ref", "refs/heads/main", "-default-branch", "main", "-notes", filepath.Join(dir, "..", "notes.md")}, dir, &b))
		return b.String()
	}
	assert.Equal(t, "release=false\nversion=\nprevious=\nbump=none\nalias=\n", out())
	commit("feat: first feature")
	assert.Equal(t, "release=true\nversion=v1.0.0\nprevious=\nbump=minor\nalias=v1\n", out())

	// Cut v1.0.0 as the workflow does: a release commit on a detached head.
	g("checkout", "-q", "--detach")
	commit("release v1.0.0: binary manifest")
	g("tag", "-a", "v1.0.0", "-m", "release v1.0.0")
	g("tag", "v1")
	g("checkout", "-q", "main")
	assert.Equal(t, "release=false\nversion=v1.0.0\nprevious=v1.0.0\nbump=none\nalias=\n", out(), "nothing since the release")
	commit("fix: a bug, closes #9")
	assert.Equal(t, "release=true\nversion=v1.0.1\nprevious=v1.0.0\nbump=patch\nalias=v1\n", out())
	notes, err := os.ReadFile(filepath.Join(dir, "..", "notes.md"))
	require.NoError(t, err)
	assert.Contains(t, string(notes), "closes (see #9)")
	assert.NotContains(t, string(notes), "first feature", "only commits since the last release")

	var b strings.Builder
	assert.ErrorContains(t, run([]string{"-ref", "refs/heads/other", "-default-branch", "main"}, dir, &b), "refs/heads/main only")
}
