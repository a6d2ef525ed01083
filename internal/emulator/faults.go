package emulator

import (
	"fmt"
	"net/http"
	"path"
	"strings"
	"time"
)

// FaultKind selects what an injected fault does.
type FaultKind string

// Fault kinds. Unless noted, a fault replaces the response and the request
// is NOT applied.
const (
	// Latency delays the request by Fault.Latency (on the emulator clock,
	// honoring the request context) and then serves it normally.
	Latency FaultKind = "latency"
	// ServerError answers Fault.Status (default 500; 408 and any 5xx are
	// allowed) with a GitHub-shaped body.
	ServerError FaultKind = "server_error"
	// Unauthorized401 answers 401 "Bad credentials"; Count is the burst.
	Unauthorized401 FaultKind = "unauthorized_401"
	// SecondaryRateLimit403 answers 403 "You have exceeded a secondary rate
	// limit..." with Retry-After (Fault.RetryAfter verbatim; default "60";
	// "none" omits it).
	SecondaryRateLimit403 FaultKind = "secondary_rate_limit_403"
	// TooManyRequests429 answers 429 with the secondary-limit message and
	// Retry-After like SecondaryRateLimit403.
	TooManyRequests429 FaultKind = "too_many_requests_429"
	// PrimaryExhausted spends the credential's whole primary budget: this and
	// every later request of that credential get 403 "API rate limit
	// exceeded for installation ID …" with x-ratelimit-remaining: 0 until
	// x-ratelimit-reset.
	PrimaryExhausted FaultKind = "primary_exhausted"
	// Stall hangs until the request context ends; nothing is applied.
	Stall FaultKind = "stall"
	// WriteAcceptedResponseLost applies the request normally, then loses the
	// response: Transport() returns ErrResponseLost, the HTTP server closes
	// the connection without answering.
	WriteAcceptedResponseLost FaultKind = "write_accepted_response_lost"
	// StaleRead makes a contents GET serve the file as it was StaleVersions
	// (default 1) versions ago on that branch, with that version's sha and
	// ETag, like a lagging replica (notes B.5). Ignored on other routes.
	StaleRead FaultKind = "stale_read"
	// HTMLWhoa400 answers GitHub's text/html "Whoa there!" 400 page.
	HTMLWhoa400 FaultKind = "html_whoa_400"
	// TransportReset closes the connection without a response; nothing is
	// applied. Transport() returns ErrConnectionReset.
	TransportReset FaultKind = "transport_reset"
	// ContentCreationLimit403 answers 403 with GitHub's content-creation
	// secondary-limit message ("... temporarily blocked from content
	// creation ...") and Retry-After like SecondaryRateLimit403. With
	// Fault.ContentOnly and a Probability it answers a random fraction of
	// writes, as GitHub does at unpredictable moments ("may also encounter
	// a secondary rate limit for undisclosed reasons", notes B.8).
	ContentCreationLimit403 FaultKind = "content_creation_403"
	// RulesetViolation answers a write as GitHub does when a ruleset on the
	// branch refuses it: 409 "Repository rule violations found\n\nCannot
	// update this protected ref.\n\n" (Fault.Status 422 selects the Git
	// refs API's status). Nothing is applied.
	RulesetViolation FaultKind = "ruleset_violation"
)

// Fault-prefixed aliases of the kinds, for callers that prefer them.
const (
	FaultLatency                   = Latency
	FaultServerError               = ServerError
	FaultUnauthorized401           = Unauthorized401
	FaultSecondaryRateLimit403     = SecondaryRateLimit403
	FaultTooManyRequests429        = TooManyRequests429
	FaultPrimaryExhausted          = PrimaryExhausted
	FaultStall                     = Stall
	FaultWriteAcceptedResponseLost = WriteAcceptedResponseLost
	FaultStaleRead                 = StaleRead
	FaultHTMLWhoa400               = HTMLWhoa400
	FaultTransportReset            = TransportReset
	FaultContentCreationLimit403   = ContentCreationLimit403
	FaultRulesetViolation          = RulesetViolation
)

