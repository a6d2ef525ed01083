package emulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"time"
)

func (r result) list(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	require.NoError(t, json.Unmarshal(r.body, &out), string(r.body))
	return out
}

func (v *env) listCommits(token, query string) result {
	v.t.Helper()
	return v.do("GET", "/repos/"+testOwner+"/"+testRepo+"/commits?"+query, token, nil)
}

// List commits (https://docs.github.com/en/rest/commits/commits#list-commits):
// a path filter keeps only the commits that changed that file, newest first,
// each naming the App's bot account as author, web-flow as committer, a
// verified signature and its parent.
func TestListCommitsPathFilterAndIdentity(t *testing.T) {
	v := newEnv(t)
	require.NoError(t, v.e.CreateBranch(testOwner, testRepo, "lock-state", "main"))
	seedSHA, err := v.e.PutFile(testOwner, testRepo, "lock-state", "locks/a.json", []byte("0"))
	require.NoError(t, err)
	_ = seedSHA
	tok := v.mint(nil)
	sha := BlobSHA([]byte("0"))
	for i := 1; i <= 3; i++ {
		v.clk.Advance(time.Minute)
		res := v.put(tok, "locks/a.json", fmt.Sprint(i), "lock-state", sha)
		require.Equal(t, http.StatusOK, res.status, string(res.body))
		sha = BlobSHA([]byte(fmt.Sprint(i)))
		v.clk.Advance(time.Minute)
		require.Equal(t, http.StatusCreated, v.put(tok, fmt.Sprintf("locks/other-%d.json", i), "x", "lock-state", "").status)
	}
	res := v.listCommits(tok, "sha=lock-state&path=locks/a.json")
	require.Equal(t, http.StatusOK, res.status, string(res.body))
	items := res.list(t)
	require.Equal(t, 4, len(items))
	head, _ := v.e.BranchHead(testOwner, testRepo, "lock-state")
	require.True(t, items[0]["sha"] != head, "the head commit touched another path")
	hist := v.e.History(testOwner, testRepo, "lock-state", "locks/a.json")
	for i, it := range items {
		require.Equal(t, hist[len(hist)-1-i].CommitSHA, it["sha"].(string))
	}
	first := items[0]
	author := first["author"].(map[string]any)
	require.Equal(t, "app-77[bot]", author["login"].(string))
	require.Equal(t, "Bot", author["type"].(string))
	require.Equal(t, webFlowLogin, first["committer"].(map[string]any)["login"].(string))
	cm := first["commit"].(map[string]any)
	require.Equal(t, "app-77[bot]", cm["author"].(map[string]any)["name"].(string))
	require.Equal(t, "100000077+app-77[bot]@users.noreply.github.com", cm["author"].(map[string]any)["email"].(string))
	require.Equal(t, testStart.Add(5*time.Minute).Format(time.RFC3339), cm["committer"].(map[string]any)["date"].(string))
	require.Equal(t, true, cm["verification"].(map[string]any)["verified"].(bool))
	require.Equal(t, "write locks/a.json", cm["message"].(string))
	parents := first["parents"].([]any)
	require.Equal(t, 1, len(parents))
	// The parent of the newest version is the other-path commit before it.
	require.True(t, parents[0].(map[string]any)["sha"] != items[1]["sha"], "a commit to another path lies between the versions")

	seed := items[3]
	require.Equal(t, SeedAuthorLogin, seed["author"].(map[string]any)["login"].(string))
	require.Equal(t, "User", seed["author"].(map[string]any)["type"].(string))
	require.Equal(t, false, seed["commit"].(map[string]any)["verification"].(map[string]any)["verified"].(bool))

	// Without a path every commit of the branch is listed.
	all := v.listCommits(tok, "sha=lock-state&per_page=100").list(t)
	require.Equal(t, 8, len(all))
	require.Equal(t, head, all[0]["sha"].(string))
}

