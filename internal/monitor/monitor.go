// Package monitor holds what the build lock's independent monitors share:
// reading the workflow environment once into Settings (settings.go, the
// package's only reader of getenv), building a GitHub client on the workflow's own GITHUB_TOKEN, and mapping errors to
// exit codes. The monitors themselves live in the subpackages incidentaudit
// (lock-recovery-audit) and deliveryaudit (reaper-delivery-audit).
//
// A monitor never writes lock state and never needs a GitHub App: it reads
// with the token GitHub gives its workflow (permissions declared in the
// workflow file) and keeps one deduplicated issue through
// internal/githubissue.
//
// Both monitors keep their one issue through IssueSync (issuesync.go) and
// start a run through Start (the timeout, the budget and the client).
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
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
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

// noEnv is the environment a monitor's workflow commands see: none (they
// only write to stdout).
func noEnv(string) string { return "" }

// Commands returns the workflow-command writer (::error::, ::warning::)
// of a monitor run on stdout. It reads no environment.
func Commands(stdout io.Writer) *actionio.IO { return actionio.New(noEnv, stdout) }
