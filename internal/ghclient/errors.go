package ghclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// CodeRetryExhausted is the stable error code carried by an [*Error] whose
// retry budget ran out (attempt ceiling reached, or the absolute deadline
// elapsed, or the caller's context deadline expired). It mirrors the
// reference implementation's GITHUB_API_RETRY_EXHAUSTED (spec §3.6).
const CodeRetryExhausted = "GITHUB_API_RETRY_EXHAUSTED"

// Class is the single classification every caller switches on. It is
// decided once, in this package (style guide §7 rule 10).
type Class int

const (
	// ClassFatal is a failure that retrying cannot fix: a JSON 400, a plain
	// 403, a 404, a 409/422 on a read, a cancelled context, or a
	// non-retryable credential failure.
	ClassFatal Class = iota
	// ClassRetryable is a transient failure whose retry budget ran out
	// (Code is [CodeRetryExhausted]). The operation might succeed later.
	ClassRetryable
	// ClassConflict is a 409 or 422 on a mutation whose answer says the
	// compare-and-swap precondition failed and the write was not applied
	// (spec §3.3). A rule refusal or an invalid write is ClassFatal with
	// Code [CodeBranchRules] or [CodeInvalidWrite] instead (refusal.go).
	ClassConflict
	// ClassAmbiguous is a 409 or 422 on a mutation after an earlier attempt
	// of the same logical call had an unknown outcome (408, 5xx, or a
	// transport error after the request left the client). The write may
	// have been applied by that earlier attempt (spec §3.3, Appendix B.5).
	ClassAmbiguous
)

// String returns a short lowercase name for c.
func (c Class) String() string {
	switch c {
	case ClassFatal:
		return "fatal"
	case ClassRetryable:
		return "retryable"
	case ClassConflict:
		return "conflict"
	case ClassAmbiguous:
		return "ambiguous"
	default:
		return fmt.Sprintf("class(%d)", int(c))
	}
}

// Error is the only error type [Client.Do] returns. Its text never contains
// tokens, JWTs, Authorization values or private keys: every free-text part is
// scrubbed when the error is built and again when it is rendered.
type Error struct {
	// Class is the classification callers switch on.
	Class Class
	// Code is [CodeRetryExhausted] when the retry budget ran out,
	// [CodeBranchRules] for a write a branch rule refused, [CodeInvalidWrite]
	// for a write GitHub found invalid, else "".
	Code string
	// Op names the logical operation, e.g. "PUT contents locks/x.json".
	Op string
	// Status is the last HTTP status seen, 0 for a transport or credential
	// failure without a resource response.
	Status int
	// RequestID is the last x-github-request-id seen, if any.
	RequestID string
	// Message is GitHub's error message (or a scrubbed excerpt of a non-JSON
	// body) for the last HTTP failure.
	Message string
	// RetryAfter is the raw Retry-After header of the last failure, if any.
	RetryAfter string
	// Attempts is the number of attempts made (a 401 replay is not counted).
	Attempts int
	// Wait is the last server-directed wait (Retry-After or primary rate
	// limit reset), before any capping; 0 when the server directed none.
	Wait time.Duration
	// CredentialFailure reports that the last failure was obtaining
	// credentials (installation lookup or token minting), not the resource
	// call itself. Such a failure never makes a later conflict ambiguous.
	CredentialFailure bool
	// DeadlineElapsed reports that the budget's absolute deadline ended the
	// retries (or aborted the in-flight request).
	DeadlineElapsed bool
	// Deadline is the budget's absolute deadline, zero when attempt-bounded.
	Deadline time.Time
	// PrimaryReset is set when the call failed fast on an exhausted primary
	// rate limit (or was held back by one an earlier answer on this client
	// reported): the x-ratelimit-reset before which nothing is sent.
	PrimaryReset time.Time
	// SecondaryLimit reports that the last failure was a secondary rate
	// limit (403/429 "You have exceeded a secondary rate limit", or a wait
	// one imposed on this client): nothing was sent inside the wait, and
	// SecondaryUntil is when sending may resume.
	SecondaryLimit bool
	// SecondaryUntil is the end of the client's secondary-limit wait.
	SecondaryUntil time.Time
	// MaybeApplied reports that this is a mutation and at least one attempt
	// had an unknown outcome, so GitHub may have applied the write even
	// though the call failed. It is always true for ClassAmbiguous and may
	// also be true for an exhausted mutation.
	MaybeApplied bool
	// Err is the underlying (scrubbed) cause. errors.Is(err,
	// context.Canceled) and similar checks work through it.
	Err error
}

