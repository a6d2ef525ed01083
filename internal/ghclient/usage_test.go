package ghclient

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUsageRecordsEachBucketsCount: the App JWT's answers (lookup, mint) and
// the installation token's are told apart, with GitHub's count and window.
func TestUsageRecordsEachBucketsCount(t *testing.T) {
	t.Parallel()
	h := appHarness(t, nil)
	lookup := lookupOK(h, 7)
	lookup.header = hdr("X-RateLimit-Used", "40", "X-RateLimit-Reset", "1700003600")
	mint := mintOK(h, "ghs_tokenOne")
	mint.header = hdr("X-RateLimit-Used", "43", "X-RateLimit-Reset", "1700003600")
	h.srv.on("GET", "/repos/o/r/installation", lookup)
	h.srv.on("POST", "/app/installations/7/access_tokens", mint)
	h.srv.on("GET", repoPath, withToken("ghs_tokenOne", reply{body: okRepo, header: hdr("X-RateLimit-Used", "9", "X-RateLimit-Reset", "1700001000")}))
	require.NoError(t, h.getRepo(context.Background(), Budget{}))

	got := h.c.Usage()
	require.Len(t, got, 3, "one sample per answer that carries both headers")
	assert.Equal(t, []bool{true, true, false}, []bool{got[0].App, got[1].App, got[2].App}, "App JWT answers first, then the token's")
	assert.Equal(t, []int64{40, 43, 9}, []int64{got[0].Used, got[1].Used, got[2].Used}, "x-ratelimit-used")
	assert.Equal(t, int64(1700003600), got[1].Reset, "x-ratelimit-reset names the window")
	assert.True(t, got[2].Charged, "a 200 is charged")
	assert.False(t, got[0].At.IsZero(), "the injected clock stamps each sample")
}

// TestUsageLogKeepsTheFirstAnswersOnly: malformed headers are skipped, a 304
// is not charged, and the log stops at maxUsageSamples.
func TestUsageLogKeepsTheFirstAnswersOnly(t *testing.T) {
	t.Parallel()
	l := &usageLog{}
	at := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	resp := func(status int, used, reset string) *http.Response {
		h := http.Header{}
		h.Set("X-RateLimit-Used", used)
		h.Set("X-RateLimit-Reset", reset)
		return &http.Response{StatusCode: status, Header: h}
	}
	l.note(at, false, resp(200, "abc", "1700000000"))
	l.note(at, false, resp(200, "5", ""))
	l.note(at, false, resp(200, "-1", "1700000000"))
	assert.Empty(t, l.samples, "answers without a usable count or window")
	l.note(at, false, resp(http.StatusNotModified, "5", "1700000000"))
	l.note(at, false, resp(http.StatusUnauthorized, "5", "1700000000"))
	require.Len(t, l.samples, 2)
	assert.False(t, l.samples[0].Charged, "GitHub does not charge a 304")
	assert.False(t, l.samples[1].Charged, "nor a 401")
	for i := 0; i < 2*maxUsageSamples; i++ {
		l.note(at, true, resp(200, "1", "1700000000"))
	}
	assert.Len(t, l.samples, maxUsageSamples, "bounded")
	assert.False(t, l.samples[0].App, "the first answers are the ones kept")
}
