package ghclient

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/go-github/v66/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestETagRevalidation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.srv.on("GET", repoPath,
		reply{body: okRepo, header: hdr("ETag", `W/"v1"`), check: func(t *testing.T, r *http.Request, _ []byte) {
			assert.Equal(t, "", r.Header.Get("If-None-Match"), "first If-None-Match")
		}},
		reply{status: 304, header: hdr("ETag", `W/"v1"`, "X-GitHub-Request-Id", "NM-1"), check: func(t *testing.T, r *http.Request, _ []byte) {
			assert.Equal(t, `W/"v1"`, r.Header.Get("If-None-Match"), "second If-None-Match")
		}},
		reply{body: `{"id":1,"name":"r2"}`, header: hdr("ETag", `W/"v2"`), check: func(t *testing.T, r *http.Request, _ []byte) {
			assert.Equal(t, `W/"v1"`, r.Header.Get("If-None-Match"), "third If-None-Match")
		}},
		reply{status: 304, check: func(t *testing.T, r *http.Request, _ []byte) {
			assert.Equal(t, `W/"v2"`, r.Header.Get("If-None-Match"), "fourth If-None-Match")
		}},
	)
	get := func() (*github.Repository, *github.Response) {
		var (
			repo *github.Repository
			resp *github.Response
		)
		require.NoError(t, h.c.Do(context.Background(), Op{Name: "GET repos o/r"}, func(ctx context.Context) (*github.Response, error) {
			var err error
			repo, resp, err = h.c.GitHub().Repositories.Get(ctx, "o", "r")
			return resp, err
		}))
		return repo, resp
	}
	repo, resp := get()
	assert.Equal(t, "r", repo.GetName(), "first name")
	assert.Equal(t, "", resp.Header.Get(HeaderCache), "first cache header")
	repo, resp = get()
	assert.Equal(t, "r", repo.GetName(), "revalidated name")
	assert.Equal(t, 200, resp.StatusCode, "revalidated status")
	assert.Equal(t, CacheRevalidated, resp.Header.Get(HeaderCache), "revalidated cache header")
	assert.Equal(t, "NM-1", resp.Header.Get("X-GitHub-Request-Id"), "fresh request id from the 304")
	repo, _ = get()
	assert.Equal(t, "r2", repo.GetName(), "changed name")
	repo, _ = get()
	assert.Equal(t, "r2", repo.GetName(), "revalidated changed name")
	st := h.c.Stats()
	assert.Equal(t, int64(2), st.NotModified, "Stats.NotModified")
	assert.Equal(t, int64(2), st.ByStatus[304], "Stats.ByStatus[304]")
	assert.Equal(t, int64(4), st.Requests, "Stats.Requests")
}

func TestETagCacheSkipsWritesAndForgets404(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	noCond := func(t *testing.T, r *http.Request, _ []byte) {
		assert.Equal(t, "", r.Header.Get("If-None-Match"), "If-None-Match")
	}
	h.srv.on("GET", repoPath,
		reply{body: okRepo, header: hdr("ETag", `"a"`)},
		reply{status: 404, body: msg("Not Found")},
		reply{body: okRepo, check: noCond},
	)
	h.srv.on("PUT", filePath, reply{body: okPut, check: noCond})
	require.NoError(t, h.getRepo(context.Background(), Budget{}))
	require.NoError(t, h.putFile(context.Background(), Budget{}))
	assert.Equal(t, true, IsNotFound(h.getRepo(context.Background(), Budget{})), "IsNotFound")
	require.NoError(t, h.getRepo(context.Background(), Budget{}))
}

func TestETagCacheIsBoundedLRU(t *testing.T) {
	t.Parallel()
	c := newETagCache(2)
	c.put(&etagEntry{key: "a"})
	c.put(&etagEntry{key: "b"})
	_ = c.get("a") // a is now most recent
	c.put(&etagEntry{key: "c"})
	assert.Equal(t, 2, c.len(), "len")
	assert.Equal(t, true, c.get("b") == nil, "b evicted")
	assert.Equal(t, true, c.get("a") != nil, "a kept")
	assert.Equal(t, true, c.get("c") != nil, "c kept")
}

func TestETagCacheCanBeDisabled(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.ETagCacheEntries = -1 })
	noCond := func(t *testing.T, r *http.Request, _ []byte) {
		assert.Equal(t, "", r.Header.Get("If-None-Match"), "If-None-Match")
	}
	h.srv.on("GET", repoPath, reply{body: okRepo, header: hdr("ETag", `"a"`)}, reply{body: okRepo, check: noCond})
	require.NoError(t, h.getRepo(context.Background(), Budget{}))
	require.NoError(t, h.getRepo(context.Background(), Budget{}))
}
