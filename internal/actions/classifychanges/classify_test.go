package classifychanges_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/classifychanges"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/changes"
)

// repo is a real git repository in a temporary directory.
type repo struct {
	t   *testing.T
	dir string
}

func newRepo(t *testing.T) *repo {
	t.Helper()
	if _, err := classifychanges.FindGit(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must run the classifier against a real git: %v", err)
		}
		t.Skip(err)
	}
	r := &repo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	r.write("README.md", "# game\n")
	r.write("Assets/Player.cs", "class Player {}\n")
	r.write("docs/guide.md", "guide\n")
	r.commit("initial")
	return r
}

// git runs the fixture's own git (never the classifier's), isolated from
// the developer's configuration.
func (r *repo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("/usr/bin/git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = r.dir
	cmd.Env = append(classifychanges.GitEnv(), "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
	out, err := cmd.CombinedOutput()
	require.NoError(r.t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

func (r *repo) write(path, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, filepath.FromSlash(path))
	require.NoError(r.t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(r.t, os.WriteFile(p, []byte(content), 0o644))
}

func (r *repo) commit(msg string) string {
	r.t.Helper()
	r.git("add", "-A")
	r.git("commit", "-q", "--allow-empty", "-m", msg)
	return r.git("rev-parse", "HEAD")
}

func (r *repo) head() string { return r.git("rev-parse", "HEAD") }

// step is one run of the action in the repository's work tree.
type step struct {
	env map[string]string
	out bytes.Buffer
}

func newStep(t *testing.T, dir, event, base, head, declared string) *step {
	t.Helper()
	tmp := t.TempDir()
	s := &step{env: map[string]string{
		"GITHUB_WORKSPACE":    dir,
		"GITHUB_OUTPUT":       filepath.Join(tmp, "output"),
		"GITHUB_STEP_SUMMARY": filepath.Join(tmp, "summary"),
		"INPUT_EVENT-NAME":    event,
		"INPUT_BASE-SHA":      base,
		"INPUT_HEAD-SHA":      head,
	}}
	if declared != "" {
		s.env["INPUT_INDEPENDENT-PATHS"] = declared
	}
	return s
}

func (s *step) run() error {
	return classifychanges.Run(context.Background(), actionkit.Deps{Getenv: func(k string) string { return s.env[k] }, Stdout: &s.out})
}

func (s *step) outputs(t *testing.T) map[string]string {
	t.Helper()
	out, err := actionio.ReadFileCommands(s.env["GITHUB_OUTPUT"])
	require.NoError(t, err)
	return out
}

func (s *step) summary() string {
	b, _ := os.ReadFile(s.env["GITHUB_STEP_SUMMARY"])
	return string(b)
}

func classify(t *testing.T, r *repo, base, head, declared string) (*step, error) {
	t.Helper()
	s := newStep(t, r.dir, "pull_request", base, head, declared)
	return s, s.run()
}

// requireUnity: the step succeeded with unity-required=true, and the job
// summary names forcedBy as the first path that required Unity.
func requireUnity(t *testing.T, s *step, err error, forcedBy string) {
	t.Helper()
	require.NoError(t, err)
	assert.Equal(t, "true", s.outputs(t)["unity-required"])
	assert.Contains(t, s.summary(), "| First path that requires Unity | `"+forcedBy+"` |")
}

// requireSkip: the step succeeded with unity-required=false.
func requireSkip(t *testing.T, s *step, err error) {
	t.Helper()
	require.NoError(t, err)
	assert.Equal(t, "false", s.outputs(t)["unity-required"])
}

func TestDocsOnlyChangeSkipsUnity(t *testing.T) {
	r := newRepo(t)
	base := r.head()
	r.write("README.md", "# game, documented\n")
	r.write("docs/guide.md", "more guide\n")
	r.write(".github/ISSUE_TEMPLATE/bug.yml", "name: bug\n")
	head := r.commit("docs")
	s, err := classify(t, r, base, strings.ToUpper(head), "docs/**")
	requireSkip(t, s, err)
	assert.Contains(t, s.out.String(), "Unity not required: all 3 changed path(s) are Unity-independent")
	assert.Contains(t, s.summary(), changes.ReasonIndependent)
}

func TestAssetsChangeRequiresUnity(t *testing.T) {
	r := newRepo(t)
	base := r.head()
	r.write("README.md", "# game 2\n")
	r.write("Assets/Player.cs", "class Player { int hp; }\n")
	head := r.commit("code")
	s, err := classify(t, r, base, head, "docs/**")
	require.NoError(t, err)
	assert.Equal(t, "true", s.outputs(t)["unity-required"])
	assert.Contains(t, s.out.String(), "Unity required: Assets/Player.cs is neither in the central Unity-independent allowlist nor under a declared independent path (first of 2 changed path(s)).")
	assert.Contains(t, s.summary(), "| First path that requires Unity | `Assets/Player.cs` |")
}

func TestDeclarationIsNeededForNonCentralPaths(t *testing.T) {
	r := newRepo(t)
	base := r.head()
	r.write("docs/guide.md", "changed\n")
	head := r.commit("docs")
	s, err := classify(t, r, base, head, "")
	require.NoError(t, err)
	assert.Equal(t, "true", s.outputs(t)["unity-required"], "docs/ is not central: without a declaration it requires Unity")
}

func TestRenames(t *testing.T) {
	t.Run("out of Assets: the deleted Unity path still counts", func(t *testing.T) {
		r := newRepo(t)
		base := r.head()
		r.git("mv", "Assets/Player.cs", "docs/Player.cs")
		head := r.commit("move")
		// What plain rename detection would show: only the new, harmless
		// path. --no-renames keeps the old one.
		assert.Equal(t, "docs/Player.cs", r.git("diff", "--name-only", "-M", base, head))
		s, err := classify(t, r, base, head, "docs/**")
		requireUnity(t, s, err, "Assets/Player.cs")
	})
	t.Run("within an independent directory", func(t *testing.T) {
		r := newRepo(t)
		base := r.head()
		r.git("mv", "docs/guide.md", "docs/handbook.md")
		head := r.commit("rename")
		s, err := classify(t, r, base, head, "docs/**")
		requireSkip(t, s, err)
	})
}

func TestDeleteRequiresUnity(t *testing.T) {
	r := newRepo(t)
	base := r.head()
	r.git("rm", "-q", "Assets/Player.cs")
	head := r.commit("delete")
	s, err := classify(t, r, base, head, "docs/**")
	requireUnity(t, s, err, "Assets/Player.cs")
}

func TestPathsWithSpacesAndNewlines(t *testing.T) {
	r := newRepo(t)
	base := r.head()
	r.write("docs/a b\nc.md", "x\n")
	mid := r.commit("odd docs name")
	s, err := classify(t, r, base, mid, "docs/**")
	require.NoError(t, err)
	assert.Equal(t, "false", s.outputs(t)["unity-required"], "the NUL-separated list keeps the name whole")

	r.write("Assets/we ird\nname.cs", "x\n")
	head := r.commit("odd code name")
	s, err = classify(t, r, mid, head, "docs/**")
	require.NoError(t, err)
	assert.Equal(t, "true", s.outputs(t)["unity-required"])
	assert.Contains(t, s.out.String(), `"Assets/we ird\nname.cs" is neither`, "quoted: the newline cannot start a workflow command")
	assert.NotContains(t, s.out.String(), "ird\nname")
}

func TestEmptyDiffRequiresUnity(t *testing.T) {
	r := newRepo(t)
	head := r.head()
	s, err := classify(t, r, head, head, "docs/**")
	require.NoError(t, err)
	assert.Equal(t, "true", s.outputs(t)["unity-required"])
	assert.Contains(t, s.summary(), changes.ReasonEmptyDiff)

	empty := r.commit("empty commit")
	s, err = classify(t, r, head, empty, "docs/**")
	require.NoError(t, err)
	assert.Equal(t, "true", s.outputs(t)["unity-required"])
}

// A hostile repository configures a textconv filter and an external diff
// driver for every file. The classifier's git must run neither; the same
// repository proves the trap is live by springing it for a plain diff.
func TestHostileTextconvDoesNotRun(t *testing.T) {
	r := newRepo(t)
	dir := t.TempDir()
	textconv, external := filepath.Join(dir, "textconv-ran"), filepath.Join(dir, "external-diff-ran")
	r.write(".gitattributes", "* diff=evil\n")
	r.git("config", "diff.evil.textconv", "sh -c 'touch "+textconv+"; cat \"$0\"'")
	r.git("config", "diff.evil.command", "sh -c 'touch "+external+"'")
	base := r.commit("attributes")
	r.write("docs/guide.md", "changed\n")
	head := r.commit("docs")

	s, err := classify(t, r, base, head, "docs/**")
	requireSkip(t, s, err)
	assert.NoFileExists(t, textconv, "the classifier ran the repository's textconv filter")
	assert.NoFileExists(t, external, "the classifier ran the repository's external diff driver")

	// Controls: both traps are live for an ordinary git diff.
	r.git("diff", base, head)
	assert.FileExists(t, external, "control: external diff driver")
	r.git("diff", "--no-ext-diff", base, head)
	assert.FileExists(t, textconv, "control: textconv filter")
}

// refs/replace can make git show another commit in place of the real head;
// --no-replace-objects sees through it.
func TestReplaceObjectsAreIgnored(t *testing.T) {
	r := newRepo(t)
	base := r.head()
	r.write("docs/guide.md", "harmless\n")
	decoy := r.commit("decoy")
	r.git("reset", "-q", "--hard", base)
	r.write("Assets/Player.cs", "class Player { evil(); }\n")
	head := r.commit("real")
	r.git("replace", head, decoy)
	assert.Equal(t, "docs/guide.md", r.git("diff", "--name-only", base, head), "control: replacement is active")

	s, err := classify(t, r, base, head, "docs/**")
	requireUnity(t, s, err, "Assets/Player.cs")
}

// Inherited GIT_* variables cannot redirect the classifier's git.
func TestInheritedGitEnvironmentIsIgnored(t *testing.T) {
	r := newRepo(t)
	base := r.head()
	r.write("Assets/Player.cs", "changed\n")
	head := r.commit("code")
	t.Setenv("GIT_DIR", filepath.Join(t.TempDir(), "elsewhere"))
	t.Setenv("GIT_EXTERNAL_DIFF", "/bin/false")
	t.Setenv("GIT_CONFIG_PARAMETERS", "'diff.noprefix'='true'")
	s, err := classify(t, r, base, head, "")
	requireUnity(t, s, err, "Assets/Player.cs")
}

func TestGitOutputIsBounded(t *testing.T) {
	r := newRepo(t)
	base := r.head()
	r.write("docs/a-long-file-name.md", "x\n")
	head := r.commit("docs")
	git, err := classifychanges.FindGit()
	require.NoError(t, err)
	_, err = classifychanges.Git{Path: git, Dir: r.dir, Limit: 10}.ChangedPaths(context.Background(), base, head)
	assert.ErrorContains(t, err, "more than 10 bytes")
	out, err := classifychanges.Git{Path: git, Dir: r.dir}.ChangedPaths(context.Background(), base, head)
	require.NoError(t, err)
	assert.Equal(t, "docs/a-long-file-name.md\x00", string(out))
}

func TestMissingCommitFailsWithUnityRequired(t *testing.T) {
	r := newRepo(t)
	s, err := classify(t, r, r.head(), strings.Repeat("ab", 20), "docs/**")
	require.Error(t, err)
	assert.Equal(t, classifychanges.CodeGitDiffFailed, lockaction.ReasonCode(err))
	assert.ErrorContains(t, err, "fetch-depth: 0")
	assert.ErrorContains(t, err, "unity-required stays true")
	assert.Equal(t, "true", s.outputs(t)["unity-required"])
}

func TestOtherEventsRequireUnityWithoutGit(t *testing.T) {
	for _, event := range []string{"push", "pull_request_target", "workflow_dispatch", "merge_group", "PULL_REQUEST"} {
		s := newStep(t, filepath.Join(t.TempDir(), "no-repo"), event, "", "", "docs/**")
		require.NoError(t, s.run(), event)
		assert.Equal(t, "true", s.outputs(t)["unity-required"], event)
		assert.Contains(t, s.summary(), changes.ReasonNotPullRequest)
	}
}

func TestDeclarationIsValidatedOnEveryEvent(t *testing.T) {
	s := newStep(t, t.TempDir(), "push", "", "", "docs/**\n.github/**")
	err := s.run()
	var de *changes.DeclarationError
	require.True(t, errors.As(err, &de), "%v", err)
	assert.Equal(t, 2, de.Line)
	assert.ErrorContains(t, err, "line 2")
	assert.Equal(t, "true", s.outputs(t)["unity-required"], "written first, left in place")
}

func TestInputFailures(t *testing.T) {
	r := newRepo(t)
	head := r.head()
	cases := map[string]func(s *step){
		"short base":       func(s *step) { s.env["INPUT_BASE-SHA"] = "abc" },
		"missing head":     func(s *step) { delete(s.env, "INPUT_HEAD-SHA") },
		"option-like head": func(s *step) { s.env["INPUT_HEAD-SHA"] = "--output=/tmp/x" + strings.Repeat("a", 24) },
		"no GITHUB_OUTPUT": func(s *step) { delete(s.env, "GITHUB_OUTPUT") },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			s := newStep(t, r.dir, "pull_request", head, head, "")
			mutate(s)
			err := s.run()
			require.Error(t, err)
			assert.NotEmpty(t, lockaction.ReasonCode(err), "every refusal has a code for its ::error title")
			if name == "no GITHUB_OUTPUT" {
				assert.ErrorIs(t, err, actionio.ErrFileCommandUnavailable)
				return
			}
			assert.Equal(t, "true", s.outputs(t)["unity-required"])
		})
	}
}

// TestInputsAreTrimmedAsJavaScriptTrims: event-name and the SHAs are
// trimmed with String.prototype.trim, so a U+FEFF around them is not part
// of the value (and a U+0085 is).
func TestInputsAreTrimmedAsJavaScriptTrims(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	base := r.head()
	r.write("docs/more.md", "more\n")
	head := r.commit("docs")
	s := newStep(t, r.dir, "\ufeffpull_request\ufeff", "\ufeff"+base, head+"\u3000", "docs/**\ufeff")
	require.NoError(t, s.run())
	assert.Equal(t, "false", s.outputs(t)["unity-required"])

	s = newStep(t, r.dir, "pull_request\u0085", base, head, "docs/**")
	require.NoError(t, s.run())
	assert.Equal(t, "true", s.outputs(t)["unity-required"], "NEL is part of the event name, which is then not pull_request")
}

// TestEmptyEventNameRequiresUnityLikeTheReference: an empty (or
// whitespace-only) event-name is not pull_request, so Unity is required and
// the step succeeds, as in the reference; the declaration is still
// validated.
func TestEmptyEventNameRequiresUnityLikeTheReference(t *testing.T) {
	for _, event := range []string{"", " \ufeff"} {
		s := newStep(t, filepath.Join(t.TempDir(), "no-repo"), event, "", "", "docs/**")
		require.NoError(t, s.run(), "%q", event)
		assert.Equal(t, "true", s.outputs(t)["unity-required"])
		assert.Contains(t, s.summary(), changes.ReasonNotPullRequest)
		assert.Contains(t, s.out.String(), "::notice::Unity required: no event name was given")
	}
	s := newStep(t, t.TempDir(), "", "", "", ".github/**")
	var de *changes.DeclarationError
	require.ErrorAs(t, s.run(), &de)
}

// TestARootFileNamedExactlyDotMdRequiresUnity pins a deliberate
// difference: a root file named ".md" has no name before its extension (a
// dot file), so it is not a root-level *.md document and requires Unity.
func TestARootFileNamedExactlyDotMdRequiresUnity(t *testing.T) {
	r := newRepo(t)
	base := r.head()
	r.write(".md", "notes\n")
	head := r.commit("dot md")
	s, err := classify(t, r, base, head, "")
	requireUnity(t, s, err, ".md")
}

func (r *repo) symlink(path, target string) {
	r.t.Helper()
	p := filepath.Join(r.dir, filepath.FromSlash(path))
	require.NoError(r.t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(r.t, os.Symlink(target, p))
}

// TestAChangeUnityReadsThroughASymlinkRequiresUnity: a symbolic link
// committed under Assets/ makes its target part of the Unity project, so a
// change there requires Unity although the folder is independent by name
// (declared, or the central allowlist); real git, real links.
func TestAChangeUnityReadsThroughASymlinkRequiresUnity(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		link, target, changed, declared, via string
	}{
		"declared folder":            {"Assets/Docs", "../docs", "docs/Helper.cs", "docs/**", "symbolic link Assets/Docs → ../docs"},
		"central allowlist":          {"Assets/Notes", "../progress", "progress/Evil.cs", "", "symbolic link Assets/Notes → ../progress"},
		"a single file":              {"Assets/Readme.cs", "../README.md", "README.md", "", "symbolic link Assets/Readme.cs → ../README.md"},
		"under Packages":             {"Packages/com.acme.llm", "../.llm/pkg", ".llm/pkg/Runtime/A.cs", "", "symbolic link Packages/com.acme.llm → ../.llm/pkg"},
		"the Assets folder is moved": {"Assets", "progress/game", "progress/game/Player.cs", "", "symbolic link Assets → progress/game"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t)
			if tc.link == "Assets" {
				r.git("rm", "-rq", "Assets")
				r.write("progress/game/Player.cs", "class Player {}\n")
			}
			if !strings.HasSuffix(tc.target, ".md") {
				r.write(filepath.ToSlash(filepath.Join(filepath.Dir(tc.link), tc.target, "placeholder.txt")), "x\n")
			}
			r.symlink(tc.link, tc.target)
			base := r.commit("link")
			r.write(tc.changed, "// changed\n")
			head := r.commit("change")
			s, err := classify(t, r, base, head, tc.declared)
			requireUnity(t, s, err, tc.changed)
			assert.Contains(t, s.summary(), changes.ReasonUnityVisible)
			assert.Contains(t, s.summary(), "| Read by Unity through | "+tc.via+" |")
			assert.Contains(t, s.out.String(), "but Unity reads it through the "+tc.via)
		})
	}
}

