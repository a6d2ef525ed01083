package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
)

const (
	repo = "example-org/build-lock"
	head = "1111111111111111111111111111111111111111"
)

// dependabotMessage is a Dependabot commit message with the given updates
// (name, version, update type).
func dependabotMessage(updates ...[3]string) string {
	var b strings.Builder
	b.WriteString("build(deps): bump things\n\nBumps things.\n\n---\nupdated-dependencies:\n")
	for _, u := range updates {
		b.WriteString("- dependency-name: " + u[0] + "\n  dependency-version: " + u[1] + "\n  dependency-type: direct:production\n")
		if u[2] != "" {
			b.WriteString("  update-type: " + u[2] + "\n")
		}
		b.WriteString("  dependency-group: gomod\n")
	}
	b.WriteString("...\n\nSigned-off-by: dependabot[bot] <support@github.com>\n")
	return b.String()
}

// good is a same-repository Dependabot pull request whose CI passed for
// its current head.
func good(updates ...[3]string) Facts {
	if len(updates) == 0 {
		updates = [][3]string{{"golang.org/x/sys", "0.43.0", "version-update:semver-minor"}}
	}
	return Facts{
		Repository: repo,
		Run: Run{Path: CIWorkflow, Event: "pull_request", Conclusion: "success", HeadSHA: head, HeadRepository: repo,
			HeadCommit: Commit{Message: dependabotMessage(updates...), AuthorEmail: DependabotEmail}},
		PR: &PullRequest{Number: 7, Author: DependabotLogin, State: "open", HeadSHA: head, HeadRepository: repo, BaseRepository: repo},
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		facts  func() Facts
		reason string
	}{
		{"a same-repository Dependabot minor update with green CI merges", func() Facts { return good() }, "merge"},
		{"a major update of another package merges after CI", func() Facts {
			return good([3]string{"actions/checkout", "5.0.0", "version-update:semver-major"})
		}, "merge"},
		{"a patch of a design-card package merges", func() Facts {
			return good([3]string{"github.com/stretchr/testify", "1.12.2", "version-update:semver-patch"})
		}, "merge"},
		{"a non-Dependabot author is refused", func() Facts { f := good(); f.PR.Author = "octocat"; return f }, "not-dependabot"},
		{"a fork is refused", func() Facts {
			f := good()
			f.Run.HeadRepository, f.PR.HeadRepository = "mallory/build-lock", "mallory/build-lock"
			return f
		}, "fork"},
		{"a fork run with no listed pull request is refused", func() Facts { f := good(); f.PR = nil; return f }, "no-pull-request"},
		{"a failed CI is refused", func() Facts { f := good(); f.Run.Conclusion = "failure"; return f }, "ci-failed"},
		{"a cancelled CI is refused", func() Facts { f := good(); f.Run.Conclusion = "cancelled"; return f }, "ci-failed"},
		{"another workflow's success is not CI", func() Facts { f := good(); f.Run.Path = ".github/workflows/other.yml"; return f }, "not-ci"},
		{"a push run is not a pull request check", func() Facts { f := good(); f.Run.Event = "push"; return f }, "not-pull-request"},
		{"a head that moved after CI is refused", func() Facts { f := good(); f.PR.HeadSHA = strings.Repeat("2", 40); return f }, "head-moved"},
		{"a draft is refused", func() Facts { f := good(); f.PR.Draft = true; return f }, "not-open"},
		{"a closed pull request is refused", func() Facts { f := good(); f.PR.State = "closed"; return f }, "not-open"},
		{"a commit pushed on top by someone else is refused", func() Facts {
			f := good()
			f.Run.HeadCommit.AuthorEmail = "octocat@example.com"
			return f
		}, "foreign-commit"},
		{"a commit without Dependabot's metadata is refused", func() Facts { f := good(); f.Run.HeadCommit.Message = "build(deps): bump x"; return f }, "no-metadata"},
		{"a major bump of go-github is refused", func() Facts {
			return good([3]string{"github.com/google/go-github/v67", "67.0.0", "version-update:semver-major"})
		}, "major-design-card"},
		{"a major bump of testify in a group is refused", func() Facts {
			return good([3]string{"golang.org/x/sys", "0.43.0", "version-update:semver-minor"},
				[3]string{"github.com/stretchr/testify", "2.0.0", "version-update:semver-major"})
		}, "major-design-card"},
		{"a design-card update without an update type is refused", func() Facts {
			return good([3]string{"github.com/bradleyfalzon/ghinstallation/v2", "2.13.0", ""})
		}, "major-design-card"},
		{"go-githubactions major is refused", func() Facts {
			return good([3]string{"github.com/sethvargo/go-githubactions", "2.0.0", "version-update:semver-major"})
		}, "major-design-card"},
	} {
		d := Decide(tc.facts())
		assert.Equal(t, tc.reason, d.Reason, "%s: %s", tc.name, d.Message)
		assert.Equal(t, tc.reason == "merge", d.Merge, tc.name)
		assert.NotEmpty(t, d.Message, tc.name)
	}
}