// Error renders the failure in the reference wording (spec §3.1, §3.6):
// "<op> failed with HTTP <status>: <message>; request-id=<id>" or, when the
// budget ran out, "<op> exhausted its bounded GitHub API retry budget after N
// attempt(s)…; last failure: …".
func (e *Error) Error() string {
	if e == nil {
		return "<nil>"
	}
	op := e.Op
	if op == "" {
		op = "GitHub API request"
	}
	var b strings.Builder
	if e.Code == CodeRetryExhausted {
		fmt.Fprintf(&b, "%s exhausted its bounded GitHub API retry budget after %d attempt(s)", op, e.Attempts)
		if e.DeadlineElapsed {
			if e.Deadline.IsZero() {
				b.WriteString(" because the bounded deadline elapsed")
			} else {
				fmt.Fprintf(&b, " because the bounded deadline elapsed (%s)", e.Deadline.UTC().Format(time.RFC3339))
			}
		}
		b.WriteString("; last failure: ")
		b.WriteString(e.detail())
	} else {
		b.WriteString(op)
		if e.Status == 0 && !e.CredentialFailure && e.Err != nil && isContextErr(e.Err) {
			b.WriteString(" was abandoned: ")
		} else {
			b.WriteString(" failed")
			if e.Status != 0 && !e.CredentialFailure {
				b.WriteString(" with ")
			} else {
				b.WriteString(": ")
			}
		}
		b.WriteString(e.detail())
	}
	if !e.PrimaryReset.IsZero() && !e.CredentialFailure { // a credential failure's cause already says it
		fmt.Fprintf(&b, "; the primary rate limit is exhausted until %s (in %s): no request is sent before it resets",
			e.PrimaryReset.UTC().Format(time.RFC3339), e.Wait.Round(time.Second))
	}
	if e.Class == ClassAmbiguous {
		b.WriteString("; an earlier attempt had an unknown outcome, so the write may have been applied")
	}
	return redactText(b.String())
}

// detail renders the last failure without the operation name.
func (e *Error) detail() string {
	var b strings.Builder
	switch {
	case e.Attempts == 0 && !e.PrimaryReset.IsZero():
		b.WriteString("not sent: an earlier answer on this client exhausted the primary rate limit")
	case e.CredentialFailure:
		b.WriteString("credential unavailable: ")
		if e.Err != nil {
			b.WriteString(e.Err.Error())
		} else {
			b.WriteString("unknown credential failure")
		}
	case e.Status != 0:
		fmt.Fprintf(&b, "HTTP %d", e.Status)
		msg := e.Message
		if msg == "" {
			msg = http.StatusText(e.Status)
		}
		if msg != "" {
			b.WriteString(": ")
			b.WriteString(msg)
		}
		if e.RequestID != "" {
			b.WriteString("; request-id=")
			b.WriteString(e.RequestID)
		}
		if e.RetryAfter != "" {
			b.WriteString("; retry-after=")
			b.WriteString(e.RetryAfter)
		}
	case e.Err != nil && isContextErr(e.Err):
		b.WriteString(e.Err.Error())
	case e.Err != nil:
		b.WriteString("transport error: ")
		b.WriteString(e.Err.Error())
	default:
		b.WriteString("unknown failure")
	}
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// asError extracts an *Error from err.
func asError(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) && e != nil {
		return e, true
	}
	return nil, false
}

// IsSecondaryLimit reports a call that ended on a secondary rate limit: the
// caller may try again after SecondaryUntil (the client holds every request
// back until then anyway).
func IsSecondaryLimit(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.SecondaryLimit
}

