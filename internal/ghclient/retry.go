package ghclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
)

// LateAttemptTimeout bounds the single in-flight attempt granted to a call
// that starts with its deadline already spent ("Release Retry Budget": no
// fresh attempts, but exactly one). GitHub itself abandons a request after
// 10 s (notes B.9), so a longer stall is a dead connection.
const LateAttemptTimeout = 10 * time.Second

// AttemptTimeout is the in-flight bound of one attempt of an attempt-bounded
// call for clients that set Config.AttemptTimeout to it (the state-writer
// client): GitHub abandons a request after 10 s (notes B.9), so a longer
// stall is a dead connection.
const AttemptTimeout = 10 * time.Second

// MinBackoff is the smallest self-generated backoff. Full jitter draws from
// [0, cap], and a draw near 0 would be an unthrottled retry — under a
// deadline with no attempt ceiling, a tight loop. Clamping the draw up to
// 100 ms (the smallest configurable base) removes only that sliver of the
// distribution and keeps the mean within 1% of pure full jitter for the
// default knobs.
const MinBackoff = 100 * time.Millisecond

// Secondary rate limits (GitHub, "Handle rate limit errors appropriately":
// "If the retry-after response header is present, you should not retry your
// request until after that many seconds has elapsed. ... Otherwise, you
// should wait for at least one minute before retrying. If your request
// continues to fail due to a secondary rate limit, you should wait for an
// exponentially increasing amount of time between retries",
// https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api#handle-rate-limit-errors-appropriately).
const (
	// SecondaryMinWait is the wait after a secondary limit without
	// Retry-After; it doubles with every further one until a success.
	SecondaryMinWait = time.Minute
	// SecondaryMaxWait caps that growth.
	SecondaryMaxWait = 16 * time.Minute
	// MinWriteSpacing separates two content-creating requests of one
	// client (one process and token): "If you are making a large number of
	// POST, PATCH, PUT, or DELETE requests for a single user or client ID,
	// wait at least one second between each request" (same page).
	MinWriteSpacing = time.Second
)

// Budget bounds the retries of one logical call (spec §3.6, §3.8).
type Budget struct {
	// MaxAttempts caps attempts. 0 means: the MaxAttempts knob if set, else
	// 5 for an attempt-bounded call and unlimited when Deadline is set. An
	// explicit value (here or in the knob) also caps deadline-bound calls.
	MaxAttempts int
	// Deadline is an absolute time on the client's clock. Zero selects the
	// attempt-bounded path. When set, retries stop once now >= Deadline,
	// every wait is clamped to it, and each in-flight request runs under a
	// context that expires at it, so a stalled connection is aborted. A call
	// that starts past its Deadline gets exactly one attempt (bounded in
	// flight by LateAttemptTimeout).
	Deadline time.Time
	// RetryAfterCeiling caps a server-directed wait on an attempt-bounded
	// call; 0 means DefaultRetryAfterCeiling (60 s). Ignored under a
	// Deadline, which honors Retry-After in full.
	RetryAfterCeiling time.Duration
	// WaitPrimaryReset makes a primary rate limit (403/429 with
	// X-RateLimit-Remaining: 0) wait until X-RateLimit-Reset. Only effective
	// with a Deadline (release); attempt-bounded calls keep exponential
	// backoff ("Server-Directed Retry Waits").
	WaitPrimaryReset bool
}

// Op describes one logical call for messages and classification.
type Op struct {
	// Name appears in errors and warnings, e.g. "PUT contents locks/x.json".
	// When empty, "<METHOD> <path>" of the last request is used.
	Name string
	// Mutation marks a write: 409/422 become ClassConflict (or
	// ClassAmbiguous), and unknown outcomes are tracked.
	Mutation bool
	// Budget bounds the retries.
	Budget Budget
}

// resolvedBudget is a Budget with knobs and defaults applied.
type resolvedBudget struct {
	b           Budget
	maxAttempts int // 0 = unlimited
	hasDeadline bool
	ceiling     time.Duration
}

