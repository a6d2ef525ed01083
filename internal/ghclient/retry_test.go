package ghclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
)

// whoaBody is GitHub's HTML 400 interstitial (abridged).
const whoaBody = `<!DOCTYPE html><html><head><title>Bad Request &middot; GitHub</title></head>` +
	`<body><h1>Whoa there!</h1><p>You have triggered an abuse detection mechanism. Invalid request.</p></body></html>`

func TestRetryableResponsesAreRetried(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		first reply
	}{
		{"408", reply{status: 408, body: msg("timeout")}},
		{"429", reply{status: 429, body: msg("too many")}},
		{"500", reply{status: 500, body: msg("boom")}},
		{"502", reply{status: 502, body: "<html>bad gateway</html>", header: hdr("Content-Type", "text/html")}},
		{"503", reply{status: 503, body: msg("unavailable")}},
		{"504", reply{status: 504, body: msg("gateway timeout")}},
		{"401 plain token", reply{status: 401, body: msg("Bad credentials")}},
		{"400 whoa there", reply{status: 400, body: whoaBody, header: hdr("Content-Type", "text/html; charset=utf-8")}},
		{"403 retry-after", reply{status: 403, body: msg("slow down"), header: hdr("Retry-After", "1")}},
		{"403 remaining 0 resetting within the ceiling", reply{status: 403, body: msg("API rate limit exceeded"), header: hdr("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", strconv.FormatInt(testStart().Add(20*time.Second).Unix(), 10))}},
		{"403 rate limit message", reply{status: 403, body: msg("API rate limit exceeded for installation")}},
		{"403 secondary", reply{status: 403, body: `{"message":"You have exceeded a secondary rate limit","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`}},
		{"transport hangup", reply{hangup: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, nil)
			h.srv.on("GET", repoPath, tc.first, reply{body: okRepo})
			require.NoError(t, h.getRepo(context.Background(), Budget{}))
			require.Len(t, h.srv.requests(), 2, "requests")
			assert.Len(t, h.clock.Sleeps(), 1, "sleeps")
			assert.Equal(t, int64(1), h.c.Stats().Retries, "Stats.Retries")
			require.Len(t, h.warnings(), 1, "warnings")
		})
	}
}

func TestNonRetryableResponsesFailImmediately(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		mutation  bool
		rep       reply
		wantClass Class
	}{
		{"400 json", false, reply{status: 400, body: msg("Problems parsing JSON")}, ClassFatal},
		{"400 html without markers", false, reply{status: 400, body: "<html><title>Bad Request</title></html>", header: hdr("Content-Type", "text/html")}, ClassFatal},
		{"403 plain", false, reply{status: 403, body: msg("Resource not accessible by integration")}, ClassFatal},
		{"404", false, reply{status: 404, body: msg("Not Found")}, ClassFatal},
		{"409 on read", false, reply{status: 409, body: msg("Git Repository is empty.")}, ClassFatal},
		{"422 on read", false, reply{status: 422, body: msg("Validation Failed")}, ClassFatal},
		{"409 on write", true, reply{status: 409, body: msg("is at abc but expected def")}, ClassConflict},
		{"422 on write", true, reply{status: 422, body: msg(`Invalid request. \"sha\" wasn't supplied.`)}, ClassConflict},
		{"404 on write", true, reply{status: 404, body: msg("Not Found")}, ClassFatal},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, nil)
			var err error
			if tc.mutation {
				h.srv.on("PUT", filePath, tc.rep)
				err = h.putFile(context.Background(), Budget{})
			} else {
				h.srv.on("GET", repoPath, tc.rep)
				err = h.getRepo(context.Background(), Budget{})
			}
			e := mustErr(t, err)
			assert.Equal(t, tc.wantClass, e.Class, "Class")
			assert.Equal(t, tc.rep.status, e.Status, "Status")
			assert.Equal(t, 1, e.Attempts, "Attempts")
			assert.Equal(t, "", e.Code, "Code")
			assert.Equal(t, tc.wantClass == ClassConflict, IsConflict(err), "IsConflict")
			assert.Equal(t, false, IsAmbiguous(err), "IsAmbiguous")
			assert.Equal(t, tc.rep.status == 404, IsNotFound(err), "IsNotFound")
			assert.Equal(t, tc.rep.status, StatusOf(err), "StatusOf")
			eqSleeps(t, h.clock.Sleeps())
			assert.Equal(t, 0, len(h.warnings()), "warnings")
		})
	}
}

