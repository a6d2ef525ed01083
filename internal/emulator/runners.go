package emulator

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Organization runner groups and self-hosted runners: the inventory the
// Unity runner preflight reads.
// https://docs.github.com/en/rest/actions/self-hosted-runner-groups
// https://docs.github.com/en/rest/actions/self-hosted-runners

// Runner group visibilities (GitHub's "visibility" field).
const (
	// VisibilityAll: every repository of the organization.
	VisibilityAll = "all"
	// VisibilitySelected: the repositories named in SelectedRepos.
	VisibilitySelected = "selected"
	// VisibilityPrivate: every private repository of the organization.
	VisibilityPrivate = "private"
)

// RunnerGroup is an organization runner group. Visibility is "all",
// "selected" (SelectedRepos lists repository names) or "private" (the
// organization's private repositories). A public repository may use a group
// only when AllowsPublicRepositories is set: "By default, only private
// repositories can access runners in a runner group, but you can override
// this"
// (https://docs.github.com/en/actions/how-tos/manage-runners/self-hosted-runners/manage-access;
// the override is the API's allows_public_repositories,
// https://github.com/google/go-github/pull/1998).
type RunnerGroup struct {
	ID                       int64    `json:"id"`
	Name                     string   `json:"name"`
	Visibility               string   `json:"visibility"`
	Default                  bool     `json:"default"`
	SelectedRepos            []string `json:"selected_repositories"`
	AllowsPublicRepositories bool     `json:"allows_public_repositories"`
}

// Runner is a self-hosted runner. Status is "online" or "offline"; Busy is
// true while it runs a job.
type Runner struct {
	ID     int64    `json:"id"`
	Name   string   `json:"name"`
	OS     string   `json:"os"`
	Status string   `json:"status"`
	Busy   bool     `json:"busy"`
	Labels []string `json:"labels"`
}

// AddRunnerGroup adds a runner group to an organization and returns its id.
func (e *Emulator) AddRunnerGroup(org string, g RunnerGroup) (groupID int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	o, ok := e.owners[strings.ToLower(org)]
	if !ok {
		o = e.addOwnerLocked(org, 0, true)
	}
	if g.ID == 0 {
		g.ID = e.newID()
	}
	if g.Visibility == "" {
		g.Visibility = VisibilityAll
	}
	gg := g
	gg.SelectedRepos = append([]string(nil), g.SelectedRepos...)
	o.groups = append(o.groups, &gg)
	return g.ID
}

// AddRunner adds a runner to a group of org and returns its id (0 when the
// organization or group is unknown).
func (e *Emulator) AddRunner(org string, groupID int64, r Runner) (runnerID int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	o, ok := e.owners[strings.ToLower(org)]
	if !ok {
		return 0
	}
	found := false
	for _, g := range o.groups {
		found = found || g.ID == groupID
	}
	if !found {
		return 0
	}
	if r.ID == 0 {
		r.ID = e.newID()
	}
	if r.Status == "" {
		r.Status = "online"
	}
	if r.OS == "" {
		r.OS = "Linux"
	}
	r.Labels = append([]string(nil), r.Labels...)
	o.runners = append(o.runners, &runnerEntry{groupID: groupID, Runner: r})
	return r.ID
}

// SetRunnerStatus changes a runner's status ("online"/"offline") and busy flag.
func (e *Emulator) SetRunnerStatus(org string, runnerID int64, status string, busy bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	o, ok := e.owners[strings.ToLower(org)]
	if !ok {
		return fmt.Errorf("emulator: owner %s not found", org)
	}
	for _, r := range o.runners {
		if r.ID == runnerID {
			r.Status, r.Busy = status, busy
			return nil
		}
	}
	return fmt.Errorf("emulator: runner %d not found", runnerID)
}