func (c *Client) resolve(b Budget) resolvedBudget {
	rb := resolvedBudget{b: b, hasDeadline: !b.Deadline.IsZero(), ceiling: b.RetryAfterCeiling}
	switch {
	case b.MaxAttempts > 0:
		rb.maxAttempts = b.MaxAttempts
	case c.knobs.MaxAttempts > 0:
		rb.maxAttempts = c.knobs.MaxAttempts
	case rb.hasDeadline:
		rb.maxAttempts = 0
	default:
		rb.maxAttempts = DefaultMaxAttempts
	}
	if rb.ceiling <= 0 {
		rb.ceiling = DefaultRetryAfterCeiling
	}
	return rb
}

// run executes fn under the retry contract. inner marks a credential (JWT)
// call made on behalf of another call: it skips the auth step and treats
// ghinstallation errors as its own HTTP outcomes. It returns nil or *Error.
func (c *Client) run(ctx context.Context, op Op, inner bool, fn func(ctx context.Context) (*http.Response, error)) error {
	rb := c.resolve(op.Budget)
	if err := ctx.Err(); err != nil {
		return c.contextError(op, rb, 0, false, outcome{}, err)
	}
	var (
		attempt      int
		replayed     bool
		maybeApplied bool
	)
	var last outcome
	for {
		attempt++
		// Honor a Retry-After an earlier answer to this client advertised
		// (R-F4): another call, or the credential lookup serving this
		// one, may have been told to wait.
		if err := c.awaitServerWait(ctx, op, rb, inner, attempt, maybeApplied, last); err != nil {
			return err
		}
		if op.Mutation && !inner {
			if err := c.spaceWrite(ctx, op, rb, attempt, maybeApplied, last); err != nil {
				return err
			}
		}
		o := c.attemptOnce(ctx, rb, inner, fn)
		if op.Mutation && !inner && o.kind != kindCredential && (o.kind != kindTransport || o.unknown) {
			// Measured from the answer: the request may have left later
			// than spaceWrite stamped it (a token mint first). A write
			// that never left (no credentials, no connection) does not
			// count.
			c.gateMu.Lock()
			c.lastWrite = clock.Later(c.lastWrite, c.clock.Now())
			c.gateMu.Unlock()
		}
		last = o
		c.noteServerWait(o, rb, inner)
		if o.kind == kindOK {
			return nil
		}
		// Cancellation wins over everything: no sleep, no warning.
		if err := ctx.Err(); err != nil {
			if o.unknown && op.Mutation {
				maybeApplied = true
			}
			return c.contextError(op, rb, attempt, maybeApplied, o, err)
		}
		if o.unknown && op.Mutation {
			maybeApplied = true
		}
		name := opName(op, o)
		if o.inflightDeadline {
			return c.exhausted(name, rb, attempt, maybeApplied, o, true)
		}
		// Replica lag: the first 401 of a logical call re-mints and replays
		// immediately without consuming an attempt (spec §3.4).
		if o.kind == kindHTTP && o.status == http.StatusUnauthorized && !inner && c.app != nil && !replayed {
			replayed = true
			c.app.invalidate(o.gen)
			c.stats.replay()
			c.warn(fmt.Sprintf("%s returned HTTP 401; minting a fresh installation token and replaying once", name))
			attempt--
			continue
		}
		if o.kind == kindHTTP && (o.ruleRefusal || o.invalidWrite) && op.Mutation {
			// Final, never a conflict: no later round can pass a rule or
			// make an invalid request valid (refusal.go).
			e := c.finalError(name, rb, attempt, maybeApplied, o)
			e.Class = ClassFatal
			e.Code = CodeInvalidWrite
			if o.ruleRefusal {
				e.Code = CodeBranchRules
			}
			return e
		}
		if o.kind == kindHTTP && o.conflict && op.Mutation {
			e := c.finalError(name, rb, attempt, maybeApplied, o)
			e.Class = ClassConflict
			if maybeApplied {
				e.Class = ClassAmbiguous
			}
			return e
		}
		if !o.retryable {
			e := c.finalError(name, rb, attempt, maybeApplied, o)
			if o.redirectRefused {
				e.Code = CodeRedirectRefused
			}
			return e
		}
		now := c.clock.Now()
		if reset, ok := o.primaryReset(now); ok && !c.mayAwaitPrimary(rb, reset, now) {
			// Fail fast: the hourly window cannot reopen inside this
			// budget, and retrying into it is what GitHub warns
			// integrations are banned for. The same holds when the
			// credential lookup or mint serving this call met it.
			return c.primaryExhausted(name, rb, attempt, maybeApplied, o, reset, now)
		}
		if rb.maxAttempts > 0 && attempt >= rb.maxAttempts {
			return c.exhausted(name, rb, attempt, maybeApplied, o, false)
		}
		if rb.hasDeadline && !now.Before(rb.b.Deadline) {
			return c.exhausted(name, rb, attempt, maybeApplied, o, true)
		}
		d, _ := c.delay(o, attempt, rb, now)
		if o.secondary && op.Mutation {
			// A write the limit refused is not replayed after the wait: its
			// compare-and-swap base is stale by then. The caller re-reads
			// (the store) and the client holds every request back until
			// the wait ends.
			return c.finalError(name, rb, attempt, maybeApplied, o)
		}
		if o.secondary {
			// awaitSecondary sleeps before the next attempt, or ends the
			// call unsent when its deadline comes first; the warning says
			// which, so no retry is announced that never happens.
			c.gateMu.Lock()
			until := c.secondaryUntil
			c.gateMu.Unlock()
			if end, ok := callEnd(ctx, rb); ok && !until.Before(end) {
				c.warn(fmt.Sprintf("%s returned HTTP %d; not retrying: GitHub asked to wait until %s, after this call's deadline %s",
					name, o.status, until.UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339)))
			} else {
				c.warn(retryWarning(name, o, d, attempt, rb))
			}
			c.stats.retry()
			continue
		}
		if rb.hasDeadline {
			if rem := rb.b.Deadline.Sub(now); d > rem {
				d = rem
			}
		}
		c.warn(retryWarning(name, o, d, attempt, rb))
		if err := c.clock.Sleep(ctx, d); err != nil {
			return c.contextError(op, rb, attempt, maybeApplied, o, err)
		}
		if err := ctx.Err(); err != nil {
			return c.contextError(op, rb, attempt, maybeApplied, o, err)
		}
		c.stats.retry()
		if rb.hasDeadline && !c.clock.Now().Before(rb.b.Deadline) {
			// The wait ran into the deadline (e.g. a primary reset beyond
			// it): waited on once, then abandoned.
			return c.exhausted(name, rb, attempt, maybeApplied, o, true)
		}
	}
}

