package enroll

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/google/go-github/v66/github"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/githubissue"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/markdown"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy"
)

// Drift issue identity and bounds (enrollment contract "Drift issue").
const (
	// Marker identifies the drift issue (with its author).
	Marker = "<!-- unity-enrollment-audit:v1 -->"
	// Title is the issue's title on creation; operators may rename it.
	Title = "policy: organization Unity enrollment drift detected"
	// MaxBodyBytes bounds the body (60 KiB, inside GitHub's 65,536).
	MaxBodyBytes = 60 << 10
	// PreviewFindings and PreviewInventory bound the preview tables.
	PreviewFindings  = 40
	PreviewInventory = 16
	// ArtifactRetentionDays is how long the evidence artifact is kept.
	ArtifactRetentionDays = 30
)

// ErrArtifactURL means an artifact URL that is not this run's artifact.
var ErrArtifactURL = errors.New("enroll: invalid artifact URL")

var artifactPathRE = regexp.MustCompile(`^/([A-Za-z0-9-]+)/([A-Za-z0-9_.-]+)/actions/runs/([1-9][0-9]*)/artifacts/([1-9][0-9]*)$`)

// ValidateArtifactURL accepts only https on the server's host, under
// /<repository>/actions/runs/<runID>/artifacts/<id> (the URL
// actions/upload-artifact reports), so the issue never links elsewhere.
func ValidateArtifactURL(raw, serverURL, repository, runID string) (string, error) {
	u, err := url.Parse(raw)
	server, err2 := url.Parse(serverURL)
	if err != nil || err2 != nil || u.Scheme != "https" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || !strings.EqualFold(u.Host, server.Host) {
		return "", fmt.Errorf("%w: must be an https URL on %s without credentials, query or fragment", ErrArtifactURL, server.Host)
	}
	m := artifactPathRE.FindStringSubmatch(u.EscapedPath())
	if m == nil || !strings.EqualFold(m[1]+"/"+m[2], repository) || (runID != "" && m[3] != runID) {
		return "", fmt.Errorf("%w: must be /%s/actions/runs/%s/artifacts/<id>", ErrArtifactURL, repository, runID)
	}
	return u.String(), nil
}

// classRank orders the inventory preview: what holds seats first.
var classRank = map[policy.Class]int{policy.PaidSerial: 0, policy.ControlledCanary: 1, policy.FallbackCleanup: 2,
	policy.Synthetic: 3, policy.Disabled: 4, policy.NonLicensingStatic: 5}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	if sha == "" {
		return "-"
	}
	return sha
}

// RenderBody renders the deterministic drift issue body: the same artifact
// and URL give the same bytes. Every field was validated by DecodeArtifact
// and is escaped again here; the preview is bounded (PreviewFindings,
// PreviewInventory, omission counts) and the body is cut to MaxBodyBytes
// by shrinking the preview, never the counts.
func RenderBody(a *Artifact, artifactURL, docsURL string) string {
	nf, ni := min(PreviewFindings, len(a.Findings)), min(PreviewInventory, len(a.Inventory))
	for {
		b := renderBody(a, artifactURL, docsURL, nf, ni)
		if len(b) <= MaxBodyBytes || (nf == 0 && ni == 0) {
			return b
		}
		if nf > 0 {
			nf = nf * 3 / 4
		} else {
			ni = ni * 3 / 4
		}
	}
}

func renderBody(a *Artifact, artifactURL, docsURL string, nf, ni int) string {
	esc := markdown.Text
	var b strings.Builder
	b.WriteString(Marker + "\n")
	if a.Clean() {
		b.WriteString("## Organization Unity enrollment audit is clean\n\n")
	} else {
		b.WriteString("## Organization Unity enrollment drift detected\n\n")
	}
	complete := "complete"
	if !a.Complete {
		complete = "**incomplete**: at least one repository could not be read or analyzed completely, so what is not listed was not proven safe"
	}
	fmt.Fprintf(&b, "Audit of %d enrolled repositories in `%s`: **%d findings**, %d inventory rows; %s.\n\n",
		len(a.Repositories), esc(a.LockRepository), len(a.Findings), len(a.Inventory), complete)
	if artifactURL != "" {
		fmt.Fprintf(&b, "Full sanitized evidence: [audit artifact](%s) (kept %d days).", artifactURL, ArtifactRetentionDays)
	}
	if docsURL != "" {
		fmt.Fprintf(&b, " Every code and its fix: [docs/enrollment.md](%s).", docsURL)
	}
	b.WriteString("\n\n")
	if len(a.Findings) > 0 {
		b.WriteString("### Findings\n\n| Repository | Commit | Code | Path | Job |\n|---|---|---|---|---|\n")
		for _, f := range a.Findings[:nf] {
			p := esc(f.Path)
			if f.Line > 0 {
				p = fmt.Sprintf("%s:%d", p, f.Line)
			}
			code := "`" + string(f.Code) + "`"
			if f.Detail != "" {
				code += " (" + esc(f.Detail) + ")"
			}
			fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s |\n", esc(f.Repository), short(f.SHA), code, p, esc(f.Job))
		}
		if n := len(a.Findings) - nf; n > 0 {
			fmt.Fprintf(&b, "\n_%d more findings omitted; the artifact has all of them._\n", n)
		}
		b.WriteString("\n")
	}
	if len(a.Inventory) > 0 {
		inv := append([]InventoryRow(nil), a.Inventory...)
		sort.SliceStable(inv, func(i, j int) bool { return classRank[inv[i].Classification] < classRank[inv[j].Classification] })
		b.WriteString("### Inventory (jobs that can hold a seat first)\n\n| Repository | Commit | Path | Job | Class |\n|---|---|---|---|---|\n")
		for _, r := range inv[:ni] {
			fmt.Fprintf(&b, "| %s | `%s` | %s | %s | `%s` |\n", esc(r.Repository), short(r.SHA), esc(r.Path), esc(r.Job), r.Classification)
		}
		if n := len(a.Inventory) - ni; n > 0 {
			fmt.Fprintf(&b, "\n_%d more inventory rows omitted; the artifact has all of them._\n", n)
		}
		b.WriteString("\n")
	}
	b.WriteString("_Maintained by the Organization Unity enrollment audit (`enrollment-audit.yml`). It reads each enrolled repository's " +
		"default-branch commit through the Git API, executes nothing, and closes this issue when a complete audit is clean._\n")
	return b.String()
}

