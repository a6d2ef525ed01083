package emulator

import (
	"net/url"
	"strings"
)

type authKind int

const (
	authToken authKind = iota // installation or plain token
	authJWT                   // App JWT only
	authAny                   // any credential
)

type route struct {
	method  string
	pattern string
	display string // pattern with "{x...}" shown as "{x}", used as the metrics key
	h       func(*reqCtx) *response
	auth    authKind
	free    bool // never charged (GET /rate_limit)
	segs    []string
}

// routes is the REST surface. Patterns use "{name}" for one path segment and
// "{name...}" for the (non-empty) rest of the path.
var routes = buildRoutes([]route{
	{method: "GET", pattern: "/app", h: hGetApp, auth: authJWT},
	{method: "GET", pattern: "/app/installations", h: hListInstallations, auth: authJWT},
	{method: "GET", pattern: "/app/installations/{installation_id}", h: hGetInstallation, auth: authJWT},
	{method: "POST", pattern: "/app/installations/{installation_id}/access_tokens", h: hCreateAccessToken, auth: authJWT},
	{method: "GET", pattern: "/repos/{owner}/{repo}/installation", h: hRepoInstallation, auth: authJWT},
	{method: "GET", pattern: "/orgs/{org}/installation", h: hOwnerInstallation, auth: authJWT},
	{method: "GET", pattern: "/users/{org}/installation", h: hOwnerInstallation, auth: authJWT},
	{method: "GET", pattern: "/rate_limit", h: hRateLimit, auth: authAny, free: true},

	{method: "GET", pattern: "/repos/{owner}/{repo}", h: hGetRepo},
	{method: "GET", pattern: "/repos/{owner}/{repo}/git/ref/{ref...}", h: hGetRef},
	{method: "POST", pattern: "/repos/{owner}/{repo}/git/refs", h: hCreateRef},
	{method: "PATCH", pattern: "/repos/{owner}/{repo}/git/refs/{ref...}", h: hUpdateRef},
	{method: "DELETE", pattern: "/repos/{owner}/{repo}/git/refs/{ref...}", h: hDeleteRef},
	{method: "GET", pattern: "/repos/{owner}/{repo}/git/commits/{sha}", h: hGetCommit},
	{method: "GET", pattern: "/repos/{owner}/{repo}/git/trees/{tree_sha...}", h: hGetTree},
	{method: "GET", pattern: "/repos/{owner}/{repo}/git/blobs/{file_sha}", h: hGetBlob},
	{method: "GET", pattern: "/repos/{owner}/{repo}/commits", h: hListCommits},
	{method: "GET", pattern: "/repos/{owner}/{repo}/branches/{branch...}", h: hGetBranch},
	{method: "GET", pattern: "/repos/{owner}/{repo}/contents", h: hGetContents},
	{method: "GET", pattern: "/repos/{owner}/{repo}/contents/{path...}", h: hGetContents},
	{method: "PUT", pattern: "/repos/{owner}/{repo}/contents/{path...}", h: hPutContents},
	{method: "DELETE", pattern: "/repos/{owner}/{repo}/contents/{path...}", h: hDeleteContents},

	{method: "GET", pattern: "/repos/{owner}/{repo}/actions/runs", h: hListRuns},
	{method: "GET", pattern: "/repos/{owner}/{repo}/actions/runs/{run_id}", h: hGetRun},
	{method: "GET", pattern: "/repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt}", h: hGetRunAttempt},
	{method: "GET", pattern: "/repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt}/jobs", h: hListAttemptJobs},
	{method: "GET", pattern: "/repos/{owner}/{repo}/actions/runs/{run_id}/jobs", h: hListRunJobs},
	{method: "GET", pattern: "/repos/{owner}/{repo}/actions/jobs/{job_id}", h: hGetJob},
	{method: "GET", pattern: "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs", h: hListWorkflowRuns},

	{method: "GET", pattern: "/repos/{owner}/{repo}/pulls/{pull_number}", h: hGetPull},
	{method: "GET", pattern: "/repos/{owner}/{repo}/pulls", h: hListPulls},
	{method: "POST", pattern: "/repos/{owner}/{repo}/pulls", h: hCreatePull},
	{method: "GET", pattern: "/repos/{owner}/{repo}/issues", h: hListIssues},
	{method: "POST", pattern: "/repos/{owner}/{repo}/issues", h: hCreateIssue},
	{method: "GET", pattern: "/repos/{owner}/{repo}/issues/{issue_number}", h: hGetIssue},
	{method: "PATCH", pattern: "/repos/{owner}/{repo}/issues/{issue_number}", h: hUpdateIssue},

	{method: "GET", pattern: "/orgs/{org}/actions/runner-groups", h: hListRunnerGroups},
	{method: "GET", pattern: "/orgs/{org}/actions/runner-groups/{group_id}/runners", h: hListGroupRunners},
	{method: "GET", pattern: "/orgs/{org}/actions/runners", h: hListOrgRunners},

	{method: "GET", pattern: "/installation/repositories", h: hListInstallationRepositories},
	{method: "GET", pattern: "/repos/{owner}/{repo}/rules/branches/{branch...}", h: hGetBranchRules},
	{method: "GET", pattern: "/repos/{owner}/{repo}/actions/workflows/{workflow_id}", h: hGetWorkflow},
})

