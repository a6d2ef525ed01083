package emulator

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// bucket is one primary rate-limit window. GitHub's window starts with the
// first charged request and resets an hour later:
// https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api
type bucket struct {
	limit    int
	used     int
	reset    time.Time
	resource string
}

func (b *bucket) remaining() int {
	if r := b.limit - b.used; r > 0 {
		return r
	}
	return 0
}

func (e *Emulator) bucketLocked(cr *credential) *bucket {
	now := e.now()
	b, ok := e.buckets[cr.bucket]
	if !ok {
		b = &bucket{limit: cr.limit, resource: "core"}
		e.buckets[cr.bucket] = b
	}
	if b.reset.IsZero() || !now.Before(b.reset) {
		b.used = 0
		b.reset = now.Add(time.Hour).Truncate(time.Second)
	}
	return b
}

func setRateHeaders(h http.Header, b *bucket) {
	h.Set("X-RateLimit-Limit", strconv.Itoa(b.limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(b.remaining()))
	h.Set("X-RateLimit-Used", strconv.Itoa(b.used))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(b.reset.Unix(), 10))
	h.Set("X-RateLimit-Resource", b.resource)
}

// primaryLimitResponse is GitHub's answer once the hourly budget is spent:
// 403 with x-ratelimit-remaining: 0 and the reset epoch.
func (e *Emulator) primaryLimitResponse(c *reqCtx, cr *credential) *response {
	who := cr.label
	if cr.kind == credInstallation {
		who = fmt.Sprintf("installation ID %d", cr.inst.ID)
	}
	msg := fmt.Sprintf("API rate limit exceeded for %s. If you reach out to GitHub Support for help, please include the request ID %s and timestamp %s.",
		who, c.reqID, e.now().Format("2006-01-02 15:04:05 MST"))
	resp := errorResponse(http.StatusForbidden, msg, "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api")
	resp.noCharge = true
	return resp
}

// RateLimit reports the current primary window of a credential label such as
// "installation:12", "token:ci" or "app:7".
func (e *Emulator) RateLimit(label string) (limit, remaining int, reset time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	b, ok := e.buckets[label]
	if !ok {
		return 0, 0, time.Time{}
	}
	if !e.now().Before(b.reset) {
		return b.limit, b.limit, time.Time{}
	}
	return b.limit, b.remaining(), b.reset
}

// SetRateLimit changes the hourly limit of a credential label (the current
// window keeps its usage).
func (e *Emulator) SetRateLimit(label string, limit int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	b, ok := e.buckets[label]
	if !ok {
		b = &bucket{resource: "core"}
		e.buckets[label] = b
	}
	b.limit = limit
}

// GET /rate_limit — not charged against the primary limit:
// https://docs.github.com/en/rest/rate-limit/rate-limit#get-rate-limit-status-for-the-authenticated-user
func hRateLimit(c *reqCtx) *response {
	if c.cred == nil {
		return c.errorf(http.StatusUnauthorized, "Requires authentication")
	}
	b := c.e.bucketLocked(c.cred)
	core := map[string]any{"limit": b.limit, "remaining": b.remaining(), "used": b.used, "reset": b.reset.Unix(), "resource": "core"}
	// The search bucket is required by GitHub's description; the emulator
	// serves no search, so it is GitHub's default, untouched.
	search := map[string]any{"limit": 30, "remaining": 30, "used": 0, "reset": c.e.now().Add(time.Minute).Unix(), "resource": "search"}
	return c.json(http.StatusOK, map[string]any{"resources": map[string]any{"core": core, "search": search}, "rate": core})
}