// Fault is one fault-injection rule. A request is matched against every
// active rule in the order they were added.
//
// Matching: Method "" matches any method (otherwise compared
// case-insensitively). PathPattern "" matches any path; a pattern containing
// any of "*?[" is a path.Match glob over the API path (without the
// "/api/v3" prefix and without the query; "*" does not cross "/"); any
// other pattern is a plain prefix, e.g. "/repos/o/r/contents/".
//
// Firing: the first Skip matching requests pass untouched. Then Probability
// 0 means always, otherwise the rule fires with that
// probability (drawn from the emulator's seeded source). Count 0 means
// unlimited, otherwise the rule fires at most Count times and then stays
// inert. A rule's Latency delays the request whatever its Kind. All matching
// Latency, StaleRead and WriteAcceptedResponseLost rules apply together; of
// the response-replacing kinds only the first matching rule fires.
type Fault struct {
	Method        string        `json:"method,omitempty"`
	PathPattern   string        `json:"path_pattern,omitempty"`
	Kind          FaultKind     `json:"kind"`
	Count         int           `json:"count,omitempty"`
	Probability   float64       `json:"probability,omitempty"`
	Status        int           `json:"status,omitempty"`
	RetryAfter    string        `json:"retry_after,omitempty"`
	Latency       time.Duration `json:"latency,omitempty"`
	StaleVersions int           `json:"stale_versions,omitempty"`
	// Skip lets this many matching requests pass untouched before the rule
	// starts to fire (then Count and Probability apply), so a test can
	// fault, say, the reads that follow a write.
	Skip int `json:"skip,omitempty"`
	// ContentOnly restricts the rule to content-generating requests (every
	// POST, PATCH, PUT and DELETE on a resource route except token
	// minting; see SecondaryLimits), whatever Method says.
	ContentOnly bool `json:"content_only,omitempty"`
}

type faultEntry struct {
	id      int
	f       Fault
	fired   int
	skipped int
}

// FaultStatus is one rule and how many times it fired.
type FaultStatus struct {
	ID    int   `json:"id"`
	Fault Fault `json:"fault"`
	Fired int   `json:"fired"`
}

// AddFault adds a fault rule and returns its id.
func (e *Emulator) AddFault(f Fault) (id int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faultID++
	e.faults = append(e.faults, &faultEntry{id: e.faultID, f: f})
	return e.faultID
}

// RemoveFault deletes one rule; it reports whether it existed.
func (e *Emulator) RemoveFault(id int) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, fe := range e.faults {
		if fe.id == id {
			e.faults = append(e.faults[:i], e.faults[i+1:]...)
			return true
		}
	}
	return false
}

// ClearFaults removes every fault rule.
func (e *Emulator) ClearFaults() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults = nil
}

// Faults lists the rules and their fire counts.
func (e *Emulator) Faults() []FaultStatus {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]FaultStatus, 0, len(e.faults))
	for _, fe := range e.faults {
		out = append(out, FaultStatus{ID: fe.id, Fault: fe.f, Fired: fe.fired})
	}
	return out
}

type faultPlan struct {
	latency  time.Duration
	terminal *Fault
	lost     bool
	stale    int
	kinds    []FaultKind
}

func (f *Fault) matches(method, p string) bool {
	if f.Method != "" && !strings.EqualFold(f.Method, method) {
		return false
	}
	if f.PathPattern == "" {
		return true
	}
	if strings.ContainsAny(f.PathPattern, "*?[") {
		ok, err := path.Match(f.PathPattern, p)
		return err == nil && ok
	}
	return strings.HasPrefix(p, f.PathPattern)
}

func isContentsGet(rt *route) bool {
	return rt != nil && rt.method == http.MethodGet && strings.HasPrefix(rt.pattern, "/repos/{owner}/{repo}/contents")
}

// planFaultsLocked consumes the matching rules for one request.
func (e *Emulator) planFaultsLocked(method, p string, rt *route) faultPlan {
	var plan faultPlan
	for _, fe := range e.faults {
		f := &fe.f
		if !f.matches(method, p) || (f.Count > 0 && fe.fired >= f.Count) || (f.ContentOnly && !isContentGenerating(method, rt)) {
			continue
		}
		if fe.skipped < f.Skip {
			fe.skipped++
			continue
		}
		terminal := f.Kind != Latency && f.Kind != StaleRead && f.Kind != WriteAcceptedResponseLost
		if terminal && plan.terminal != nil {
			continue
		}
		if f.Kind == StaleRead && (!isContentsGet(rt) || plan.stale > 0) {
			continue
		}
		if f.Probability > 0 && e.rng.Float64() >= f.Probability {
			continue
		}
		fe.fired++
		plan.kinds = append(plan.kinds, f.Kind)
		plan.latency += f.Latency
		switch {
		case f.Kind == StaleRead:
			plan.stale = max(f.StaleVersions, 1)
		case f.Kind == WriteAcceptedResponseLost:
			plan.lost = true
		case terminal:
			ff := *f
			plan.terminal = &ff
		}
	}
	return plan
}