// TestALocalPackageInAnAllowlistedFolderRequiresUnity: a "file:" package
// of Packages/manifest.json that lives in an independent folder is code
// Unity compiles.
func TestALocalPackageInAnAllowlistedFolderRequiresUnity(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	r.write("Packages/manifest.json", `{"dependencies":{"com.unity.ugui":"2.0.0","com.acme.tools":"file:../progress/acme-tools"}}`+"\n")
	r.write("progress/acme-tools/package.json", `{"name":"com.acme.tools"}`+"\n")
	base := r.commit("local package")
	r.write("progress/acme-tools/Runtime/Tool.cs", "class Tool {}\n")
	r.write("progress/2026-01.md", "notes\n")
	head := r.commit("tool")
	s, err := classify(t, r, base, head, "")
	requireUnity(t, s, err, "progress/acme-tools/Runtime/Tool.cs")
	assert.Contains(t, s.summary(), "local package com.acme.tools (file:../progress/acme-tools)")

	// The same repository with a documentation-only change still skips.
	r.write("progress/2026-02.md", "notes\n")
	later := r.commit("notes")
	s, err = classify(t, r, head, later, "")
	requireSkip(t, s, err)
}

// TestWhenVisibilityIsUnknownUnityIsRequired: a link under Assets/ whose
// target is absolute (or leaves the repository, or a manifest that is not
// JSON) cannot be proven not to reach a changed file: Unity is required,
// and the step succeeds saying why.
func TestWhenVisibilityIsUnknownUnityIsRequired(t *testing.T) {
	t.Parallel()
	for name, setup := range map[string]func(r *repo){
		"absolute link target":  func(r *repo) { r.symlink("Assets/Shared", "/opt/shared") },
		"link leaving the repo": func(r *repo) { r.symlink("Assets/Up", "../../elsewhere") },
		"manifest not JSON":     func(r *repo) { r.write("Packages/manifest.json", "{\n") },
		"manifest is a link": func(r *repo) {
			r.write("shared/manifest.json", "{}\n")
			r.symlink("Packages/manifest.json", "../shared/manifest.json")
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t)
			setup(r)
			base := r.commit("setup")
			r.write("docs/guide.md", "more\n")
			head := r.commit("docs")
			s, err := classify(t, r, base, head, "docs/**")
			require.NoError(t, err)
			assert.Equal(t, "true", s.outputs(t)["unity-required"])
			assert.Contains(t, s.summary(), changes.ReasonVisibilityUnknown)
			assert.Contains(t, s.summary(), "| Undecided because |")
		})
	}
}

