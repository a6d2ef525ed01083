package ghclient

import (
	"net/http"
	"strconv"
	"time"
)

// Header names consulted by the classifier. Stashed* hold the originals that
// the gate shield moved out of go-github's sight (see shieldTransport).
const (
	headerRetryAfter         = "Retry-After"
	headerRateRemaining      = "X-RateLimit-Remaining"
	headerRateReset          = "X-RateLimit-Reset"
	headerRequestID          = "X-GitHub-Request-Id"
	headerStashedRetryAfter  = "X-Buildlock-Retry-After"
	headerStashedRateReset   = "X-Buildlock-Ratelimit-Reset"
	headerFromCache          = "X-From-Cache"
	maxRetryAfterDeltaSecond = 1 << 31
)

// retryAfterValue returns the raw Retry-After value, preferring the stash.
func retryAfterValue(h http.Header) string {
	if v := h.Get(headerStashedRetryAfter); v != "" {
		return v
	}
	return h.Get(headerRetryAfter)
}

// rateResetValue returns the raw X-RateLimit-Reset value, preferring the stash.
func rateResetValue(h http.Header) string {
	if v := h.Get(headerStashedRateReset); v != "" {
		return v
	}
	return h.Get(headerRateReset)
}

// parseRetryAfter interprets a Retry-After value relative to now (spec §3.6,
// Appendix B.3). Delta-seconds must match ^[0-9]+$; an HTTP-date must be an
// exact IMF-fixdate that round-trips ("Sun, 06 Nov 1994 08:49:37 GMT") — a
// wrong weekday, another date format, a fraction, a sign or a suffix are all
// ignored. A date in the past yields 0 (the caller's floor then applies).
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n > maxRetryAfterDeltaSecond {
			n = maxRetryAfterDeltaSecond
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := time.Parse(http.TimeFormat, v)
	if err != nil || t.UTC().Format(http.TimeFormat) != v {
		return 0, false
	}
	d := t.Sub(now)
	if d < 0 {
		d = 0
	}
	return d, true
}

// RetryAfter is the one Retry-After parser of the project, for callers that
// send through [Client.GitHub] outside [Client.Do] with a budget of their own
// (the pull-request head guard, internal/prhead): the server-directed wait
// in h relative to now, by the rules of parseRetryAfter, reading the value
// this client's transport moved out of go-github's sight on a 403. present
// reports whether h carries a Retry-After at all; ok whether it parsed.
func RetryAfter(h http.Header, now time.Time) (wait time.Duration, present, ok bool) {
	v := retryAfterValue(h)
	wait, ok = parseRetryAfter(v, now)
	return wait, v != "", ok
}

// parseRateReset interprets X-RateLimit-Reset (epoch seconds).
func parseRateReset(v string) (time.Time, bool) {
	if !isDigits(v) {
		return time.Time{}, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(n, 0), true
}
