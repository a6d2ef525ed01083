package ghclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v66/github"
)

// outcomeKind says what an attempt produced.
type outcomeKind int

const (
	kindOK         outcomeKind = iota
	kindHTTP                   // a non-2xx HTTP response
	kindTransport              // no response (connection failure, in-flight abort, truncated body)
	kindCredential             // credentials could not be obtained; nothing was sent
	kindOther                  // a local failure (bad request construction, decode error)
)

// outcome is the classified result of one attempt (spec §3.6 "Retryable
// responses"; style guide §7 rules 10-11).
type outcome struct {
	kind      outcomeKind
	status    int
	header    http.Header
	requestID string
	message   string
	err       error

	retryable bool
	// unknown: the request reached GitHub (or may have) and its effect is
	// unknown — 408, any 5xx, or a transport error after sending (§3.3).
	unknown bool
	// conflict: a 409, or a 422 that says the compare-and-swap lost (a CAS
	// conflict when the op is a mutation; refusal.go).
	conflict bool
	// ruleRefusal: a 409/422 whose message says a branch rule refused the
	// write; invalidWrite: any other 422 (refusal.go).
	ruleRefusal, invalidWrite bool
	// redirectRefused: a redirect the client does not follow (redirect.go).
	redirectRefused bool
	// rateLimited: 429 or a rate-limit 403.
	rateLimited bool
	// secondary: a secondary rate limit (see isSecondary).
	secondary bool

	retryAfterRaw  string
	instruction    time.Duration
	hasInstruction bool
	remainingZero  bool
	reset          time.Time

	// credRetryable: a credential failure whose inner budget was exhausted
	// (the caller may retry); otherwise it is final.
	credRetryable bool

	inflightDeadline bool
	method, path     string
	gen              uint64
}

// credentialError carries an installation lookup / token mint failure from
// the auth layer to the retry loop. It is never ambiguous: nothing was sent.
type credentialError struct {
	err       *Error
	retryable bool
}

func (e *credentialError) Error() string { return "credential unavailable: " + e.err.Error() }
func (e *credentialError) Unwrap() error { return e.err }

// whoaMarkers identify GitHub's HTML "Whoa there!" 400 interstitial, which is
// transient (spec §3.6).
var whoaMarkers = []string{"<title>bad request", "github", "whoa there!", "invalid request"}

