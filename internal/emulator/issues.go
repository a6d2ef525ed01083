package emulator

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// PullRequest is a pull request as seeded with SetPullRequest or
// AddPullRequest.
type PullRequest struct {
	Number  int    `json:"number"`
	State   string `json:"state"` // "open" | "closed"
	Title   string `json:"title"`
	HeadSHA string `json:"head_sha"`
	HeadRef string `json:"head_ref"`
	BaseRef string `json:"base_ref"`
	Merged  bool   `json:"merged"`
}

type user struct {
	Login string
	ID    int64
	Type  string
}

type issue struct {
	Number      int
	ID          int64
	Title       string
	Body        string
	State       string
	StateReason string
	Labels      []string
	Author      user
	Created     time.Time
	Updated     time.Time
	Closed      time.Time
	isPull      bool
}

func (r *repo) nextNumber() int {
	n := 0
	for k := range r.issues {
		n = max(n, k)
	}
	return n + 1
}

// SetPullRequest creates or updates pull request number with state
// ("open"/"closed") and head sha. Pull requests share the issue number
// space, so they also appear (with a pull_request key) in the issues list.
func (e *Emulator) SetPullRequest(ownerLogin, repoName string, number int, state, headSHA string) {
	e.AddPullRequest(ownerLogin, repoName, PullRequest{Number: number, State: state, HeadSHA: headSHA})
}

// AddPullRequest creates or replaces a pull request; Number 0 allocates the
// next issue number. It returns the number.
func (e *Emulator) AddPullRequest(ownerLogin, repoName string, pr PullRequest) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, err := e.repoLocked(ownerLogin, repoName)
	if err != nil {
		r = e.addRepoLocked(ownerLogin, repoName, 0, "")
	}
	if pr.Number == 0 {
		pr.Number = r.nextNumber()
	}
	if pr.State == "" {
		pr.State = "open"
	}
	if old, ok := r.pulls[pr.Number]; ok {
		if pr.HeadRef == "" {
			pr.HeadRef = old.HeadRef
		}
		if pr.Title == "" {
			pr.Title = old.Title
		}
	}
	if pr.HeadRef == "" {
		pr.HeadRef = fmt.Sprintf("feature-%d", pr.Number)
	}
	if pr.BaseRef == "" {
		pr.BaseRef = r.DefaultBranch
	}
	if pr.Title == "" {
		pr.Title = fmt.Sprintf("Pull request %d", pr.Number)
	}
	p := pr
	r.pulls[pr.Number] = &p
	now := e.now()
	is, ok := r.issues[pr.Number]
	if !ok {
		is = &issue{Number: pr.Number, ID: e.newID(), Author: user{Login: "octocat", ID: 583231, Type: "User"}, Created: now, isPull: true}
		r.issues[pr.Number] = is
	}
	is.Title, is.State, is.Updated = pr.Title, pr.State, now
	if pr.State == "closed" && is.Closed.IsZero() {
		is.Closed = now
	}
	return pr.Number
}

// GET /repos/{owner}/{repo}/pulls/{pull_number} (E15):
// https://docs.github.com/en/rest/pulls/pulls#get-a-pull-request
func hGetPull(c *reqCtx) *response {
	r, resp := c.repo("pull_requests", "read")
	if resp != nil {
		return resp
	}
	n, _ := strconv.Atoi(c.params["pull_number"])
	pr, ok := r.pulls[n]
	if !ok {
		return c.notFound()
	}
	is := r.issues[n]
	full := r.fullName()
	repoObj := c.repoJSON(r)
	return c.json(http.StatusOK, c.fullPullJSON(r, pr, map[string]any{
		"id": is.ID, "number": pr.Number, "state": pr.State, "title": pr.Title, "merged": pr.Merged,
		"url":        c.api("/repos/%s/pulls/%d", full, n),
		"html_url":   c.web("/%s/pull/%d", full, n),
		"head":       map[string]any{"ref": pr.HeadRef, "sha": pr.HeadSHA, "label": r.owner.Login + ":" + pr.HeadRef, "repo": repoObj},
		"base":       map[string]any{"ref": pr.BaseRef, "sha": r.branches[pr.BaseRef], "label": r.owner.Login + ":" + pr.BaseRef, "repo": repoObj},
		"user":       map[string]any{"login": is.Author.Login, "id": is.Author.ID, "type": is.Author.Type},
		"created_at": is.Created.Format(time.RFC3339), "updated_at": is.Updated.Format(time.RFC3339), "closed_at": timeOrNull(is.Closed),
	}))
}

