package monitor

import (
	"context"
	"fmt"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/githubissue"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/requestbudget"
)

// IssueSync is the issue-sync shape both monitors share: one deduplicated
// issue in the lock repository, found by its marker (and title when the
// spec says so), created, updated, re-opened or closed through
// internal/githubissue, with every request under the run's budget (the
// client's transport counts them).
type IssueSync struct {
	issues *githubissue.Client
	// what names the issue in a failure ("delivery issue").
	what string
}

// NewIssueSync returns the sync of one monitor's issue in owner/repo
// through gh. opts may be zero; its Client, Owner and Repo are set from the
// arguments. what names the issue in errors.
func NewIssueSync(gh *ghclient.Client, owner, repo string, opts githubissue.Options, what string) (*IssueSync, error) {
	opts.Client, opts.Owner, opts.Repo = gh, owner, repo
	ic, err := githubissue.New(opts)
	if err != nil {
		return nil, err
	}
	return &IssueSync{issues: ic, what: what}, nil
}

// Sync makes the issue match spec. A failure is wrapped as
// "sync <what>: <cause>"; the result says what was done either way.
func (s *IssueSync) Sync(ctx context.Context, spec githubissue.Spec) (githubissue.Result, error) {
	res, err := s.issues.Sync(ctx, spec)
	if err != nil {
		return res, fmt.Errorf("sync %s: %w", s.what, err)
	}
	return res, nil
}

// Session is one monitor run started from settled Settings: a context
// bounded by DefaultOverallTimeout and the request budget, the budget
// itself, the workflow-token client on the budget's transport, and the
// clock.
type Session struct {
	// Ctx bounds every request of the run.
	Ctx context.Context
	// GH is the run's GitHub client.
	GH *ghclient.Client
	// Budget counts the run's requests (Explain a failure through it).
	Budget *requestbudget.Budget
	// Clock is deps' clock, or the wall clock.
	Clock clock.Clock
	// Deps are the run's deps with the counting transport.
	Deps   Deps
	cancel []context.CancelFunc
}

// Start begins a run: it prints s's budget warnings through warn (may be
// nil), bounds ctx by DefaultOverallTimeout and the budget, and builds the
// client. Close releases it.
func Start(ctx context.Context, s Settings, deps Deps, warn func(string)) (*Session, error) {
	for _, w := range s.BudgetWarnings {
		if warn != nil {
			warn(w)
		}
	}
	b, err := requestbudget.New(s.BudgetLimit)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultOverallTimeout)
	deps.Transport = b.Transport(deps.Transport)
	bctx, release := b.Within(ctx, b.Limit())
	ss := &Session{Ctx: bctx, Budget: b, Clock: deps.ClockOrReal(), Deps: deps, cancel: []context.CancelFunc{release, cancel}}
	gh, err := NewClient(bctx, s.Env, deps, warn)
	if err != nil {
		ss.Close()
		return nil, err
	}
	ss.GH = gh
	return ss, nil
}

// Now returns the session clock's time.
func (s *Session) Now() time.Time { return s.Clock.Now() }

// Close releases the run's context.
func (s *Session) Close() {
	for _, c := range s.cancel {
		c()
	}
}