// IsConflict reports whether err is a compare-and-swap conflict (409 or 422
// on a mutation), ambiguous or not. Use [IsAmbiguous] to learn whether the
// write may nevertheless have been applied.
func IsConflict(err error) bool {
	e, ok := asError(err)
	return ok && (e.Class == ClassConflict || e.Class == ClassAmbiguous)
}

// IsAmbiguous reports whether err is a conflict that followed an attempt with
// an unknown outcome in the same logical call, so the write may have landed.
func IsAmbiguous(err error) bool {
	e, ok := asError(err)
	return ok && e.Class == ClassAmbiguous
}

// IsNotFound reports whether err is an HTTP 404 from the resource call.
func IsNotFound(err error) bool {
	e, ok := asError(err)
	return ok && !e.CredentialFailure && e.Status == http.StatusNotFound
}

// IsExhausted reports whether err ended because its retry budget ran out
// (Code [CodeRetryExhausted]).
func IsExhausted(err error) bool {
	e, ok := asError(err)
	return ok && e.Code == CodeRetryExhausted
}

// IsCredentialFailure reports whether err's last failure was obtaining
// credentials rather than the resource call.
func IsCredentialFailure(err error) bool {
	e, ok := asError(err)
	return ok && e.CredentialFailure
}

// StatusOf returns the last HTTP status carried by err, or 0.
func StatusOf(err error) int {
	if e, ok := asError(err); ok {
		return e.Status
	}
	return 0
}

// scrubbedError carries a cause whose text has been scrubbed of secrets while
// keeping the original chain reachable for errors.Is / errors.As.
type scrubbedError struct {
	msg string
	err error
}

func (s *scrubbedError) Error() string { return s.msg }
func (s *scrubbedError) Unwrap() error { return s.err }

// scrub returns err with its text redacted of the given known secrets and of
// anything that looks like a credential. The original chain is deliberately
// cut (go-github's error text embeds GitHub's raw message, which could echo
// a credential): only a context sentinel stays reachable, so errors.Is(err,
// context.Canceled) keeps working. An *Error is already scrubbed and is
// returned unchanged.
func scrub(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	if e, ok := err.(*Error); ok {
		return e
	}
	if _, ok := err.(*scrubbedError); ok {
		return err
	}
	var keep error
	switch {
	case errors.Is(err, context.Canceled):
		keep = context.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		keep = context.DeadlineExceeded
	}
	return &scrubbedError{msg: redactText(redactKnown(err.Error(), secrets...)), err: keep}
}

// redactKnown replaces every exact occurrence of a known secret.
func redactKnown(s string, secrets ...string) string {
	for _, sec := range secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "[REDACTED]")
		}
	}
	return s
}

// secretPatterns match things that look like credentials: GitHub token
// prefixes, JWTs, Authorization values, PEM private keys and URL userinfo.
var secretPatterns = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`-----BEGIN[A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END[A-Z ]*PRIVATE KEY-----|$)`), "[REDACTED]"},
	{regexp.MustCompile(`(?i)\bauthorization:\s*[^\s;,]+(\s+[^\s;,]+)?`), "[REDACTED]"},
	{regexp.MustCompile(`(?i)\b(bearer|basic)\s+[^\s;,]+`), "[REDACTED]"},
	{regexp.MustCompile(`\b(gh[pousr]_|github_pat_)[A-Za-z0-9_.-]+`), "[REDACTED]"},
	{regexp.MustCompile(`\beyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*(\.[A-Za-z0-9_-]*)?`), "[REDACTED]"},
	{regexp.MustCompile(`(?i)\b(access_token|client_secret|token|jwt)=[^&\s;"]+`), "${1}=[REDACTED]"},
	{regexp.MustCompile(`://[^/@\s]+@`), "://[REDACTED]@"},
}

// redactText removes anything credential-shaped from s.
func redactText(s string) string {
	for _, p := range secretPatterns {
		s = p.re.ReplaceAllString(s, p.repl)
	}
	return s
}

// sanitizeMessage scrubs a server-provided message, collapses whitespace and
// bounds its length so an HTML interstitial cannot flood the log.
func sanitizeMessage(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	const limit = 300
	if len(s) > limit {
		cut := limit
		for cut > 0 && !utf8RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return redactText(s)
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
