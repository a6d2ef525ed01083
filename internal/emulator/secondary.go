package emulator

import (
	"crypto/sha256"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// GitHub's documented secondary rate limits
// (https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits,
// notes B.8):
//
//   - "No more than 100 concurrent requests are allowed. This limit is shared
//     across the REST API and GraphQL API."
//   - "No more than 900 points per minute are allowed for REST API endpoints";
//     "most REST API GET, HEAD, and OPTIONS requests" cost 1 point, "most
//     REST API POST, PATCH, PUT, or DELETE requests" cost 5.
//   - "In general, no more than 80 content-generating requests per minute
//     and no more than 500 content-generating requests per hour are allowed."
//
// And how GitHub answers: "you will receive a 403 or 429 response and an
// error message that indicates that you exceeded a secondary rate limit. If
// the retry-after response header is present, you should not retry your
// request until after that many seconds has elapsed." The content-creation
// message is the one users quote ("You have exceeded a secondary rate limit
// and have been temporarily blocked from content creation", hisxo/gitGraber
// #43, notes B.8).
const (
	GitHubConcurrentRequests = 100
	GitHubPointsPerMinute    = 900
	GitHubContentPerMinute   = 80
	GitHubContentPerHour     = 500
	// ReadPoints and WritePoints are the documented point costs.
	ReadPoints  = 1
	WritePoints = 5
)

// Secondary-limit names, as recorded in RequestRecord.Secondary.
const (
	SecondaryConcurrency   = "concurrency"
	SecondaryPoints        = "points-per-minute"
	SecondaryContentMinute = "content-per-minute"
	SecondaryContentHour   = "content-per-hour"
)

// SecondaryLimits configures the emulator's secondary rate limits. The zero
// value is off (the default of New, so unit tests that do not care are not
// throttled); GitHubSecondaryLimits is GitHub's documented set, which the
// benchmark, the simulation and the demo turn on. With Enabled set, a zero
// field takes GitHub's value and a negative one disables that limit.
//
// What is assumed where GitHub documents nothing (docs/emulator.md
// "Secondary rate limits"):
//
//   - Limits are kept per token identity, the same identity as the primary
//     limit: each App installation (all of its tokens together), each App
//     JWT (per App), each plain token. GitHub says the limits apply to "your
//     requests" without naming the unit.
//   - An endpoint is the route template ("/repos/{owner}/{repo}/contents/{path}"),
//     whatever the method and the concrete path, so reads and writes of one
//     state file share the 900 points; a 304 still costs its point (GitHub
//     only documents that a 304 is free for the primary limit).
//   - A content-generating request is every POST, PATCH, PUT or DELETE on a
//     resource route that reached GitHub, whatever its answer: 409 and 422
//     compare-and-swap conflicts count, as GitHub's content-creation limit
//     is reported to count attempts (octokit/plugin-throttling.js #667).
//     Minting an installation token is authentication, not content.
//   - A request refused by a secondary limit consumes nothing and is not
//     charged against the primary limit; its x-ratelimit-* headers are the
//     primary window's, unchanged.
//   - The concurrency limit answers 429 without retry-after (the client then
//     waits at least a minute, as GitHub's guidance says); the points and
//     content limits answer 403 with retry-after set to the seconds until
//     the sliding window has room again.
type SecondaryLimits struct {
	Enabled bool `json:"enabled"`
	// Concurrent caps requests in flight per identity (from arrival,
	// latency included, to the response).
	Concurrent int `json:"concurrent,omitempty"`
	// PointsPerMinute caps points per identity and endpoint in any sliding
	// 60 seconds.
	PointsPerMinute int `json:"points_per_minute,omitempty"`
	// ContentPerMinute and ContentPerHour cap content-generating requests
	// per identity in any sliding minute and hour.
	ContentPerMinute int `json:"content_per_minute,omitempty"`
	ContentPerHour   int `json:"content_per_hour,omitempty"`
}

// GitHubSecondaryLimits returns GitHub's documented secondary limits, on.
func GitHubSecondaryLimits() SecondaryLimits {
	return SecondaryLimits{Enabled: true, Concurrent: GitHubConcurrentRequests, PointsPerMinute: GitHubPointsPerMinute,
		ContentPerMinute: GitHubContentPerMinute, ContentPerHour: GitHubContentPerHour}
}

func (l SecondaryLimits) resolved() SecondaryLimits {
	def := func(v, d int) int {
		if v == 0 {
			return d
		}
		return v
	}
	l.Concurrent = def(l.Concurrent, GitHubConcurrentRequests)
	l.PointsPerMinute = def(l.PointsPerMinute, GitHubPointsPerMinute)
	l.ContentPerMinute = def(l.ContentPerMinute, GitHubContentPerMinute)
	l.ContentPerHour = def(l.ContentPerHour, GitHubContentPerHour)
	return l
}

// SetSecondaryLimits replaces the secondary limits (usage so far is kept).
func (e *Emulator) SetSecondaryLimits(l SecondaryLimits) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sec.limits = l.resolved()
}

