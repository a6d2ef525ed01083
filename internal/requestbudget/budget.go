package requestbudget

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// ErrSpent is the sentinel every [*SpentError] matches with errors.Is.
var ErrSpent = errors.New("request budget spent")

// SpentError is the cancellation cause of a context whose ceiling was
// reached: a request under it was refused before it was sent.
type SpentError struct {
	// Limit is the run's whole budget; Ceiling is the ceiling of the
	// context that was cancelled (at most Limit).
	Limit, Ceiling int
}

// Error names the ceiling and the budget.
func (e *SpentError) Error() string {
	if e.Ceiling < e.Limit {
		return fmt.Sprintf("request budget spent: %d of the run's %d requests used (the rest is kept for checkpoint writes)", e.Ceiling, e.Limit)
	}
	return fmt.Sprintf("request budget spent: all %d requests of this run used", e.Limit)
}

// Is makes errors.Is(err, ErrSpent) true.
func (e *SpentError) Is(target error) bool { return target == ErrSpent }

// Spent reports whether ctx (or a parent bound with [Budget.Within]) was
// cancelled because its request ceiling was reached, as opposed to a
// deadline or a caller's cancellation.
func Spent(ctx context.Context) bool {
	return ctx != nil && ctx.Err() != nil && errors.Is(context.Cause(ctx), ErrSpent)
}

// Budget counts the requests of one run. It is safe for concurrent use.
type Budget struct {
	limit int

	mu      sync.Mutex
	used    int
	refused int
	// writes counts the sent requests that can change a resource (every
	// method but GET, HEAD and OPTIONS), installation token mints excepted.
	writes int
	// lowest share of the hourly limit reported left, as remaining/limit of
	// the response that reported it (lowLimit 0: none seen).
	lowRemaining, lowLimit int
}

// New returns a Budget of limit requests; limit must be positive.
func New(limit int) (*Budget, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("requestbudget: limit %d must be positive", limit)
	}
	return &Budget{limit: limit}, nil
}

// Limit is the budget.
func (b *Budget) Limit() int { return b.limit }

// Used is how many requests were sent so far.
func (b *Budget) Used() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// WritesSent is how many requests that can change a resource (methods other
// than GET, HEAD and OPTIONS, token mints excepted) were sent so far. A
// caller whose write failed after the budget was spent compares it with the
// count before the write: unchanged means the write never left, even when
// the failure looks like an abandoned request (a refused token mint inside
// the write cancels the context, and go-github then reports ctx.Err()).
func (b *Budget) WritesSent() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.writes
}

// Refused is how many requests were refused (not sent) so far.
func (b *Budget) Refused() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.refused
}

// Remaining is Limit minus Used, never negative.
func (b *Budget) Remaining() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return max(b.limit-b.used, 0)
}

// BelowFloor reports whether any response so far said that less than
// percent % of its credential's hourly limit is left.
func (b *Budget) BelowFloor(percent int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lowLimit > 0 && b.lowRemaining*100 < b.lowLimit*percent
}

// phase is the request ceiling carried by a context from Within.
type phase struct {
	b       *Budget
	ceiling int
	cancel  context.CancelCauseFunc
}

type phaseKey struct{}

// Within returns a context under which requests may bring the run's count
// up to ceiling (clamped to [0, Limit]); the first request beyond it is
// refused and cancels the returned context with a *SpentError cause. A
// nested Within applies the innermost ceiling. Every context a caller hands
// to a client using [Budget.Transport] should come from Within: a request
// without one is still refused at Limit, but nothing is cancelled, so the
// client's retry loop would back off against it.
func (b *Budget) Within(ctx context.Context, ceiling int) (context.Context, context.CancelFunc) {
	ceiling = min(max(ceiling, 0), b.limit)
	cctx, cancel := context.WithCancelCause(ctx)
	p := &phase{b: b, ceiling: ceiling, cancel: cancel}
	return context.WithValue(cctx, phaseKey{}, p), func() { cancel(context.Canceled) }
}

// Transport returns next (http.DefaultTransport when nil) wrapped so that
// every request is counted and none exceeds the ceiling of its context.
func (b *Budget) Transport(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return &transport{b: b, next: next}
}

type transport struct {
	b    *Budget
	next http.RoundTripper
}