func TestFullJitterBackoffAndExhaustion(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	for i := 0; i < 5; i++ {
		h.srv.on("GET", repoPath, reply{status: 503, body: msg("Service Unavailable"), header: hdr("X-GitHub-Request-Id", fmt.Sprintf("REQ-%d", i+1))})
	}
	err := h.getRepo(context.Background(), Budget{})
	e := mustErr(t, err)
	// jitter 0.5: floor(0.5 × (min(1000·2^(n−1), 10000)+1)) ms.
	eqSleeps(t, h.clock.Sleeps(), ms(500), ms(1000), ms(2000), ms(4000))
	assert.Equal(t, ClassRetryable, e.Class, "Class")
	assert.Equal(t, CodeRetryExhausted, e.Code, "Code")
	assert.Equal(t, 5, e.Attempts, "Attempts")
	assert.Equal(t, 503, e.Status, "Status")
	assert.Equal(t, "REQ-5", e.RequestID, "RequestID")
	assert.Equal(t, true, IsExhausted(err), "IsExhausted")
	assert.Equal(t, "GET repos o/r exhausted its bounded GitHub API retry budget after 5 attempt(s); last failure: HTTP 503: Service Unavailable; request-id=REQ-5", e.Error(), "Error()")
	want := []string{
		"GET repos o/r returned HTTP 503; retrying in 500 ms (attempt 1/5)",
		"GET repos o/r returned HTTP 503; retrying in 1000 ms (attempt 2/5)",
		"GET repos o/r returned HTTP 503; retrying in 2000 ms (attempt 3/5)",
		"GET repos o/r returned HTTP 503; retrying in 4000 ms (attempt 4/5)",
	}
	got := h.warnings()
	assert.Equal(t, strings.Join(want, "\n"), strings.Join(got, "\n"), "warnings")
	st := h.c.Stats()
	assert.Equal(t, int64(5), st.Requests, "Stats.Requests")
	assert.Equal(t, int64(5), st.ByStatus[503], "Stats.ByStatus[503]")
	assert.Equal(t, int64(4), st.Retries, "Stats.Retries")
}

func TestBackoffBounds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		jitter  float64
		knobs   Knobs
		attempt int
		want    time.Duration
	}{
		{"zero draw is raised to MinBackoff", 0, Knobs{}, 1, MinBackoff},
		{"top draw attempt 1", 0.9999, Knobs{}, 1, ms(1000)},
		{"capped at max", 0.99999999, Knobs{}, 8, ms(10000)},
		{"huge attempt does not overflow", 0.5, Knobs{}, 500, ms(5000)},
		{"base above max is capped by max", 0.9999, Knobs{Base: ms(60000), Max: ms(1000)}, 1, ms(1000)},
		{"custom base", 0.5, Knobs{Base: ms(200), Max: ms(1000)}, 3, ms(400)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := &Client{knobs: tc.knobs.withDefaults(), jitter: func() float64 { return tc.jitter }}
			assert.Equal(t, tc.want, c.backoff(tc.attempt), "backoff")
		})
	}
}

