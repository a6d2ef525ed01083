package emulator

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// runnerToken mints an installation token restricted to the runner
// inventory permission, as the preflight asks for.
func (v *env) runnerToken() string {
	v.t.Helper()
	return v.mint(map[string]any{"permissions": map[string]string{"organization_self_hosted_runners": "read"}})
}

func groupNames(t *testing.T, res result) []string {
	t.Helper()
	var out []string
	for _, g := range res.json(t)["runner_groups"].([]any) {
		out = append(out, g.(map[string]any)["name"].(string))
	}
	return out
}

// https://docs.github.com/en/rest/actions/self-hosted-runner-groups#list-self-hosted-runner-groups-for-an-organization
// and https://docs.github.com/en/actions/how-tos/manage-runners/self-hosted-runners/manage-access
// ("By default, only private repositories can access runners in a runner
// group").
func TestRunnerGroupsVisibleToRepository(t *testing.T) {
	v := newEnv(t)
	v.e.AddRepo(testOwner, "public-game", 12, "main")
	require.NoError(t, v.e.SetRepoPublic(testOwner, "public-game", true))
	v.e.AddRunnerGroup(testOwner, RunnerGroup{Name: "default", Visibility: VisibilityAll, Default: true})
	v.e.AddRunnerGroup(testOwner, RunnerGroup{Name: "unity", Visibility: VisibilitySelected, SelectedRepos: []string{"Build-Lock"}})
	v.e.AddRunnerGroup(testOwner, RunnerGroup{Name: "other-only", Visibility: VisibilitySelected, SelectedRepos: []string{"other"}})
	v.e.AddRunnerGroup(testOwner, RunnerGroup{Name: "private-repos", Visibility: VisibilityPrivate})
	v.e.AddRunnerGroup(testOwner, RunnerGroup{Name: "open", Visibility: VisibilityAll, AllowsPublicRepositories: true})
	v.e.AddRunnerGroup(testOwner, RunnerGroup{Name: "public-selected", Visibility: VisibilitySelected, SelectedRepos: []string{"public-game"}, AllowsPublicRepositories: true})
	v.e.AddRunnerGroup(testOwner, RunnerGroup{Name: "public-selected-no-public", Visibility: VisibilitySelected, SelectedRepos: []string{"public-game"}})
	tok := v.runnerToken()
	list := func(q string) []string {
		res := v.do("GET", "/orgs/example-org/actions/runner-groups?per_page=100"+q, tok, nil)
		require.Equal(t, http.StatusOK, res.status, string(res.body))
		require.Equal(t, float64(len(groupNames(t, res))), res.json(t)["total_count"].(float64))
		return groupNames(t, res)
	}
	require.Equal(t, "default,unity,private-repos,open", strings.Join(list("&visible_to_repository=build-lock"), ","))
	require.Equal(t, "default,other-only,private-repos,open", strings.Join(list("&visible_to_repository=other"), ","))
	require.Equal(t, "open,public-selected", strings.Join(list("&visible_to_repository=public-game"), ","), "a public repository needs allows_public_repositories")
	require.Equal(t, "", strings.Join(list("&visible_to_repository=nope"), ","), "an unknown repository can use no group")
	require.Equal(t, 7, len(list("")), "no filter: every group")
}

func TestRunnerListingsPaginateWithTotalCount(t *testing.T) {
	v := newEnv(t)
	g := v.e.AddRunnerGroup(testOwner, RunnerGroup{Name: "unity"})
	for i := range 250 {
		v.e.AddRunner(testOwner, g, Runner{Name: fmt.Sprintf("win-%03d", i), OS: "Windows", Labels: []string{"self-hosted", "Windows", "unity"}})
	}
	tok := v.runnerToken()
	seen := map[string]bool{}
	for page, want := range []int{100, 100, 50, 0} {
		res := v.do("GET", fmt.Sprintf("/orgs/example-org/actions/runner-groups/%d/runners?per_page=100&page=%d", g, page+1), tok, nil)
		require.Equal(t, http.StatusOK, res.status)
		body := res.json(t)
		require.Equal(t, float64(250), body["total_count"].(float64), "every page reports the whole count")
		rs := body["runners"].([]any)
		require.Equal(t, want, len(rs), "page", page+1)
		for _, r := range rs {
			m := r.(map[string]any)
			seen[m["name"].(string)] = true
			labels := m["labels"].([]any)
			require.Equal(t, "read-only", labels[0].(map[string]any)["type"].(string))
			require.Equal(t, "custom", labels[2].(map[string]any)["type"].(string))
		}
		if page < 2 {
			require.True(t, strings.Contains(res.header.Get("Link"), `rel="next"`), res.header.Get("Link"))
		}
	}
	require.Equal(t, 250, len(seen))
	// per_page is capped at 100 as on GitHub.
	res := v.do("GET", fmt.Sprintf("/orgs/example-org/actions/runner-groups/%d/runners?per_page=500", g), tok, nil)
	require.Equal(t, 100, len(res.json(t)["runners"].([]any)))
}