// noteServerWait records the Retry-After of a throttled answer as the
// client's server-directed wait: no attempt of any call on this client (the
// serving call, the next call, an installation lookup or mint) is sent
// before it elapses. GitHub: "you should not retry your request until after
// that many seconds has elapsed" (reliability goal R-F4). The recorded wait
// is the one this call itself honors (spec §3.6 "Delay computation"): the
// full instruction under a deadline, capped at max(ceiling, floor) on an
// attempt-bounded call.
//
// An exhausted primary limit (403/429, x-ratelimit-remaining: 0, no
// Retry-After) records its x-ratelimit-reset for the credential kind that
// received it (inner: the App JWT): GitHub's rate-limit guide says to wait
// until then, and "continuing to make requests while you are rate limited
// may result in the banning of your integration"
// (https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api#handle-rate-limit-errors-appropriately).
// Issue 4 (R-F4: 0 requests before the reset) takes precedence over the
// reference's exponential backoff there; see awaitServerWait.
func (c *Client) noteServerWait(o outcome, rb resolvedBudget, inner bool) {
	now := c.clock.Now()
	if reset, ok := o.primaryReset(now); ok && o.kind == kindHTTP {
		i := credIndex(inner)
		c.gateMu.Lock()
		if reset.After(c.primaryUntil[i]) {
			c.primaryUntil[i] = reset
		}
		c.gateMu.Unlock()
	}
	if o.kind == kindOK {
		c.gateMu.Lock()
		c.secondaryStreak = 0
		c.gateMu.Unlock()
		return
	}
	if o.kind == kindHTTP && o.secondary {
		// A secondary limit holds back every request of this client (its
		// token) for the whole wait, whatever the call's ceiling: GitHub
		// warns that "continuing to make requests while you are rate
		// limited may result in the banning of your integration".
		c.gateMu.Lock()
		c.secondaryStreak++
		w := o.instruction
		if !o.hasInstruction {
			w = min(SecondaryMinWait<<min(c.secondaryStreak-1, 10), SecondaryMaxWait)
		}
		w = max(w, min(c.knobs.Base, c.knobs.Max))
		if until := now.Add(w); until.After(c.secondaryUntil) {
			c.secondaryUntil = until
		}
		c.gateMu.Unlock()
		return
	}
	if o.kind != kindHTTP || !o.hasInstruction || o.instruction <= 0 {
		return
	}
	w := o.instruction
	if !rb.hasDeadline {
		w = min(w, max(rb.ceiling, min(c.knobs.Base, c.knobs.Max)))
	}
	until := now.Add(w)
	c.gateMu.Lock()
	if until.After(c.gateUntil) {
		c.gateUntil = until
	}
	c.gateMu.Unlock()
}

