package prhead

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
)

// The guard's own budget (spec §1.6, Appendix A).
const (
	// Attempts bounds the requests of one check.
	Attempts = 3
	// Budget bounds one check in total, waits included.
	Budget = 30 * time.Second
	// MaxSleep caps one server-directed wait.
	MaxSleep = 10 * time.Second
	// BaseBackoff is the first self-generated backoff (250·2^(n−1) ms).
	BaseBackoff = 250 * time.Millisecond
	// UserAgent identifies the guard's requests.
	UserAgent = "ambiguous-organization-build-lock-current-pr-head"
)

// Request names the pull request to check.
type Request struct {
	// APIURL is GITHUB_API_URL (trailing slashes are stripped).
	APIURL string
	// Repository is GITHUB_REPOSITORY (owner/name).
	Repository string
	// Number is the pull request number as given (canonical decimal).
	Number string
	// ExpectedSHA is the head SHA the run was started for.
	ExpectedSHA string
	// Token is the consumer's github-token.
	Token string
}

// Result is the outcome of a successful check.
type Result struct {
	// Current is true when the open pull request still points at ExpectedSHA.
	Current bool
	// HeadSHA is the pull request's current head SHA.
	HeadSHA string
}

// Checker performs checks through go-github.
type Checker struct {
	// Transport is the HTTP transport below internal/ghclient's stack;
	// default http.DefaultTransport.
	Transport http.RoundTripper
	// Clock drives backoff sleeps; default clock.Real{}.
	Clock clock.Clock
	// Gate, when set, shares server-directed waits with another client of
	// the same token (acquire's job-id lookup): no attempt is sent before
	// Gate.HeldUntil(), and a wait this guard is told is passed on with
	// Gate.HoldUntil (reliability goal R-F4).
	Gate Gate
}

// Gate is the part of *ghclient.Client the guard shares waits through.
type Gate interface {
	HeldUntil() time.Time
	HoldUntil(time.Time)
}

// ErrCheckFailed wraps every failure to establish the pull request head.
var ErrCheckFailed = errors.New("prhead: pull request head check failed")

var headSHARE = regexp.MustCompile(`^[0-9a-fA-F]{40}$`)

// Check fetches the pull request and compares its head with ExpectedSHA
// (case-insensitively). A stale head is a Result with Current=false, not an
// error; a closed pull request, a malformed answer, a non-retryable status or
// an exhausted budget is an error wrapping ErrCheckFailed. A cancelled ctx
// returns ctx's error.
func (c Checker) Check(ctx context.Context, req Request) (Result, error) {
	clk := c.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	gh, owner, repo, number, err := c.client(ctx, clk, req)
	if err != nil {
		return Result{}, fmt.Errorf("%w for pull request #%s: %v", ErrCheckFailed, req.Number, err)
	}
	bctx, cancel := context.WithTimeout(ctx, Budget)
	defer cancel()
	start := clk.Now()
	for attempt := 1; ; attempt++ {
		if err := c.awaitGate(ctx, bctx, clk, start, req); err != nil {
			return Result{}, err
		}
		res, retry, wait, err := once(bctx, clk, gh, owner, repo, number, req)
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		if wait > 0 && c.Gate != nil {
			// What this guard honors (its documented 10 s cap), not more.
			c.Gate.HoldUntil(clk.Now().Add(min(wait, MaxSleep)))
		}
		if err == nil {
			return res, nil
		}
		if !retry || attempt >= Attempts {
			return Result{}, fmt.Errorf("%w for pull request #%s after %d attempt(s): %v", ErrCheckFailed, req.Number, attempt, err)
		}
		remaining := Budget - clk.Now().Sub(start)
		delay := BaseBackoff << (attempt - 1)
		if wait >= 0 {
			if wait >= remaining {
				return Result{}, fmt.Errorf("%w for pull request #%s: rate limited for longer than this guard's remaining retry budget (%v)", ErrCheckFailed, req.Number, err)
			}
			delay = min(wait, MaxSleep)
		}
		if err := clk.Sleep(bctx, delay); err != nil {
			if ctx.Err() != nil {
				return Result{}, ctx.Err()
			}
			return Result{}, fmt.Errorf("%w for pull request #%s: the %s budget elapsed (%v)", ErrCheckFailed, req.Number, Budget, err)
		}
	}
}

