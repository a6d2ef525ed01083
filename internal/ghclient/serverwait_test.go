package ghclient

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Regression (simulation seed 23, R-F4): a release phase whose deadline cut
// a Retry-After short gave up, and the next phase's call went out at once,
// inside the window GitHub asked for. A Retry-After holds back every later
// attempt on the client, not just the retries of the call that received it.
func TestRetryAfterHoldsBackTheNextCall(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	start := h.clock.Now()
	h.srv.on("GET", repoPath, reply{status: 429, header: hdr("Retry-After", "18"), body: msg("You have exceeded a secondary rate limit")})
	e := mustErr(t, h.getRepo(context.Background(), Budget{Deadline: start.Add(15 * time.Second)}))
	assert.Equal(t, true, e.DeadlineElapsed, "first call: DeadlineElapsed")
	// A secondary limit whose wait ends past the deadline ends the call at
	// once, unsent (issue 14), instead of sleeping into the deadline.
	assert.Equal(t, true, e.SecondaryLimit, "first call: SecondaryLimit")
	assert.Equal(t, start.Add(18*time.Second), e.SecondaryUntil, "first call: SecondaryUntil")
	eqSleeps(t, h.clock.Sleeps())

	// The next call (a later phase, its own deadline) waits out the
	// whole 18 s before its first attempt.
	h.srv.on("GET", repoPath, reply{body: okRepo})
	require.NoError(t, h.getRepo(context.Background(), Budget{Deadline: start.Add(30 * time.Second)}))
	eqSleeps(t, h.clock.Sleeps(), 18*time.Second)
	assert.Equal(t, 2, len(h.srv.requests()), "requests")
}

// A call whose deadline ends inside the advertised window is exhausted
// without sending anything (even "the one late attempt" a call past its
// deadline would otherwise get).
func TestRetryAfterBeyondTheDeadlineSendsNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	start := h.clock.Now()
	h.srv.on("GET", repoPath, reply{status: 429, header: hdr("Retry-After", "40"), body: msg("You have exceeded a secondary rate limit")})
	_ = mustErr(t, h.getRepo(context.Background(), Budget{MaxAttempts: 1}))
	e := mustErr(t, h.getRepo(context.Background(), Budget{Deadline: start.Add(20 * time.Second)}))
	assert.Equal(t, CodeRetryExhausted, e.Code, "Code")
	assert.Equal(t, true, e.DeadlineElapsed, "DeadlineElapsed")
	assert.Equal(t, 40*time.Second, e.Wait, "Wait")
	assert.Equal(t, 1, len(h.srv.requests()), "requests (the second call sent nothing)")
	eqSleeps(t, h.clock.Sleeps())
}

// Regression (simulation seed 12, R-F4): the installation lookup's last
// attempt got a 429 with Retry-After 40; the lookup's 3-attempt budget was
// spent, and the serving call's own backoff (full jitter, 500 ms) sent the
// next lookup 39.5 s early with the same App. The serving call now waits out
// the instruction its credential lookup received.
func TestRetryAfterOnTheInstallationLookupHoldsBackTheServingCall(t *testing.T) {
	t.Parallel()
	h := appHarness(t, nil)
	start := h.clock.Now()
	unauthorized := reply{status: 401, body: msg("'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued.")}
	h.srv.on("GET", "/repos/o/r/installation", unauthorized, unauthorized,
		reply{status: 429, header: hdr("Retry-After", "40"), body: msg("You have exceeded a secondary rate limit")},
		lookupOK(h, 7))
	h.srv.on("POST", "/app/installations/7/access_tokens", mintOK(h, "ghs_afterwait"))
	h.srv.on("GET", repoPath, withToken("ghs_afterwait", reply{body: okRepo}))
	require.NoError(t, h.getRepo(context.Background(), Budget{}))
	// Lookup backoffs 500 ms and 1 s, the serving call's backoff 500 ms,
	// then the rest of the 40 s window.
	eqSleeps(t, h.clock.Sleeps(), ms(500), time.Second, ms(500), 39*time.Second+ms(500))
	reqs := h.srv.requests()
	assert.Equal(t, 6, len(reqs), "requests")
	assert.GreaterOrEqual(t, h.clock.Now().Sub(start), 40*time.Second+ms(1500), "the lookup after the 429 went out inside the Retry-After window")
	assert.Contains(t, h.warnings()[len(h.warnings())-1], "waits 39500 ms for a secondary rate limit", "warning")
}