// HeldUntil reports when the server-directed waits of the client's own
// credential end: the later of a Retry-After an answer advertised and an
// exhausted primary limit's reset; zero or past when nothing holds calls
// back. Another HTTP path that uses the same token (the current-PR-head
// guard) consults it so that it, too, sends nothing inside the window.
func (c *Client) HeldUntil() time.Time {
	c.gateMu.Lock()
	defer c.gateMu.Unlock()
	return clock.Later(clock.Later(c.gateUntil, c.primaryUntil[0]), c.secondaryUntil)
}

// SecondaryHeldUntil reports the end of the latest secondary-limit wait
// the client was told of (zero when none was): a caller whose deadline a
// secondary limit ate can tell that time from its own failures.
func (c *Client) SecondaryHeldUntil() time.Time {
	c.gateMu.Lock()
	defer c.gateMu.Unlock()
	return c.secondaryUntil
}

// HoldUntil makes every later attempt on the client wait until t, as if an
// answer had advertised Retry-After until then: a server-directed wait
// that another HTTP path with the same token received. Attempt-bounded
// calls wait for it up to their Retry-After ceiling, like any other.
func (c *Client) HoldUntil(t time.Time) {
	c.gateMu.Lock()
	defer c.gateMu.Unlock()
	c.gateUntil = clock.Later(c.gateUntil, t)
}

// credIndex selects the primaryUntil slot of a call's credential.
func credIndex(inner bool) int {
	if inner {
		return 1
	}
	return 0
}

// primaryReset reports an exhausted primary rate limit and when it resets:
// 403 or 429 with x-ratelimit-remaining: 0, no Retry-After, and a reset in
// the future (spec §3.6 "Primary rate limit reset").
// A credential failure whose inner call met (or was held back by) such a
// limit reports that limit's reset.
func (o outcome) primaryReset(now time.Time) (time.Time, bool) {
	if o.kind == kindCredential {
		if e, ok := asError(o.err); ok && e.PrimaryReset.After(now) {
			return e.PrimaryReset, true
		}
		return time.Time{}, false
	}
	ok := o.kind == kindHTTP && !o.hasInstruction && o.remainingZero &&
		(o.status == http.StatusForbidden || o.status == http.StatusTooManyRequests) && o.reset.After(now)
	return o.reset, ok
}

// mayAwaitPrimary reports whether a call may sleep until an exhausted
// primary limit resets. A deadline-bound call that reads the reset
// (WaitPrimaryReset: release) waits, clamped to its deadline; any other
// call waits only for a reset within its Retry-After ceiling (and its
// deadline). Otherwise it fails fast without sending ("Server-Directed
// Retry Waits": an hourly window cannot reopen inside an attempt-bounded
// budget, and acquire and reap fail fast rather than hold a runner).
func (c *Client) mayAwaitPrimary(rb resolvedBudget, reset, now time.Time) bool {
	if rb.hasDeadline && rb.b.WaitPrimaryReset {
		return true
	}
	if rb.hasDeadline && !reset.Before(rb.b.Deadline) {
		return false
	}
	return reset.Sub(now) <= max(rb.ceiling, min(c.knobs.Base, c.knobs.Max))
}

// primaryExhausted is the fail-fast error of a call that may not wait for
// the primary limit's reset: GITHUB_API_RETRY_EXHAUSTED with Wait set to
// the time left, and nothing sent inside the window.
func (c *Client) primaryExhausted(name string, rb resolvedBudget, attempts int, maybeApplied bool, last outcome, reset, now time.Time) *Error {
	e := c.exhausted(name, rb, attempts, maybeApplied, last, false)
	e.Wait = reset.Sub(now)
	e.PrimaryReset = reset
	return e
}