// classify turns (response, error) from one attempt into an outcome. inner
// marks a credential (JWT) call, whose ghinstallation errors are ordinary
// HTTP outcomes rather than credential failures of a resource call.
func classify(resp *http.Response, err error, inner bool, now time.Time) outcome {
	if err == nil {
		if resp != nil && (resp.StatusCode < 200 || resp.StatusCode > 299) {
			return classifyHTTP(resp, "", err, now)
		}
		return outcome{kind: kindOK}
	}

	if errors.Is(err, ErrRedirectRefused) {
		// Refused before it was sent (redirect.go): final.
		return outcome{kind: kindOther, err: err, redirectRefused: true}
	}
	var credErr *credentialError
	if errors.As(err, &credErr) {
		return outcome{kind: kindCredential, err: credErr.err, retryable: credErr.retryable, credRetryable: credErr.retryable}
	}

	var hErr *ghinstallation.HTTPError
	if errors.As(err, &hErr) {
		var o outcome
		if hErr.Response != nil {
			o = classifyHTTP(hErr.Response, "", err, now)
			if hErr.Response.Body != nil {
				_ = hErr.Response.Body.Close()
			}
		} else {
			o = transportOutcome(hErr.RootCause, true)
		}
		if inner {
			return o
		}
		// A mint inside the auth layer of a resource request: a credential
		// failure of this attempt, never an unknown outcome.
		return outcome{kind: kindCredential, err: err, retryable: o.retryable, credRetryable: o.retryable}
	}

	var (
		rl    *github.RateLimitError
		abuse *github.AbuseRateLimitError
		er    *github.ErrorResponse
		tfa   *github.TwoFactorAuthError
		acc   *github.AcceptedError
	)
	switch {
	case errors.As(err, &rl) && rl.Response != nil:
		if isSynthetic(rl.Response, rl.Message) {
			o := outcome{kind: kindHTTP, status: rl.Response.StatusCode, header: rl.Response.Header, message: sanitizeMessage(rl.Message),
				err: err, retryable: true, rateLimited: true, remainingZero: true}
			if !rl.Rate.Reset.Time.IsZero() {
				o.reset = rl.Rate.Reset.Time
			}
			return o
		}
		return classifyHTTP(rl.Response, rl.Message, err, now)
	case errors.As(err, &abuse) && abuse.Response != nil:
		if isSynthetic(abuse.Response, abuse.Message) {
			o := outcome{kind: kindHTTP, status: abuse.Response.StatusCode, header: abuse.Response.Header, message: sanitizeMessage(abuse.Message),
				err: err, retryable: true, rateLimited: true, secondary: true}
			if abuse.RetryAfter != nil && *abuse.RetryAfter > 0 {
				o.instruction, o.hasInstruction = *abuse.RetryAfter, true
			}
			return o
		}
		return classifyHTTP(abuse.Response, abuse.Message, err, now)
	case errors.As(err, &tfa) && tfa.Response != nil:
		return classifyHTTP(tfa.Response, tfa.Message, err, now)
	case errors.As(err, &er) && er.Response != nil:
		return classifyHTTP(er.Response, er.Message, err, now)
	case errors.As(err, &acc):
		// 202: GitHub scheduled work and asks us to come back later.
		return outcome{kind: kindHTTP, status: http.StatusAccepted, err: err, retryable: true, message: "job scheduled on GitHub side; try again later"}
	}

	if resp != nil && (resp.StatusCode < 200 || resp.StatusCode > 299) {
		return classifyHTTP(resp, "", err, now)
	}
	if resp != nil {
		// A 2xx whose body could not be read or decoded.
		if isTransportErr(err) {
			o := transportOutcome(err, true)
			o.status = resp.StatusCode
			return o
		}
		return outcome{kind: kindOther, status: resp.StatusCode, err: err}
	}
	if isTransportErr(err) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return transportOutcome(err, !isDialErr(err))
	}
	return outcome{kind: kindOther, err: err}
}

// transportOutcome is a failure without a response. sent reports whether the
// request may have reached GitHub (then a mutation's effect is unknown).
func transportOutcome(err error, sent bool) outcome {
	return outcome{kind: kindTransport, err: err, retryable: true, unknown: sent}
}

// classifyHTTP classifies a non-2xx response. msg is GitHub's JSON message
// when go-github parsed one.
func classifyHTTP(r *http.Response, msg string, err error, now time.Time) outcome {
	h := r.Header
	if h == nil {
		h = http.Header{}
	}
	o := outcome{
		kind:      kindHTTP,
		status:    r.StatusCode,
		header:    h,
		requestID: h.Get(headerRequestID),
		err:       err,
	}
	body := peekBody(r)
	if msg == "" {
		var parsed struct {
			Message string `json:"message"`
		}
		if json.Unmarshal([]byte(body), &parsed) == nil && parsed.Message != "" {
			msg = parsed.Message
		} else {
			msg = body
		}
	}
	o.message = sanitizeMessage(msg)
	o.retryAfterRaw = retryAfterValue(h)
	o.instruction, o.hasInstruction = parseRetryAfter(o.retryAfterRaw, now)
	o.remainingZero = h.Get(headerRateRemaining) == "0"
	if t, ok := parseRateReset(rateResetValue(h)); ok {
		o.reset = serverRelative(t, h, now)
	}
	s := r.StatusCode
	switch {
	case s == http.StatusRequestTimeout || s >= 500:
		o.retryable, o.unknown = true, true
	case s == http.StatusTooManyRequests:
		o.retryable, o.rateLimited = true, true
	case s == http.StatusUnauthorized:
		o.retryable = true
	case s == http.StatusBadRequest:
		o.retryable = isWhoaThere(h, body)
	case s == http.StatusForbidden:
		if o.retryAfterRaw != "" || o.remainingZero || strings.Contains(strings.ToLower(msg), "rate limit") {
			o.retryable, o.rateLimited = true, true
		}
	case s == http.StatusConflict || s == http.StatusUnprocessableEntity:
		// Decided by the answer, not the status (refusal.go): a rule
		// refusal or an invalid write is final, only a lost race is a
		// conflict.
		switch ClassifyWriteRefusal(s, msg) {
		case RefusalRules:
			o.ruleRefusal = true
		case RefusalInvalid:
			o.invalidWrite = true
		default:
			o.conflict = true
		}
	}
	o.secondary = o.rateLimited && isSecondary(s, msg, o.retryAfterRaw != "", o.remainingZero)
	return o
}