// client builds the go-github client of one check: internal/ghclient's
// transport stack with the consumer's token and the guard's User-Agent, no
// conditional-GET cache (every check must see the current head), used
// outside ghclient's retry contract (the loop above is the guard's budget).
func (c Checker) client(ctx context.Context, clk clock.Clock, req Request) (*github.Client, string, string, int, error) {
	owner, repo, ok := strings.Cut(req.Repository, "/")
	if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") {
		return nil, "", "", 0, errors.New("the repository is not owner/name")
	}
	number, err := strconv.Atoi(req.Number)
	if err != nil || number <= 0 || !numberRE.MatchString(req.Number) {
		return nil, "", "", 0, errors.New("the pull request number is not a positive decimal")
	}
	gc, err := ghclient.New(ctx, ghclient.Config{
		APIURL:           strings.TrimRight(req.APIURL, "/"),
		Token:            req.Token,
		Transport:        c.Transport,
		UserAgent:        UserAgent,
		Clock:            clk,
		ETagCacheEntries: -1,
	})
	if err != nil {
		return nil, "", "", 0, errors.New("invalid GitHub API URL or token")
	}
	return gc.GitHub(), owner, repo, number, nil
}

// awaitGate sleeps until the shared server-directed wait (Checker.Gate)
// ends, or fails without sending when it ends after this check's budget.
func (c Checker) awaitGate(ctx, bctx context.Context, clk clock.Clock, start time.Time, req Request) error {
	if c.Gate == nil {
		return nil
	}
	d := c.Gate.HeldUntil().Sub(clk.Now())
	if d <= 0 {
		return nil
	}
	if d >= Budget-clk.Now().Sub(start) {
		return fmt.Errorf("%w for pull request #%s: an earlier answer to this token asks to wait %s, longer than this guard's remaining retry budget",
			ErrCheckFailed, req.Number, d.Round(time.Second))
	}
	if err := clk.Sleep(bctx, d); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w for pull request #%s: the %s budget elapsed (%v)", ErrCheckFailed, req.Number, Budget, err)
	}
	return nil
}

// once performs one attempt (GET /repos/{owner}/{repo}/pulls/{number}).
// wait is the Retry-After instruction, or -1 without a valid one.
func once(ctx context.Context, clk clock.Clock, gh *github.Client, owner, repo string, number int, req Request) (Result, bool, time.Duration, error) {
	pr, resp, err := gh.PullRequests.Get(ctx, owner, repo, number)
	if resp == nil || resp.Response == nil {
		if ctx.Err() != nil {
			return Result{}, false, -1, ctx.Err()
		}
		return Result{}, true, -1, errors.New("transport error")
	}
	if resp.StatusCode != http.StatusOK {
		wait, present, ok := ghclient.RetryAfter(resp.Header, clk.Now())
		if !ok {
			wait = -1
		}
		return Result{}, retryable(resp.Response, present), wait, fmt.Errorf("HTTP %d; request-id=%s", resp.StatusCode, sanitize(resp.Header.Get("X-GitHub-Request-Id")))
	}
	if err != nil || pr == nil {
		return Result{}, false, -1, errors.New("malformed pull request response")
	}
	sha := pr.GetHead().GetSHA()
	if !headSHARE.MatchString(sha) {
		return Result{}, false, -1, errors.New("pull request response has no valid head sha")
	}
	if state := pr.GetState(); state != "open" {
		return Result{}, false, -1, fmt.Errorf("pull request is %s, not open", sanitize(state))
	}
	return Result{Current: strings.EqualFold(sha, req.ExpectedSHA), HeadSHA: strings.ToLower(sha)}, false, -1, nil
}

// retryable is the guard's retry set: 408, 429, 500, 502, 503, 504, and a
// rate-limited 403 (a Retry-After, or X-RateLimit-Remaining: 0). A 401 is
// not retried: a bad consumer token is terminal for the guard.
func retryable(resp *http.Response, retryAfter bool) bool {
	switch resp.StatusCode {
	case 408, 429, 500, 502, 503, 504:
		return true
	case 403:
		return retryAfter || strings.TrimSpace(resp.Header.Get("X-RateLimit-Remaining")) == "0"
	}
	return false
}

// sanitize bounds a server-provided value for an error message.
func sanitize(s string) string {
	if len(s) > 64 {
		s = s[:64]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}
