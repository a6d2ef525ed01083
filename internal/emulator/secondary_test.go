package emulator

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
)

func withSecondary(l SecondaryLimits) func(*Options) {
	return func(o *Options) { o.SecondaryLimits = l }
}

// The content-creation limit counts every write that reached GitHub, 409
// compare-and-swap conflicts included, answers 403 with the documented
// message and a Retry-After that ends exactly when the window has room, and
// charges nothing against the primary limit.
func TestSecondaryContentPerMinuteCountsConflicts(t *testing.T) {
	v := newEnv(t, withSecondary(SecondaryLimits{Enabled: true, ContentPerMinute: 3}))
	tok := v.mint(nil)
	res := v.put(tok, "locks/x.json", "v1", "", "")
	require.Equal(t, http.StatusCreated, res.status, string(res.body))
	v.clk.Advance(10 * time.Second)
	res = v.put(tok, "locks/x.json", "v2", "", "0000000000000000000000000000000000000000")
	require.Equal(t, http.StatusConflict, res.status)
	v.clk.Advance(10 * time.Second)
	res = v.put(tok, "locks/x.json", "v3", "", BlobSHA([]byte("v1")))
	require.Equal(t, http.StatusOK, res.status, string(res.body))
	_, before, _ := v.e.RateLimit("installation:" + itoa(v.instID))
	v.clk.Advance(5 * time.Second)
	res = v.put(tok, "locks/x.json", "v4", "", BlobSHA([]byte("v3")))
	require.Equal(t, http.StatusForbidden, res.status)
	msg := res.json(t)["message"].(string)
	require.True(t, strings.HasPrefix(msg, "You have exceeded a secondary rate limit and have been temporarily blocked from content creation"), msg)
	require.True(t, strings.HasSuffix(res.json(t)["documentation_url"].(string), "secondary-rate-limits"))
	// The first write was 25 s ago: the window has room again in 35 s.
	require.Equal(t, "35", res.header.Get("Retry-After"))
	require.NotEqual(t, "0", res.header.Get("X-RateLimit-Remaining"), "x-ratelimit-* stay the primary window's")
	_, after, _ := v.e.RateLimit("installation:" + itoa(v.instID))
	require.Equal(t, before, after, "a secondary-limit answer is not charged")
	log := v.e.Metrics().Log
	require.Equal(t, SecondaryContentMinute, log[len(log)-1].Secondary)
	// Reads are not content: they still pass.
	require.Equal(t, http.StatusOK, v.do("GET", "/repos/example-org/build-lock/contents/locks/x.json", tok, nil).status)
	v.clk.Advance(35 * time.Second)
	res = v.put(tok, "locks/x.json", "v4", "", BlobSHA([]byte("v3")))
	require.Equal(t, http.StatusOK, res.status, string(res.body))
}

func TestSecondaryContentPerHour(t *testing.T) {
	v := newEnv(t, withSecondary(SecondaryLimits{Enabled: true, ContentPerMinute: -1, ContentPerHour: 2}))
	tok := v.mint(nil)
	require.Equal(t, http.StatusCreated, v.put(tok, "a.txt", "a", "", "").status)
	v.clk.Advance(time.Minute)
	require.Equal(t, http.StatusCreated, v.put(tok, "b.txt", "b", "", "").status)
	v.clk.Advance(time.Minute)
	res := v.put(tok, "c.txt", "c", "", "")
	require.Equal(t, http.StatusForbidden, res.status)
	require.Equal(t, "3480", res.header.Get("Retry-After"), "58 minutes until the first write leaves the hour")
	require.Equal(t, SecondaryContentHour, v.e.Metrics().Log[len(v.e.Metrics().Log)-1].Secondary)
}

// Points are per identity and endpoint (route template): reads cost 1,
// writes 5, 304s too; another endpoint has its own budget.
func TestSecondaryPointsPerEndpoint(t *testing.T) {
	v := newEnv(t, withSecondary(SecondaryLimits{Enabled: true, PointsPerMinute: 8}))
	tok := v.mint(nil)
	_, err := v.e.PutFile(testOwner, testRepo, "main", "README.md", []byte("seeded, not a request"))
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, v.put(tok, "locks/x.json", "v1", "", "").status) // 5
	get := func(p string, hdr ...string) result {
		return v.do("GET", "/repos/example-org/build-lock/contents/"+p, tok, nil, hdr...)
	}
	first := get("locks/x.json") // 6
	require.Equal(t, http.StatusOK, first.status)
	require.Equal(t, http.StatusNotModified, get("locks/x.json", "If-None-Match", first.header.Get("ETag")).status) // 7
	require.Equal(t, http.StatusOK, get("README.md").status)                                                        // 8: same route template
	res := get("locks/x.json")
	require.Equal(t, http.StatusForbidden, res.status)
	require.Equal(t, "60", res.header.Get("Retry-After"))
	require.Equal(t, SecondaryPoints, v.e.Metrics().Log[len(v.e.Metrics().Log)-1].Secondary)
	require.Equal(t, http.StatusOK, v.do("GET", "/repos/example-org/build-lock", tok, nil).status, "another endpoint")
	// Another identity (a plain token) has its own budget.
	v.e.AddToken("plain-secret", TokenScope{Label: "ci", Repos: []string{"example-org/build-lock"}, Permissions: map[string]string{"contents": "read"}})
	require.Equal(t, http.StatusOK, v.do("GET", "/repos/example-org/build-lock/contents/locks/x.json", "plain-secret", nil).status)
	v.clk.Advance(time.Minute)
	require.Equal(t, http.StatusOK, get("locks/x.json").status)
}

