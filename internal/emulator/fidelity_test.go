package emulator

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
)

func TestBranchRulesRefuseWritesAsGitHubDoes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rules  []BranchRule
		status int
		msg    string
	}{
		{"pull_request", []BranchRule{{Type: "pull_request"}}, 409, "Repository rule violations found\n\nChanges must be made through a pull request.\n\n"},
		{"update", []BranchRule{{Type: "update"}}, 409, "Repository rule violations found\n\nCannot update this protected ref.\n\n"},
		{"status checks", []BranchRule{{Type: "required_status_checks", Parameters: map[string]any{"required_status_checks": []any{map[string]any{"context": "ci"}}}}}, 409,
			"Repository rule violations found\n\nRequired status check \"ci\" is expected.\n\n"},
		{"two rules", []BranchRule{{Type: "update"}, {Type: "pull_request"}}, 409,
			"Repository rule violations found\n\nCannot update this protected ref.\n\nChanges must be made through a pull request.\n\n"},
		{"classic protection", []BranchRule{{Type: RuleProtectedBranch}}, 422, "Protected branch update failed for refs/heads/lock-state."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newEnv(t)
			require.NoError(t, v.e.CreateBranch(testOwner, testRepo, "lock-state", "main"))
			tok := v.mint(nil)
			require.NoError(t, v.e.SetBranchRules(testOwner, testRepo, "lock-state", tc.rules))
			before, _ := v.e.BranchHead(testOwner, testRepo, "lock-state")
			res := v.put(tok, "locks/x.json", "{}", "lock-state", "")
			require.Equal(t, tc.status, res.status, string(res.body))
			assert.Equal(t, tc.msg, res.json(t)["message"])
			after, _ := v.e.BranchHead(testOwner, testRepo, "lock-state")
			assert.Equal(t, before, after, "a refused write changes nothing")
			assert.EqualValues(t, 1, v.e.Metrics().RuleRefusals)
			assert.EqualValues(t, 0, v.e.Metrics().Conflicts, "a rule refusal is not a compare-and-swap conflict")
		})
	}
}

func TestBranchRulesThatAllowCommits(t *testing.T) {
	v := newEnv(t)
	require.NoError(t, v.e.CreateBranch(testOwner, testRepo, "lock-state", "main"))
	tok := v.mint(nil)
	// The rules docs/adopting.md recommends on lock-state allow the state writes.
	require.NoError(t, v.e.SetBranchRules(testOwner, testRepo, "lock-state", []BranchRule{{Type: "deletion"}, {Type: "non_fast_forward"}}))
	res := v.put(tok, "locks/x.json", "{}", "lock-state", "")
	require.Equal(t, http.StatusCreated, res.status, string(res.body))
	del := v.do("DELETE", "/repos/"+testOwner+"/"+testRepo+"/git/refs/heads/lock-state", tok, nil)
	require.Equal(t, http.StatusUnprocessableEntity, del.status)
	assert.Equal(t, "Repository rule violations found\n\nCannot delete this protected ref.\n\n", del.json(t)["message"])
}

func TestBranchRulesAdminAPI(t *testing.T) {
	v := newEnv(t)
	require.NoError(t, v.e.CreateBranch(testOwner, testRepo, "lock-state", "main"))
	res := v.do("POST", "/_emulator/rules", "", map[string]any{"owner": testOwner, "repo": testRepo, "branch": "lock-state", "rules": []any{map[string]any{"type": "update"}}})
	require.Equal(t, http.StatusOK, res.status, string(res.body))
	tok := v.mint(nil)
	assert.Equal(t, http.StatusConflict, v.put(tok, "locks/x.json", "{}", "lock-state", "").status)
	listed := v.do("GET", "/repos/"+testOwner+"/"+testRepo+"/rules/branches/lock-state", tok, nil)
	assert.Contains(t, string(listed.body), `"type":"update"`)
}

func TestRulesetViolationFault(t *testing.T) {
	v := newEnv(t)
	tok := v.mint(nil)
	v.e.AddFault(Fault{Method: "PUT", Kind: RulesetViolation, Count: 1})
	res := v.put(tok, "a.txt", "x", "", "")
	require.Equal(t, http.StatusConflict, res.status)
	assert.True(t, strings.HasPrefix(res.json(t)["message"].(string), "Repository rule violations found\n\n"))
	_, ok := v.e.repos[repoKey(testOwner, testRepo)].commits[v.e.repos[repoKey(testOwner, testRepo)].branches["main"]].Files["a.txt"]
	assert.False(t, ok, "nothing applied")
	assert.Equal(t, http.StatusCreated, v.put(tok, "a.txt", "x", "", "").status, "Count 1: the next write passes")
}

