package ghclient

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/go-github/v66/github"
)

func TestETagRevalidation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.srv.on("GET", repoPath,
		reply{body: okRepo, header: hdr("ETag", `W/"v1"`), check: func(t *testing.T, r *http.Request, _ []byte) {
			eq(t, r.Header.Get("If-None-Match"), "", "first If-None-Match")
		}},
		reply{status: 304, header: hdr("ETag", `W/"v1"`, "X-GitHub-Request-Id", "NM-1"), check: func(t *testing.T, r *http.Request, _ []byte) {
			eq(t, r.Header.Get("If-None-Match"), `W/"v1"`, "second If-None-Match")
		}},
		reply{body: `{"id":1,"name":"r2"}`, header: hdr("ETag", `W/"v2"`), check: func(t *testing.T, r *http.Request, _ []byte) {
			eq(t, r.Header.Get("If-None-Match"), `W/"v1"`, "third If-None-Match")
		}},
		reply{status: 304, check: func(t *testing.T, r *http.Request, _ []byte) {
			eq(t, r.Header.Get("If-None-Match"), `W/"v2"`, "fourth If-None-Match")
		}},
	)
	get := func() (*github.Repository, *github.Response) {
		var (
			repo *github.Repository
			resp *github.Response
		)
		mustNoErr(t, h.c.Do(context.Background(), Op{Name: "GET repos o/r"}, func(ctx context.Context) (*github.Response, error) {
			var err error
			repo, resp, err = h.c.GitHub().Repositories.Get(ctx, "o", "r")
			return resp, err
		}))
		return repo, resp
	}
	repo, resp := get()
	eq(t, repo.GetName(), "r", "first name")
	eq(t, resp.Header.Get(HeaderCache), "", "first cache header")
	repo, resp = get()
	eq(t, repo.GetName(), "r", "revalidated name")
	eq(t, resp.StatusCode, 200, "revalidated status")
	eq(t, resp.Header.Get(HeaderCache), CacheRevalidated, "revalidated cache header")
	eq(t, resp.Header.Get("X-GitHub-Request-Id"), "NM-1", "fresh request id from the 304")
	repo, _ = get()
	eq(t, repo.GetName(), "r2", "changed name")
	repo, _ = get()
	eq(t, repo.GetName(), "r2", "revalidated changed name")
	st := h.c.Stats()
	eq(t, st.NotModified, int64(2), "Stats.NotModified")
	eq(t, st.ByStatus[304], int64(2), "Stats.ByStatus[304]")
	eq(t, st.Requests, int64(4), "Stats.Requests")
}

func TestETagCacheSkipsWritesAndForgets404(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	noCond := func(t *testing.T, r *http.Request, _ []byte) {
		eq(t, r.Header.Get("If-None-Match"), "", "If-None-Match")
	}
	h.srv.on("GET", repoPath,
		reply{body: okRepo, header: hdr("ETag", `"a"`)},
		reply{status: 404, body: msg("Not Found")},
		reply{body: okRepo, check: noCond},
	)
	h.srv.on("PUT", filePath, reply{body: okPut, check: noCond})
	mustNoErr(t, h.getRepo(context.Background(), Budget{}))
	mustNoErr(t, h.putFile(context.Background(), Budget{}))
	eq(t, IsNotFound(h.getRepo(context.Background(), Budget{})), true, "IsNotFound")
	mustNoErr(t, h.getRepo(context.Background(), Budget{}))
}

func TestETagCacheIsBoundedLRU(t *testing.T) {
	t.Parallel()
	c := newETagCache(2)
	c.put(&etagEntry{key: "a"})
	c.put(&etagEntry{key: "b"})
	_ = c.get("a") // a is now most recent
	c.put(&etagEntry{key: "c"})
	eq(t, c.len(), 2, "len")
	eq(t, c.get("b") == nil, true, "b evicted")
	eq(t, c.get("a") != nil, true, "a kept")
	eq(t, c.get("c") != nil, true, "c kept")
}

func TestETagCacheCanBeDisabled(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.ETagCacheEntries = -1 })
	noCond := func(t *testing.T, r *http.Request, _ []byte) {
		eq(t, r.Header.Get("If-None-Match"), "", "If-None-Match")
	}
	h.srv.on("GET", repoPath, reply{body: okRepo, header: hdr("ETag", `"a"`)}, reply{body: okRepo, check: noCond})
	mustNoErr(t, h.getRepo(context.Background(), Budget{}))
	mustNoErr(t, h.getRepo(context.Background(), Budget{}))
}
