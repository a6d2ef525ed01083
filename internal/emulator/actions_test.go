package emulator

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-github/v66/github"
	"github.com/stretchr/testify/require"
)

// Jobs of an attempt, paginated with total_count and Link:
// https://docs.github.com/en/rest/actions/workflow-jobs#list-jobs-for-a-workflow-run-attempt
func TestRunsJobsPagination(t *testing.T) {
	v := newEnv(t)
	run := v.e.CreateRun(testOwner, testRepo, Run{Workflow: "reap-stale-locks.yml", Event: "schedule", Status: "in_progress"})
	for i := range 150 {
		v.e.AddJob(testOwner, testRepo, run, 1, Job{Name: "j" + itoa(int64(i)), RunnerName: "runner-a", Status: "in_progress"})
	}
	tok := v.mint(nil)
	res := v.do("GET", "/repos/example-org/build-lock/actions/runs/"+itoa(run)+"/attempts/1/jobs?filter=all&per_page=100&page=1", tok, nil)
	require.Equal(t, http.StatusOK, res.status)
	m := res.json(t)
	require.Equal(t, float64(150), m["total_count"].(float64))
	require.Equal(t, 100, len(m["jobs"].([]any)))
	require.True(t, strings.Contains(res.header.Get("Link"), `page=2&per_page=100>; rel="next"`), res.header.Get("Link"))
	res = v.do("GET", "/repos/example-org/build-lock/actions/runs/"+itoa(run)+"/attempts/1/jobs?filter=all&per_page=100&page=2", tok, nil)
	require.Equal(t, 50, len(res.json(t)["jobs"].([]any)))
	require.True(t, !strings.Contains(res.header.Get("Link"), `rel="next"`))

	// Run status and attempts (E13).
	require.NoError(t, v.e.SetRunStatus(testOwner, testRepo, run, "completed", "success"))
	r := v.do("GET", "/repos/example-org/build-lock/actions/runs/"+itoa(run), tok, nil).json(t)
	require.Equal(t, "completed", r["status"].(string))
	require.Equal(t, "success", r["conclusion"].(string))
	require.Equal(t, float64(1), r["run_attempt"].(float64))
	require.Equal(t, 2, v.e.NewRunAttempt(testOwner, testRepo, run))
	r = v.do("GET", "/repos/example-org/build-lock/actions/runs/"+itoa(run), tok, nil).json(t)
	require.Equal(t, float64(2), r["run_attempt"].(float64))
	require.True(t, r["conclusion"] == nil)
	j2 := v.e.AddJob(testOwner, testRepo, run, 0, Job{Name: "again"})
	job := v.do("GET", "/repos/example-org/build-lock/actions/jobs/"+itoa(j2), tok, nil).json(t)
	require.Equal(t, "queued", job["status"].(string))
	require.True(t, job["runner_name"] == nil)
	require.Equal(t, http.StatusNotFound, v.do("GET", "/repos/example-org/build-lock/actions/runs/999", tok, nil).status)

	// Workflow runs by file and event, newest first.
	v.clk.Advance(60e9)
	newer := v.e.CreateRun(testOwner, testRepo, Run{Workflow: "reap-stale-locks.yml", Event: "schedule"})
	v.e.CreateRun(testOwner, testRepo, Run{Workflow: "reap-stale-locks.yml", Event: "workflow_dispatch"})
	res = v.do("GET", "/repos/example-org/build-lock/actions/workflows/reap-stale-locks.yml/runs?event=schedule&per_page=2", tok, nil)
	wr := res.json(t)
	require.Equal(t, float64(2), wr["total_count"].(float64))
	require.Equal(t, float64(newer), wr["workflow_runs"].([]any)[0].(map[string]any)["id"].(float64))
}

// Pull request heads (E15): https://docs.github.com/en/rest/pulls/pulls#get-a-pull-request
// Issues: https://docs.github.com/en/rest/issues/issues
func TestPullsAndIssues(t *testing.T) {
	v := newEnv(t)
	v.e.AddToken("wf", TokenScope{Label: "wf", Repos: []string{"example-org/build-lock"}})
	v.e.SetPullRequest(testOwner, testRepo, 7, "open", "abc123")
	pr := v.do("GET", "/repos/example-org/build-lock/pulls/7", "wf", nil).json(t)
	require.Equal(t, "abc123", pr["head"].(map[string]any)["sha"].(string))
	require.Equal(t, "open", pr["state"].(string))
	for i := range 7 {
		res := v.do("POST", "/repos/example-org/build-lock/issues", "wf", map[string]any{"title": "t" + itoa(int64(i)), "body": "<!-- marker -->"})
		require.Equal(t, http.StatusCreated, res.status)
		require.Equal(t, WorkflowBotLogin, res.json(t)["user"].(map[string]any)["login"].(string))
		v.clk.Advance(1e9)
	}
	res := v.do("GET", "/repos/example-org/build-lock/issues?state=all&creator=github-actions%5Bbot%5D&sort=created&direction=asc&per_page=5&page=1", "wf", nil)
	require.Equal(t, http.StatusOK, res.status)
	require.True(t, strings.Contains(res.header.Get("Link"), `rel="next"`))
	require.True(t, strings.HasPrefix(string(res.body), "["))
	res = v.do("GET", "/repos/example-org/build-lock/issues?state=all&creator=github-actions%5Bbot%5D&sort=created&direction=asc&per_page=5&page=2", "wf", nil)
	require.Equal(t, 2, strings.Count(string(res.body), `"number"`), string(res.body))
	res = v.do("PATCH", "/repos/example-org/build-lock/issues/8", "wf", map[string]any{"state": "closed"})
	require.Equal(t, http.StatusOK, res.status)
	require.Equal(t, "closed", res.json(t)["state"].(string))
	require.Equal(t, "closed", v.do("GET", "/repos/example-org/build-lock/issues/8", "wf", nil).json(t)["state"].(string))
	// Installation tokens author as "<slug>[bot]".
	require.NoError(t, v.e.SetAppSlug(testAppID, "build-lock-writer"))
	res = v.do("POST", "/repos/example-org/build-lock/issues", v.mint(nil), map[string]any{"title": "x"})
	require.Equal(t, "build-lock-writer[bot]", res.json(t)["user"].(map[string]any)["login"].(string))
}