func (c *reqCtx) issueJSON(r *repo, is *issue) map[string]any {
	full := r.fullName()
	labels := []any{}
	for _, l := range is.Labels {
		labels = append(labels, map[string]any{"name": l})
	}
	out := map[string]any{
		"id": is.ID, "node_id": nodeID("Issue", strconv.FormatInt(is.ID, 10)), "number": is.Number,
		"url":            c.api("/repos/%s/issues/%d", full, is.Number),
		"repository_url": c.api("/repos/%s", full),
		"html_url":       c.web("/%s/issues/%d", full, is.Number),
		"title":          is.Title, "body": nullable(is.Body), "state": is.State, "state_reason": nullable(is.StateReason),
		"user":   c.userJSON(is.Author.Login, is.Author.ID, is.Author.Type),
		"labels": labels, "assignees": []any{}, "assignee": nil, "milestone": nil, "comments": 0, "locked": false,
		"comments_url": c.api("/repos/%s/issues/%d/comments", full, is.Number), "events_url": c.api("/repos/%s/issues/%d/events", full, is.Number),
		"labels_url":         c.api("/repos/%s/issues/%d/labels{/name}", full, is.Number),
		"author_association": "NONE",
		"created_at":         is.Created.Format(time.RFC3339), "updated_at": is.Updated.Format(time.RFC3339), "closed_at": timeOrNull(is.Closed),
	}
	if is.isPull {
		out["html_url"] = c.web("/%s/pull/%d", full, is.Number)
		html := c.web("/%s/pull/%d", full, is.Number)
		out["pull_request"] = map[string]any{"url": c.api("/repos/%s/pulls/%d", full, is.Number), "html_url": html,
			"diff_url": html + ".diff", "patch_url": html + ".patch", "merged_at": nil}
	}
	return out
}

// GET /repos/{owner}/{repo}/issues?state=&creator=&sort=&direction=&per_page=&page=
// https://docs.github.com/en/rest/issues/issues#list-repository-issues —
// state defaults to open, sort to created, direction to desc; pull requests
// are included (with a pull_request key), as on GitHub.
func hListIssues(c *reqCtx) *response {
	r, resp := c.repo("issues", "read")
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
	creator := c.query.Get("creator")
	var list []*issue
	for _, is := range r.issues {
		if (state == "all" || is.State == state) && (creator == "" || strings.EqualFold(creator, is.Author.Login)) {
			list = append(list, is)
		}
	}
	key := func(is *issue) time.Time {
		if c.query.Get("sort") == "updated" {
			return is.Updated
		}
		return is.Created
	}
	asc := c.query.Get("direction") == "asc"
	sort.Slice(list, func(a, b int) bool {
		ka, kb := key(list[a]), key(list[b])
		if ka.Equal(kb) {
			if asc {
				return list[a].Number < list[b].Number
			}
			return list[a].Number > list[b].Number
		}
		if asc {
			return ka.Before(kb)
		}
		return ka.After(kb)
	})
	lo, hi, link := c.paginate(len(list))
	out := make([]any, 0, hi-lo)
	for _, is := range list[lo:hi] {
		out = append(out, c.issueJSON(r, is))
	}
	return c.paged(http.StatusOK, out, link)
}