func TestServerDirectedWaits(t *testing.T) {
	t.Parallel()
	start := testStart()
	date := func(d time.Duration) string { return start.Add(d).Format(http.TimeFormat) }
	resetAt := func(d time.Duration) string { return strconv.FormatInt(start.Add(d).Unix(), 10) }
	cases := []struct {
		name      string
		status    int
		header    map[string]string
		deadline  time.Duration // 0 = attempt-bounded
		waitReset bool
		want      time.Duration
	}{
		{"delta seconds", 429, hdr("Retry-After", "3"), 0, false, 3 * time.Second},
		{"delta seconds on 403", 403, hdr("Retry-After", "7"), 0, false, 7 * time.Second},
		{"zero gets the floor", 429, hdr("Retry-After", "0"), 0, false, time.Second},
		{"http date", 503, hdr("Retry-After", date(12*time.Second)), 0, false, 12 * time.Second},
		{"past http date gets the floor", 503, hdr("Retry-After", date(-time.Hour)), 0, false, time.Second},
		{"wrong weekday ignored", 503, hdr("Retry-After", wrongWeekday(start.Add(12*time.Second))), 0, false, ms(500)},
		{"non-GMT zone ignored", 503, hdr("Retry-After", start.Add(12*time.Second).Format(time.RFC1123Z)), 0, false, ms(500)},
		{"fraction ignored", 503, hdr("Retry-After", "1.5"), 0, false, ms(500)},
		{"negative ignored", 503, hdr("Retry-After", "-5"), 0, false, ms(500)},
		{"suffix ignored", 503, hdr("Retry-After", "5s"), 0, false, ms(500)},
		{"ceiling 60s attempt-bounded", 503, hdr("Retry-After", "120"), 0, false, 60 * time.Second},
		{"full honor under deadline", 503, hdr("Retry-After", "120"), 10 * time.Minute, false, 120 * time.Second},
		{"deadline clamps the wait", 503, hdr("Retry-After", "120"), 30 * time.Second, false, 30 * time.Second},
		// A secondary limit (a 429, or a 403 with Retry-After) is honored
		// in full even attempt-bounded (R-F4 extended, issue 14).
		{"secondary limit honored in full attempt-bounded", 429, hdr("Retry-After", "120"), 0, false, 120 * time.Second},
		{"secondary limit without Retry-After waits a minute", 403, hdr("X-RateLimit-Remaining", "4000"), 0, false, time.Minute},
		{"primary reset within the ceiling waited attempt-bounded", 403, hdr("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", resetAt(30*time.Second)), 0, true, 30 * time.Second},
		{"primary reset within the ceiling waited without opt-in", 403, hdr("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", resetAt(30*time.Second)), 10 * time.Minute, false, 30 * time.Second},
		{"primary reset waited under deadline", 403, hdr("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", resetAt(30*time.Second)), 10 * time.Minute, true, 30 * time.Second},
		{"primary reset on 429", 429, hdr("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", resetAt(45*time.Second)), 10 * time.Minute, true, 45 * time.Second},
		{"past reset falls back to backoff", 403, hdr("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", resetAt(-time.Minute)), 10 * time.Minute, true, ms(500)},
		{"retry-after wins over reset", 403, hdr("Retry-After", "4", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", resetAt(30*time.Minute)), 10 * time.Minute, true, 4 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, nil)
			h.clock.Set(start)
			body := msg("rate limited")
			if strings.HasPrefix(tc.name, "secondary") {
				body = msg("You have exceeded a secondary rate limit")
			}
			h.srv.on("GET", repoPath, reply{status: tc.status, header: tc.header, body: body}, reply{body: okRepo})
			b := Budget{WaitPrimaryReset: tc.waitReset}
			if tc.deadline > 0 {
				b.Deadline = start.Add(tc.deadline)
			}
			err := h.getRepo(context.Background(), b)
			if tc.deadline > 0 && tc.want >= tc.deadline {
				// The wait ran into the deadline: waited once, then abandoned.
				e := mustErr(t, err)
				assert.Equal(t, CodeRetryExhausted, e.Code, "Code")
				assert.Equal(t, true, e.DeadlineElapsed, "DeadlineElapsed")
				eqSleeps(t, h.clock.Sleeps(), tc.want)
				h.srv.on("GET", repoPath) // the scripted 200 is consumed below
				require.NoError(t, h.getRepo(context.Background(), Budget{}))
				return
			}
			require.NoError(t, err)
			eqSleeps(t, h.clock.Sleeps(), tc.want)
		})
	}
}

