package main

import (
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v4"
)

// DependabotLogin is the author of every Dependabot pull request.
const DependabotLogin = "dependabot[bot]"

// DependabotEmail is the author address of Dependabot's commits.
const DependabotEmail = "49699333+dependabot[bot]@users.noreply.github.com"

// CIWorkflow is the workflow whose success for the exact head commit is
// required.
const CIWorkflow = ".github/workflows/ci.yml"

// DesignCardModules are the design card's four packages (DESIGN.md): a
// major update of any of them is never merged without review. Matched
// without a /vN suffix, so a move to a new major module path counts too.
var DesignCardModules = []string{
	"github.com/google/go-github",
	"github.com/bradleyfalzon/ghinstallation",
	"github.com/sethvargo/go-githubactions",
	"github.com/stretchr/testify",
}

// Facts is everything the decision looks at: the completed CI run (from the
// workflow_run event) and the pull request as the API shows it now.
type Facts struct {
	// Repository is the repository the workflow runs in (owner/name).
	Repository string
	Run        Run
	PR         *PullRequest // nil when the run belongs to no pull request
}

// Run is the completed workflow run that triggered the decision.
type Run struct {
	Path           string // .github/workflows/ci.yml
	Event          string // pull_request
	Conclusion     string // success
	HeadSHA        string
	HeadRepository string // owner/name the run's head commit came from
	HeadCommit     Commit
}

// Commit is the run's head commit.
type Commit struct {
	Message     string
	AuthorEmail string
}

// PullRequest is the pull request's current state.
type PullRequest struct {
	Number         int
	Author         string
	State          string
	Draft          bool
	HeadSHA        string
	HeadRepository string
	BaseRepository string
}

// Update is one entry of Dependabot's updated-dependencies metadata.
type Update struct {
	Name       string `yaml:"dependency-name"`
	Version    string `yaml:"dependency-version"`
	UpdateType string `yaml:"update-type"`
}

// Decision is the outcome: merge, or a refusal with a stable reason code
// and a message an operator can act on.
type Decision struct {
	Merge   bool
	Reason  string
	Message string
	Updates []Update
}

func refuse(reason, format string, a ...any) Decision {
	return Decision{Reason: reason, Message: fmt.Sprintf(format, a...)}
}

// metadataRE finds the YAML block Dependabot writes into its commit
// message between "---" and "...".
var metadataRE = regexp.MustCompile(`(?ms)^---\n(updated-dependencies:\n.*?)\n\.\.\.$`)

// ParseUpdates reads the updated-dependencies block of a Dependabot commit
// message (the block dependabot/fetch-metadata reads).
func ParseUpdates(message string) ([]Update, error) {
	m := metadataRE.FindStringSubmatch(strings.ReplaceAll(message, "\r\n", "\n"))
	if m == nil {
		return nil, fmt.Errorf("no updated-dependencies block")
	}
	var doc struct {
		Updates []Update `yaml:"updated-dependencies"`
	}
	if err := yaml.Unmarshal([]byte(m[1]), &doc); err != nil {
		return nil, fmt.Errorf("updated-dependencies: %v", err)
	}
	if len(doc.Updates) == 0 {
		return nil, fmt.Errorf("updated-dependencies is empty")
	}
	for _, u := range doc.Updates {
		if u.Name == "" {
			return nil, fmt.Errorf("an update has no dependency-name")
		}
	}
	return doc.Updates, nil
}

var majorSuffix = regexp.MustCompile(`/v[0-9]+$`)

// IsDesignCardModule reports whether name is one of the four packages (or a
// package inside one), whatever its major version suffix.
func IsDesignCardModule(name string) bool {
	base := majorSuffix.ReplaceAllString(name, "")
	for _, m := range DesignCardModules {
		if base == m || strings.HasPrefix(name, m+"/") {
			return true
		}
	}
	return false
}

// Decide applies the rules in order; the first that fails refuses:
//  1. the run is CI (ci.yml) for a pull_request event and succeeded;
//  2. it belongs to an open, non-draft pull request whose head and base are
//     this repository (no fork) and whose current head is the run's commit;
//  3. the pull request and its head commit are Dependabot's;
//  4. the commit carries Dependabot's metadata, and no update is a major
//     update of a design-card package (those need a human review).
func Decide(f Facts) Decision {
	r := f.Run
	switch {
	case r.Path != CIWorkflow:
		return refuse("not-ci", "the run is %s, not %s", r.Path, CIWorkflow)
	case r.Event != "pull_request":
		return refuse("not-pull-request", "the run was triggered by %q, not pull_request", r.Event)
	case r.Conclusion != "success":
		return refuse("ci-failed", "CI concluded %q for %s; only a success is merged", r.Conclusion, r.HeadSHA)
	case f.PR == nil:
		return refuse("no-pull-request", "the run belongs to no pull request of %s (a fork's pull request is never listed)", f.Repository)
	}
	pr := f.PR
	switch {
	case !strings.EqualFold(r.HeadRepository, f.Repository) || !strings.EqualFold(pr.HeadRepository, f.Repository) ||
		!strings.EqualFold(pr.BaseRepository, f.Repository):
		return refuse("fork", "pull request #%d comes from %s, not from %s itself", pr.Number, pr.HeadRepository, f.Repository)
	case pr.State != "open" || pr.Draft:
		return refuse("not-open", "pull request #%d is %s (draft: %t)", pr.Number, pr.State, pr.Draft)
	case pr.HeadSHA != r.HeadSHA:
		return refuse("head-moved", "pull request #%d is at %s now; CI passed for %s, which is no longer its head", pr.Number, pr.HeadSHA, r.HeadSHA)
	case pr.Author != DependabotLogin:
		return refuse("not-dependabot", "pull request #%d is by %s; only %s's pull requests are merged automatically", pr.Number, pr.Author, DependabotLogin)
	case !strings.EqualFold(r.HeadCommit.AuthorEmail, DependabotEmail):
		return refuse("foreign-commit", "the head commit of pull request #%d is by %s, not Dependabot; review it by hand", pr.Number, r.HeadCommit.AuthorEmail)
	}
	updates, err := ParseUpdates(r.HeadCommit.Message)
	if err != nil {
		return refuse("no-metadata", "pull request #%d: cannot read Dependabot's metadata: %v", pr.Number, err)
	}
	for _, u := range updates {
		if IsDesignCardModule(u.Name) && u.UpdateType != "version-update:semver-minor" && u.UpdateType != "version-update:semver-patch" {
			d := refuse("major-design-card", "pull request #%d updates %s to %s (%s): a design-card package's major update needs a human review",
				pr.Number, u.Name, u.Version, u.UpdateType)
			d.Updates = updates
			return d
		}
	}
	return Decision{Merge: true, Reason: "merge", Updates: updates,
		Message: fmt.Sprintf("pull request #%d: CI passed for %s; %d update(s) by Dependabot", pr.Number, r.HeadSHA, len(updates))}
}
