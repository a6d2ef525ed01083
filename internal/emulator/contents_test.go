package emulator

import (
	"encoding/base64"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/linearizability"
)

// Blob SHAs are git object ids: https://git-scm.com/book/en/v2/Git-Internals-Git-Objects
func TestBlobSHAKnownValues(t *testing.T) {
	require.Equal(t, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391", BlobSHA(nil))
	require.Equal(t, "ce013625030ba8dba906f756967f9e9ca394464a", BlobSHA([]byte("hello\n")))
}

// Measured semantics of PUT contents (https://github.com/pome-sh/digital-twins/pull/400):
// 201 create, 200 update, 422 missing sha, 409 wrong sha, 201 absent+sha, 404 branch.
func TestContentsPutSemantics(t *testing.T) {
	v := newEnv(t)
	tok := v.mint(map[string]any{"repositories": []string{testRepo}, "permissions": map[string]string{"contents": "write"}})

	res := v.put(tok, "locks/a.json", `{"v":1}`, "", "")
	require.Equal(t, http.StatusCreated, res.status, string(res.body))
	sha1 := res.json(t)["content"].(map[string]any)["sha"].(string)
	require.Equal(t, BlobSHA([]byte(`{"v":1}`)), sha1)
	commit := res.json(t)["commit"].(map[string]any)
	require.Equal(t, "write locks/a.json", commit["message"].(string))

	res = v.put(tok, "locks/a.json", `{"v":2}`, "", "")
	require.Equal(t, http.StatusUnprocessableEntity, res.status)
	require.Equal(t, "Invalid request.\n\n\"sha\" wasn't supplied.", res.json(t)["message"].(string))
	require.Equal(t, "422", res.json(t)["status"].(string))

	res = v.put(tok, "locks/a.json", `{"v":2}`, "", "0123456789012345678901234567890123456789")
	require.Equal(t, http.StatusConflict, res.status)
	require.Equal(t, "locks/a.json does not match 0123456789012345678901234567890123456789", res.json(t)["message"].(string))

	res = v.put(tok, "locks/a.json", `{"v":2}`, "", sha1)
	require.Equal(t, http.StatusOK, res.status)

	// Absent file + any sha → 201: the CAS gap.
	res = v.put(tok, "locks/new.json", `{}`, "", "0123456789012345678901234567890123456789")
	require.Equal(t, http.StatusCreated, res.status)

	// Nonexistent branch is checked first → 404.
	res = v.put(tok, "locks/a.json", `{}`, "nope", "bad")
	require.Equal(t, http.StatusNotFound, res.status)

	m := v.e.Metrics()
	require.Equal(t, int64(2), m.Conflicts)
	require.Equal(t, int64(3), m.Writes)
}

// GitHub base64-encodes file content with a newline every 60 characters.
// https://docs.github.com/en/rest/repos/contents#get-repository-content
func TestContentsGetShapeAndNewlines(t *testing.T) {
	v := newEnv(t)
	content := strings.Repeat("x", 100)
	sha, err := v.e.PutFile(testOwner, testRepo, "main", "locks/a.config.json", []byte(content))
	require.NoError(t, err)
	tok := v.mint(nil)
	res := v.do("GET", "/repos/example-org/build-lock/contents/locks/a.config.json", tok, nil)
	require.Equal(t, http.StatusOK, res.status)
	m := res.json(t)
	require.Equal(t, sha, m["sha"].(string))
	require.Equal(t, "file", m["type"].(string))
	require.Equal(t, "base64", m["encoding"].(string))
	require.Equal(t, float64(100), m["size"].(float64))
	lines := strings.Split(m["content"].(string), "\n")
	require.Equal(t, 60, len(lines[0]))
	require.Equal(t, "", lines[len(lines)-1])
	dec, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(m["content"].(string), "\n", ""))
	require.NoError(t, err)
	require.Equal(t, content, string(dec))
	require.True(t, strings.HasPrefix(res.header.Get("Content-Type"), "application/json"))

	// Raw media type.
	res = v.do("GET", "/repos/example-org/build-lock/contents/locks/a.config.json", tok, nil, "Accept", "application/vnd.github.raw")
	require.Equal(t, content, string(res.body))

	// Absent file and unknown ref → 404; ref selects the branch.
	require.Equal(t, http.StatusNotFound, v.do("GET", "/repos/example-org/build-lock/contents/locks/none.json", tok, nil).status)
	require.Equal(t, http.StatusNotFound, v.do("GET", "/repos/example-org/build-lock/contents/locks/a.config.json?ref=lock-state", tok, nil).status)
	require.NoError(t, v.e.CreateBranch(testOwner, testRepo, "lock-state", "main"))
	require.Equal(t, http.StatusOK, v.do("GET", "/repos/example-org/build-lock/contents/locks/a.config.json?ref=lock-state", tok, nil).status)
	// Directory listing.
	res = v.do("GET", "/repos/example-org/build-lock/contents/locks", tok, nil)
	require.Equal(t, http.StatusOK, res.status)
	require.True(t, strings.HasPrefix(string(res.body), "["), string(res.body))
}