// Every token of one installation shares its limits.
func TestSecondaryLimitsAreKeptPerInstallation(t *testing.T) {
	v := newEnv(t, withSecondary(SecondaryLimits{Enabled: true, ContentPerMinute: 1}))
	a, b := v.mint(nil), v.mint(nil)
	require.NotEqual(t, a, b)
	require.Equal(t, http.StatusCreated, v.put(a, "a.txt", "a", "", "").status)
	require.Equal(t, http.StatusForbidden, v.put(b, "b.txt", "b", "", "").status)
}

// Concurrency counts requests in flight per identity from their arrival
// (latency included); the 429 carries no Retry-After.
func TestSecondaryConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := newEnv(t, func(o *Options) {
			o.Clock = clock.Real{}
			o.SecondaryLimits = SecondaryLimits{Enabled: true, Concurrent: 3}
		})
		tok := "plain-secret"
		v.e.AddToken(tok, TokenScope{Label: "ci", Repos: []string{"example-org/build-lock"}, Permissions: map[string]string{"contents": "read"}})
		v.e.AddFault(Fault{Method: "GET", PathPattern: "/repos/example-org/build-lock", Kind: Latency, Latency: time.Second, Count: 3})
		var wg sync.WaitGroup
		statuses := make([]int, 5)
		send := func(i int) {
			wg.Go(func() {
				res, err := v.try(context.Background(), "GET", "/repos/example-org/build-lock", tok, nil)
				if err == nil {
					statuses[i] = res.status
				}
			})
		}
		// Three requests are in flight (each held a second by the latency
		// fault, which the emulator applies before its checks) before two
		// more arrive without latency: those two exceed the limit. (Sent
		// all at once, which of them is refused would depend on the order
		// they are checked in, and a refused request is in flight until it
		// is answered, as on a real server.)
		for i := range 3 {
			send(i)
		}
		synctest.Wait()
		send(3)
		send(4)
		wg.Wait()
		require.Equal(t, []int{http.StatusOK, http.StatusOK, http.StatusOK, http.StatusTooManyRequests, http.StatusTooManyRequests}, statuses)
		ok, limited := 0, 0
		for _, s := range statuses {
			switch s {
			case http.StatusOK:
				ok++
			case http.StatusTooManyRequests:
				limited++
			}
		}
		require.Equal(t, 3, ok)
		require.Equal(t, 2, limited)
		for _, r := range v.e.Metrics().Log {
			if r.Status == http.StatusTooManyRequests {
				require.Equal(t, SecondaryConcurrency, r.Secondary)
				require.True(t, r.RetryAfterUntil.IsZero())
			}
		}
		// Nothing in flight afterwards: the next request passes.
		res, err := v.try(context.Background(), "GET", "/repos/example-org/build-lock", tok, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.status)
	})
}

// Token minting is authentication, not content; limits are off by default.
func TestSecondaryMintingIsNotContentAndDefaultIsOff(t *testing.T) {
	v := newEnv(t, withSecondary(SecondaryLimits{Enabled: true, ContentPerMinute: 1}))
	for range 3 {
		v.mint(nil)
	}
	require.Equal(t, http.StatusCreated, v.put(v.mint(nil), "a.txt", "a", "", "").status)
	off := newEnv(t)
	tok := off.mint(nil)
	for i := range 100 {
		require.Equal(t, http.StatusCreated, off.put(tok, "f"+itoa(int64(i))+".txt", "x", "", "").status)
	}
	require.False(t, off.e.SecondaryLimitsInForce().Enabled)
}

// The content-only fault answers writes at random and leaves reads alone.
func TestFaultContentCreationLimitOnWritesOnly(t *testing.T) {
	v := newEnv(t)
	tok := v.mint(nil)
	v.e.AddFault(Fault{Kind: ContentCreationLimit403, ContentOnly: true, RetryAfter: "7"})
	require.Equal(t, http.StatusOK, v.do("GET", "/repos/example-org/build-lock", tok, nil).status)
	res := v.put(tok, "a.txt", "a", "", "")
	require.Equal(t, http.StatusForbidden, res.status)
	require.Equal(t, "7", res.header.Get("Retry-After"))
	require.Contains(t, res.json(t)["message"], "temporarily blocked from content creation")
}

// Files over the size limit: 403 too_large on read (raw too), 422 on write.
func TestFileSizeLimit(t *testing.T) {
	v := newEnv(t, func(o *Options) { o.FileSizeLimit = 2 << 20 })
	tok := v.mint(nil)
	big := strings.Repeat("x", 3<<20)
	_, err := v.e.PutFile(testOwner, testRepo, "main", "big.json", []byte(big))
	require.NoError(t, err)
	res := v.do("GET", "/repos/example-org/build-lock/contents/big.json", tok, nil)
	require.Equal(t, http.StatusForbidden, res.status)
	require.Contains(t, string(res.body), "too_large")
	res = v.do("GET", "/repos/example-org/build-lock/contents/big.json", tok, nil, "Accept", "application/vnd.github.raw")
	require.Equal(t, http.StatusForbidden, res.status)
	require.Equal(t, http.StatusUnprocessableEntity, v.put(tok, "big2.json", big, "", "").status)
	mid := strings.Repeat("y", 1<<20+1)
	require.Equal(t, http.StatusCreated, v.put(tok, "mid.json", mid, "", "").status)
	res = v.do("GET", "/repos/example-org/build-lock/contents/mid.json", tok, nil)
	require.Equal(t, http.StatusOK, res.status)
	require.Equal(t, "none", res.json(t)["encoding"])
}
