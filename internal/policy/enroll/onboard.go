package enroll

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/markdown"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy/registry"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy/snapshot"
)

// ErrRefused marks an onboarding request that fails validation (exit 2):
// nothing was written.
var ErrRefused = errors.New("enroll: onboarding refused")

// Request is one onboarding request (the request workflow's inputs).
type Request struct {
	// Repository is "owner/name" of the candidate.
	Repository string
	// DefaultBranch, when set, must equal GitHub's default branch.
	DefaultBranch string
	// Fork, when set ("true"/"false"), must equal GitHub's fork flag.
	Fork string
	// AllowWorkflowDispatch admits a dispatch-only canary workflow.
	AllowWorkflowDispatch bool
	// EvidenceURL is the request run's URL, kept in the pull request body.
	EvidenceURL string
}

// MaxRequestBytes bounds a request file.
const MaxRequestBytes = 4096

// DecodeRequest reads the request workflow's enrollment-request.json:
// exactly {"repository", "defaultBranch", "fork", "allowWorkflowDispatch"},
// nothing else, at most MaxRequestBytes. Its values are validated again by
// Onboard; a malformed request is refused.
func DecodeRequest(data []byte) (Request, error) {
	if len(data) > MaxRequestBytes {
		return Request{}, fmt.Errorf("%w: the request exceeds %d bytes", ErrRefused, MaxRequestBytes)
	}
	var w struct {
		Repository            *string `json:"repository"`
		DefaultBranch         *string `json:"defaultBranch"`
		Fork                  *string `json:"fork"`
		AllowWorkflowDispatch *bool   `json:"allowWorkflowDispatch"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return Request{}, fmt.Errorf("%w: the request is not valid: %v", ErrRefused, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Request{}, fmt.Errorf("%w: the request holds more than one JSON value", ErrRefused)
	}
	if w.Repository == nil || w.DefaultBranch == nil || w.Fork == nil || w.AllowWorkflowDispatch == nil {
		return Request{}, fmt.Errorf("%w: the request must set repository, defaultBranch, fork and allowWorkflowDispatch", ErrRefused)
	}
	return Request{Repository: *w.Repository, DefaultBranch: *w.DefaultBranch, Fork: *w.Fork, AllowWorkflowDispatch: *w.AllowWorkflowDispatch}, nil
}

// Onboarder opens the registry pull request for one repository.
type Onboarder struct {
	// LockRepository is "owner/name" of the lock repository.
	LockRepository string
	// Lock is the lock repository's client (GITHUB_TOKEN: contents: write,
	// pull-requests: write).
	Lock *ghclient.Client
	// Reader returns the reader App's client for the candidate.
	Reader ClientFor
	// Now is the clock for the candidate's preview audit.
	Now func() time.Time
}

// Onboarded is what Onboard did.
type Onboarded struct {
	// Row is the registry row added.
	Row registry.Repository
	// Head is the candidate's default-branch commit.
	Head string
	// Branch is the lock repository branch carrying the change.
	Branch string
	// PullRequest is the pull request's number and URL.
	PullRequest int
	URL         string
	// Existing is true when an open pull request for the branch was
	// already there (nothing was written).
	Existing bool
	// Preview is the candidate's audit at Head.
	Preview policy.Result
}

// BranchFor is the lock repository branch of repository's onboarding.
func BranchFor(repository string) string {
	return "enrollment/" + strings.ToLower(strings.ReplaceAll(repository, "/", "-"))
}

// Onboard validates the candidate (the lock repository's owner, exists and
// readable by the reader App, GitHub's fork flag and default branch, a
// 40-hex head), adds its row to the registry, and opens a pull request on
// the lock repository whose body carries the sanitized facts, the preview
// audit and the manual checklist. A refusal writes nothing.
func (o *Onboarder) Onboard(ctx context.Context, req Request) (*Onboarded, error) {
	lockOwner, lockName, ok := registry.SplitRepository(o.LockRepository)
	if !ok {
		return nil, fmt.Errorf("%w: lock repository %q is not owner/name", ErrRefused, o.LockRepository)
	}
	owner, name, ok := registry.SplitRepository(strings.TrimSpace(req.Repository))
	if !ok {
		return nil, fmt.Errorf("%w: repository %q is not owner/name", ErrRefused, req.Repository)
	}
	if !strings.EqualFold(owner, lockOwner) {
		return nil, fmt.Errorf("%w: %s/%s is not in the lock repository's organization %s", ErrRefused, owner, name, lockOwner)
	}
	if req.Fork != "" && req.Fork != "true" && req.Fork != "false" {
		return nil, fmt.Errorf("%w: fork must be true or false", ErrRefused)
	}
	if req.DefaultBranch != "" && !registry.ValidRefName(req.DefaultBranch) {
		return nil, fmt.Errorf("%w: default branch is not a valid branch name", ErrRefused)
	}
	lockInfo, err := snapshot.ResolveHead(ctx, o.Lock, lockOwner, lockName, "")
	if err != nil {
		return nil, fmt.Errorf("read the lock repository %s: %w", o.LockRepository, err)
	}
	reg, err := ReadRegistry(ctx, o.Lock, o.LockRepository, lockInfo.Head)
	if err != nil {
		return nil, err
	}
	if _, ok := reg.Lookup(owner + "/" + name); ok {
		return nil, fmt.Errorf("%w: %s/%s is already registered", ErrRefused, owner, name)
	}
	rc, err := o.Reader(ctx, owner+"/"+name)
	if err != nil {
		return nil, fmt.Errorf("%w: the reader App cannot read %s/%s: %v", ErrRefused, owner, name, err)
	}
	info, err := snapshot.ResolveHead(ctx, rc, owner, name, "")
	if err != nil {
		return nil, fmt.Errorf("%w: the reader App cannot read %s/%s (install it on the repository): %v", ErrRefused, owner, name, err)
	}
	if !strings.EqualFold(info.FullName, owner+"/"+name) {
		return nil, fmt.Errorf("%w: GitHub names the repository %q (renamed or transferred?)", ErrRefused, info.FullName)
	}
	if req.DefaultBranch != "" && req.DefaultBranch != info.DefaultBranch {
		return nil, fmt.Errorf("%w: the request names default branch %q but GitHub reports %q", ErrRefused, req.DefaultBranch, info.DefaultBranch)
	}
	if req.Fork != "" && (req.Fork == "true") != info.Fork {
		return nil, fmt.Errorf("%w: the request says fork=%s but GitHub reports fork=%t", ErrRefused, req.Fork, info.Fork)
	}
	if info.Fork {
		return nil, fmt.Errorf("%w: %s is a fork; enroll the upstream repository instead", ErrRefused, info.FullName)
	}
	row := registry.Repository{Repository: info.FullName, DefaultBranch: info.DefaultBranch, Fork: info.Fork, AllowWorkflowDispatch: req.AllowWorkflowDispatch}
	next, err := reg.Add(row, registry.DecodeOptions{Organization: lockOwner})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	data, err := registry.Encode(next, registry.DecodeOptions{Organization: lockOwner})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	out := &Onboarded{Row: row, Head: info.Head, Branch: BranchFor(info.FullName)}
	src, err := snapshot.NewGitHub(ctx, rc, owner, name, info.Head)
	if err != nil {
		return nil, fmt.Errorf("%w: read %s at %s: %v", ErrRefused, info.FullName, info.Head, err)
	}
	snap, err := snapshot.Load(ctx, info.FullName, info.Head, src, nil)
	if err != nil {
		return nil, err
	}
	pol, _ := policy.PolicyFor(next, o.LockRepository, info.FullName, o.Now())
	out.Preview = policy.Analyze(snap, pol)

	if n, u, found, err := o.openPull(ctx, lockOwner, lockName, out.Branch); err != nil {
		return nil, err
	} else if found {
		out.PullRequest, out.URL, out.Existing = n, u, true
		return out, nil
	}
	if err := o.createBranch(ctx, lockOwner, lockName, out.Branch, lockInfo.Head); err != nil {
		return nil, err
	}
	if err := o.putRegistry(ctx, lockOwner, lockName, out.Branch, data, row.Repository); err != nil {
		return nil, err
	}
	body := PullRequestBody(out, req, o.LockRepository)
	n, u, err := o.createPull(ctx, lockOwner, lockName, out.Branch, lockInfo.DefaultBranch, "enrollment: register "+info.FullName, body)
	if err != nil {
		return nil, err
	}
	out.PullRequest, out.URL = n, u
	return out, nil
}

func (o *Onboarder) openPull(ctx context.Context, owner, name, branch string) (int, string, bool, error) {
	gh := o.Lock.GitHub()
	var prs []*github.PullRequest
	err := o.Lock.Do(ctx, ghclient.Op{Name: "GET pulls " + owner + "/" + name}, func(ctx context.Context) (*github.Response, error) {
		got, resp, err := gh.PullRequests.List(ctx, owner, name, &github.PullRequestListOptions{State: "open", Head: owner + ":" + branch})
		prs = got
		return resp, err
	})
	if err != nil {
		return 0, "", false, fmt.Errorf("list pull requests of %s/%s: %w", owner, name, err)
	}
	for _, pr := range prs {
		if pr.GetHead().GetRef() == branch {
			return pr.GetNumber(), pr.GetHTMLURL(), true, nil
		}
	}
	return 0, "", false, nil
}

func (o *Onboarder) createBranch(ctx context.Context, owner, name, branch, base string) error {
	gh := o.Lock.GitHub()
	err := o.Lock.Do(ctx, ghclient.Op{Name: "POST ref heads/" + branch, Mutation: true}, func(ctx context.Context) (*github.Response, error) {
		_, resp, err := gh.Git.CreateRef(ctx, owner, name, &github.Reference{Ref: github.String("refs/heads/" + branch), Object: &github.GitObject{SHA: github.String(base)}})
		return resp, err
	})
	if ghclient.IsConflict(err) {
		return fmt.Errorf("%w: branch %s already exists in %s/%s without an open pull request; delete it and rerun", ErrRefused, branch, owner, name)
	}
	if err != nil {
		return fmt.Errorf("create branch %s in %s/%s: %w", branch, owner, name, err)
	}
	return nil
}

func (o *Onboarder) putRegistry(ctx context.Context, owner, name, branch string, data []byte, repo string) error {
	gh := o.Lock.GitHub()
	var cur *github.RepositoryContent
	err := o.Lock.Do(ctx, ghclient.Op{Name: "GET contents " + registry.Path}, func(ctx context.Context) (*github.Response, error) {
		got, _, resp, err := gh.Repositories.GetContents(ctx, owner, name, registry.Path, &github.RepositoryContentGetOptions{Ref: branch})
		cur = got
		return resp, err
	})
	if err != nil {
		return fmt.Errorf("read %s on %s: %w", registry.Path, branch, err)
	}
	opts := &github.RepositoryContentFileOptions{Message: github.String("enrollment: register " + repo), Content: data,
		SHA: github.String(cur.GetSHA()), Branch: github.String(branch)}
	err = o.Lock.Do(ctx, ghclient.Op{Name: "PUT contents " + registry.Path, Mutation: true}, func(ctx context.Context) (*github.Response, error) {
		_, resp, err := gh.Repositories.UpdateFile(ctx, owner, name, registry.Path, opts)
		return resp, err
	})
	if err != nil {
		return fmt.Errorf("write %s on %s: %w", registry.Path, branch, err)
	}
	return nil
}

func (o *Onboarder) createPull(ctx context.Context, owner, name, head, base, title, body string) (int, string, error) {
	gh := o.Lock.GitHub()
	var pr *github.PullRequest
	err := o.Lock.Do(ctx, ghclient.Op{Name: "POST pull " + owner + "/" + name, Mutation: true}, func(ctx context.Context) (*github.Response, error) {
		got, resp, err := gh.PullRequests.Create(ctx, owner, name, &github.NewPullRequest{Title: github.String(title), Head: github.String(head),
			Base: github.String(base), Body: github.String(body)})
		pr = got
		return resp, err
	})
	if err != nil {
		return 0, "", fmt.Errorf("open the pull request on %s/%s: %w", owner, name, err)
	}
	return pr.GetNumber(), pr.GetHTMLURL(), nil
}

// Checklist is the manual part of enrollment: what no API call can prove.
var Checklist = []string{
	"The reader App's installation selects this repository (selected repositories, not all), with contents: read.",
	"The organization secrets BUILD_LOCK_APP_ID, BUILD_LOCK_APP_PRIVATE_KEY and the Unity secrets are visible to this repository only through selected-repository access.",
	"The self-hosted Unity runner group is visible to this repository (and the preflight's label sets match its runners).",
	"A ruleset or CODEOWNERS requires review of .github/workflows/** and .github/actions/** on the default branch.",
	"Canary: a same-repository pull request is admitted, its cleanup is confirmed and healthy, the lock shows no residue (no holder, queue entry or quarantine of the run), and a fork pull request gets no credentials (its licensed job is skipped).",
}

// PullRequestBody renders the onboarding pull request's body: the facts
// GitHub reported, the preview audit (codes and counts only) and the
// checklist.
func PullRequestBody(o *Onboarded, req Request, lockRepository string) string {
	esc := markdown.Text
	var b strings.Builder
	fmt.Fprintf(&b, "Registers `%s` in `%s` (the organization Unity enrollment registry).\n\n", esc(o.Row.Repository), registry.Path)
	b.WriteString("| Fact (as GitHub reports it) | Value |\n|---|---|\n")
	fmt.Fprintf(&b, "| Repository | `%s` |\n| Default branch | `%s` |\n| Fork | `%t` |\n| Default-branch head | `%s` |\n| workflow_dispatch allowed | `%t` |\n",
		esc(o.Row.Repository), esc(o.Row.DefaultBranch), o.Row.Fork, o.Head, o.Row.AllowWorkflowDispatch)
	if u, err := url.Parse(req.EvidenceURL); err == nil && u.Scheme == "https" && u.User == nil {
		fmt.Fprintf(&b, "| Request run | [evidence](%s) |\n", u.String())
	}
	b.WriteString("\n### Audit of the head commit\n\n")
	if o.Preview.Clean() {
		b.WriteString("Clean: no finding.\n")
	} else {
		counts := map[policy.Code]int{}
		for _, f := range o.Preview.Findings {
			counts[f.Code]++
		}
		codes := make([]string, 0, len(counts))
		for c := range counts {
			codes = append(codes, string(c))
		}
		sort.Strings(codes)
		fmt.Fprintf(&b, "%d findings (the daily audit reports them in the drift issue once this merges):\n\n| Code | Count | Fix |\n|---|---|---|\n", len(o.Preview.Findings))
		for _, c := range codes {
			fmt.Fprintf(&b, "| `%s` | %d | %s |\n", c, counts[policy.Code(c)], esc(policy.Hint(policy.Code(c))))
		}
	}
	classes := map[policy.Class]int{}
	for _, r := range o.Preview.Inventory {
		classes[r.Class]++
	}
	if len(classes) > 0 {
		var parts []string
		for _, c := range []policy.Class{policy.PaidSerial, policy.ControlledCanary, policy.FallbackCleanup, policy.Synthetic, policy.Disabled, policy.NonLicensingStatic} {
			if n := classes[c]; n > 0 {
				parts = append(parts, fmt.Sprintf("%d `%s`", n, c))
			}
		}
		fmt.Fprintf(&b, "\nInventory: %s.\n", strings.Join(parts, ", "))
	}
	b.WriteString("\n### Manual checklist (before merging)\n\n")
	for _, item := range Checklist {
		b.WriteString("- [ ] " + item + "\n")
	}
	fmt.Fprintf(&b, "\n_Opened by the onboarding workflow of `%s`; see docs/enrollment.md._\n", esc(lockRepository))
	return b.String()
}