func TestRemovedRunnerShiftsLaterPages(t *testing.T) {
	v := newEnv(t)
	g := v.e.AddRunnerGroup(testOwner, RunnerGroup{Name: "unity"})
	var ids []int64
	for i := range 150 {
		ids = append(ids, v.e.AddRunner(testOwner, g, Runner{Name: fmt.Sprintf("r%03d", i)}))
	}
	tok := v.runnerToken()
	first := v.do("GET", fmt.Sprintf("/orgs/example-org/actions/runner-groups/%d/runners?per_page=100&page=1", g), tok, nil).json(t)
	require.NoError(t, v.e.RemoveRunner(testOwner, ids[3]))
	second := v.do("GET", fmt.Sprintf("/orgs/example-org/actions/runner-groups/%d/runners?per_page=100&page=2", g), tok, nil).json(t)
	require.Equal(t, float64(150), first["total_count"].(float64))
	require.Equal(t, float64(149), second["total_count"].(float64))
	require.Equal(t, 49, len(second["runners"].([]any)), "r100 moved onto page 1 and is never listed")
	require.True(t, v.e.RemoveRunner(testOwner, ids[3]) != nil, "removed twice")
}

func TestRunnerEndpointsEnforceTheInventoryPermission(t *testing.T) {
	v := newEnv(t)
	g := v.e.AddRunnerGroup(testOwner, RunnerGroup{Name: "unity"})
	v.e.AddRunner(testOwner, g, Runner{Name: "win-1"})
	paths := []string{"/orgs/example-org/actions/runner-groups", fmt.Sprintf("/orgs/example-org/actions/runner-groups/%d/runners", g), "/orgs/example-org/actions/runners"}

	// A token minted without the permission: 403 naming it.
	noPerm := v.mint(map[string]any{"permissions": map[string]string{"contents": "read"}})
	for _, p := range paths {
		res := v.do("GET", p, noPerm, nil)
		require.Equal(t, http.StatusForbidden, res.status, p)
		require.Equal(t, "organization_self_hosted_runners=read", res.header.Get("X-Accepted-GitHub-Permissions"), p)
		require.Equal(t, "Resource not accessible by integration", res.json(t)["message"].(string))
	}
	// A workflow GITHUB_TOKEN is not an organization installation.
	v.e.AddToken("ghs_workflowtoken", TokenScope{Repos: []string{testOwner + "/" + testRepo}})
	require.Equal(t, http.StatusForbidden, v.do("GET", paths[0], "ghs_workflowtoken", nil).status)
	// No credential at all.
	require.Equal(t, http.StatusUnauthorized, v.do("GET", paths[0], "", nil).status)

	// The token's permissions are what it was minted with...
	tok := v.runnerToken()
	for _, p := range paths {
		require.Equal(t, http.StatusOK, v.do("GET", p, tok, nil).status, p)
	}
	// ...restricted to the request: it cannot read contents.
	require.Equal(t, http.StatusForbidden, v.do("GET", "/repos/example-org/build-lock/contents/README.md", tok, nil).status)
	// ...and never more than the installation grants now.
	require.NoError(t, v.e.SetInstallationPermissions(v.instID, map[string]string{"contents": "write", "metadata": "read"}))
	require.Equal(t, http.StatusForbidden, v.do("GET", paths[0], tok, nil).status, "the permission was withdrawn")
	// Minting it again is refused, as GitHub refuses permissions the
	// installation was not granted (422).
	res := v.do("POST", "/app/installations/"+itoa(v.instID)+"/access_tokens", v.appJWT(),
		map[string]any{"permissions": map[string]string{"organization_self_hosted_runners": "read"}})
	require.Equal(t, http.StatusUnprocessableEntity, res.status)

	// Unknown organization or group: 404.
	tok2 := v.mint(nil)
	require.Equal(t, http.StatusNotFound, v.do("GET", "/orgs/nope/actions/runner-groups", tok2, nil).status)
}

func TestRunnerGroupOfAnotherOrganizationIsNotFound(t *testing.T) {
	v := newEnv(t)
	v.e.AddRunnerGroup(testOwner, RunnerGroup{Name: "unity"})
	other := v.e.AddRunnerGroup("other-org", RunnerGroup{Name: "theirs"})
	tok := v.runnerToken()
	require.Equal(t, http.StatusNotFound, v.do("GET", fmt.Sprintf("/orgs/example-org/actions/runner-groups/%d/runners", other), tok, nil).status)
	require.Equal(t, http.StatusNotFound, v.do("GET", "/orgs/example-org/actions/runner-groups/x/runners", tok, nil).status)
	require.Equal(t, http.StatusForbidden, v.do("GET", "/orgs/other-org/actions/runner-groups", tok, nil).status, "a token of another organization's installation")
}