// SecondaryLimitsInForce reports the secondary limits in force.
func (e *Emulator) SecondaryLimitsInForce() SecondaryLimits {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sec.limits
}

// stamp is one counted request in a sliding window.
type stamp struct {
	t      time.Time
	weight int
}

// window is a sliding window of stamps, oldest first.
type window struct {
	stamps []stamp
	sum    int
}

func (w *window) trim(now time.Time, span time.Duration) {
	i := 0
	for i < len(w.stamps) && now.Sub(w.stamps[i].t) >= span {
		w.sum -= w.stamps[i].weight
		i++
	}
	if i > 0 {
		w.stamps = append(w.stamps[:0], w.stamps[i:]...)
	}
}

// room reports whether weight more fits under limit and, if not, when it
// will: the time at which enough of the oldest stamps have left the window.
func (w *window) room(now time.Time, span time.Duration, limit, weight int) (bool, time.Duration) {
	w.trim(now, span)
	if w.sum+weight <= limit {
		return true, 0
	}
	need := w.sum + weight - limit
	for _, s := range w.stamps {
		need -= s.weight
		if need <= 0 {
			return false, s.t.Add(span).Sub(now)
		}
	}
	return false, span
}

func (w *window) add(now time.Time, weight int) {
	w.stamps = append(w.stamps, stamp{t: now, weight: weight})
	w.sum += weight
}

// secondaryState is the emulator's secondary-limit accounting (guarded by
// Emulator.mu).
type secondaryState struct {
	limits SecondaryLimits
	// inflight counts requests in flight per Authorization key (a hash of
	// the header); keyID binds a key to its identity once a request of it
	// was authenticated; byID is the in-flight count per identity.
	inflight map[string]int
	keyID    map[string]string
	byID     map[string]int
	points   map[string]*window // identity + "\x00" + route template
	content  map[string]*[2]window
}

func (s *secondaryState) init() {
	if s.inflight == nil {
		s.inflight, s.keyID, s.byID = map[string]int{}, map[string]string{}, map[string]int{}
		s.points, s.content = map[string]*window{}, map[string]*[2]window{}
	}
}

// authKey identifies the credential of r for the concurrency count before
// it is authenticated. The header is hashed: the emulator keeps no second
// copy of a secret.
func authKey(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if h == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(h))
	return string(sum[:16])
}

// arriveLocked counts a request in flight from its arrival.
func (s *secondaryState) arriveLocked(key string) {
	if key == "" {
		return
	}
	s.init()
	s.inflight[key]++
	if id, ok := s.keyID[key]; ok {
		s.byID[id]++
	}
}

// leaveLocked ends a request's flight.
func (s *secondaryState) leaveLocked(key string) {
	if key == "" || s.inflight == nil {
		return
	}
	s.inflight[key]--
	id, bound := s.keyID[key]
	if bound {
		s.byID[id]--
	}
	if s.inflight[key] <= 0 {
		delete(s.inflight, key)
		delete(s.keyID, key)
		if bound && s.byID[id] <= 0 {
			delete(s.byID, id)
		}
	}
}

// bindLocked binds key to identity id; its requests in flight now count.
func (s *secondaryState) bindLocked(key, id string) {
	if key == "" {
		return
	}
	s.init()
	if _, ok := s.keyID[key]; ok {
		return
	}
	s.keyID[key] = id
	s.byID[id] += s.inflight[key]
}