// TestHarmlessLinksAndPackagesKeepTheSkip: links that stay inside the
// Unity roots, links outside them, and registry or git packages change
// nothing for a documentation-only pull request.
func TestHarmlessLinksAndPackagesKeepTheSkip(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	r.symlink("Assets/Alias", "Player.cs")
	r.symlink("docs/assets", "../Assets")
	r.write("Packages/manifest.json", `{"dependencies":{"com.unity.ugui":"2.0.0","com.acme.git":"https://github.com/acme/x.git?path=/pkg","com.acme.local":"file:com.acme.local"}}`+"\n")
	base := r.commit("links")
	r.write("docs/guide.md", "more\n")
	head := r.commit("docs")
	s, err := classify(t, r, base, head, "docs/**")
	requireSkip(t, s, err)
}

// TestACaseVariantOfAUnityRootRequiresUnity: the declaration's overlap
// check is case-sensitive (unity-lifecycle-facts.md §5), so "assets/**" is
// accepted; but on the case-insensitive file systems Unity runs on,
// assets/Evil.cs is Assets/Evil.cs, so it requires Unity.
func TestACaseVariantOfAUnityRootRequiresUnity(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	base := r.head()
	r.write("assets/Evil.cs", "class Evil {}\n")
	head := r.commit("evil")
	s, err := classify(t, r, base, head, "assets/**")
	requireUnity(t, s, err, "assets/Evil.cs")
	assert.Contains(t, s.summary(), "a case variant of a Unity root")
}