// GET /repos/{owner}/{repo}/issues/{issue_number}
func hGetIssue(c *reqCtx) *response {
	r, resp := c.repo("issues", "read")
	if resp != nil {
		return resp
	}
	n, _ := strconv.Atoi(c.params["issue_number"])
	is, ok := r.issues[n]
	if !ok {
		return c.notFound()
	}
	return c.json(http.StatusOK, c.issueJSON(r, is))
}

type issueWrite struct {
	Title       *string  `json:"title"`
	Body        *string  `json:"body"`
	State       *string  `json:"state"`
	StateReason *string  `json:"state_reason"`
	Labels      []string `json:"labels"`
}

// POST /repos/{owner}/{repo}/issues — 201; the author is the credential's
// bot ("github-actions[bot]" for GITHUB_TOKEN, "<slug>[bot]" for an App):
// https://docs.github.com/en/rest/issues/issues#create-an-issue
func hCreateIssue(c *reqCtx) *response {
	r, resp := c.repo("issues", "write")
	if resp != nil {
		return resp
	}
	var body issueWrite
	if resp := c.decode(&body); resp != nil {
		return resp
	}
	if body.Title == nil || strings.TrimSpace(*body.Title) == "" {
		return c.validation("Validation Failed")
	}
	now := c.e.now()
	is := &issue{Number: r.nextNumber(), ID: c.e.newID(), Title: *body.Title, State: "open", Labels: body.Labels,
		Author: user{Login: c.cred.botLogin, ID: c.cred.botID, Type: "Bot"}, Created: now, Updated: now}
	if body.Body != nil {
		is.Body = *body.Body
	}
	r.issues[is.Number] = is
	resp = c.json(http.StatusCreated, c.issueJSON(r, is))
	resp.header.Set("Location", c.api("/repos/%s/issues/%d", r.fullName(), is.Number))
	return resp
}

// PATCH /repos/{owner}/{repo}/issues/{issue_number} — title, body, state
// (open|closed), state_reason, labels:
// https://docs.github.com/en/rest/issues/issues#update-an-issue
func hUpdateIssue(c *reqCtx) *response {
	r, resp := c.repo("issues", "write")
	if resp != nil {
		return resp
	}
	n, _ := strconv.Atoi(c.params["issue_number"])
	is, ok := r.issues[n]
	if !ok {
		return c.notFound()
	}
	var body issueWrite
	if resp := c.decode(&body); resp != nil {
		return resp
	}
	now := c.e.now()
	if body.State != nil {
		switch *body.State {
		case "open":
			is.State, is.Closed, is.StateReason = "open", time.Time{}, "reopened"
		case "closed":
			if is.State != "closed" {
				is.Closed = now
			}
			is.State, is.StateReason = "closed", "completed"
		default:
			return c.validation("Validation Failed")
		}
	}
	if body.StateReason != nil {
		is.StateReason = *body.StateReason
	}
	if body.Title != nil {
		is.Title = *body.Title
	}
	if body.Body != nil {
		is.Body = *body.Body
	}
	if body.Labels != nil {
		is.Labels = body.Labels
	}
	is.Updated = now
	return c.json(http.StatusOK, c.issueJSON(r, is))
}

// CreateIssue seeds an issue authored by login (type "Bot" when it ends in
// "[bot]") and returns its number.
func (e *Emulator) CreateIssue(ownerLogin, repoName, authorLogin, title, body, state string) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, err := e.repoLocked(ownerLogin, repoName)
	if err != nil {
		return 0, err
	}
	if state == "" {
		state = "open"
	}
	typ := "User"
	if strings.HasSuffix(authorLogin, "[bot]") {
		typ = "Bot"
	}
	now := e.now()
	is := &issue{Number: r.nextNumber(), ID: e.newID(), Title: title, Body: body, State: state, Author: user{Login: authorLogin, ID: e.newID(), Type: typ}, Created: now, Updated: now}
	if state == "closed" {
		is.Closed = now
	}
	r.issues[is.Number] = is
	return is.Number, nil
}