// go-github v66 against the emulator over real HTTP (httptest) and in memory.
func TestGoGitHubCompatibility(t *testing.T) {
	v := newEnv(t)
	srv := httptest.NewServer(v.e.Handler())
	defer srv.Close()
	ctx := context.Background()
	base, _ := url.Parse(srv.URL + "/")

	appClient := github.NewClient(nil).WithAuthToken(v.appJWT())
	appClient.BaseURL = base
	inst, _, err := appClient.Apps.FindRepositoryInstallation(ctx, testOwner, testRepo)
	require.NoError(t, err)
	require.Equal(t, v.instID, inst.GetID())
	it, _, err := appClient.Apps.CreateInstallationToken(ctx, inst.GetID(), &github.InstallationTokenOptions{
		Repositories: []string{testRepo}, Permissions: &github.InstallationPermissions{Contents: github.String("write")}})
	require.NoError(t, err)

	for _, c := range []*github.Client{
		func() *github.Client {
			c := github.NewClient(nil).WithAuthToken(it.GetToken())
			c.BaseURL = base
			return c
		}(),
		func() *github.Client {
			c := github.NewClient(&http.Client{Transport: v.e.Transport()}).WithAuthToken(it.GetToken())
			c.BaseURL, _ = url.Parse("http://emulator.test/api/v3/")
			return c
		}(),
	} {
		path := "locks/" + strings.ReplaceAll(c.BaseURL.Host, ":", "-") + ".json"
		cr, resp, err := c.Repositories.CreateFile(ctx, testOwner, testRepo, path, &github.RepositoryContentFileOptions{
			Message: github.String("create"), Content: []byte(`{"v":1}`), Branch: github.String("main")})
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, resp.StatusCode)
		fc, _, _, err := c.Repositories.GetContents(ctx, testOwner, testRepo, path, &github.RepositoryContentGetOptions{Ref: "main"})
		require.NoError(t, err)
		got, err := fc.GetContent()
		require.NoError(t, err)
		require.Equal(t, `{"v":1}`, got)
		require.Equal(t, cr.Content.GetSHA(), fc.GetSHA())
		_, resp, err = c.Repositories.UpdateFile(ctx, testOwner, testRepo, path, &github.RepositoryContentFileOptions{
			Message: github.String("update"), Content: []byte(`{"v":2}`), SHA: github.String(fc.GetSHA())})
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		_, resp, err = c.Repositories.UpdateFile(ctx, testOwner, testRepo, path, &github.RepositoryContentFileOptions{
			Message: github.String("stale"), Content: []byte(`{"v":3}`), SHA: github.String(fc.GetSHA())})
		require.True(t, err != nil)
		require.Equal(t, http.StatusConflict, resp.StatusCode)
		ref, _, err := c.Git.GetRef(ctx, testOwner, testRepo, "heads/main")
		require.NoError(t, err)
		require.True(t, ref.GetObject().GetSHA() != "")
	}

	// Secondary limit is recognized by go-github as AbuseRateLimitError.
	v.e.AddFault(Fault{Kind: SecondaryRateLimit403, RetryAfter: "7", Count: 1})
	c := github.NewClient(nil).WithAuthToken(it.GetToken())
	c.BaseURL = base
	_, _, err = c.Repositories.Get(ctx, testOwner, testRepo)
	var abuse *github.AbuseRateLimitError
	require.ErrorAs(t, err, &abuse)
	require.Equal(t, "7s", abuse.GetRetryAfter().String())

	// Response lost over real HTTP: the connection is closed, the write applied.
	v.e.AddFault(Fault{Method: "PUT", Kind: WriteAcceptedResponseLost, Count: 1})
	c = github.NewClient(nil).WithAuthToken(it.GetToken())
	c.BaseURL = base
	_, _, err = c.Repositories.CreateFile(ctx, testOwner, testRepo, "lost.json", &github.RepositoryContentFileOptions{
		Message: github.String("m"), Content: []byte("{}")})
	require.True(t, err != nil)
	require.Equal(t, 1, len(v.e.History(testOwner, testRepo, "main", "lost.json")))
}