// RemoveRunner deregisters a runner (it disappears from every listing, and
// later pages of a listing in progress shift by one, as on GitHub).
func (e *Emulator) RemoveRunner(org string, runnerID int64) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	o, ok := e.owners[strings.ToLower(org)]
	if !ok {
		return fmt.Errorf("emulator: owner %s not found", org)
	}
	for i, r := range o.runners {
		if r.ID == runnerID {
			o.runners = append(o.runners[:i], o.runners[i+1:]...)
			return nil
		}
	}
	return fmt.Errorf("emulator: runner %d not found", runnerID)
}

// RemoveRunnerGroup deletes a runner group and deregisters its runners;
// reads of the group then get 404.
func (e *Emulator) RemoveRunnerGroup(org string, groupID int64) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	o, ok := e.owners[strings.ToLower(org)]
	if !ok {
		return fmt.Errorf("emulator: owner %s not found", org)
	}
	for i, g := range o.groups {
		if g.ID == groupID {
			o.groups = append(o.groups[:i], o.groups[i+1:]...)
			kept := o.runners[:0]
			for _, r := range o.runners {
				if r.groupID != groupID {
					kept = append(kept, r)
				}
			}
			o.runners = kept
			return nil
		}
	}
	return fmt.Errorf("emulator: runner group %d not found", groupID)
}

// SetRepoPublic makes a repository public (or private again). Repositories
// are private when created; visibility decides which runner groups they may
// use.
func (e *Emulator) SetRepoPublic(owner, name string, public bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, err := e.repoLocked(owner, name)
	if err != nil {
		return err
	}
	r.Private = !public
	return nil
}

// groupVisibleTo reports whether repository r may use group g.
func groupVisibleTo(g *RunnerGroup, r *repo) bool {
	if !r.Private && !g.AllowsPublicRepositories {
		return false
	}
	switch g.Visibility {
	case VisibilityAll:
		return true
	case VisibilityPrivate:
		return r.Private
	case VisibilitySelected:
		for _, n := range g.SelectedRepos {
			if strings.EqualFold(n, r.Name) {
				return true
			}
		}
	}
	return false
}

// orgRunners checks org access for runner endpoints. The credential must be
// an installation token of this organization's installation with
// organization_self_hosted_runners: read, "GitHub Apps must have the
// administration permission for repositories or the
// organization_self_hosted_runners permission for organizations"
// (https://docs.github.com/en/rest/actions/self-hosted-runner-groups). The
// token's own (requested) permissions decide, and never more than the
// installation grants now: an owner who withdraws the permission cuts off
// tokens already minted. A plain token (GITHUB_TOKEN) is refused like an
// integration without the permission. The 403 carries
// X-Accepted-GitHub-Permissions
// (https://github.blog/changelog/2023-08-10-x-accepted-github-permissions-header-for-fine-grained-permission-actors).
func (c *reqCtx) orgRunners() (*owner, *response) {
	if c.cred == nil {
		return nil, c.errorf(http.StatusUnauthorized, "Requires authentication")
	}
	o, ok := c.e.owners[strings.ToLower(c.params["org"])]
	if !ok || !o.Org {
		return nil, c.notFound()
	}
	const perm, level = "organization_self_hosted_runners", "read"
	if c.cred.kind != credInstallation || c.cred.inst.Owner != o || !c.cred.has(perm, level) ||
		permRank[c.cred.inst.Perms[perm]] < permRank[level] {
		return nil, c.forbidden(perm, level)
	}
	return o, nil
}

func (c *reqCtx) groupJSON(o *owner, g *RunnerGroup) map[string]any {
	out := map[string]any{"id": g.ID, "name": g.Name, "visibility": g.Visibility, "default": g.Default, "inherited": false,
		"allows_public_repositories": g.AllowsPublicRepositories, "restricted_to_workflows": false, "selected_workflows": []string{},
		"workflow_restrictions_read_only": false,
		"runners_url":                     c.api("/orgs/%s/actions/runner-groups/%d/runners", o.Login, g.ID),
		"hosted_runners_url":              c.api("/orgs/%s/actions/runner-groups/%d/hosted-runners", o.Login, g.ID)}
	if g.Visibility == VisibilitySelected {
		out["selected_repositories_url"] = c.api("/orgs/%s/actions/runner-groups/%d/repositories", o.Login, g.ID)
	}
	return out
}