// RoundTrip admits or refuses req, then records the rate-limit headers of
// the answer.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	p, _ := req.Context().Value(phaseKey{}).(*phase)
	if p != nil && p.b != t.b {
		p = nil // another budget's context: only this budget's limit applies
	}
	ceiling := t.b.limit
	if p != nil {
		ceiling = p.ceiling
	}
	if !t.b.admit(ceiling) {
		cause := &SpentError{Limit: t.b.limit, Ceiling: ceiling}
		if p != nil {
			p.cancel(cause)
		}
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return refusal(req, cause), nil
	}
	if isWrite(req) {
		t.b.mu.Lock()
		t.b.writes++
		t.b.mu.Unlock()
	}
	resp, err := t.next.RoundTrip(req)
	if resp != nil {
		t.b.observe(resp.Header)
	}
	return resp, err
}

// isWrite reports a request that can change a resource: not a safe method,
// and not an installation token mint (POST .../access_tokens), which
// changes nothing a caller reconciles.
func isWrite(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return !strings.HasSuffix(req.URL.Path, "/access_tokens")
}

// admit counts one request when the count is below ceiling.
func (b *Budget) admit(ceiling int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !Admits(b.used, ceiling) {
		b.refused++
		return false
	}
	b.used++
	return true
}

// Admits is the budget rule: a request may be sent when fewer than ceiling
// requests were sent before it.
func Admits(used, ceiling int) bool { return used < ceiling }

// observe keeps the lowest remaining share of the hourly limit reported by
// x-ratelimit-remaining and x-ratelimit-limit.
func (b *Budget) observe(h http.Header) {
	rem, err1 := strconv.Atoi(h.Get("X-RateLimit-Remaining"))
	lim, err2 := strconv.Atoi(h.Get("X-RateLimit-Limit"))
	if err1 != nil || err2 != nil || lim <= 0 || rem < 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lowLimit == 0 || rem*b.lowLimit < b.lowRemaining*lim {
		b.lowRemaining, b.lowLimit = rem, lim
	}
}

// HeaderRefused marks the synthetic answer to a refused request.
const HeaderRefused = "X-Buildlock-Request-Budget"

// refusal is the local answer to a request that was not sent: 429 Too Many
// Requests (this run's own budget), with no rate-limit headers, so nothing
// waits for a reset. It is an answer rather than a transport error on
// purpose: go-github turns any transport error under a cancelled context
// into ctx.Err(), which internal/ghclient must read as "maybe sent" (the
// request may have left), so a refused write would look ambiguous. A 4xx
// answer proves nothing was applied, and with the context already
// cancelled the client stops at once instead of retrying.
func refusal(req *http.Request, cause *SpentError) *http.Response {
	body, _ := json.Marshal(map[string]string{"message": cause.Error() + "; the request was not sent"})
	h := http.Header{}
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set(HeaderRefused, "spent")
	return &http.Response{
		Status: "429 Too Many Requests", StatusCode: http.StatusTooManyRequests,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)),
		Request: req,
	}
}

// ExhaustedError is the failure of a run that cannot stop part-way (operator
// recovery, a monitor) when its budget was spent: the refused request and
// everything after it was not sent. Code is the binary's stable reason code.
type ExhaustedError struct {
	Code        string
	Limit, Used int
	// Err is the failure the refusal caused, if any.
	Err error
}

// Error names the code, the budget and what to do.
func (e *ExhaustedError) Error() string {
	msg := fmt.Sprintf("%s: the run's request budget of %d requests was spent (%d sent); nothing more was sent. Re-run it (every operation here is safe to repeat); if a normal run needs more, raise %s or the request-budget input",
		e.Code, e.Limit, e.Used, EnvRequestBudget)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the failure the refusal caused.
func (e *ExhaustedError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrSpent) true.
func (e *ExhaustedError) Is(target error) bool { return target == ErrSpent }

// Explain returns err as an *ExhaustedError with code when ctx was
// cancelled by b's ceiling, and err unchanged otherwise (nil stays nil).
func (b *Budget) Explain(ctx context.Context, code string, err error) error {
	if err == nil || !Spent(ctx) {
		return err
	}
	return &ExhaustedError{Code: code, Limit: b.limit, Used: b.Used(), Err: err}
}
