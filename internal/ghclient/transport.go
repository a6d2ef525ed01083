package ghclient

import (
	"context"
	"net/http"
	"sync"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
)

// APIVersion is the pinned REST API version sent on every request (notes
// B.9: 2022-11-28 is the version the reference targets; 2026-03-10 is the
// first with breaking changes).
const APIVersion = "2022-11-28"

// mediaTypeJSON is the Accept value for REST calls that do not ask for
// another media type.
const mediaTypeJSON = "application/vnd.github+json"

// attemptTrace records, for one attempt of one logical call, whether the
// resource request left the client and with which credential generation.
// It travels in the attempt's context.
type attemptTrace struct {
	mu     sync.Mutex
	sent   bool
	method string
	path   string
	gen    uint64
}

type traceKey struct{}

func withTrace(ctx context.Context, tr *attemptTrace) context.Context {
	return context.WithValue(ctx, traceKey{}, tr)
}

func traceFrom(ctx context.Context) *attemptTrace {
	tr, _ := ctx.Value(traceKey{}).(*attemptTrace)
	return tr
}

func (t *attemptTrace) markSent(method, path string, gen uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sent, t.method, t.path, t.gen = true, method, path, gen
}

func (t *attemptTrace) snapshot() (sent bool, method, path string, gen uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sent, t.method, t.path, t.gen
}

// baseTransport is the lowest layer above the caller's RoundTripper. It pins
// the API version, fills Accept and User-Agent when absent, counts every
// request handed to the network (resource, JWT and token-mint requests) and
// notes the rate-limit count each answer reports (usage.go). The App JWT's
// requests have their own baseTransport (app set), since GitHub counts them
// in a bucket of their own.
type baseTransport struct {
	next      http.RoundTripper
	userAgent string
	stats     *statsCounter
	usage     *usageLog
	clock     clock.Clock
	app       bool
}

func (t *baseTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Header.Set("X-GitHub-Api-Version", APIVersion)
	if r.Header.Get("Accept") == "" {
		r.Header.Set("Accept", mediaTypeJSON)
	}
	if t.userAgent != "" {
		r.Header.Set("User-Agent", t.userAgent)
	}
	t.stats.request()
	resp, err := t.next.RoundTrip(r)
	if err != nil {
		t.stats.transportError()
		return nil, err
	}
	t.stats.status(resp.StatusCode)
	if t.usage != nil && t.clock != nil {
		t.usage.note(t.clock.Now(), t.app, resp)
	}
	return resp, nil
}

// tokenSource yields the credential for a resource request together with
// its generation (used to invalidate exactly the token a 401 rejected).
type tokenSource interface {
	current(ctx context.Context) (token string, gen uint64, err error)
}

// staticToken is a plain token (e.g. the workflow GITHUB_TOKEN).
type staticToken string

func (s staticToken) current(context.Context) (string, uint64, error) { return string(s), 0, nil }

// authTransport sets the Authorization header from a tokenSource and records
// in the attempt trace that the request left the client. A credential
// failure is returned as *credentialError before anything is sent.
type authTransport struct {
	next   http.RoundTripper
	source tokenSource
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	tok, gen, err := t.source.current(req.Context())
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+tok)
	if tr := traceFrom(req.Context()); tr != nil {
		tr.markSent(req.Method, req.URL.Path, gen)
	}
	return t.next.RoundTrip(r)
}

// shieldTransport sits directly below go-github and keeps go-github v66's
// client-side rate-limit gates from arming (style guide §3.3): BareDo records
// the last Rate per category and, while Remaining is 0 and Reset is in the
// future by the wall clock, answers with a synthetic 403 *RateLimitError
// without sending anything; an *AbuseRateLimitError with a RetryAfter arms a
// similar secondary gate. Both gates read time.Now, ignore our injected
// clock, deadline and 60 s ceiling, and would turn retries into no-ops. The
// retry contract owns every rate-limit wait, so:
//
//   - a response with X-RateLimit-Remaining: 0 gets X-From-Cache: 1, the
//     marker go-github honours by not recording that response's Rate;
//   - a 403 has Retry-After and X-RateLimit-Reset moved to X-Buildlock-*
//     headers (which the classifier reads), so no secondary gate is armed.
//
// A synthetic pre-check error is still classified (as a rate-limited attempt
// that was not sent) in case a gate is ever armed some other way.
type shieldTransport struct {
	next http.RoundTripper
}

func (t *shieldTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp == nil {
		return resp, err
	}
	if resp.Header == nil {
		resp.Header = make(http.Header)
	}
	if resp.Header.Get(headerRateRemaining) == "0" {
		resp.Header.Set(headerFromCache, "1")
	}
	if resp.StatusCode == http.StatusForbidden {
		if v := resp.Header.Get(headerRetryAfter); v != "" {
			resp.Header.Set(headerStashedRetryAfter, v)
			resp.Header.Del(headerRetryAfter)
		}
		if v := resp.Header.Get(headerRateReset); v != "" {
			resp.Header.Set(headerStashedRateReset, v)
			resp.Header.Del(headerRateReset)
		}
	}
	return resp, nil
}