func TestReplicaLagServesRecentVersionsOnly(t *testing.T) {
	clk := clock.NewFake(testStart)
	v := newEnv(t, func(o *Options) { o.Clock = clk; o.ReplicaLag = 10 * time.Second })
	tok := v.mint(nil)
	shas := map[string]time.Time{}
	var last string
	for i := range 5 {
		res := v.put(tok, "f.txt", strings.Repeat("v", i+1), "", last)
		require.Less(t, res.status, 300, string(res.body))
		last = res.json(t)["content"].(map[string]any)["sha"].(string)
		shas[last] = clk.Now()
		clk.Advance(4 * time.Second)
	}
	// Every read returns a version that was the head at some instant of the
	// last 10 s: never older.
	seen := map[string]bool{}
	for range 200 {
		res := v.do("GET", "/repos/"+testOwner+"/"+testRepo+"/contents/f.txt", tok, nil)
		require.Equal(t, http.StatusOK, res.status)
		sha := res.json(t)["sha"].(string)
		seen[sha] = true
		written, ok := shas[sha]
		require.True(t, ok)
		// The version that replaced it must be younger than the lag.
		assert.True(t, sha == last || clk.Now().Sub(written) < 10*time.Second+4*time.Second, "too old: %s", sha)
	}
	assert.Greater(t, len(seen), 1, "a lagging replica served an older version")
	assert.Positive(t, v.e.Metrics().LaggedReads)
	// A read by commit (or after the lag) is exact.
	clk.Advance(11 * time.Second)
	for range 20 {
		res := v.do("GET", "/repos/"+testOwner+"/"+testRepo+"/contents/f.txt", tok, nil)
		assert.Equal(t, last, res.json(t)["sha"])
	}
}

func TestReplicaLagConditionalReadGetsTheOldVersion(t *testing.T) {
	clk := clock.NewFake(testStart)
	v := newEnv(t, func(o *Options) { o.Clock = clk; o.ReplicaLag = 10 * time.Second })
	tok := v.mint(nil)
	first := v.put(tok, "f.txt", "one", "", "").json(t)["content"].(map[string]any)["sha"].(string)
	clk.Advance(30 * time.Second)
	fresh := v.do("GET", "/repos/"+testOwner+"/"+testRepo+"/contents/f.txt", tok, nil)
	etag := fresh.header.Get("ETag")
	second := v.put(tok, "f.txt", "two", "", first).json(t)["content"].(map[string]any)["sha"].(string)
	clk.Advance(5 * time.Second)
	// With the old ETag, a lagging replica answers 304 (it still has that
	// version) and a current one 200 with the new version: both happen.
	statuses := map[int]bool{}
	for range 100 {
		res := v.do("GET", "/repos/"+testOwner+"/"+testRepo+"/contents/f.txt", tok, nil, "If-None-Match", etag)
		statuses[res.status] = true
		if res.status == http.StatusOK {
			assert.Equal(t, second, res.json(t)["sha"])
		}
	}
	assert.True(t, statuses[http.StatusNotModified] && statuses[http.StatusOK], "%v", statuses)
}

func TestCommitLatencyBranchHeadConflictBetweenFiles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := newEnv(t, func(o *Options) { o.Clock = clock.Real{}; o.CommitLatency = 500 * time.Millisecond })
		v.clk = clock.NewFake(time.Now()) // the JWT's clock: the bubble's
		tok := v.mint(nil)
		var wg sync.WaitGroup
		results := make([]result, 2)
		for i, p := range []string{"locks/a.json", "locks/b.json"} {
			wg.Go(func() {
				body := map[string]any{"message": "w", "content": b64(p)}
				res, err := v.try(context.Background(), "PUT", "/repos/"+testOwner+"/"+testRepo+"/contents/"+p, tok, body)
				require.NoError(t, err)
				results[i] = res
			})
		}
		wg.Wait()
		var won, lost int
		for _, r := range results {
			switch r.status {
			case http.StatusCreated:
				won++
			case http.StatusConflict:
				lost++
				msg := r.json(t)["message"].(string)
				assert.Regexp(t, `^is at [0-9a-f]{40} but expected [0-9a-f]{40}$`, msg)
			}
		}
		assert.Equal(t, 1, won)
		assert.Equal(t, 1, lost)
		assert.EqualValues(t, 1, v.e.Metrics().BranchHeadConflicts)
		// Sequential writes never conflict.
		for i := range 3 {
			res := v.put(tok, "locks/c"+itoa(int64(i))+".json", "c", "", "")
			assert.Equal(t, http.StatusCreated, res.status, string(res.body))
		}
	})
}