// wrongWeekday renders t as an IMF-fixdate with the wrong day name.
func wrongWeekday(t time.Time) string {
	s := t.UTC().Format(http.TimeFormat)
	day := s[:3]
	other := "Mon"
	if day == "Mon" {
		other = "Tue"
	}
	return other + s[3:]
}

func TestPrimaryResetBeyondDeadlineWaitsOnceThenAbandons(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	start := h.clock.Now()
	h.srv.on("GET", repoPath, reply{status: 403, body: msg("API rate limit exceeded"),
		header: hdr("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", strconv.FormatInt(start.Add(30*time.Minute).Unix(), 10), "X-GitHub-Request-Id", "RL-1")})
	err := h.getRepo(context.Background(), Budget{Deadline: start.Add(10 * time.Second), WaitPrimaryReset: true})
	e := mustErr(t, err)
	eqSleeps(t, h.clock.Sleeps(), 10*time.Second)
	assert.Equal(t, CodeRetryExhausted, e.Code, "Code")
	assert.Equal(t, 1, e.Attempts, "Attempts")
	assert.Equal(t, true, e.DeadlineElapsed, "DeadlineElapsed")
	assert.Equal(t, 403, e.Status, "Status")
	assert.Contains(t, e.Error(), "after 1 attempt(s) because the bounded deadline elapsed ("+start.Add(10*time.Second).Format(time.RFC3339)+"); last failure: HTTP 403: API rate limit exceeded; request-id=RL-1", "Error()")
	assert.GreaterOrEqual(t, e.Wait, 29*time.Minute, "Wait: the ~30 min server-directed reset")
}

func TestDeadlineBudget(t *testing.T) {
	t.Parallel()
	t.Run("unlimited attempts until the deadline", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, nil)
		start := h.clock.Now()
		for i := 0; i < 4; i++ {
			h.srv.on("GET", repoPath, reply{status: 502, body: msg("Bad Gateway")})
		}
		err := h.getRepo(context.Background(), Budget{Deadline: start.Add(5 * time.Second)})
		e := mustErr(t, err)
		eqSleeps(t, h.clock.Sleeps(), ms(500), ms(1000), ms(2000), ms(1500))
		assert.Equal(t, 4, e.Attempts, "Attempts")
		assert.Equal(t, true, e.DeadlineElapsed, "DeadlineElapsed")
		assert.Equal(t, CodeRetryExhausted, e.Code, "Code")
		w := h.warnings()
		require.Len(t, w, 4, "warnings")
		assert.Equal(t, "GET repos o/r returned HTTP 502; retrying in 500 ms (attempt 1 before "+start.Add(5*time.Second).Format(time.RFC3339)+")", w[0], "warning")
	})
	t.Run("explicit knob caps a deadline call", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, func(c *Config) { c.Knobs.MaxAttempts = 2 })
		h.srv.on("GET", repoPath, reply{status: 500}, reply{status: 500})
		e := mustErr(t, h.getRepo(context.Background(), Budget{Deadline: h.clock.Now().Add(time.Hour)}))
		assert.Equal(t, 2, e.Attempts, "Attempts")
		assert.Equal(t, false, e.DeadlineElapsed, "DeadlineElapsed")
		assert.Contains(t, h.warnings()[0], "(attempt 1/2 before ", "warning")
	})
	t.Run("budget max attempts wins over knob", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, func(c *Config) { c.Knobs.MaxAttempts = 9 })
		h.srv.on("GET", repoPath, reply{status: 500})
		e := mustErr(t, h.getRepo(context.Background(), Budget{MaxAttempts: 1}))
		assert.Equal(t, 1, e.Attempts, "Attempts")
		assert.Equal(t, CodeRetryExhausted, e.Code, "Code")
	})
	t.Run("a call starting past its deadline gets exactly one attempt", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, nil)
		h.srv.on("GET", repoPath, reply{status: 503})
		e := mustErr(t, h.getRepo(context.Background(), Budget{Deadline: h.clock.Now().Add(-time.Second)}))
		assert.Equal(t, 1, e.Attempts, "Attempts")
		assert.Equal(t, true, e.DeadlineElapsed, "DeadlineElapsed")
		eqSleeps(t, h.clock.Sleeps())
	})
	t.Run("a late call still succeeds when its one attempt does", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, nil)
		h.srv.on("GET", repoPath, reply{body: okRepo})
		require.NoError(t, h.getRepo(context.Background(), Budget{Deadline: h.clock.Now().Add(-time.Minute)}))
	})
}

