// Package monitor holds what the build lock's independent monitors share:
// reading the workflow environment (through an injected getenv), building a
// GitHub client on the workflow's own GITHUB_TOKEN, and mapping errors to
// exit codes. The monitors themselves live in the subpackages incidentaudit
// (lock-recovery-audit) and deliveryaudit (reaper-delivery-audit).
//
// A monitor never writes lock state and never needs a GitHub App: it reads
// with the token GitHub gives its workflow (permissions declared in the
// workflow file) and keeps one deduplicated issue through
// internal/githubissue.
//
// Every monitor run has a request budget (--request-budget, else
// BUILD_LOCK_REQUEST_BUDGET, else DefaultRequestBudget) counted at the
// transport (internal/requestbudget): the workflow token's 1,000 requests
// an hour per repository are shared with every other workflow of the lock
// repository. A run needs about five requests; one that spends its budget
// (for example paging through thousands of issues) fails with
// MONITOR_REQUEST_BUDGET_SPENT and exit code 1, and sends nothing more.
package monitor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/requestbudget"
)

// Bounds shared by the monitors (spec §4.5).
const (
	// DefaultOverallTimeout bounds one monitor run, far inside the
	// workflow's timeout.
	DefaultOverallTimeout = 5 * time.Minute
	// DefaultRequestTimeout bounds each HTTP attempt.
	DefaultRequestTimeout = 20 * time.Second
	// DefaultServerURL is GITHUB_SERVER_URL when unset.
	DefaultServerURL = "https://github.com"
)

// Request budget of one monitor run (docs/monitoring.md "Request budget").
const (
	// DefaultRequestBudget is 3% of the workflow token's 1,000 requests an
	// hour, six times what a run needs (a read, one page of issues, a
	// write and its verification).
	DefaultRequestBudget = 30
	// MinRequestBudget and MaxRequestBudget bound the setting; the
	// maximum covers the issue discovery's 240-page ceiling.
	MinRequestBudget = 10
	MaxRequestBudget = 250
	// CodeRequestBudgetSpent is the failure code of a monitor run that
	// spent its budget (*requestbudget.ExhaustedError).
	CodeRequestBudgetSpent = "MONITOR_REQUEST_BUDGET_SPENT"
	// FlagRequestBudget is the flag every monitor accepts.
	FlagRequestBudget = "request-budget"
)

// RequestBudget is the monitors' request-budget setting.
var RequestBudget = requestbudget.Knob{Default: DefaultRequestBudget, Min: MinRequestBudget, Max: MaxRequestBudget}

// Budget is a monitor run's request budget: the flag value (0 = unset;
// outside the bounds a usage error, like every other monitor flag), else
// BUILD_LOCK_REQUEST_BUDGET (an invalid value warns through warn), else the
// default. It returns deps with the counting transport and a context every
// request of the run must use; cancel releases it.
func Budget(ctx context.Context, flagValue int, getenv func(string) string, deps Deps, warn func(string)) (context.Context, Deps, *requestbudget.Budget, context.CancelFunc, error) {
	limit := flagValue
	if limit != 0 && (limit < MinRequestBudget || limit > MaxRequestBudget) {
		return nil, deps, nil, nil, fmt.Errorf("%w: --%s %d must be between %d and %d", ErrUsage, FlagRequestBudget, limit, MinRequestBudget, MaxRequestBudget)
	}
	var (
		b   *requestbudget.Budget
		err error
	)
	if limit == 0 {
		b, err = RequestBudget.New("", getenv(requestbudget.EnvRequestBudget), warn)
	} else {
		b, err = requestbudget.New(limit)
	}
	if err != nil {
		return nil, deps, nil, nil, err
	}
	deps.Transport = b.Transport(deps.Transport)
	bctx, cancel := b.Within(ctx, b.Limit())
	return bctx, deps, b, cancel, nil
}

// ErrUsage marks an error in flags or environment; main exits 2 for it.
var ErrUsage = errors.New("usage error")

// Deps are the injectable edges of a monitor run. The zero value is the real
// environment.
type Deps struct {
	// Transport is the base HTTP transport; nil means http.DefaultTransport.
	// Tests pass an emulator's in-memory transport.
	Transport http.RoundTripper
	// Clock is the monitor's notion of now and its sleeps; nil means the
	// wall clock.
	Clock clock.Clock
}

// ClockOrReal returns d.Clock, or the wall clock.
func (d Deps) ClockOrReal() clock.Clock {
	if d.Clock == nil {
		return clock.Real{}
	}
	return d.Clock
}

// Env is the workflow environment a monitor needs.
type Env struct {
	// APIURL is GITHUB_API_URL (https), default https://api.github.com.
	APIURL string
	// ServerURL is GITHUB_SERVER_URL (https), default https://github.com.
	ServerURL string
	// Repository is GITHUB_REPOSITORY ("owner/name"), possibly empty.
	Repository string
	// Token is GITHUB_TOKEN. It is never printed.
	Token string
}

// ReadEnv reads and validates the environment: https API and server URLs
// without credentials, and a non-empty GITHUB_TOKEN. Errors name variables,
// never values of secrets.
func ReadEnv(getenv func(string) string) (Env, error) {
	env := Env{
		APIURL:     strings.TrimSpace(getenv("GITHUB_API_URL")),
		ServerURL:  strings.TrimSpace(getenv("GITHUB_SERVER_URL")),
		Repository: strings.TrimSpace(getenv("GITHUB_REPOSITORY")),
		Token:      strings.TrimSpace(getenv("GITHUB_TOKEN")),
	}
	if env.APIURL == "" {
		env.APIURL = ghclient.DefaultAPIURL
	}
	if env.ServerURL == "" {
		env.ServerURL = DefaultServerURL
	}
	for name, v := range map[string]string{"GITHUB_API_URL": env.APIURL, "GITHUB_SERVER_URL": env.ServerURL} {
		if err := requireHTTPS(v); err != nil {
			return Env{}, fmt.Errorf("%w: %s %v", ErrUsage, name, err)
		}
	}
	if env.Token == "" {
		return Env{}, fmt.Errorf("%w: GITHUB_TOKEN is required (the workflow token, env GITHUB_TOKEN: ${{ github.token }})", ErrUsage)
	}
	return env, nil
}

func requireHTTPS(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return errors.New("must be an https URL without credentials, query or fragment")
	}
	return nil
}

var (
	ownerRE = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`)
	nameRE  = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}$`)
)

// SplitRepository validates "owner/name" and splits it.
func SplitRepository(s string) (owner, name string, err error) {
	o, n, ok := strings.Cut(s, "/")
	if !ok || !ownerRE.MatchString(o) || !nameRE.MatchString(n) || n == "." || n == ".." {
		return "", "", fmt.Errorf("%w: repository %q is not owner/name", ErrUsage, s)
	}
	return o, n, nil
}

// NewClient builds the GitHub client of a monitor: the workflow token, the
// shared retry contract on deps' clock and transport, and retry warnings to
// warn (may be nil).
func NewClient(ctx context.Context, env Env, deps Deps, warn func(string)) (*ghclient.Client, error) {
	return ghclient.New(ctx, ghclient.Config{
		APIURL:    env.APIURL,
		Token:     env.Token,
		Transport: deps.Transport,
		Clock:     deps.ClockOrReal(),
		Warn:      warn,
	})
}

// ExitCode maps a monitor's error to its process exit code: 0 for nil, 2
// for ErrUsage, 1 for everything else (invalid evidence, an unavailable API,
// a failed sync).
func ExitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrUsage):
		return 2
	default:
		return 1
	}
}