func TestRenamedRepositoryRedirects(t *testing.T) {
	v := newEnv(t)
	tok := v.mint(nil)
	v.put(tok, "f.txt", "one", "", "")
	require.NoError(t, v.e.RenameRepo(testOwner, testRepo, "build-lock-2"))
	noFollow := &http.Client{Transport: v.e.Transport(), CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	send := func(method, path string) *http.Response {
		req, _ := http.NewRequest(method, "http://emulator.test"+path, strings.NewReader(`{"message":"m","content":"eA=="}`))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := noFollow.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	get := send("GET", "/repos/"+testOwner+"/"+testRepo+"/contents/f.txt?ref=main")
	assert.Equal(t, http.StatusMovedPermanently, get.StatusCode)
	assert.Equal(t, "http://emulator.test/repositories/10/contents/f.txt?ref=main", get.Header.Get("Location"))
	put := send("PUT", "/repos/"+testOwner+"/"+testRepo+"/contents/g.txt")
	assert.Equal(t, http.StatusTemporaryRedirect, put.StatusCode)
	// Following lands on the same repository.
	res := v.do("GET", "/repos/"+testOwner+"/"+testRepo+"/contents/f.txt", tok, nil)
	require.Equal(t, http.StatusOK, res.status)
	assert.Contains(t, res.json(t)["url"], "/repos/example-org/build-lock-2/contents/f.txt")
	// A credential that cannot see it learns nothing.
	v.e.AddToken("plain-other", TokenScope{Label: "other", Repos: []string{testOwner + "/other"}})
	res = v.do("GET", "/repos/"+testOwner+"/"+testRepo, "plain-other", nil)
	assert.Equal(t, http.StatusNotFound, res.status)
	assert.EqualValues(t, 3, v.e.Metrics().Redirects)
}

func TestLinkHeadersNameTheRepositoryByID(t *testing.T) {
	v := newEnv(t)
	tok := v.mint(nil)
	var last string
	for i := range 3 {
		res := v.put(tok, "f.txt", strings.Repeat("x", i+1), "", last)
		last = res.json(t)["content"].(map[string]any)["sha"].(string)
	}
	res := v.do("GET", "/repos/"+testOwner+"/"+testRepo+"/commits?per_page=1", tok, nil)
	require.Equal(t, http.StatusOK, res.status)
	assert.Contains(t, res.header.Get("Link"), "<http://emulator.test/repositories/10/commits?page=2&per_page=1>; rel=\"next\"")
	// And the Link URL is served.
	next := v.do("GET", "/repositories/10/commits?page=2&per_page=1", tok, nil)
	assert.Equal(t, http.StatusOK, next.status, string(next.body))
}

// A ruleset's bypass list lets the listed App's installation tokens through
// ("Restrict updates" with the writer App as the only bypass actor).
func TestBranchRuleBypass(t *testing.T) {
	v := newEnv(t)
	require.NoError(t, v.e.CreateBranch(testOwner, testRepo, "lock-state", "main"))
	require.NoError(t, v.e.SetBranchRules(testOwner, testRepo, "lock-state", []BranchRule{{Type: "update", BypassAppIDs: []int64{testAppID}}}))
	tok := v.mint(nil)
	assert.Equal(t, http.StatusCreated, v.put(tok, "locks/x.json", "{}", "lock-state", "").status, "the bypass App writes")
	v.e.AddToken("plain-writer", TokenScope{Label: "w", Repos: []string{testOwner + "/" + testRepo}, Permissions: map[string]string{"contents": "write"}})
	assert.Equal(t, http.StatusConflict, v.put("plain-writer", "locks/y.json", "{}", "lock-state", "").status, "anyone else is refused")
}
