package ghclient

import (
	"context"
	"testing"
	"time"
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
	eq(t, e.DeadlineElapsed, true, "first call: DeadlineElapsed")
	eqSleeps(t, h.clock.Sleeps(), 15*time.Second)

	// The next call (a later phase, its own deadline) waits out the
	// remaining 3 s before its first attempt.
	h.srv.on("GET", repoPath, reply{body: okRepo})
	mustNoErr(t, h.getRepo(context.Background(), Budget{Deadline: start.Add(30 * time.Second)}))
	eqSleeps(t, h.clock.Sleeps(), 15*time.Second, 3*time.Second)
	eq(t, len(h.srv.requests()), 2, "requests")
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
	eq(t, e.Code, CodeRetryExhausted, "Code")
	eq(t, e.DeadlineElapsed, true, "DeadlineElapsed")
	eq(t, e.Wait, 40*time.Second, "Wait")
	eq(t, len(h.srv.requests()), 1, "requests (the second call sent nothing)")
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
	mustNoErr(t, h.getRepo(context.Background(), Budget{}))
	// Lookup backoffs 500 ms and 1 s, the serving call's backoff 500 ms,
	// then the rest of the 40 s window.
	eqSleeps(t, h.clock.Sleeps(), ms(500), time.Second, ms(500), 39*time.Second+ms(500))
	reqs := h.srv.requests()
	eq(t, len(reqs), 6, "requests")
	if got := h.clock.Now().Sub(start); got < 40*time.Second+ms(1500) {
		t.Errorf("the lookup after the 429 went out %s after start, inside the Retry-After window", got)
	}
	has(t, h.warnings()[len(h.warnings())-1], "waits 39500 ms for an earlier Retry-After", "warning")
}