// awaitServerWait sleeps until the client's server-directed wait (see
// noteServerWait) has elapsed. An attempt-bounded call waits at most
// max(ceiling, floor), like its own Retry-After waits. A call whose
// deadline ends before the wait does is exhausted without sending anything
// (the deadline elapsed): sending inside the window is never the fallback.
// An exhausted primary limit of the call's credential is waited out only
// where mayAwaitPrimary allows; otherwise the call fails fast, unsent.
func (c *Client) awaitServerWait(ctx context.Context, op Op, rb resolvedBudget, inner bool, attempt int, maybeApplied bool, last outcome) error {
	c.gateMu.Lock()
	until, primary, secondary := c.gateUntil, c.primaryUntil[credIndex(inner)], c.secondaryUntil
	c.gateMu.Unlock()
	now := c.clock.Now()
	name := opName(op, last)
	if secondary.After(now) {
		if err := c.awaitSecondary(ctx, op, rb, attempt, maybeApplied, last, secondary); err != nil {
			return err
		}
		now = c.clock.Now()
	}
	if primary.After(now) {
		if !c.mayAwaitPrimary(rb, primary, now) || (rb.hasDeadline && !primary.Before(rb.b.Deadline)) {
			return c.primaryExhausted(name, rb, attempt-1, maybeApplied, last, primary, now)
		}
		until = clock.Later(until, primary)
	}
	d := until.Sub(now)
	if d <= 0 {
		return nil
	}
	if rb.hasDeadline && !until.Before(rb.b.Deadline) {
		e := c.exhausted(name, rb, attempt-1, maybeApplied, last, true)
		if e.Wait == 0 {
			e.Wait = d
		}
		if last.kind == kindOK && e.Err == nil {
			e.Err = fmt.Errorf("an earlier Retry-After asks to wait until %s, past the deadline", until.UTC().Format(time.RFC3339))
		}
		return e
	}
	if !rb.hasDeadline && !primary.After(now) {
		d = min(d, max(rb.ceiling, min(c.knobs.Base, c.knobs.Max)))
	}
	c.warn(fmt.Sprintf("%s waits %d ms for an earlier Retry-After or rate-limit reset before attempt %d", name, d.Milliseconds(), attempt))
	if err := c.clock.Sleep(ctx, d); err != nil {
		return c.contextError(op, rb, attempt-1, maybeApplied, last, err)
	}
	if err := ctx.Err(); err != nil {
		return c.contextError(op, rb, attempt-1, maybeApplied, last, err)
	}
	return nil
}

// awaitSecondary sleeps until a secondary-limit wait ends. Unlike other
// server-directed waits it is never capped: nothing is sent on this token
// before it ends (R-F4). A call whose deadline (its budget's or its
// context's) ends first fails at once, unsent, with SecondaryLimit set, so
// its caller can decide (acquire waits on inside timeout-minutes, release
// moves to its next phase, the reaper stops and says so).
func (c *Client) awaitSecondary(ctx context.Context, op Op, rb resolvedBudget, attempt int, maybeApplied bool, last outcome, until time.Time) error {
	now := c.clock.Now()
	d := until.Sub(now)
	end, hasEnd := callEnd(ctx, rb)
	if hasEnd && !until.Before(end) {
		e := c.exhausted(opName(op, last), rb, attempt-1, maybeApplied, last, rb.hasDeadline)
		e.SecondaryLimit, e.SecondaryUntil, e.Wait = true, until, d
		if e.Err == nil {
			e.Err = fmt.Errorf("a secondary rate limit holds every request back until %s, past this call's deadline", until.UTC().Format(time.RFC3339))
		}
		return e
	}
	if !last.secondary {
		c.warn(fmt.Sprintf("%s waits %d ms for a secondary rate limit before attempt %d", opName(op, last), d.Milliseconds(), attempt))
	}
	if err := c.clock.Sleep(ctx, d); err != nil {
		return c.contextError(op, rb, attempt-1, maybeApplied, last, err)
	}
	return ctx.Err()
}