// isSecondary recognizes a secondary rate limit by status, headers and
// message. GitHub: "If you exceed a secondary rate limit, you will receive
// a 403 or 429 response and an error message that indicates that you
// exceeded a secondary rate limit"
// (https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#exceeding-the-secondary-rate-limit).
// An exhausted primary limit (x-ratelimit-remaining: 0 without
// Retry-After) is not one; a 429, a Retry-After, or the message is.
func isSecondary(status int, msg string, retryAfter, remainingZero bool) bool {
	if status != http.StatusForbidden && status != http.StatusTooManyRequests {
		return false
	}
	lower := strings.ToLower(msg)
	if strings.Contains(lower, "secondary rate limit") || strings.Contains(lower, "abuse detection") {
		return true
	}
	if remainingZero && !retryAfter {
		return false
	}
	return retryAfter || status == http.StatusTooManyRequests
}

// isWhoaThere detects GitHub's HTML 400 interstitial.
func isWhoaThere(h http.Header, body string) bool {
	if !strings.Contains(strings.ToLower(h.Get("Content-Type")), "text/html") {
		return false
	}
	lower := strings.ToLower(body)
	for _, m := range whoaMarkers {
		if !strings.Contains(lower, m) {
			return false
		}
	}
	return true
}

// peekBody reads up to 64 KiB of r.Body and puts it back so the caller can
// still read it.
func peekBody(r *http.Response) string {
	if r.Body == nil || r.Body == http.NoBody {
		return ""
	}
	data, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	r.Body = io.NopCloser(bytes.NewReader(data))
	return string(data)
}

// isSynthetic recognises go-github's client-side rate-limit pre-check
// response, which never reached the network.
func isSynthetic(r *http.Response, msg string) bool {
	return len(r.Header) == 0 && strings.Contains(msg, "not making remote request")
}

// isTransportErr reports a network-level failure.
func isTransportErr(err error) bool {
	var ue *url.Error
	var ne net.Error
	return errors.As(err, &ue) || errors.As(err, &ne) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed)
}

// isDialErr reports a failure to connect, when nothing can have been sent.
func isDialErr(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// serverRelative maps an instant on GitHub's clock (x-ratelimit-reset, UTC
// epoch seconds) onto the local clock by measuring it from the response's
// Date header, which GitHub stamps on the same clock. Compared with a
// runner clock that is off, the absolute value would send before the reset
// (clock ahead: reliability goal R-F4) or wait needlessly (clock behind).
// Date has one-second resolution and is truncated, so the measured wait is
// never shorter than the true one and at most a second longer.
func serverRelative(t time.Time, h http.Header, now time.Time) time.Time {
	date, err := http.ParseTime(h.Get("Date"))
	if err != nil {
		return t
	}
	return now.Add(t.Sub(date))
}