func TestParseUpdates(t *testing.T) {
	t.Parallel()
	u, err := ParseUpdates(dependabotMessage([3]string{"a", "1.0.0", "version-update:semver-patch"}, [3]string{"b", "2.0.0", ""}))
	require.NoError(t, err)
	assert.Equal(t, []Update{{"a", "1.0.0", "version-update:semver-patch"}, {"b", "2.0.0", ""}}, u)
	crlf := strings.ReplaceAll(dependabotMessage([3]string{"a", "1", "x"}), "\n", "\r\n")
	_, err = ParseUpdates(crlf)
	assert.NoError(t, err)
	for _, bad := range []string{"", "no block", "---\nupdated-dependencies:\n...\n", "---\nupdated-dependencies:\n- [\n...\n"} {
		_, err := ParseUpdates(bad)
		assert.Error(t, err, "%q", bad)
	}
}

func FuzzParseUpdates(f *testing.F) {
	f.Add(dependabotMessage([3]string{"a", "1.0.0", "version-update:semver-patch"}))
	f.Add("---\nupdated-dependencies:\n- dependency-name: x\n...")
	f.Fuzz(func(t *testing.T, msg string) {
		u, err := ParseUpdates(msg)
		if err == nil && len(u) == 0 {
			t.Fatal("no error and no updates")
		}
		for _, x := range u {
			if x.Name == "" {
				t.Fatal("an update without a name passed")
			}
		}
	})
}

func TestIsDesignCardModule(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"github.com/google/go-github/v66": true, "github.com/google/go-github/v67": true, "github.com/google/go-github": true,
		"github.com/stretchr/testify": true, "github.com/stretchr/testify/v2": true, "github.com/stretchr/testify/assert": true,
		"github.com/bradleyfalzon/ghinstallation/v2": true, "github.com/sethvargo/go-githubactions": true,
		"github.com/google/go-github-mock": false, "github.com/stretchr/testifyx": false, "golang.org/x/sys": false,
	} {
		assert.Equal(t, want, IsDesignCardModule(name), name)
	}
}

// TestRunAgainstTheEmulator drives the program as the workflow does: the
// workflow_run event from a file, the pull request read from the GitHub
// emulator. The emulator's pull requests are authored by octocat, so the
// fetched author refuses the merge; a head that moved refuses it first.
func TestRunAgainstTheEmulator(t *testing.T) {
	t.Parallel()
	em := emulator.New(emulator.Options{Seed: 1})
	em.AddOwner("example-org", 1001, true)
	em.AddRepo("example-org", "build-lock", 2001, "main")
	em.AddToken("read-token", emulator.TokenScope{Repos: []string{repo}, Permissions: map[string]string{"pull_requests": "read", "contents": "read"}})
	n := em.AddPullRequest("example-org", "build-lock", emulator.PullRequest{State: "open", HeadSHA: head})
	event := func(sha string) string {
		var ev workflowRunEvent
		ev.Repository.FullName = repo
		wr := &ev.WorkflowRun
		wr.Path, wr.Event, wr.Conclusion, wr.HeadSHA = CIWorkflow, "pull_request", "success", sha
		wr.HeadRepository.FullName = repo
		wr.HeadCommit.Message = dependabotMessage([3]string{"golang.org/x/sys", "0.43.0", "version-update:semver-minor"})
		wr.HeadCommit.Author.Email = DependabotEmail
		wr.PullRequests = append(wr.PullRequests, struct {
			Number int `json:"number"`
		}{n})
		b, err := json.Marshal(ev)
		require.NoError(t, err)
		p := filepath.Join(t.TempDir(), "event.json")
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p
	}
	env := map[string]string{"GH_TOKEN": "read-token", "GITHUB_API_URL": "https://api.emulator.test"}
	for sha, want := range map[string]string{head: "reason=not-dependabot", strings.Repeat("3", 40): "reason=head-moved"} {
		var out, errOut strings.Builder
		require.NoError(t, run(context.Background(), []string{"-event", event(sha)}, func(k string) string { return env[k] }, em.Transport(), &out, &errOut))
		assert.Contains(t, out.String(), "merge=false\n"+want+"\n", errOut.String())
		assert.Contains(t, out.String(), fmt.Sprintf("pull-request=%d\nhead-sha=%s\n", n, sha))
	}
	var out, errOut strings.Builder
	err := run(context.Background(), []string{"-event", event(head)}, func(string) string { return "" }, em.Transport(), &out, &errOut)
	assert.ErrorContains(t, err, "no token")
}
