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

// TestCachedResponseSeedsAnotherClient: one client's cached 200, seeded into
// another (a later step of the job), makes that client's first GET of the
// URL conditional, and a 304 is served the seeded body; a seed without an
// ETag or for another URL changes nothing.
func TestCachedResponseSeedsAnotherClient(t *testing.T) {
	t.Parallel()
	first := newHarness(t, nil)
	first.srv.on("GET", repoPath, reply{body: okRepo, header: hdr("ETag", `"v1"`, "Content-Type", "application/json")})
	req, err := first.c.GitHub().NewRequest(http.MethodGet, "repos/o/r", nil)
	require.NoError(t, err)
	_, ok := first.c.CachedResponse(req.URL.String(), req.Header.Get("Accept"))
	assert.False(t, ok, "nothing cached yet")
	// The store's way: its own request (default Accept), sent with BareDo.
	get := func(h *harness) *github.Repository {
		repo := new(github.Repository)
		require.NoError(t, h.c.Do(context.Background(), Op{Name: "GET repos o/r"}, func(ctx context.Context) (*github.Response, error) {
			req, err := h.c.GitHub().NewRequest(http.MethodGet, "repos/o/r", nil)
			if err != nil {
				return nil, err
			}
			return h.c.GitHub().Do(ctx, req, repo)
		}))
		return repo
	}
	get(first)
	cached, ok := first.c.CachedResponse(req.URL.String(), req.Header.Get("Accept"))
	require.True(t, ok)
	assert.Equal(t, `"v1"`, cached.ETag)
	assert.Equal(t, http.Header{"Content-Type": {"application/json"}}, cached.Header, "only the content type is kept")

	// Each harness serves on its own port: the seed names this one's URL,
	// as acquire's answer names the URL release reads.
	at := func(h *harness) CachedResponse {
		r, err := h.c.GitHub().NewRequest(http.MethodGet, "repos/o/r", nil)
		require.NoError(t, err)
		seed := cached
		seed.URL = r.URL.String()
		return seed
	}
	second := newHarness(t, nil)
	second.c.SeedCachedResponse(CachedResponse{URL: "http://elsewhere/repos/o/r", Accept: cached.Accept, ETag: `"v1"`, Body: cached.Body})
	noETag := at(second)
	noETag.ETag = ""
	second.c.SeedCachedResponse(noETag)
	second.srv.on("GET", repoPath, reply{body: okRepo, header: hdr("ETag", `"v1"`), check: func(t *testing.T, r *http.Request, _ []byte) {
		assert.Empty(t, r.Header.Get("If-None-Match"), "no usable seed: unconditional")
	}})
	get(second)

	third := newHarness(t, nil)
	third.c.SeedCachedResponse(at(third))
	third.srv.on("GET", repoPath, reply{status: 304, check: func(t *testing.T, r *http.Request, _ []byte) {
		assert.Equal(t, `"v1"`, r.Header.Get("If-None-Match"), "the seed's ETag")
	}})
	assert.Equal(t, "r", get(third).GetName(), "the seeded body, after GitHub's 304")
	assert.Equal(t, int64(1), third.c.Stats().NotModified)
}