// primaryExhausted403 is GitHub's answer once an hourly primary budget is
// spent: 403, x-ratelimit-remaining 0, the reset epoch, no Retry-After.
func primaryExhausted403(reset time.Time) reply {
	return reply{status: 403, body: msg("API rate limit exceeded for installation ID 7."),
		header: hdr("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))}
}

// R-F4 (issue 4: 0 requests before x-ratelimit-reset): an attempt-bounded
// call whose primary limit resets beyond its Retry-After ceiling fails fast
// after the one answer, and every later call on the client fails without
// sending until the reset; then calls go out again.
func TestPrimaryLimitFailsFastAndHoldsBackEveryLaterCall(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	start := h.clock.Now()
	reset := start.Add(40 * time.Minute)
	h.srv.on("GET", repoPath, primaryExhausted403(reset))
	e := mustErr(t, h.getRepo(context.Background(), Budget{}))
	assert.Equal(t, CodeRetryExhausted, e.Code, "Code")
	assert.Equal(t, ClassRetryable, e.Class, "Class")
	assert.Equal(t, 1, e.Attempts, "Attempts")
	assert.Equal(t, 403, e.Status, "Status")
	assert.Equal(t, 40*time.Minute, e.Wait, "Wait")
	assert.Contains(t, e.Error(), "primary rate limit is exhausted until "+reset.UTC().Format(time.RFC3339), "error")
	eqSleeps(t, h.clock.Sleeps())

	// A later call inside the window: nothing is sent.
	h.clock.Advance(10 * time.Minute)
	e = mustErr(t, h.getRepo(context.Background(), Budget{}))
	assert.Equal(t, 0, e.Attempts, "Attempts of the held-back call")
	assert.Equal(t, 30*time.Minute, e.Wait, "Wait of the held-back call")
	assert.Equal(t, 1, len(h.srv.requests()), "requests inside the window")

	// A deadline caller that reads the reset but whose deadline ends first
	// is exhausted without sending.
	e = mustErr(t, h.getRepo(context.Background(), Budget{Deadline: h.clock.Now().Add(2 * time.Minute), WaitPrimaryReset: true}))
	assert.Equal(t, CodeRetryExhausted, e.Code, "deadline caller Code")
	assert.Equal(t, 1, len(h.srv.requests()), "requests inside the window")

	// After the reset the client sends again.
	h.clock.Advance(30 * time.Minute)
	h.srv.on("GET", repoPath, reply{body: okRepo})
	require.NoError(t, h.getRepo(context.Background(), Budget{}))
	assert.Equal(t, 2, len(h.srv.requests()), "requests after the reset")
}

// A release-style caller (deadline, WaitPrimaryReset) whose deadline lies
// beyond the reset waits for it, once, and the next call is not held back.
func TestPrimaryLimitWaitedOutUnderADeadline(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	start := h.clock.Now()
	h.srv.on("GET", repoPath, primaryExhausted403(start.Add(90*time.Second)), reply{body: okRepo})
	require.NoError(t, h.getRepo(context.Background(), Budget{Deadline: start.Add(5 * time.Minute), WaitPrimaryReset: true}))
	eqSleeps(t, h.clock.Sleeps(), 90*time.Second)
	h.srv.on("GET", repoPath, reply{body: okRepo})
	require.NoError(t, h.getRepo(context.Background(), Budget{}))
	eqSleeps(t, h.clock.Sleeps(), 90*time.Second)
	assert.Equal(t, 3, len(h.srv.requests()), "requests")
}

// The App JWT has its own primary limit: an exhausted installation token
// does not hold back the installation lookup and mint, and the serving
// call still fails without sending a resource request into the window.
func TestPrimaryLimitIsPerCredentialKind(t *testing.T) {
	t.Parallel()
	h := appHarness(t, nil)
	start := h.clock.Now()
	h.srv.on("GET", "/repos/o/r/installation", lookupOK(h, 7))
	h.srv.on("POST", "/app/installations/7/access_tokens", mintOK(h, "ghs_first"))
	h.srv.on("GET", repoPath, withToken("ghs_first", primaryExhausted403(start.Add(time.Hour))))
	_ = mustErr(t, h.getRepo(context.Background(), Budget{}))
	c := h.c
	c.gateMu.Lock()
	resource, jwt := c.primaryUntil[0], c.primaryUntil[1]
	c.gateMu.Unlock()
	assert.Equal(t, true, resource.Equal(start.Add(time.Hour)), "resource gate armed at the reset")
	assert.Equal(t, true, jwt.IsZero(), "App JWT gate untouched")
	assert.Equal(t, 3, len(h.srv.requests()), "lookup, mint, one resource request")
}

// The held-back call's error says why nothing was sent.
func TestPrimaryLimitHeldBackCallSaysWhy(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	reset := h.clock.Now().Add(time.Hour)
	h.srv.on("GET", repoPath, primaryExhausted403(reset))
	_ = mustErr(t, h.getRepo(context.Background(), Budget{}))
	e := mustErr(t, h.getRepo(context.Background(), Budget{}))
	assert.Equal(t, "GET repos o/r exhausted its bounded GitHub API retry budget after 0 attempt(s); last failure: "+
		"not sent: an earlier answer on this client exhausted the primary rate limit; the primary rate limit is exhausted until "+
		reset.UTC().Format(time.RFC3339)+" (in 1h0m0s): no request is sent before it resets", e.Error(), "error")
}

// A runner clock 45 s behind GitHub's would send 45 s before the reset if
// it compared x-ratelimit-reset with its own clock; measured from the
// response's Date it waits the whole window (simulation seed 89, a drifting
// runner clock).
func TestPrimaryResetIsMeasuredFromTheServerDate(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	server := h.clock.Now()
	h.clock.Set(server.Add(-45 * time.Second)) // the runner's clock is behind
	r := primaryExhausted403(server.Add(50 * time.Second))
	r.header["Date"] = server.Format(http.TimeFormat)
	h.srv.on("GET", repoPath, r, reply{body: okRepo})
	require.NoError(t, h.getRepo(context.Background(), Budget{}))
	eqSleeps(t, h.clock.Sleeps(), 50*time.Second)
}

// The App JWT's primary limit exhausted on the installation lookup: the
// serving call fails after its one attempt, without backing off through
// attempts that could send nothing, and later calls send nothing until the
// reset.
func TestPrimaryLimitOnTheInstallationLookupFailsTheServingCallFast(t *testing.T) {
	t.Parallel()
	h := appHarness(t, nil)
	start := h.clock.Now()
	reset := start.Add(30 * time.Minute)
	h.srv.on("GET", "/repos/o/r/installation", primaryExhausted403(reset))
	e := mustErr(t, h.getRepo(context.Background(), Budget{}))
	assert.Equal(t, CodeRetryExhausted, e.Code, "Code")
	assert.Equal(t, true, e.CredentialFailure, "CredentialFailure")
	assert.Equal(t, 1, e.Attempts, "Attempts")
	assert.Equal(t, true, e.PrimaryReset.Equal(reset), "PrimaryReset")
	assert.Contains(t, e.Error(), "the primary rate limit is exhausted until "+reset.UTC().Format(time.RFC3339), "error")
	assert.Equal(t, 1, strings.Count(e.Error(), "primary rate limit is exhausted until"), "the reset is named once")
	eqSleeps(t, h.clock.Sleeps())
	_ = mustErr(t, h.getRepo(context.Background(), Budget{}))
	assert.Equal(t, 1, len(h.srv.requests()), "requests (the second call sent nothing)")
	eqSleeps(t, h.clock.Sleeps())
}

// A secondary limit without Retry-After waits at least a minute, doubling
// with every further one until a success resets the growth (GitHub's
// guidance), and nothing is sent on the client before each wait ends.
func TestSecondaryLimitWithoutRetryAfterGrowsExponentially(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	secondary := reply{status: 403, header: hdr("X-RateLimit-Remaining", "4999"), body: msg("You have exceeded a secondary rate limit. Please wait a few minutes before you try again.")}
	h.srv.on("GET", repoPath, secondary, secondary, reply{body: okRepo}, secondary, reply{body: okRepo})
	require.NoError(t, h.getRepo(context.Background(), Budget{}))
	eqSleeps(t, h.clock.Sleeps(), time.Minute, 2*time.Minute)
	require.NoError(t, h.getRepo(context.Background(), Budget{}))
	eqSleeps(t, h.clock.Sleeps(), time.Minute, 2*time.Minute, time.Minute)
	assert.Equal(t, 5, len(h.srv.requests()), "requests")
}

// An attempt-bounded call whose context ends before the secondary wait does
// fails at once, unsent, with SecondaryLimit: acquire waits on inside its
// timeout, the reaper stops and says so.
func TestSecondaryLimitPastTheContextDeadlineSendsNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	start := h.clock.Now()
	h.srv.on("GET", repoPath, reply{status: 429, header: hdr("Retry-After", "90"), body: msg("You have exceeded a secondary rate limit")})
	ctx, cancel := context.WithDeadline(context.Background(), start.Add(30*time.Second))
	defer cancel()
	e := mustErr(t, h.getRepo(ctx, Budget{}))
	assert.True(t, IsSecondaryLimit(e), "IsSecondaryLimit")
	assert.Equal(t, start.Add(90*time.Second), e.SecondaryUntil)
	assert.Equal(t, 1, len(h.srv.requests()), "requests")
	eqSleeps(t, h.clock.Sleeps())
	assert.Equal(t, start.Add(90*time.Second), h.c.HeldUntil(), "HeldUntil covers the secondary wait")
}

// Two content-creating requests of one client are at least a second apart.
func TestWritesAreSpacedOneSecondApart(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.srv.on("PUT", "/repos/o/r/contents/locks/x.json", reply{status: 200, body: `{"content":{"sha":"a"}}`}, reply{status: 200, body: `{"content":{"sha":"b"}}`})
	h.srv.on("GET", repoPath, reply{body: okRepo})
	require.NoError(t, h.putFile(context.Background(), Budget{}))
	require.NoError(t, h.getRepo(context.Background(), Budget{}))
	require.NoError(t, h.putFile(context.Background(), Budget{}))
	eqSleeps(t, h.clock.Sleeps(), time.Second)
	reqs := h.srv.requests()
	require.Equal(t, 3, len(reqs))
}

// A secondary limit whose wait ends past the call's deadline ends the call
// unsent; the warning says so instead of announcing a retry that never
// happens (issue 22: a long Retry-After "failed at once while saying
// retrying").
func TestASecondaryWaitPastTheDeadlineIsNotAnnouncedAsARetry(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	start := h.clock.Now()
	h.srv.on("GET", repoPath, reply{status: 429, header: hdr("Retry-After", "600"), body: msg("You have exceeded a secondary rate limit")})
	e := mustErr(t, h.getRepo(context.Background(), Budget{Deadline: start.Add(150 * time.Second)}))
	assert.True(t, e.SecondaryLimit)
	w := h.warnings()
	require.Len(t, w, 1)
	assert.Equal(t, "GET repos o/r returned HTTP 429; not retrying: GitHub asked to wait until "+start.Add(600*time.Second).UTC().Format(time.RFC3339)+
		", after this call's deadline "+start.Add(150*time.Second).UTC().Format(time.RFC3339), w[0])
	assert.Equal(t, 1, len(h.srv.requests()))

	// A wait that fits is announced, and happens.
	g := newHarness(t, nil)
	g.srv.on("GET", repoPath, reply{status: 429, header: hdr("Retry-After", "7"), body: msg("You have exceeded a secondary rate limit")}, reply{body: okRepo})
	require.NoError(t, g.getRepo(context.Background(), Budget{Deadline: g.clock.Now().Add(150 * time.Second)}))
	require.Len(t, g.warnings(), 1)
	assert.Contains(t, g.warnings()[0], "; retrying in 7000 ms")
}