func buildRoutes(rs []route) []*route {
	out := make([]*route, 0, len(rs))
	for i := range rs {
		r := rs[i]
		r.segs = strings.Split(strings.Trim(r.pattern, "/"), "/")
		r.display = strings.ReplaceAll(r.pattern, "...}", "}")
		out = append(out, &r)
	}
	return out
}

// matchRoute finds the route for method and escaped path. Path parameters are
// unescaped per segment; a "{x...}" parameter joins the remaining segments
// with "/". An unknown method on a known path is also "no route" (404, as
// GitHub answers).
func matchRoute(method, escapedPath string, prefixed bool) (*route, map[string]string) {
	if prefixed {
		escapedPath = strings.TrimPrefix(escapedPath, "/api/v3")
	}
	parts := strings.Split(strings.Trim(escapedPath, "/"), "/")
	for _, rt := range routes {
		if rt.method != method {
			continue
		}
		if params, ok := matchSegs(rt.segs, parts); ok {
			return rt, params
		}
	}
	return nil, map[string]string{}
}

func matchSegs(segs, parts []string) (map[string]string, bool) {
	params := map[string]string{}
	for i, s := range segs {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "...}") {
			if i >= len(parts) {
				return nil, false
			}
			rest := make([]string, 0, len(parts)-i)
			for _, p := range parts[i:] {
				u, err := url.PathUnescape(p)
				if err != nil {
					return nil, false
				}
				rest = append(rest, u)
			}
			v := strings.Trim(strings.Join(rest, "/"), "/")
			if v == "" {
				return nil, false
			}
			params[s[1:len(s)-4]] = v
			return params, true
		}
		if i >= len(parts) {
			return nil, false
		}
		if strings.HasPrefix(s, "{") {
			u, err := url.PathUnescape(parts[i])
			if err != nil || u == "" {
				return nil, false
			}
			params[s[1:len(s)-1]] = u
			continue
		}
		if s != parts[i] {
			return nil, false
		}
	}
	return params, len(parts) == len(segs)
}

// RouteTemplates lists the REST surface as "METHOD /path/{param}" templates
// (a "{x...}" rest parameter shown as "{x}"), for tools that check it
// against GitHub's API description (internal/emulator/openapi).
func RouteTemplates() []string {
	out := make([]string, 0, len(routes))
	for _, rt := range routes {
		out = append(out, rt.method+" "+rt.display)
	}
	return out
}