func TestRunnerEndpointsHonorFaultsAndRateLimits(t *testing.T) {
	v := newEnv(t, func(o *Options) { o.InstallationRateLimit = 3 })
	g := v.e.AddRunnerGroup(testOwner, RunnerGroup{Name: "unity"})
	tok := v.runnerToken()
	v.e.AddFault(Fault{PathPattern: "/orgs/example-org/actions/runner-groups", Kind: TooManyRequests429, RetryAfter: "7", Count: 1})
	res := v.do("GET", "/orgs/example-org/actions/runner-groups", tok, nil)
	require.Equal(t, http.StatusTooManyRequests, res.status)
	require.Equal(t, "7", res.header.Get("Retry-After"))
	v.e.AddFault(Fault{PathPattern: "/orgs/*/actions/runner-groups/*/runners", Kind: ServerError, Status: 503, Count: 1})
	require.Equal(t, http.StatusServiceUnavailable, v.do("GET", fmt.Sprintf("/orgs/example-org/actions/runner-groups/%d/runners", g), tok, nil).status)
	// The primary limit of the installation counts these reads.
	for range 3 {
		v.do("GET", "/orgs/example-org/actions/runner-groups", tok, nil)
	}
	res = v.do("GET", "/orgs/example-org/actions/runner-groups", tok, nil)
	require.Equal(t, http.StatusForbidden, res.status)
	require.Equal(t, "0", res.header.Get("X-RateLimit-Remaining"))
}

func TestRunnerAdminAPI(t *testing.T) {
	v := newEnv(t)
	srv := httptest.NewServer(v.e.Handler())
	defer srv.Close()
	g := adminCall(t, srv, "POST", "/runner-groups", map[string]any{"org": testOwner, "group": map[string]any{"name": "unity", "visibility": "selected", "selected_repositories": []string{testRepo}, "allows_public_repositories": true}})
	gid := int64(g["id"].(float64))
	r := adminCall(t, srv, "POST", "/runners", map[string]any{"org": testOwner, "group_id": gid, "runner": map[string]any{"name": "win-1", "labels": []string{"self-hosted", "unity"}}})
	rid := int64(r["id"].(float64))
	adminCall(t, srv, "POST", fmt.Sprintf("/runners/%d", rid), map[string]any{"org": testOwner, "status": "offline", "busy": true})
	tok := v.runnerToken()
	res := v.do("GET", fmt.Sprintf("/orgs/example-org/actions/runner-groups/%d/runners", gid), tok, nil).json(t)
	got := res["runners"].([]any)[0].(map[string]any)
	require.Equal(t, "offline", got["status"].(string))
	require.Equal(t, true, got["busy"].(bool))
	groups := v.do("GET", "/orgs/example-org/actions/runner-groups?visible_to_repository=build-lock", tok, nil).json(t)
	require.Equal(t, true, groups["runner_groups"].([]any)[0].(map[string]any)["allows_public_repositories"].(bool))
	adminCall(t, srv, "DELETE", fmt.Sprintf("/runners/%d?org=%s", rid, testOwner), nil)
	res = v.do("GET", fmt.Sprintf("/orgs/example-org/actions/runner-groups/%d/runners", gid), tok, nil).json(t)
	require.Equal(t, float64(0), res["total_count"].(float64))
}

func TestRemovedRunnerGroupIsNotFound(t *testing.T) {
	v := newEnv(t)
	g := v.e.AddRunnerGroup(testOwner, RunnerGroup{Name: "unity"})
	keep := v.e.AddRunnerGroup(testOwner, RunnerGroup{Name: "other"})
	v.e.AddRunner(testOwner, g, Runner{Name: "win-1"})
	v.e.AddRunner(testOwner, keep, Runner{Name: "win-2"})
	require.NoError(t, v.e.RemoveRunnerGroup(testOwner, g))
	tok := v.runnerToken()
	require.Equal(t, http.StatusNotFound, v.do("GET", fmt.Sprintf("/orgs/example-org/actions/runner-groups/%d/runners", g), tok, nil).status)
	require.Equal(t, float64(1), v.do("GET", "/orgs/example-org/actions/runners", tok, nil).json(t)["total_count"].(float64), "its runners went with it")
	require.True(t, v.e.RemoveRunnerGroup(testOwner, g) != nil)
}