// Pagination: per_page at most 100, Link rel="next"/"last" (and "prev"/
// "first" after page 1), an empty page past the end
// (https://docs.github.com/en/rest/using-the-rest-api/using-pagination-in-the-rest-api).
func TestListCommitsPagination(t *testing.T) {
	v := newEnv(t)
	tok := v.mint(nil)
	sha := ""
	for i := range 250 {
		res := v.put(tok, "locks/a.json", fmt.Sprint(i), "", sha)
		require.True(t, res.status == http.StatusOK || res.status == http.StatusCreated, string(res.body))
		sha = BlobSHA([]byte(fmt.Sprint(i)))
	}
	seen := map[string]bool{}
	for page := 1; page <= 3; page++ {
		res := v.listCommits(tok, fmt.Sprintf("path=locks/a.json&per_page=500&page=%d", page))
		require.Equal(t, http.StatusOK, res.status)
		items := res.list(t)
		want := 100
		if page == 3 {
			want = 50
		}
		require.Equal(t, want, len(items))
		for _, it := range items {
			s := it["sha"].(string)
			require.True(t, !seen[s], "duplicate across pages", s)
			seen[s] = true
		}
		link := res.header.Get("Link")
		require.Equal(t, page < 3, strings.Contains(link, `rel="next"`), link)
		require.Equal(t, page > 1, strings.Contains(link, `rel="prev"`), link)
		if page == 1 {
			require.True(t, strings.Contains(link, "page=3&path=locks%2Fa.json&per_page=100>; rel=\"last\""), link)
		}
	}
	require.Equal(t, 250, len(seen))
	require.Equal(t, 0, len(v.listCommits(tok, "path=locks/a.json&per_page=100&page=4").list(t)))
}

// since/until bound the committer date; a bad value is 422; an unknown sha
// is 404 with GitHub's message; a repeated GET revalidates to a free 304.
func TestListCommitsFiltersErrorsAndETag(t *testing.T) {
	v := newEnv(t)
	tok := v.mint(nil)
	sha := ""
	for i := range 5 {
		v.clk.Set(testStart.Add(time.Duration(i) * time.Hour))
		tok = v.mint(nil) // installation tokens last an hour
		res := v.put(tok, "locks/a.json", fmt.Sprint(i), "", sha)
		require.True(t, res.status < 300, string(res.body))
		sha = BlobSHA([]byte(fmt.Sprint(i)))
	}
	q := "path=locks/a.json&since=" + testStart.Add(time.Hour).Format(time.RFC3339) + "&until=" + testStart.Add(3*time.Hour).Format(time.RFC3339)
	require.Equal(t, 3, len(v.listCommits(tok, q).list(t)))
	require.Equal(t, http.StatusUnprocessableEntity, v.listCommits(tok, "since=yesterday").status)

	res := v.listCommits(tok, "sha=no-such-branch")
	require.Equal(t, http.StatusNotFound, res.status)
	require.Equal(t, "No commit found for SHA: no-such-branch", res.json(t)["message"].(string))

	res = v.listCommits(tok, "path=locks/a.json")
	etag := res.header.Get("ETag")
	require.True(t, etag != "", "ETag")
	again := v.do("GET", "/repos/"+testOwner+"/"+testRepo+"/commits?path=locks/a.json", tok, nil, "If-None-Match", etag)
	require.Equal(t, http.StatusNotModified, again.status)

	// contents: read is required.
	v.e.AddToken("no-contents", TokenScope{Permissions: map[string]string{"issues": "write"}})
	require.Equal(t, http.StatusForbidden, v.listCommits("no-contents", "path=locks/a.json").status)
}

// A force-push drops the replaced commits from the list; a deletion is a
// commit of the path.
func TestListCommitsAfterRewriteAndDelete(t *testing.T) {
	v := newEnv(t)
	tok := v.mint(nil)
	require.Equal(t, http.StatusCreated, v.put(tok, "locks/a.json", "1", "", "").status)
	base, _ := v.e.BranchHead(testOwner, testRepo, "main")
	require.Equal(t, http.StatusOK, v.put(tok, "locks/a.json", "2", "", BlobSHA([]byte("1"))).status)
	dropped, _ := v.e.BranchHead(testOwner, testRepo, "main")
	res := v.do("PATCH", "/repos/"+testOwner+"/"+testRepo+"/git/refs/heads/main", tok, map[string]any{"sha": base, "force": true})
	require.Equal(t, http.StatusOK, res.status, string(res.body))
	require.Equal(t, http.StatusOK, v.put(tok, "locks/a.json", "3", "", BlobSHA([]byte("1"))).status)
	require.NoError(t, v.e.DeleteFile(testOwner, testRepo, "main", "locks/a.json"))
	items := v.listCommits(tok, "path=locks/a.json").list(t)
	require.Equal(t, 3, len(items))
	for _, it := range items {
		require.True(t, it["sha"] != dropped, "a force-pushed-away commit is listed")
	}
	require.Equal(t, SeedAuthorLogin, items[0]["author"].(map[string]any)["login"].(string))
	require.Equal(t, base, items[2]["sha"].(string))
}
