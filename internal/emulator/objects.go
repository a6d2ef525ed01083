package emulator

import (
	"strconv"
	"strings"
	"time"
)

// GitHub's full REST objects. The fields below are the ones GitHub's API
// description marks required for a simple user, a repository and a pull
// request (the pinned @octokit/openapi; internal/emulator/openapi checks
// every answer of the action and end-to-end tests against it). The URL
// templates follow the recorded answers in @octokit/fixtures (scenario
// get-repository). Values the emulator does not model are GitHub's
// defaults for a new private repository: no description, no license, zero
// counters.

// userJSON is a simple-user for login/id/type ("User", "Organization" or
// "Bot").
func (c *reqCtx) userJSON(login string, id int64, typ string) map[string]any {
	u := c.api("/users/%s", login)
	return map[string]any{
		"login": login, "id": id, "node_id": nodeID(typ, login), "type": typ, "site_admin": false,
		"avatar_url": "https://avatars.githubusercontent.com/u/" + strconv.FormatInt(id, 10) + "?v=4", "gravatar_id": "",
		"url": u, "html_url": c.web("/%s", login),
		"followers_url": u + "/followers", "following_url": u + "/following{/other_user}", "gists_url": u + "/gists{/gist_id}",
		"starred_url": u + "/starred{/owner}{/repo}", "subscriptions_url": u + "/subscriptions", "organizations_url": u + "/orgs",
		"repos_url": u + "/repos", "events_url": u + "/events{/privacy}", "received_events_url": u + "/received_events",
	}
}

// fullRepoJSON is a repository with every field GitHub's description
// requires.
func (c *reqCtx) fullRepoJSON(r *repo) map[string]any {
	full := r.fullName()
	u := c.api("/repos/%s", full)
	created := time.Unix(0, 0).UTC()
	if cm, ok := r.commits[r.branches[r.DefaultBranch]]; ok {
		created = cm.Time
	}
	host := strings.TrimPrefix(strings.TrimPrefix(c.webBase, "https://"), "http://")
	visibility := "private"
	if !r.Private {
		visibility = "public"
	}
	return map[string]any{
		"id": r.ID, "node_id": nodeID("Repository", full), "name": r.Name, "full_name": full,
		"private": r.Private, "visibility": visibility, "owner": c.ownerJSON(r.owner),
		"html_url": c.web("/%s", full), "url": u, "description": nil, "fork": r.Fork, "homepage": nil, "language": nil, "license": nil, "mirror_url": nil,
		"default_branch": r.DefaultBranch, "archived": false, "disabled": false, "is_template": false,
		"archive_url": u + "/{archive_format}{/ref}", "assignees_url": u + "/assignees{/user}", "blobs_url": u + "/git/blobs{/sha}",
		"branches_url": u + "/branches{/branch}", "collaborators_url": u + "/collaborators{/collaborator}", "comments_url": u + "/comments{/number}",
		"commits_url": u + "/commits{/sha}", "compare_url": u + "/compare/{base}...{head}", "contents_url": u + "/contents/{+path}",
		"contributors_url": u + "/contributors", "deployments_url": u + "/deployments", "downloads_url": u + "/downloads",
		"events_url": u + "/events", "forks_url": u + "/forks", "git_commits_url": u + "/git/commits{/sha}", "git_refs_url": u + "/git/refs{/sha}",
		"git_tags_url": u + "/git/tags{/sha}", "hooks_url": u + "/hooks", "issue_comment_url": u + "/issues/comments{/number}",
		"issue_events_url": u + "/issues/events{/number}", "issues_url": u + "/issues{/number}", "keys_url": u + "/keys{/key_id}",
		"labels_url": u + "/labels{/name}", "languages_url": u + "/languages", "merges_url": u + "/merges",
		"milestones_url": u + "/milestones{/number}", "notifications_url": u + "/notifications{?since,all,participating}",
		"pulls_url": u + "/pulls{/number}", "releases_url": u + "/releases{/id}", "stargazers_url": u + "/stargazers",
		"statuses_url": u + "/statuses/{sha}", "subscribers_url": u + "/subscribers", "subscription_url": u + "/subscription",
		"tags_url": u + "/tags", "teams_url": u + "/teams", "trees_url": u + "/git/trees{/sha}",
		"git_url": "git://" + host + "/" + full + ".git", "ssh_url": "git@" + host + ":" + full + ".git",
		"clone_url": c.web("/%s.git", full), "svn_url": c.web("/%s", full),
		"created_at": created.Format(time.RFC3339), "updated_at": created.Format(time.RFC3339), "pushed_at": created.Format(time.RFC3339),
		"size": 0, "stargazers_count": 0, "watchers_count": 0, "watchers": 0, "forks_count": 0, "forks": 0,
		"open_issues_count": 0, "open_issues": 0, "network_count": 0, "subscribers_count": 0,
		"has_issues": true, "has_projects": true, "has_wiki": true, "has_pages": false, "has_downloads": true, "has_discussions": false,
		"topics": []any{}, "allow_forking": true, "web_commit_signoff_required": false,
	}
}