func TestDeadlineAbortsStalledRequest(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.srv.on("PUT", filePath, reply{hang: true})
	began := time.Now()
	// The in-flight context gets deadline − now on the injected clock, i.e.
	// 50 ms of real time: the stall is aborted without any fake sleep.
	err := h.putFile(context.Background(), Budget{Deadline: h.clock.Now().Add(50 * time.Millisecond)})
	require.Less(t, time.Since(began), 5*time.Second, "the stalled request must be aborted at the deadline")
	e := mustErr(t, err)
	assert.Equal(t, CodeRetryExhausted, e.Code, "Code")
	assert.Equal(t, true, e.DeadlineElapsed, "DeadlineElapsed")
	assert.Equal(t, 1, e.Attempts, "Attempts")
	assert.Equal(t, true, e.MaybeApplied, "MaybeApplied (the PUT left the client)")
	assert.Equal(t, true, errors.Is(err, context.DeadlineExceeded), "errors.Is DeadlineExceeded")
	eqSleeps(t, h.clock.Sleeps())
	assert.Equal(t, 0, len(h.warnings()), "warnings")
}

// cancelOnSleep cancels the call's context when the retry loop sleeps.
type cancelOnSleep struct {
	*clock.Fake
	cancel context.CancelFunc
}

func (c cancelOnSleep) Sleep(ctx context.Context, d time.Duration) error {
	c.cancel()
	<-ctx.Done()
	return ctx.Err()
}

func TestContextCancellation(t *testing.T) {
	t.Parallel()
	t.Run("during the backoff sleep", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		h := newHarness(t, func(c *Config) { c.Clock = cancelOnSleep{Fake: clock.NewFake(testStart()), cancel: cancel} })
		h.srv.on("GET", repoPath, reply{status: 503})
		err := h.getRepo(ctx, Budget{})
		e := mustErr(t, err)
		assert.Equal(t, true, errors.Is(err, context.Canceled), "errors.Is Canceled")
		assert.Equal(t, ClassFatal, e.Class, "Class")
		assert.Equal(t, "", e.Code, "Code")
		assert.Equal(t, 1, len(h.srv.requests()), "requests")
		assert.Contains(t, e.Error(), "GET repos o/r was abandoned: context canceled", "Error()")
	})
	t.Run("already cancelled: no request, no warning", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, nil)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := h.getRepo(ctx, Budget{})
		e := mustErr(t, err)
		assert.Equal(t, true, errors.Is(err, context.Canceled), "errors.Is Canceled")
		assert.Equal(t, 0, e.Attempts, "Attempts")
		assert.Equal(t, 0, len(h.srv.requests()), "requests")
		assert.Equal(t, 0, len(h.warnings()), "warnings")
	})
	t.Run("cancelled in flight: no sleep, no warning", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, nil)
		ctx, cancel := context.WithCancel(context.Background())
		h.srv.on("GET", repoPath, reply{hang: true, check: func(*testing.T, *http.Request, []byte) { cancel() }})
		err := h.getRepo(ctx, Budget{})
		assert.Equal(t, true, errors.Is(err, context.Canceled), "errors.Is Canceled")
		eqSleeps(t, h.clock.Sleeps())
		assert.Equal(t, 0, len(h.warnings()), "warnings")
	})
	t.Run("caller deadline becomes exhaustion", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		h.srv.on("GET", repoPath, reply{hang: true})
		err := h.getRepo(ctx, Budget{})
		e := mustErr(t, err)
		assert.Equal(t, CodeRetryExhausted, e.Code, "Code")
		assert.Equal(t, true, errors.Is(err, context.DeadlineExceeded), "errors.Is DeadlineExceeded")
	})
}

