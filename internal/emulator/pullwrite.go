package emulator

import (
	"net/http"
	"sort"
	"strings"
	"time"
)

// Opening and listing pull requests (the onboarding program opens one on
// the lock repository).

// pullJSON is a pull request in the REST shape (with its body).
func (c *reqCtx) pullJSON(r *repo, pr *PullRequest) map[string]any {
	is := r.issues[pr.Number]
	full := r.fullName()
	repoObj := c.repoJSON(r)
	return c.fullPullJSON(r, pr, map[string]any{
		"id": is.ID, "number": pr.Number, "state": pr.State, "title": pr.Title, "body": nullable(is.Body), "merged": pr.Merged, "draft": false,
		"url":        c.api("/repos/%s/pulls/%d", full, pr.Number),
		"html_url":   c.web("/%s/pull/%d", full, pr.Number),
		"head":       map[string]any{"ref": pr.HeadRef, "sha": pr.HeadSHA, "label": r.owner.Login + ":" + pr.HeadRef, "repo": repoObj},
		"base":       map[string]any{"ref": pr.BaseRef, "sha": r.branches[pr.BaseRef], "label": r.owner.Login + ":" + pr.BaseRef, "repo": repoObj},
		"user":       map[string]any{"login": is.Author.Login, "id": is.Author.ID, "type": is.Author.Type},
		"created_at": is.Created.Format(time.RFC3339), "updated_at": is.Updated.Format(time.RFC3339), "closed_at": timeOrNull(is.Closed),
	})
}

// headBranch accepts "branch" or "owner:branch" of this repository's owner.
func headBranch(r *repo, head string) (string, bool) {
	if o, b, ok := strings.Cut(head, ":"); ok {
		return b, strings.EqualFold(o, r.owner.Login)
	}
	return head, true
}

// POST /repos/{owner}/{repo}/pulls {title, head, base, body}
// https://docs.github.com/en/rest/pulls/pulls#create-a-pull-request — 201;
// 422 when the head or base branch does not exist, when there are no
// commits between them, or when an open pull request already exists for
// the head ("A pull request already exists for owner:branch."). Forks
// (head owners other than the repository's) are not modeled.
func hCreatePull(c *reqCtx) *response {
	r, resp := c.repo("pull_requests", "write")
	if resp != nil {
		return resp
	}
	var body struct {
		Title *string `json:"title"`
		Head  string  `json:"head"`
		Base  string  `json:"base"`
		Body  *string `json:"body"`
	}
	if resp := c.decode(&body); resp != nil {
		return resp
	}
	if body.Title == nil || strings.TrimSpace(*body.Title) == "" || body.Head == "" || body.Base == "" {
		return c.validation("Validation Failed")
	}
	head, ok := headBranch(r, body.Head)
	headSHA, exists := r.branches[head]
	if !ok || !exists {
		return c.validationFailed(validationError{Resource: "PullRequest", Field: "head", Code: "invalid"})
	}
	baseSHA, exists := r.branches[body.Base]
	if !exists {
		return c.validationFailed(validationError{Resource: "PullRequest", Field: "base", Code: "invalid"})
	}
	if headSHA == baseSHA || isAncestor(r, headSHA, baseSHA) {
		return c.validationFailed(validationError{Resource: "PullRequest", Code: "custom", Message: "No commits between " + body.Base + " and " + head})
	}
	for _, pr := range r.pulls {
		if pr.State == "open" && pr.HeadRef == head && pr.BaseRef == body.Base {
			return c.validationFailed(validationError{Resource: "PullRequest", Code: "custom", Message: "A pull request already exists for " + r.owner.Login + ":" + head + "."})
		}
	}
	now := c.e.now()
	pr := &PullRequest{Number: r.nextNumber(), State: "open", Title: *body.Title, HeadSHA: headSHA, HeadRef: head, BaseRef: body.Base}
	is := &issue{Number: pr.Number, ID: c.e.newID(), Title: pr.Title, State: "open", isPull: true,
		Author: user{Login: c.cred.botLogin, ID: c.cred.botID, Type: "Bot"}, Created: now, Updated: now}
	if body.Body != nil {
		is.Body = *body.Body
	}
	r.pulls[pr.Number], r.issues[pr.Number] = pr, is
	resp = c.json(http.StatusCreated, c.pullJSON(r, pr))
	resp.header.Set("Location", c.api("/repos/%s/pulls/%d", r.fullName(), pr.Number))
	return resp
}

// GET /repos/{owner}/{repo}/pulls?state=&head=owner:branch&base=
// https://docs.github.com/en/rest/pulls/pulls#list-pull-requests — state
// defaults to open; newest first; paginated.
func hListPulls(c *reqCtx) *response {
	r, resp := c.repo("pull_requests", "read")
	if resp != nil {
		return resp
	}
	state := c.query.Get("state")
	if state == "" {
		state = "open"
	}
	if state != "open" && state != "closed" && state != "all" {
		return c.validation("Validation Failed")
	}
	var head string
	if h := c.query.Get("head"); h != "" {
		b, ok := headBranch(r, h)
		if !ok {
			return c.paged(http.StatusOK, []any{}, "")
		}
		head = b
	}
	base := c.query.Get("base")
	var nums []int
	for n, pr := range r.pulls {
		if (state == "all" || pr.State == state) && (head == "" || pr.HeadRef == head) && (base == "" || pr.BaseRef == base) {
			nums = append(nums, n)
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(nums)))
	lo, hi, link := c.paginate(len(nums))
	out := make([]any, 0, hi-lo)
	for _, n := range nums[lo:hi] {
		out = append(out, c.pullJSON(r, r.pulls[n]))
	}
	return c.paged(http.StatusOK, out, link)
}

// PullRequestBody returns the body of pull request number, and whether it
// exists (admin/test helper).
func (e *Emulator) PullRequestBody(ownerLogin, repoName string, number int) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, err := e.repoLocked(ownerLogin, repoName)
	if err != nil {
		return "", false
	}
	if _, ok := r.pulls[number]; !ok {
		return "", false
	}
	return r.issues[number].Body, true
}