// readOnlyLabels are the labels GitHub assigns a self-hosted runner itself
// (type "read-only"); every other label is "custom".
var readOnlyLabels = map[string]bool{"self-hosted": true, "linux": true, "windows": true, "macos": true, "x64": true, "arm64": true, "arm": true, "x86": true}

func (c *reqCtx) runnerJSON(r *runnerEntry) map[string]any {
	labels := []any{}
	for i, l := range r.Labels {
		typ := "custom"
		if readOnlyLabels[strings.ToLower(l)] {
			typ = "read-only"
		}
		labels = append(labels, map[string]any{"id": i + 1, "name": l, "type": typ})
	}
	return map[string]any{"id": r.ID, "name": r.Name, "os": r.OS, "status": r.Status, "busy": r.Busy, "labels": labels, "runner_group_id": r.groupID}
}

// GET /orgs/{org}/actions/runner-groups?visible_to_repository=
// https://docs.github.com/en/rest/actions/self-hosted-runner-groups#list-self-hosted-runner-groups-for-an-organization
// "visible_to_repository: Only return runner groups that are allowed to be
// used by this repository" (a repository name of the organization; an
// unknown one can use no group; an empty value filters nothing).
// Paginated with total_count.
func hListRunnerGroups(c *reqCtx) *response {
	o, resp := c.orgRunners()
	if resp != nil {
		return resp
	}
	var groups []*RunnerGroup
	if name := c.query.Get("visible_to_repository"); name == "" {
		groups = o.groups
	} else if r, ok := c.e.repos[repoKey(o.Login, name)]; ok {
		for _, g := range o.groups {
			if groupVisibleTo(g, r) {
				groups = append(groups, g)
			}
		}
	}
	lo, hi, link := c.paginate(len(groups))
	out := make([]any, 0, hi-lo)
	for _, g := range groups[lo:hi] {
		out = append(out, c.groupJSON(o, g))
	}
	return c.paged(http.StatusOK, map[string]any{"total_count": len(groups), "runner_groups": out}, link)
}

func (c *reqCtx) runnersPage(o *owner, match func(*runnerEntry) bool) *response {
	var rs []*runnerEntry
	for _, r := range o.runners {
		if match(r) {
			rs = append(rs, r)
		}
	}
	lo, hi, link := c.paginate(len(rs))
	out := make([]any, 0, hi-lo)
	for _, r := range rs[lo:hi] {
		out = append(out, c.runnerJSON(r))
	}
	return c.paged(http.StatusOK, map[string]any{"total_count": len(rs), "runners": out}, link)
}

// GET /orgs/{org}/actions/runner-groups/{runner_group_id}/runners
// https://docs.github.com/en/rest/actions/self-hosted-runner-groups#list-self-hosted-runners-in-a-group-for-an-organization
func hListGroupRunners(c *reqCtx) *response {
	o, resp := c.orgRunners()
	if resp != nil {
		return resp
	}
	id, err := strconv.ParseInt(c.params["group_id"], 10, 64)
	found := false
	for _, g := range o.groups {
		found = found || (err == nil && g.ID == id)
	}
	if !found {
		return c.notFound()
	}
	return c.runnersPage(o, func(r *runnerEntry) bool { return r.groupID == id })
}

// GET /orgs/{org}/actions/runners
// https://docs.github.com/en/rest/actions/self-hosted-runners#list-self-hosted-runners-for-an-organization
func hListOrgRunners(c *reqCtx) *response {
	o, resp := c.orgRunners()
	if resp != nil {
		return resp
	}
	return c.runnersPage(o, func(*runnerEntry) bool { return true })
}