func TestAmbiguousWrites(t *testing.T) {
	t.Parallel()
	conflict := reply{status: 409, body: msg("locks/x.json does not match abc")}
	cases := []struct {
		name      string
		first     reply
		wantClass Class
	}{
		{"503 then 409 is ambiguous", reply{status: 503}, ClassAmbiguous},
		{"500 then 422 is ambiguous", reply{status: 500}, ClassAmbiguous},
		{"408 then 409 is ambiguous", reply{status: 408}, ClassAmbiguous},
		{"hangup then 409 is ambiguous", reply{hangup: true}, ClassAmbiguous},
		{"401 then 409 is a plain conflict", reply{status: 401, body: msg("Bad credentials")}, ClassConflict},
		{"403 primary limit then 409 is a plain conflict", reply{status: 403, header: hdr("X-RateLimit-Remaining", "0"), body: msg("API rate limit exceeded")}, ClassConflict},
		{"whoa 400 then 409 is a plain conflict", reply{status: 400, body: whoaBody, header: hdr("Content-Type", "text/html")}, ClassConflict},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, nil)
			second := conflict
			if strings.Contains(tc.name, "422") {
				second = reply{status: 422, body: msg("sha wasn't supplied")}
			}
			h.srv.on("PUT", filePath, tc.first, second)
			err := h.putFile(context.Background(), Budget{})
			e := mustErr(t, err)
			assert.Equal(t, tc.wantClass, e.Class, "Class")
			assert.Equal(t, true, IsConflict(err), "IsConflict")
			assert.Equal(t, tc.wantClass == ClassAmbiguous, IsAmbiguous(err), "IsAmbiguous")
			assert.Equal(t, tc.wantClass == ClassAmbiguous, e.MaybeApplied, "MaybeApplied")
			assert.Equal(t, 2, e.Attempts, "Attempts")
			if tc.wantClass == ClassAmbiguous {
				assert.Contains(t, e.Error(), "the write may have been applied", "Error()")
			}
		})
	}
	t.Run("ambiguity spans several retries", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, nil)
		h.srv.on("PUT", filePath, reply{status: 502}, reply{status: 401}, reply{status: 504}, conflict)
		assert.Equal(t, true, IsAmbiguous(h.putFile(context.Background(), Budget{})), "IsAmbiguous")
	})
	// A write refused by a secondary limit is not replayed after the wait
	// (its compare-and-swap base would be stale): the call ends, and the
	// caller re-reads once the client's wait is over.
	for _, first := range []reply{{status: 429}, {status: 403, body: msg("You have exceeded a secondary rate limit")}} {
		t.Run(fmt.Sprintf("secondary limit %d on a write ends the call", first.status), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, nil)
			h.srv.on("PUT", filePath, first)
			e := mustErr(t, h.putFile(context.Background(), Budget{}))
			assert.True(t, IsSecondaryLimit(e), "IsSecondaryLimit")
			assert.False(t, IsConflict(e), "IsConflict")
			assert.Equal(t, 1, e.Attempts, "Attempts")
			assert.Equal(t, 1, len(h.srv.requests()), "requests")
		})
	}
	t.Run("ambiguity is per logical call", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, nil)
		h.srv.on("PUT", filePath, reply{status: 503}, reply{body: okPut}, conflict)
		require.NoError(t, h.putFile(context.Background(), Budget{}))
		err := h.putFile(context.Background(), Budget{})
		assert.Equal(t, true, IsConflict(err), "IsConflict")
		assert.Equal(t, false, IsAmbiguous(err), "IsAmbiguous")
	})
	t.Run("dial failure is not ambiguous", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, func(c *Config) {
			next := c.Transport
			calls := 0
			c.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
				calls++
				if calls == 1 {
					return nil, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
				}
				return next.RoundTrip(r)
			})
		})
		h.srv.on("PUT", filePath, conflict)
		err := h.putFile(context.Background(), Budget{})
		assert.Equal(t, true, IsConflict(err), "IsConflict")
		assert.Equal(t, false, IsAmbiguous(err), "IsAmbiguous")
		assert.Equal(t, int64(1), h.c.Stats().TransportErrors, "Stats.TransportErrors")
	})
	t.Run("exhausted mutation reports MaybeApplied", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, nil)
		h.srv.on("PUT", filePath, reply{status: 503}, reply{status: 429})
		e := mustErr(t, h.putFile(context.Background(), Budget{MaxAttempts: 2}))
		assert.Equal(t, CodeRetryExhausted, e.Code, "Code")
		assert.Equal(t, true, e.MaybeApplied, "MaybeApplied")
		assert.Equal(t, false, IsConflict(e), "IsConflict")
	})
}