// pullLinks are a pull request's _links and URL fields.
func (c *reqCtx) pullExtras(r *repo, n int, is *issue, pr *PullRequest) map[string]any {
	full := r.fullName()
	self := c.api("/repos/%s/pulls/%d", full, n)
	issueURL := c.api("/repos/%s/issues/%d", full, n)
	html := c.web("/%s/pull/%d", full, n)
	statuses := c.api("/repos/%s/statuses/%s", full, pr.HeadSHA)
	link := func(h string) map[string]any { return map[string]any{"href": h} }
	return map[string]any{
		"node_id": nodeID("PullRequest", strconv.FormatInt(is.ID, 10)), "locked": false, "body": nullable(is.Body),
		"diff_url": html + ".diff", "patch_url": html + ".patch", "issue_url": issueURL,
		"commits_url": self + "/commits", "review_comments_url": self + "/comments", "review_comment_url": c.api("/repos/%s/pulls/comments{/number}", full),
		"comments_url": issueURL + "/comments", "statuses_url": statuses,
		"assignee": nil, "assignees": []any{}, "requested_reviewers": []any{}, "requested_teams": []any{}, "labels": []any{}, "milestone": nil,
		"author_association": "NONE", "auto_merge": nil, "active_lock_reason": nil, "draft": false,
		"merged_at": nil, "merge_commit_sha": nil, "mergeable": nil, "mergeable_state": "unknown", "merged_by": nil, "rebaseable": nil,
		"maintainer_can_modify": false, "comments": 0, "review_comments": 0, "commits": 1, "additions": 0, "deletions": 0, "changed_files": 0,
		"_links": map[string]any{
			"self": link(self), "html": link(html), "issue": link(issueURL), "comments": link(issueURL + "/comments"),
			"review_comments": link(self + "/comments"), "review_comment": link(c.api("/repos/%s/pulls/comments{/number}", full)),
			"commits": link(self + "/commits"), "statuses": link(statuses),
		},
	}
}

// fullPullJSON completes a pull request object (pullJSON or hGetPull's) with
// the fields GitHub's description requires.
func (c *reqCtx) fullPullJSON(r *repo, pr *PullRequest, base map[string]any) map[string]any {
	is := r.issues[pr.Number]
	for k, v := range c.pullExtras(r, pr.Number, is, pr) {
		if _, set := base[k]; !set {
			base[k] = v
		}
	}
	owner := c.ownerJSON(r.owner)
	for _, side := range []string{"head", "base"} {
		if m, ok := base[side].(map[string]any); ok {
			m["user"] = owner
		}
	}
	base["user"] = c.userJSON(is.Author.Login, is.Author.ID, is.Author.Type)
	return base
}