// isContentGenerating reports a request that counts toward GitHub's
// content-creation limit (see SecondaryLimits).
func isContentGenerating(method string, rt *route) bool {
	switch method {
	case http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete:
	default:
		return false
	}
	return rt != nil && rt.auth != authJWT && !strings.HasPrefix(rt.display, "/app/")
}

// secondaryLocked applies the secondary limits to an authenticated request
// on route rt. It returns the refusal, or nil after counting the request.
func (e *Emulator) secondaryLocked(c *reqCtx, rt *route, cred *credential, key string, rec *RequestRecord) *response {
	l := e.sec.limits
	if !l.Enabled || cred == nil || rt == nil {
		return nil
	}
	e.sec.init()
	id := cred.bucket
	e.sec.bindLocked(key, id)
	now := e.now()
	if l.Concurrent > 0 && e.sec.byID[id] > l.Concurrent {
		rec.Secondary = SecondaryConcurrency
		return secondaryResponse(c, http.StatusTooManyRequests, false, 0, secondaryMessage(c.reqID))
	}
	cost := ReadPoints
	content := isContentGenerating(c.r.Method, rt)
	if c.r.Method != http.MethodGet && c.r.Method != http.MethodHead && c.r.Method != http.MethodOptions {
		cost = WritePoints
	}
	pk := id + "\x00" + rt.display
	pw := e.sec.points[pk]
	if pw == nil {
		pw = &window{}
		e.sec.points[pk] = pw
	}
	if l.PointsPerMinute > 0 {
		if ok, wait := pw.room(now, time.Minute, l.PointsPerMinute, cost); !ok {
			rec.Secondary = SecondaryPoints
			return secondaryResponse(c, http.StatusForbidden, true, wait,
				secondaryMessage(c.reqID))
		}
	}
	var cw *[2]window
	if content {
		cw = e.sec.content[id]
		if cw == nil {
			cw = &[2]window{}
			e.sec.content[id] = cw
		}
		if l.ContentPerMinute > 0 {
			if ok, wait := cw[0].room(now, time.Minute, l.ContentPerMinute, 1); !ok {
				rec.Secondary = SecondaryContentMinute
				return secondaryResponse(c, http.StatusForbidden, true, wait, contentCreationMessage(c.reqID))
			}
		}
		if l.ContentPerHour > 0 {
			if ok, wait := cw[1].room(now, time.Hour, l.ContentPerHour, 1); !ok {
				rec.Secondary = SecondaryContentHour
				return secondaryResponse(c, http.StatusForbidden, true, wait, contentCreationMessage(c.reqID))
			}
		}
	}
	pw.add(now, cost)
	if cw != nil {
		cw[0].add(now, 1)
		cw[1].add(now, 1)
	}
	return nil
}

// secondaryResponse is GitHub's secondary-limit answer: the documented
// message with the request ID, documentation_url ending in
// "secondary-rate-limits" (go-github turns it into AbuseRateLimitError), and
// retry-after in whole seconds (rounded up) when withRetry is set. It is
// never charged against the primary limit.
func secondaryResponse(c *reqCtx, status int, withRetry bool, wait time.Duration, msg string) *response {
	resp := errorResponse(status, msg, docsSecondaryLimit)
	if withRetry {
		secs := int64(math.Ceil(wait.Seconds()))
		if secs < 1 {
			secs = 1
		}
		resp.header.Set("Retry-After", strconv.FormatInt(secs, 10))
	}
	resp.noCharge = true
	return resp
}

// adminSecondaryLimits serves GET and POST /_emulator/secondary-limits: the
// limits in force, or new ones ({"enabled":true} is GitHub's set; a zero
// field takes GitHub's value, a negative one disables that limit).
func (e *Emulator) adminSecondaryLimits(method string, dec func(any) error) *response {
	if method == http.MethodPost {
		var l SecondaryLimits
		if err := dec(&l); err != nil {
			return adminErr(http.StatusBadRequest, "%v", err)
		}
		e.SetSecondaryLimits(l)
	}
	return adminJSON(http.StatusOK, e.SecondaryLimitsInForce())
}