func TestRateLimitPrecheckNeverShortCircuits(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	reset := strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)
	// A 200 with remaining 0 would arm go-github's primary gate, and a
	// secondary-limit 403 with Retry-After its secondary gate; either would
	// answer the next call without sending it.
	h.srv.on("GET", repoPath,
		reply{body: okRepo, header: hdr("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", reset)},
		reply{status: 403, body: `{"message":"You have exceeded a secondary rate limit","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`,
			header: hdr("Retry-After", "600", "X-RateLimit-Reset", reset)},
		reply{body: okRepo},
		reply{body: okRepo},
	)
	require.NoError(t, h.getRepo(context.Background(), Budget{}))
	require.NoError(t, h.getRepo(context.Background(), Budget{}))
	require.NoError(t, h.getRepo(context.Background(), Budget{}))
	assert.Equal(t, 4, len(h.srv.requests()), "requests actually sent")
	// A secondary limit's Retry-After is honored in full (issue 14).
	eqSleeps(t, h.clock.Sleeps(), 600*time.Second)
}

func TestSyntheticPrecheckErrorIsRateLimited(t *testing.T) {
	t.Parallel()
	now := testStart()
	req, _ := http.NewRequest("GET", "https://api.github.com/repos/o/r", nil)
	resp := &http.Response{StatusCode: 403, Header: http.Header{}, Request: req}
	o := classify(nil, &github.RateLimitError{
		Rate:     github.Rate{Remaining: 0, Reset: github.Timestamp{Time: now.Add(time.Minute)}},
		Response: resp,
		Message:  "API rate limit of 5000 still exceeded until later, not making remote request.",
	}, false, now)
	assert.Equal(t, true, o.retryable, "retryable")
	assert.Equal(t, true, o.rateLimited, "rateLimited")
	assert.Equal(t, false, o.unknown, "unknown")
	assert.Equal(t, true, o.reset.Equal(now.Add(time.Minute)), "reset")
	ra := 7 * time.Second
	o = classify(nil, &github.AbuseRateLimitError{Response: resp, RetryAfter: &ra,
		Message: "API secondary rate limit exceeded until later, not making remote request."}, false, now)
	assert.Equal(t, true, o.retryable, "retryable")
	assert.Equal(t, ra, o.instruction, "instruction")
}

// roundTripFunc adapts a function to http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
