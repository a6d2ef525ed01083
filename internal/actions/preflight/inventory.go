package preflight

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/runners"
)

// The preflight's retry budget (unity-lifecycle-facts.md §6; the reference's
// runner preflight row of spec §3.6).
const (
	// Deadline is shared by the installation lookup, the token mint and
	// every page: it leaves diagnostic and teardown headroom inside a
	// three-minute preflight job.
	Deadline = 150 * time.Second
	// MaxAttempts bounds each call (within the deadline).
	MaxAttempts = 13
	// RetryBase and RetryMax shape the full-jitter exponential backoff.
	RetryBase = 5 * time.Second
	RetryMax  = 60 * time.Second
)

// Permission is the one permission the reader token is minted with.
const (
	Permission      = "organization_self_hosted_runners"
	PermissionLevel = "read"
)

// Knobs are the ghclient knobs of this action. The BUILD_LOCK_API_*
// environment knobs do not apply: the preflight's budget is part of its
// contract with the consumer's three-minute job.
func Knobs() ghclient.Knobs {
	return ghclient.Knobs{MaxAttempts: MaxAttempts, Base: RetryBase, Max: RetryMax}
}

// inventory reads the runner groups visible to one repository and their
// runners through one client, under one budget.
type inventory struct {
	c          *ghclient.Client
	owner      string
	repository string
	budget     ghclient.Budget
	appID      int64
}

// groups lists the runner groups the repository may use.
func (v *inventory) groups(ctx context.Context) ([]runners.Group, error) {
	p := runners.NewPager("runner groups visible to " + v.repository)
	var out []runners.Group
	seen := map[int64]bool{}
	for more := true; more; {
		page := p.Page()
		var res *github.RunnerGroups
		err := v.c.Do(ctx, ghclient.Op{Name: fmt.Sprintf("GET /orgs/%s/actions/runner-groups (page %d)", v.owner, page), Budget: v.budget},
			func(ctx context.Context) (*github.Response, error) {
				r, resp, err := v.c.GitHub().Actions.ListOrganizationRunnerGroups(ctx, v.owner, &github.ListOrgRunnerGroupOptions{
					ListOptions: github.ListOptions{Page: page, PerPage: runners.PerPage}, VisibleToRepository: v.repository})
				res = r
				return resp, err
			})
		if err != nil {
			return nil, v.apiError(ctx, "list the runner groups", fmt.Sprintf("%s is not an organization whose runner groups the reader App can read (GitHub answered 404)", v.owner), err)
		}
		if res == nil {
			return nil, malformed("the runner group listing is empty")
		}
		for _, g := range res.RunnerGroups {
			if g == nil || !runners.ValidID(g.GetID()) {
				return nil, malformed("a runner group has no valid id")
			}
			if !seen[g.GetID()] {
				seen[g.GetID()] = true
				out = append(out, runners.Group{ID: g.GetID(), Name: g.GetName()})
			}
		}
		if more, err = p.Add(len(res.RunnerGroups), res.TotalCount); err != nil {
			return nil, inconsistent(err)
		}
	}
	return out, nil
}

// runners lists the runners of one group.
func (v *inventory) runners(ctx context.Context, g runners.Group) ([]runners.Runner, error) {
	p := runners.NewPager(fmt.Sprintf("runners of group %d (%s)", g.ID, runners.DisplayName(g.Name)))
	var out []runners.Runner
	for more := true; more; {
		page := p.Page()
		var res *github.Runners
		err := v.c.Do(ctx, ghclient.Op{Name: fmt.Sprintf("GET /orgs/%s/actions/runner-groups/%d/runners (page %d)", v.owner, g.ID, page), Budget: v.budget},
			func(ctx context.Context) (*github.Response, error) {
				r, resp, err := v.c.GitHub().Actions.ListRunnerGroupRunners(ctx, v.owner, g.ID, &github.ListOptions{Page: page, PerPage: runners.PerPage})
				res = r
				return resp, err
			})
		if err != nil {
			return nil, v.apiError(ctx, fmt.Sprintf("list the runners of group %d", g.ID),
				fmt.Sprintf("runner group %d disappeared while the inventory was read (GitHub answered 404); re-run the job", g.ID), err)
		}
		if res == nil {
			return nil, malformed("a runner listing is empty")
		}
		for _, r := range res.Runners {
			if r == nil || !runners.ValidID(r.GetID()) {
				return nil, malformed("a runner has no valid id")
			}
			rr := runners.Runner{ID: r.GetID(), Name: r.GetName(), Status: r.GetStatus(), Busy: r.GetBusy(), GroupID: g.ID}
			for _, l := range r.Labels {
				if l != nil && l.GetName() != "" {
					rr.Labels = append(rr.Labels, l.GetName())
				}
			}
			out = append(out, rr)
		}
		if more, err = p.Add(len(res.Runners), res.TotalCount); err != nil {
			return nil, inconsistent(err)
		}
	}
	return out, nil
}

func malformed(what string) error {
	return &Error{Reason: ReasonInventoryUnreadable, Message: "GitHub answered with data that is not a runner inventory: " + what}
}

func inconsistent(err error) error {
	return &Error{Reason: ReasonInventoryInconsistent, Err: err,
		Message: err.Error() + "; the inventory cannot be trusted, re-run the job"}
}

// apiError classifies a failed call; notFound explains a 404 of the call
// itself. A cancelled run returns the error unchanged (the runner's signal
// decides the exit code).
func (v *inventory) apiError(ctx context.Context, what, notFound string, err error) error {
	if ctx.Err() != nil {
		return err
	}
	if ghclient.IsExhausted(err) {
		return &Error{Reason: ReasonAPIUnavailable, Err: err, Message: fmt.Sprintf(
			"could not %s within the preflight's retry budget (%d attempts per call, one %s deadline): this is a GitHub API or authentication availability failure, not evidence that a required runner is missing; re-run the job: %v",
			what, MaxAttempts, Deadline, err)}
	}
	var ge *ghclient.Error
	status, op := 0, ""
	credential := false
	if errors.As(err, &ge) {
		status, op, credential = ge.Status, ge.Op, ge.CredentialFailure
		var inner *ghclient.Error
		if credential && errors.As(ge.Err, &inner) {
			status, op = inner.Status, inner.Op
		}
	}
	var fix string
	switch {
	case credential && status == http.StatusNotFound:
		fix = fmt.Sprintf("the reader GitHub App (id %d) is not installed on %s; install it on the organization with the organization permission %s: %s", v.appID, v.owner, Permission, PermissionLevel)
	case credential && status == http.StatusUnprocessableEntity:
		fix = fmt.Sprintf("the reader GitHub App's installation on %s does not grant the organization permission %s: %s (\"Self-hosted runners: Read\"); grant it in the App's settings and accept the new permission on the organization", v.owner, Permission, PermissionLevel)
	case credential && status == http.StatusUnauthorized:
		fix = fmt.Sprintf("GitHub rejected the reader App's credentials: check reader-app-id (%d) and reader-app-private-key", v.appID)
	case credential:
		fix = "the reader App installation token could not be minted"
	case status == http.StatusForbidden:
		fix = fmt.Sprintf("the reader App installation token lacks the organization permission %s: %s (\"Self-hosted runners: Read\") on %s, or the organization refuses the App", Permission, PermissionLevel, v.owner)
	case status == http.StatusNotFound:
		fix = notFound
	default:
		fix = "GitHub refused the request"
	}
	if op == "" {
		op = what
	}
	return &Error{Reason: ReasonInventoryUnreadable, Err: err, Message: fmt.Sprintf("could not %s: %s (%s: %v)", what, fix, op, err)}
}