// spaceWrite keeps two mutation attempts of this client at least
// MinWriteSpacing apart (from the previous one's answer), and stamps this
// one as sent.
func (c *Client) spaceWrite(ctx context.Context, op Op, rb resolvedBudget, attempt int, maybeApplied bool, last outcome) error {
	c.gateMu.Lock()
	wait := c.lastWrite.Add(MinWriteSpacing).Sub(c.clock.Now())
	if wait <= 0 {
		c.lastWrite = c.clock.Now()
		c.gateMu.Unlock()
		return nil
	}
	c.lastWrite = c.clock.Now().Add(wait)
	c.gateMu.Unlock()
	if err := c.clock.Sleep(ctx, wait); err != nil {
		return c.contextError(op, rb, attempt-1, maybeApplied, last, err)
	}
	return ctx.Err()
}

// callEnd is when a call ends: the earlier of its budget's deadline and its
// context's.
func callEnd(ctx context.Context, rb resolvedBudget) (time.Time, bool) {
	end, hasEnd := ctx.Deadline()
	if rb.hasDeadline && (!hasEnd || rb.b.Deadline.Before(end)) {
		end, hasEnd = rb.b.Deadline, true
	}
	return end, hasEnd
}

// attemptOnce obtains credentials (resource calls with App auth) and runs
// one attempt of fn under the in-flight deadline.
func (c *Client) attemptOnce(ctx context.Context, rb resolvedBudget, inner bool, fn func(ctx context.Context) (*http.Response, error)) outcome {
	if !inner && c.app != nil {
		if err := c.app.ensure(ctx, rb.b); err != nil {
			return classify(nil, err, inner, c.clock.Now())
		}
	}
	actx, cancel := ctx, context.CancelFunc(func() {})
	switch {
	case rb.hasDeadline:
		rem := rb.b.Deadline.Sub(c.clock.Now())
		if rem <= 0 {
			rem = LateAttemptTimeout
		}
		actx, cancel = context.WithTimeout(ctx, rem)
	case c.attemptTimeout > 0:
		// No phase deadline: bound the attempt itself, so a stalled
		// connection is retried instead of hanging the call (R-F5).
		actx, cancel = context.WithTimeout(ctx, c.attemptTimeout)
	}
	defer cancel()
	tr := &attemptTrace{}
	resp, err := fn(withTrace(actx, tr))
	o := classify(resp, err, inner, c.clock.Now())
	sent, method, path, gen := tr.snapshot()
	o.method, o.path, o.gen = method, path, gen
	if o.kind == kindTransport && !sent && !inner {
		// The auth layer never forwarded the request: nothing left the client.
		o.unknown = false
	}
	if o.method == "" && resp != nil && resp.Request != nil {
		o.method, o.path = resp.Request.Method, resp.Request.URL.Path
	}
	if err != nil && ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) && rb.hasDeadline {
		o.inflightDeadline = true
	}
	return o
}

// delay computes the wait before the next attempt (spec §3.6 "Delay
// computation"; "Server-Directed Retry Waits"). It returns the wait and the
// raw server-directed instruction (0 when none).
func (c *Client) delay(o outcome, attempt int, rb resolvedBudget, now time.Time) (time.Duration, time.Duration) {
	base, maxD := c.knobs.Base, c.knobs.Max
	floor := min(base, maxD)
	instr, has := o.instruction, o.hasInstruction
	if o.secondary {
		// The client's secondary wait (noteServerWait) in full.
		c.gateMu.Lock()
		until := c.secondaryUntil
		c.gateMu.Unlock()
		return max(until.Sub(now), floor), instr
	}
	if reset, ok := o.primaryReset(now); ok && !has && c.mayAwaitPrimary(rb, reset, now) {
		instr, has = reset.Sub(now), true
	}
	if has {
		w := max(instr, floor)
		if !rb.hasDeadline {
			w = min(w, max(rb.ceiling, floor))
		}
		return w, instr
	}
	return c.backoff(attempt), 0
}

// backoff is full-jitter exponential backoff: floor(rand × (min(base·2^(n−1),
// max)+1)) ms, raised to MinBackoff.
func (c *Client) backoff(attempt int) time.Duration {
	base, maxD := c.knobs.Base, c.knobs.Max
	capped := maxD
	if shift := attempt - 1; shift >= 0 && shift < 40 {
		if exp := base << uint(shift); exp > 0 && exp < maxD {
			capped = exp
		}
	}
	ms := capped.Milliseconds()
	r := c.jitter()
	if r < 0 || r >= 1 {
		r = 0
	}
	j := int64(r * float64(ms+1))
	if j > ms {
		j = ms
	}
	d := time.Duration(j) * time.Millisecond
	if d < MinBackoff {
		d = min(MinBackoff, capped)
	}
	return d
}