// secondaryMessage is the text GitHub sends with a secondary rate limit
// (https://github.com/hisxo/gitGraber/issues/43; go-github recognizes the
// documentation_url suffix "secondary-rate-limits").
func secondaryMessage(reqID string) string {
	return "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID " + reqID + "."
}

// contentCreationMessage is GitHub's content-creation secondary-limit text
// (https://github.com/hisxo/gitGraber/issues/43).
func contentCreationMessage(reqID string) string {
	return "You have exceeded a secondary rate limit and have been temporarily blocked from content creation. Please retry your request again later. If you reach out to GitHub Support for help, please include the request ID " + reqID + "."
}

// whoaHTML is GitHub's HTML interstitial for a rejected request; the reference
// client detects it by "<title>Bad request", "Whoa there!", "invalid request"
// and "GitHub" (spec §3.6).
const whoaHTML = `<!DOCTYPE html>
<html>
  <head>
    <meta http-equiv="Content-type" content="text/html; charset=utf-8">
    <title>Bad request &middot; GitHub</title>
  </head>
  <body>
    <div class="container">
      <h1>Whoa there!</h1>
      <p>You have sent an invalid request. Please do not send this request again.</p>
      <div id="suggestions">
        <a href="https://support.github.com">Contact Support</a> &mdash;
        <a href="https://www.githubstatus.com">GitHub Status</a>
      </div>
    </div>
  </body>
</html>
`

func (e *Emulator) faultResponseLocked(c *reqCtx, f *Fault) *response {
	var resp *response
	retryAfter := func() {
		switch f.RetryAfter {
		case "none":
		case "":
			resp.header.Set("Retry-After", "60")
		default:
			resp.header.Set("Retry-After", f.RetryAfter)
		}
	}
	switch f.Kind {
	case ServerError:
		st := f.Status
		if st == 0 {
			st = http.StatusInternalServerError
		}
		msg := "Server Error"
		switch st {
		case http.StatusRequestTimeout:
			msg = "Request Timeout"
		case http.StatusGatewayTimeout:
			msg = "We couldn't respond to your request in time. Sorry about that. Please try resubmitting your request and contact us if the problem persists."
		case http.StatusBadGateway:
			msg = "Server Error: Sorry, this diff is taking too long to generate."
		case http.StatusServiceUnavailable:
			msg = "Service Unavailable"
		}
		resp = errorResponse(st, msg, docsBase)
	case Unauthorized401:
		resp = badCredentials()
	case SecondaryRateLimit403:
		// https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits
		resp = errorResponse(http.StatusForbidden, secondaryMessage(c.reqID), docsSecondaryLimit)
		retryAfter()
	case TooManyRequests429:
		resp = errorResponse(http.StatusTooManyRequests, secondaryMessage(c.reqID), docsSecondaryLimit)
		retryAfter()
	case ContentCreationLimit403:
		resp = errorResponse(http.StatusForbidden, contentCreationMessage(c.reqID), docsSecondaryLimit)
		retryAfter()
	case PrimaryExhausted:
		if c.cred == nil {
			resp = errorResponse(http.StatusForbidden, "API rate limit exceeded for 127.0.0.1.", docsRateLimits)
			break
		}
		b := e.bucketLocked(c.cred)
		b.used = max(b.used, b.limit)
		resp = e.primaryLimitResponse(c, c.cred)
	case RulesetViolation:
		resp = rulesetViolationFault(f)
	case HTMLWhoa400:
		h := http.Header{}
		h.Set("Content-Type", "text/html; charset=utf-8")
		resp = &response{status: http.StatusBadRequest, header: h, body: []byte(whoaHTML)}
	default:
		resp = errorResponse(http.StatusInternalServerError, fmt.Sprintf("emulator: unknown fault kind %q", f.Kind), docsBase)
	}
	resp.noCharge = true
	return resp
}