// IssueSyncer keeps the one drift issue.
type IssueSyncer struct {
	// Issues is the issue client of the lock repository (GITHUB_TOKEN with
	// issues: write).
	Issues *githubissue.Client
	// GitHub is the same client, for the duplicate repair.
	GitHub *ghclient.Client
	// Owner and Repo name the lock repository.
	Owner, Repo string
}

// Sync opens or updates the issue when the audit has drift, and closes it
// (rewriting the body once, then leaving it alone) when a complete audit is
// clean. Two syncs that race can both create an issue; the one that finds
// a duplicate after its own create removes the marker from the issue it
// created (the newer one) and closes it, then syncs again, so exactly one
// issue carries the marker afterwards.
func (s *IssueSyncer) Sync(ctx context.Context, body string, clean bool) (githubissue.Result, error) {
	if !utf8.ValidString(body) || len(body) > MaxBodyBytes {
		return githubissue.Result{}, fmt.Errorf("enroll: drift issue body must be valid UTF-8 of at most %d bytes", MaxBodyBytes)
	}
	spec := githubissue.Spec{Marker: Marker, Title: Title, Body: body, State: githubissue.Open}
	if clean {
		spec.State, spec.ClosedIsTerminal = githubissue.Closed, true
	}
	res, err := s.Issues.Sync(ctx, spec)
	if err == nil || !errors.Is(err, githubissue.ErrDuplicate) || res.Action != githubissue.ActionCreated || res.Issue == nil {
		return res, err
	}
	// Our create raced another run's: retire ours if it is the newer one.
	all, ferr := s.duplicates(ctx)
	if ferr != nil {
		return res, errors.Join(err, ferr)
	}
	if len(all) > 1 && all[0] != res.Issue.Number {
		if rerr := s.retire(ctx, res.Issue.Number, all[0]); rerr != nil {
			return res, errors.Join(err, rerr)
		}
	}
	return s.Issues.Sync(ctx, spec)
}

// duplicates returns the numbers of every issue matching the marker,
// lowest first.
func (s *IssueSyncer) duplicates(ctx context.Context) ([]int, error) {
	gh := s.GitHub.GitHub()
	var nums []int
	opts := &github.IssueListByRepoOptions{State: "all", Creator: githubissue.DefaultAuthor, ListOptions: github.ListOptions{PerPage: 100}}
	for page := 1; page <= githubissue.DefaultMaxPages; page++ {
		opts.Page = page
		var batch []*github.Issue
		var next int
		err := s.GitHub.Do(ctx, ghclient.Op{Name: "GET issues " + s.Owner + "/" + s.Repo}, func(ctx context.Context) (*github.Response, error) {
			b, resp, err := gh.Issues.ListByRepo(ctx, s.Owner, s.Repo, opts)
			batch = b
			if resp != nil {
				next = resp.NextPage
			}
			return resp, err
		})
		if err != nil {
			return nil, err
		}
		for _, is := range batch {
			if !is.IsPullRequest() && strings.Contains(is.GetBody(), Marker) && strings.EqualFold(is.GetUser().GetLogin(), githubissue.DefaultAuthor) {
				nums = append(nums, is.GetNumber())
			}
		}
		if next == 0 {
			break
		}
	}
	sort.Ints(nums)
	return nums, nil
}

// retire closes issue n as a duplicate of keep, without the marker.
func (s *IssueSyncer) retire(ctx context.Context, n, keep int) error {
	gh := s.GitHub.GitHub()
	req := &github.IssueRequest{State: github.String("closed"), StateReason: github.String("not_planned"),
		Body: github.String(fmt.Sprintf("Duplicate of #%d (two enrollment audits raced).", keep))}
	return s.GitHub.Do(ctx, ghclient.Op{Name: fmt.Sprintf("PATCH issue %s/%s#%d", s.Owner, s.Repo, n), Mutation: true}, func(ctx context.Context) (*github.Response, error) {
		_, resp, err := gh.Issues.Edit(ctx, s.Owner, s.Repo, n, req)
		return resp, err
	})
}
