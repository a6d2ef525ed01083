package emulator

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestFaultServerErrorAnd401Burst(t *testing.T) {
	v := newEnv(t)
	tok := v.mint(nil)
	v.e.AddFault(Fault{Method: "GET", PathPattern: "/repos/example-org/build-lock", Kind: ServerError, Status: 502, Count: 1})
	require.Equal(t, http.StatusBadGateway, v.do("GET", "/repos/example-org/build-lock", tok, nil).status)
	require.Equal(t, http.StatusOK, v.do("GET", "/repos/example-org/build-lock", tok, nil).status)
	v.e.AddFault(Fault{PathPattern: "/repos/*/*", Kind: Unauthorized401, Count: 2})
	require.Equal(t, http.StatusUnauthorized, v.do("GET", "/repos/example-org/build-lock", tok, nil).status)
	require.Equal(t, http.StatusUnauthorized, v.do("GET", "/repos/example-org/build-lock", tok, nil).status)
	require.Equal(t, http.StatusOK, v.do("GET", "/repos/example-org/build-lock", tok, nil).status)
	m := v.e.Metrics()
	require.Equal(t, int64(1), m.FaultsByKind[ServerError])
	require.Equal(t, int64(2), m.FaultsByKind[Unauthorized401])
}

// Secondary limits answer 403 or 429 with Retry-After:
// https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits
func TestFaultSecondaryLimits(t *testing.T) {
	v := newEnv(t)
	tok := v.mint(nil)
	v.e.AddFault(Fault{Kind: SecondaryRateLimit403, RetryAfter: "30", Count: 1})
	res := v.do("GET", "/repos/example-org/build-lock", tok, nil)
	require.Equal(t, http.StatusForbidden, res.status)
	require.Equal(t, "30", res.header.Get("Retry-After"))
	require.True(t, strings.HasPrefix(res.json(t)["message"].(string), "You have exceeded a secondary rate limit"))
	require.True(t, strings.HasSuffix(res.json(t)["documentation_url"].(string), "secondary-rate-limits"))
	date := v.clk.Now().Add(2 * time.Minute).Format(http.TimeFormat)
	v.e.AddFault(Fault{Kind: TooManyRequests429, RetryAfter: date, Count: 1})
	res = v.do("GET", "/repos/example-org/build-lock", tok, nil)
	require.Equal(t, http.StatusTooManyRequests, res.status)
	require.Equal(t, date, res.header.Get("Retry-After"))
	log := v.e.Metrics().Log
	require.True(t, log[len(log)-1].RetryAfterUntil.Equal(v.clk.Now().Add(2*time.Minute)), log[len(log)-1].RetryAfterUntil)
	require.True(t, log[len(log)-2].RetryAfterUntil.Equal(v.clk.Now().Add(30*time.Second)))
}

func TestFaultPrimaryExhausted(t *testing.T) {
	v := newEnv(t)
	tok := v.mint(nil)
	v.e.AddFault(Fault{Kind: PrimaryExhausted, Count: 1})
	for range 2 {
		res := v.do("GET", "/repos/example-org/build-lock", tok, nil)
		require.Equal(t, http.StatusForbidden, res.status)
		require.Equal(t, "0", res.header.Get("X-RateLimit-Remaining"))
	}
	v.clk.Advance(time.Hour)
	tok = v.mint(nil)
	require.Equal(t, http.StatusOK, v.do("GET", "/repos/example-org/build-lock", tok, nil).status)
}

func TestFaultLatencyUsesClock(t *testing.T) {
	v := newEnv(t)
	tok := v.mint(nil)
	v.e.AddFault(Fault{Kind: Latency, Latency: 3 * time.Second})
	require.Equal(t, http.StatusOK, v.do("GET", "/repos/example-org/build-lock", tok, nil).status)
	require.Equal(t, 1, len(v.clk.Sleeps()))
	require.Equal(t, 3*time.Second, v.clk.Sleeps()[0])
}

