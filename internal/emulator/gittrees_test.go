package emulator

import (
	"encoding/base64"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTreeIDsAreGit: the emulator's tree ids are the ids real git computes
// for the same files (nested directories included), and the empty tree is
// git's empty tree.
func TestTreeIDsAreGit(t *testing.T) {
	t.Parallel()
	require.Equal(t, "4b825dc642cb6eb9a060e54bf8d69288fbee4904", gitTreeRoot(map[string]string{}))
	files := map[string]string{"README.md": "hi\n", ".github/workflows/a.yml": "on: push\n", ".github/actions/x/action.yml": "name: x\n", "a-b/c": "1", "a/b": "2", "a.b": "3"}
	flat := map[string]string{}
	for p, c := range files {
		flat[p] = BlobSHA([]byte(c))
	}
	got := gitTreeRoot(flat)
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	run := func(args ...string) string {
		cmd := exec.Command(gitBin, args...)
		cmd.Dir = dir
		cmd.Env = []string{"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null", "HOME=" + dir, "PATH=/usr/bin:/bin"}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		return strings.TrimSpace(string(out))
	}
	run("init", "-q")
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(c), 0o644))
	}
	run("add", "-A")
	require.Equal(t, run("write-tree"), got)
}

func TestGetTreeAndBlob(t *testing.T) {
	t.Parallel()
	v := newEnv(t, func(o *Options) { o.TreeEntryLimit = 4 })
	for p, c := range map[string]string{".github/workflows/a.yml": "on: push\n", ".github/workflows/b.yml": "on: pull_request\n", ".github/actions/x/action.yml": "name: x\n", "src/main.go": "package main\n"} {
		_, err := v.e.PutFile(testOwner, testRepo, "main", p, []byte(c))
		require.NoError(t, err)
	}
	tok := v.mint(map[string]any{"repositories": []string{testRepo}, "permissions": map[string]string{"contents": "read"}})
	head, _ := v.e.BranchHead(testOwner, testRepo, "main")
	cm := v.do("GET", "/repos/"+testOwner+"/"+testRepo+"/git/commits/"+head, tok, nil).json(t)
	treeSHA := cm["tree"].(map[string]any)["sha"].(string)

	root := v.do("GET", "/repos/"+testOwner+"/"+testRepo+"/git/trees/"+treeSHA, tok, nil)
	require.Equal(t, http.StatusOK, root.status, string(root.body))
	rj := root.json(t)
	require.Equal(t, treeSHA, rj["sha"].(string))
	require.Equal(t, false, rj["truncated"].(bool))
	entries := rj["tree"].([]any)
	require.Equal(t, 2, len(entries), "non-recursive: the top-level entries only")
	gh := entries[0].(map[string]any)
	require.Equal(t, ".github", gh["path"].(string))
	require.Equal(t, "tree", gh["type"].(string))
	require.Equal(t, "40000", gh["mode"].(string))

	sub := v.do("GET", "/repos/"+testOwner+"/"+testRepo+"/git/trees/"+gh["sha"].(string)+"?recursive=1", tok, nil).json(t)
	var paths []string
	for _, e := range sub["tree"].([]any) {
		paths = append(paths, e.(map[string]any)["path"].(string))
	}
	require.Equal(t, "actions actions/x actions/x/action.yml workflows", strings.Join(paths, " "), "recursive listing truncated after 4 entries")
	require.Equal(t, true, sub["truncated"].(bool))

	full := v.do("GET", "/repos/"+testOwner+"/"+testRepo+"/git/trees/main?recursive=false", tok, nil).json(t)
	require.Equal(t, treeSHA, full["sha"].(string), "a branch name resolves to its commit's tree; any recursive value recurses")
	require.Equal(t, true, full["truncated"].(bool))

	var blob map[string]any
	for _, e := range sub["tree"].([]any) {
		if e.(map[string]any)["type"] == "blob" {
			blob = e.(map[string]any)
		}
	}
	require.Equal(t, float64(len("name: x\n")), blob["size"].(float64))
	b := v.do("GET", "/repos/"+testOwner+"/"+testRepo+"/git/blobs/"+blob["sha"].(string), tok, nil).json(t)
	require.Equal(t, "base64", b["encoding"].(string))
	raw, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(b["content"].(string), "\n", ""))
	require.NoError(t, err)
	require.Equal(t, "name: x\n", string(raw))
	rawResp := v.do("GET", "/repos/"+testOwner+"/"+testRepo+"/git/blobs/"+blob["sha"].(string), tok, nil, "Accept", "application/vnd.github.raw")
	require.Equal(t, "name: x\n", string(rawResp.body))

	require.Equal(t, http.StatusNotFound, v.do("GET", "/repos/"+testOwner+"/"+testRepo+"/git/trees/"+strings.Repeat("0", 40), tok, nil).status)
	require.Equal(t, http.StatusNotFound, v.do("GET", "/repos/"+testOwner+"/"+testRepo+"/git/blobs/"+strings.Repeat("0", 40), tok, nil).status)
	other := v.mint(map[string]any{"repositories": []string{"other"}, "permissions": map[string]string{"contents": "read"}})
	require.Equal(t, http.StatusNotFound, v.do("GET", "/repos/"+testOwner+"/"+testRepo+"/git/trees/"+treeSHA, other, nil).status, "a token without the repository sees nothing")
	meta := v.mint(map[string]any{"repositories": []string{testRepo}, "permissions": map[string]string{"metadata": "read"}})
	require.Equal(t, http.StatusForbidden, v.do("GET", "/repos/"+testOwner+"/"+testRepo+"/git/blobs/"+blob["sha"].(string), meta, nil).status, "contents: read is required")
}

