package ghclient

import (
	"net/http"
	"strconv"
	"sync"
	"time"
)

// UsageSample is the primary rate-limit count one response reported: GitHub
// sends x-ratelimit-used, the requests its credential's bucket has been
// charged in the current window, on every REST answer, and the window's end
// as x-ratelimit-reset. Installation tokens share their installation's
// bucket and the App JWT has one of its own ("Rate limits for GitHub Apps":
// https://docs.github.com/en/apps/creating-github-apps/registering-a-github-app/rate-limits-for-github-apps),
// so the counts also move with every other job of the same App: that is
// what the acquire's burst detection reads (internal/actions/acquire/herd.go).
type UsageSample struct {
	// At is when the answer arrived (the client's clock).
	At time.Time
	// App marks an answer to an App JWT request (installation lookup,
	// token mint); otherwise it answered an installation token or plain
	// token request.
	App bool
	// Used is x-ratelimit-used; Reset is x-ratelimit-reset (epoch seconds),
	// which names the window Used counts in.
	Used  int64
	Reset int64
	// Charged: this answer itself was counted in Used (GitHub does not
	// charge a 304 or a 401).
	Charged bool
}

// maxUsageSamples bounds the samples a client keeps: only a job's first
// answers are read, so the first ones are kept and later ones dropped.
const maxUsageSamples = 64

// usageLog is the bounded, concurrency-safe list of UsageSamples.
type usageLog struct {
	mu      sync.Mutex
	samples []UsageSample
}

// note records the usage headers of resp, if it carries both.
func (l *usageLog) note(at time.Time, app bool, resp *http.Response) {
	used, err1 := strconv.ParseInt(resp.Header.Get("X-RateLimit-Used"), 10, 64)
	reset, err2 := strconv.ParseInt(resp.Header.Get(headerRateReset), 10, 64)
	if err1 != nil || err2 != nil || used < 0 || reset <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.samples) >= maxUsageSamples {
		return
	}
	l.samples = append(l.samples, UsageSample{
		At: at, App: app, Used: used, Reset: reset,
		Charged: resp.StatusCode != http.StatusNotModified && resp.StatusCode != http.StatusUnauthorized,
	})
}

// Usage returns the rate-limit counts the client's first answers reported,
// in arrival order (at most 64).
func (c *Client) Usage() []UsageSample {
	c.usage.mu.Lock()
	defer c.usage.mu.Unlock()
	return append([]UsageSample(nil), c.usage.samples...)
}