// "Making a conditional request does not count against your primary rate
// limit if a 304 response is returned."
// https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api#use-conditional-requests-if-appropriate
func TestETagNotModifiedNotCharged(t *testing.T) {
	v := newEnv(t)
	_, err := v.e.PutFile(testOwner, testRepo, "main", "f.json", []byte("{}"))
	require.NoError(t, err)
	tok := v.mint(nil)
	res := v.do("GET", "/repos/example-org/build-lock/contents/f.json", tok, nil)
	etag := res.header.Get("ETag")
	require.True(t, etag != "", "etag")
	remaining := res.header.Get("X-RateLimit-Remaining")
	for range 3 {
		res = v.do("GET", "/repos/example-org/build-lock/contents/f.json", tok, nil, "If-None-Match", etag)
		require.Equal(t, http.StatusNotModified, res.status)
		require.Equal(t, 0, len(res.body))
		require.Equal(t, remaining, res.header.Get("X-RateLimit-Remaining"))
		require.Equal(t, etag, res.header.Get("ETag"))
	}
	// A change produces a new ETag and a charged 200.
	_, err = v.e.PutFile(testOwner, testRepo, "main", "f.json", []byte(`{"a":1}`))
	require.NoError(t, err)
	res = v.do("GET", "/repos/example-org/build-lock/contents/f.json", tok, nil, "If-None-Match", etag)
	require.Equal(t, http.StatusOK, res.status)
	require.True(t, res.header.Get("X-RateLimit-Remaining") != remaining)
	m := v.e.Metrics()
	require.Equal(t, int64(3), m.NotModified)
	require.Equal(t, int64(3), m.Routes["GET /repos/{owner}/{repo}/contents/{path}"].NotModified)
	require.Equal(t, int64(3), m.Paths["GET /repos/example-org/build-lock/contents/f.json"].NotModified)
}

// Exactly one of many writers holding the same base sha wins; the CAS is atomic.
func TestConcurrentCASOneWinner(t *testing.T) {
	v := newEnv(t)
	base, err := v.e.PutFile(testOwner, testRepo, "main", "locks/l.json", []byte(`{"n":0}`))
	require.NoError(t, err)
	tok := v.mint(nil)
	// The writes are recorded and checked for linearizability as a
	// compare-and-swap register (porcupine).
	lin := linearizability.NewRecorder(v.clk)
	file := linearizability.File{Owner: testOwner, Repo: testRepo, Path: "locks/l.json"}
	lin.Track(file, nil, []byte(`{"n":0}`), true)
	var wg sync.WaitGroup
	statuses := make([]int, 32)
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr := lin.Transport(v.e.Transport(), linearizability.Actor{Kind: linearizability.ActorJob, HolderID: itoa(int64(i))})
			res, err := v.tryVia(tr, t.Context(), "PUT", "/repos/example-org/build-lock/contents/locks/l.json", tok,
				map[string]any{"message": "w", "content": b64(`{"n":` + itoa(int64(i+1)) + `}`), "sha": base})
			if err == nil {
				statuses[i] = res.status
			}
		}()
	}
	wg.Wait()
	wins, conflicts := 0, 0
	for _, s := range statuses {
		switch s {
		case http.StatusOK:
			wins++
		case http.StatusConflict:
			conflicts++
		}
	}
	require.Equal(t, 1, wins)
	require.Equal(t, 31, conflicts)
	require.Equal(t, 2, len(v.e.History(testOwner, testRepo, "main", "locks/l.json")))
	lin.Observe(file, func() ([]byte, bool) {
		h := v.e.History(testOwner, testRepo, "main", "locks/l.json")
		return h[len(h)-1].Content, true
	})
	res := lin.Check(linearizability.Options{VisualizeDir: t.ArtifactDir, Name: t.Name()})
	require.True(t, res.OK(), "%s %v", res.Summary(), res.Violations)
	require.Equal(t, 32, res.Writes)
	require.Equal(t, 31, res.RefusedWrites)
}