// retryWarning formats the per-retry warning (spec §3.6 "Logs").
func retryWarning(name string, o outcome, d time.Duration, attempt int, rb resolvedBudget) string {
	var what string
	switch o.kind {
	case kindHTTP:
		what = fmt.Sprintf("returned HTTP %d", o.status)
	case kindCredential:
		what = "could not obtain credentials"
	default:
		what = "failed with a transport error"
	}
	var budget string
	switch {
	case rb.hasDeadline && rb.maxAttempts > 0:
		budget = fmt.Sprintf("attempt %d/%d before %s", attempt, rb.maxAttempts, rb.b.Deadline.UTC().Format(time.RFC3339))
	case rb.hasDeadline:
		budget = fmt.Sprintf("attempt %d before %s", attempt, rb.b.Deadline.UTC().Format(time.RFC3339))
	default:
		budget = fmt.Sprintf("attempt %d/%d", attempt, rb.maxAttempts)
	}
	return fmt.Sprintf("%s %s; retrying in %d ms (%s)", name, what, d.Milliseconds(), budget)
}

// opName returns the op's name or "<METHOD> <path>" of its last request.
func opName(op Op, o outcome) string {
	if op.Name != "" {
		return op.Name
	}
	if o.method != "" {
		return o.method + " " + o.path
	}
	return "GitHub API request"
}

// finalError builds the *Error for a non-retried failure.
func (c *Client) finalError(name string, rb resolvedBudget, attempt int, maybeApplied bool, o outcome) *Error {
	e := &Error{
		Class:        ClassFatal,
		Op:           name,
		Attempts:     attempt,
		MaybeApplied: maybeApplied,
	}
	if rb.hasDeadline {
		e.Deadline = rb.b.Deadline
	}
	switch o.kind {
	case kindHTTP:
		e.Status = o.status
		e.RequestID = o.requestID
		e.Message = redactKnown(o.message, c.secrets()...)
		e.RetryAfter = printable(o.retryAfterRaw)
		if o.hasInstruction {
			e.Wait = o.instruction
		}
		if o.secondary {
			e.SecondaryLimit = true
			c.gateMu.Lock()
			e.SecondaryUntil = c.secondaryUntil
			c.gateMu.Unlock()
		}
	case kindCredential:
		e.CredentialFailure = true
	case kindOther, kindTransport:
		if o.status >= 200 && o.status <= 299 {
			e.Status = o.status
		}
	}
	e.Err = c.scrub(o.err)
	return e
}

// exhausted builds the GITHUB_API_RETRY_EXHAUSTED error.
func (c *Client) exhausted(name string, rb resolvedBudget, attempt int, maybeApplied bool, o outcome, deadline bool) *Error {
	e := c.finalError(name, rb, attempt, maybeApplied, o)
	e.Class = ClassRetryable
	e.Code = CodeRetryExhausted
	e.DeadlineElapsed = deadline
	if o.kind == kindHTTP && !o.hasInstruction && rb.hasDeadline && rb.b.WaitPrimaryReset && o.remainingZero && !o.reset.IsZero() {
		if w := o.reset.Sub(c.clock.Now()); w > 0 {
			e.Wait = w
		}
	}
	return e
}

// contextError reports a cancelled or expired caller context. A caller
// deadline (the reference's TimeoutError abort) is an exhausted budget; a
// cancellation is final.
func (c *Client) contextError(op Op, rb resolvedBudget, attempt int, maybeApplied bool, o outcome, err error) *Error {
	e := &Error{
		Class:        ClassFatal,
		Op:           opName(op, o),
		Attempts:     attempt,
		MaybeApplied: maybeApplied,
		Err:          scrub(err),
	}
	if rb.hasDeadline {
		e.Deadline = rb.b.Deadline
	}
	if errors.Is(err, context.DeadlineExceeded) {
		e.Class = ClassRetryable
		e.Code = CodeRetryExhausted
		e.DeadlineElapsed = true
	}
	return e
}

// isContextErr reports a context cancellation or deadline.
func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