func TestFaultStallHonorsContext(t *testing.T) {
	v := newEnv(t)
	tok := v.mint(nil)
	v.e.AddFault(Fault{Kind: Stall, Count: 1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := v.try(ctx, "GET", "/repos/example-org/build-lock", tok, nil)
		done <- err
	}()
	cancel()
	err := <-done
	require.True(t, errors.Is(err, context.Canceled), err)
}

// Write accepted, response lost: the reference treats a later 409 as ambiguous (spec §3.3).
func TestFaultWriteAcceptedResponseLost(t *testing.T) {
	v := newEnv(t)
	tok := v.mint(nil)
	v.e.AddFault(Fault{Method: "PUT", PathPattern: "/repos/example-org/build-lock/contents/", Kind: WriteAcceptedResponseLost, Count: 1})
	_, err := v.try(context.Background(), "PUT", "/repos/example-org/build-lock/contents/locks/l.json", tok,
		map[string]any{"message": "m", "content": b64("{}")})
	require.True(t, errors.Is(err, ErrResponseLost), err)
	require.Equal(t, 1, len(v.e.History(testOwner, testRepo, "main", "locks/l.json")))
	// Retrying without the sha now conflicts (422): the write did land.
	require.Equal(t, http.StatusUnprocessableEntity, v.put(tok, "locks/l.json", "{}", "", "").status)
}

func TestFaultTransportResetAppliesNothing(t *testing.T) {
	v := newEnv(t)
	tok := v.mint(nil)
	v.e.AddFault(Fault{Method: "PUT", Kind: TransportReset, Count: 1})
	_, err := v.try(context.Background(), "PUT", "/repos/example-org/build-lock/contents/a", tok, map[string]any{"message": "m", "content": b64("x")})
	require.True(t, errors.Is(err, ErrConnectionReset), err)
	require.Equal(t, 0, len(v.e.History(testOwner, testRepo, "main", "a")))
}

func TestFaultStaleRead(t *testing.T) {
	v := newEnv(t)
	tok := v.mint(nil)
	s1, _ := v.e.PutFile(testOwner, testRepo, "main", "s.json", []byte("1"))
	_, _ = v.e.PutFile(testOwner, testRepo, "main", "s.json", []byte("2"))
	v.e.AddFault(Fault{Kind: StaleRead, StaleVersions: 1, Count: 1})
	res := v.do("GET", "/repos/example-org/build-lock/contents/s.json", tok, nil)
	require.Equal(t, s1, res.json(t)["sha"].(string))
	res = v.do("GET", "/repos/example-org/build-lock/contents/s.json", tok, nil)
	require.Equal(t, BlobSHA([]byte("2")), res.json(t)["sha"].(string))
}

func TestFaultHTMLWhoaAndProbabilityDeterminism(t *testing.T) {
	v := newEnv(t)
	tok := v.mint(nil)
	v.e.AddFault(Fault{Kind: HTMLWhoa400, Count: 1})
	res := v.do("GET", "/repos/example-org/build-lock", tok, nil)
	require.Equal(t, http.StatusBadRequest, res.status)
	require.True(t, strings.HasPrefix(res.header.Get("Content-Type"), "text/html"))
	for _, marker := range []string{"<title>Bad request", "Whoa there!", "invalid request", "GitHub"} {
		require.True(t, strings.Contains(string(res.body), marker), marker)
	}
	run := func() []int {
		w := newEnv(t)
		tk := w.mint(nil)
		w.e.AddFault(Fault{Kind: ServerError, Probability: 0.5})
		var out []int
		for range 20 {
			out = append(out, w.do("GET", "/repos/example-org/build-lock", tk, nil).status)
		}
		return out
	}
	a, b := run(), run()
	require.Equal(t, len(a), len(b))
	for i := range a {
		require.Equal(t, a[i], b[i])
	}
}