func TestHistory(t *testing.T) {
	v := newEnv(t)
	tok := v.mint(nil)
	res := v.put(tok, "locks/h.json", "one", "", "")
	s1 := res.json(t)["content"].(map[string]any)["sha"].(string)
	v.clk.Advance(time.Minute)
	res = v.put(tok, "locks/h.json", "two", "", s1)
	require.Equal(t, http.StatusOK, res.status)
	_, _ = v.e.PutFile(testOwner, testRepo, "main", "unrelated", []byte("x"))
	require.NoError(t, v.e.DeleteFile(testOwner, testRepo, "main", "locks/h.json"))
	h := v.e.History(testOwner, testRepo, "main", "locks/h.json")
	require.Equal(t, 3, len(h))
	require.Equal(t, "one", string(h[0].Content))
	require.Equal(t, "two", string(h[1].Content))
	require.True(t, h[2].Content == nil && h[2].BlobSHA == "", "deleted")
	require.Equal(t, "installation:"+itoa(v.instID), h[0].Token)
	require.Equal(t, "seed", h[2].Token)
	require.True(t, h[1].Time.Equal(testStart.Add(time.Minute)), h[1].Time)
	require.True(t, !strings.Contains(h[0].Token, "ghs_"))
}

// Refs: https://docs.github.com/en/rest/git/refs ; 422 "Reference already exists".
func TestGitRefs(t *testing.T) {
	v := newEnv(t)
	tok := v.mint(nil)
	require.Equal(t, http.StatusNotFound, v.do("GET", "/repos/example-org/build-lock/git/ref/heads/lock-state", tok, nil).status)
	repo := v.do("GET", "/repos/example-org/build-lock", tok, nil).json(t)
	require.Equal(t, "main", repo["default_branch"].(string))
	main := v.do("GET", "/repos/example-org/build-lock/git/ref/heads/main", tok, nil).json(t)
	sha := main["object"].(map[string]any)["sha"].(string)
	res := v.do("POST", "/repos/example-org/build-lock/git/refs", tok, map[string]any{"ref": "refs/heads/lock-state", "sha": sha})
	require.Equal(t, http.StatusCreated, res.status, string(res.body))
	res = v.do("POST", "/repos/example-org/build-lock/git/refs", tok, map[string]any{"ref": "refs/heads/lock-state", "sha": sha})
	require.Equal(t, http.StatusUnprocessableEntity, res.status)
	require.Equal(t, "Reference already exists", res.json(t)["message"].(string))
	require.Equal(t, http.StatusOK, v.do("GET", "/repos/example-org/build-lock/git/ref/heads/lock-state", tok, nil).status)
	require.Equal(t, http.StatusOK, v.do("GET", "/repos/example-org/build-lock/branches/lock-state", tok, nil).status)
	// Writes on lock-state do not touch main.
	require.Equal(t, http.StatusCreated, v.put(tok, "locks/x.json", "{}", "lock-state", "").status)
	require.Equal(t, 0, len(v.e.History(testOwner, testRepo, "main", "locks/x.json")))
}