func TestCreateAndListPulls(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	require.NoError(t, v.e.SetInstallationPermissions(v.instID, map[string]string{"contents": "write", "pull_requests": "write", "metadata": "read"}))
	tok := v.mint(map[string]any{"repositories": []string{testRepo}, "permissions": map[string]string{"contents": "write", "pull_requests": "write"}})
	base := "/repos/" + testOwner + "/" + testRepo
	require.NoError(t, v.e.CreateBranch(testOwner, testRepo, "enroll", "main"))
	same := v.do("POST", base+"/pulls", tok, map[string]any{"title": "t", "head": "enroll", "base": "main"})
	require.Equal(t, http.StatusUnprocessableEntity, same.status, "no commits between main and enroll")
	_, err := v.e.PutFile(testOwner, testRepo, "enroll", "x.json", []byte("{}"))
	require.NoError(t, err)
	pr := v.do("POST", base+"/pulls", tok, map[string]any{"title": "Enroll", "head": testOwner + ":enroll", "base": "main", "body": "checklist"})
	require.Equal(t, http.StatusCreated, pr.status, string(pr.body))
	pj := pr.json(t)
	require.Equal(t, "checklist", pj["body"].(string))
	require.Equal(t, "enroll", pj["head"].(map[string]any)["ref"].(string))
	dup := v.do("POST", base+"/pulls", tok, map[string]any{"title": "Again", "head": "enroll", "base": "main"})
	require.Equal(t, http.StatusUnprocessableEntity, dup.status)
	require.True(t, strings.Contains(string(dup.body), "already exists"), string(dup.body))
	require.Equal(t, http.StatusUnprocessableEntity, v.do("POST", base+"/pulls", tok, map[string]any{"title": "x", "head": "nope", "base": "main"}).status)
	list := v.do("GET", base+"/pulls?state=open&head="+testOwner+":enroll", tok, nil)
	require.Equal(t, http.StatusOK, list.status)
	require.True(t, strings.Contains(string(list.body), `"number":`+itoa(int64(pj["number"].(float64)))), string(list.body))
	empty := v.do("GET", base+"/pulls?head=someone:enroll", tok, nil)
	require.Equal(t, "[]", string(empty.body))
	body, ok := v.e.PullRequestBody(testOwner, testRepo, int(pj["number"].(float64)))
	require.Equal(t, true, ok)
	require.Equal(t, "checklist", body)
	read := v.mint(map[string]any{"repositories": []string{testRepo}, "permissions": map[string]string{"pull_requests": "read", "contents": "write"}})
	require.Equal(t, http.StatusForbidden, v.do("POST", base+"/pulls", read, map[string]any{"title": "x", "head": "enroll", "base": "main"}).status)
}

func TestRepoFork(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	tok := v.mint(map[string]any{"repositories": []string{testRepo}, "permissions": map[string]string{"metadata": "read"}})
	require.Equal(t, false, v.do("GET", "/repos/"+testOwner+"/"+testRepo, tok, nil).json(t)["fork"].(bool))
	require.NoError(t, v.e.SetRepoFork(testOwner, testRepo, true))
	require.Equal(t, true, v.do("GET", "/repos/"+testOwner+"/"+testRepo, tok, nil).json(t)["fork"].(bool))
}
