package prhead_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/prhead"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	guard "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/prhead"
)

func TestMain(m *testing.M) {
	actiontest.Setup()
	os.Exit(m.Run())
}

var (
	headA = strings.Repeat("a", 40)
	headB = strings.Repeat("B", 40)
)

func guardJob(w *actiontest.World) *actiontest.Job {
	j := w.NewJob("guard", "")
	j.Env["GITHUB_EVENT_NAME"] = "pull_request"
	return j.Input("github-token", actiontest.ConsumerToken).Input("pull-request-number", "5").Input("expected-head-sha", headA)
}

func TestNotAPullRequestSendsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, "")
		j := w.NewJob("guard", "")
		require.NoError(t, prhead.Run(context.Background(), j.Deps()))
		assert.Equal(t, "true", j.Outputs()["is-current"])
		assert.Zero(t, w.Em.Metrics().Requests)
	})
}

func TestGuard(t *testing.T) {
	cases := []struct {
		name     string
		head     string
		state    string
		wantErr  string
		current  string
		requests int64
	}{
		{"current (case-insensitive)", strings.ToUpper(headA), "open", "", "true", 1},
		{"stale", headB, "open", "stale pull request run", "false", 1},
		{"closed", headA, "closed", "not open", "", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := actiontest.NewWorld(t, "")
				w.Em.SetPullRequest(actiontest.Owner, actiontest.Consumer, 5, tc.state, tc.head)
				j := guardJob(w)
				err := prhead.Run(context.Background(), j.Deps())
				if tc.wantErr == "" {
					require.NoError(t, err)
				} else {
					require.ErrorContains(t, err, tc.wantErr)
				}
				assert.Equal(t, tc.current, j.Outputs()["is-current"])
				assert.Equal(t, tc.requests, w.Em.Metrics().Requests)
				assert.NotContains(t, j.Unmasked(), actiontest.ConsumerToken)
			})
		})
	}
}

func TestGuardInputValidation(t *testing.T) {
	for input, value := range map[string]string{"pull-request-number": "05", "expected-head-sha": "xyz", "github-token": ""} {
		t.Run(input, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := actiontest.NewWorld(t, "")
				j := guardJob(w)
				j.Input(input, value)
				if value == "" {
					delete(j.Env, "INPUT_GITHUB-TOKEN")
				}
				require.ErrorContains(t, prhead.Run(context.Background(), j.Deps()), input)
				assert.Zero(t, w.Em.Metrics().Requests)
			})
		})
	}
}

func TestGuardRetryBudget(t *testing.T) {
	t.Run("Retry-After inside the budget is honored", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := actiontest.NewWorld(t, "")
			w.Em.SetPullRequest(actiontest.Owner, actiontest.Consumer, 5, "open", headA)
			w.Em.AddFault(emulator.Fault{PathPattern: "/repos/acme/game/pulls/", Kind: emulator.TooManyRequests429, RetryAfter: "2", Count: 1})
			j := guardJob(w)
			began := time.Now()
			require.NoError(t, prhead.Run(context.Background(), j.Deps()))
			assert.Equal(t, 2*time.Second, time.Since(began))
		})
	})
	t.Run("Retry-After beyond the budget fails at once", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := actiontest.NewWorld(t, "")
			w.Em.SetPullRequest(actiontest.Owner, actiontest.Consumer, 5, "open", headA)
			w.Em.AddFault(emulator.Fault{PathPattern: "/repos/acme/game/pulls/", Kind: emulator.SecondaryRateLimit403, RetryAfter: "45"})
			j := guardJob(w)
			began := time.Now()
			require.ErrorContains(t, prhead.Run(context.Background(), j.Deps()), "remaining retry budget")
			assert.Zero(t, time.Since(began))
			assert.Equal(t, int64(1), w.Em.Metrics().Requests)
		})
	})
	t.Run("server errors use three attempts", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := actiontest.NewWorld(t, "")
			w.Em.SetPullRequest(actiontest.Owner, actiontest.Consumer, 5, "open", headA)
			w.Em.AddFault(emulator.Fault{PathPattern: "/repos/acme/game/pulls/", Kind: emulator.ServerError, Status: 502})
			j := guardJob(w)
			began := time.Now()
			require.ErrorContains(t, prhead.Run(context.Background(), j.Deps()), "after 3 attempt(s)")
			assert.Equal(t, 750*time.Millisecond, time.Since(began), "250 ms then 500 ms")
			assert.Empty(t, j.Outputs())
		})
	})
	t.Run("401 is not retried", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := actiontest.NewWorld(t, "")
			w.Em.SetPullRequest(actiontest.Owner, actiontest.Consumer, 5, "open", headA)
			j := guardJob(w).Input("github-token", "ghs_wrongtoken")
			require.Error(t, prhead.Run(context.Background(), j.Deps()))
			assert.Equal(t, int64(1), w.Em.Metrics().Requests)
		})
	})
}

// gate is a guard.Checker.Gate that records what the guard passes on.
type gate struct {
	until time.Time
	held  []time.Time
}

func (g *gate) HeldUntil() time.Time  { return g.until }
func (g *gate) HoldUntil(t time.Time) { g.held = append(g.held, t) }

// Regression (simulation seeds 101092, 109417; R-F4): a Retry-After that
// acquire's job-id lookup received with the same github-token held back
// nothing of the guard, whose request went out inside the window.
func TestGuardSharesServerDirectedWaits(t *testing.T) {
	check := func(t *testing.T, w *actiontest.World, g *gate) error {
		_, err := guard.Checker{Transport: w.API, Gate: g}.Check(context.Background(), guard.Request{
			APIURL: actiontest.APIURL, Repository: actiontest.Owner + "/" + actiontest.Consumer, Number: "5",
			ExpectedSHA: headA, Token: actiontest.ConsumerToken})
		return err
	}
	t.Run("a wait inside the budget is waited out before the first request", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := actiontest.NewWorld(t, "")
			w.Em.SetPullRequest(actiontest.Owner, actiontest.Consumer, 5, "open", headA)
			began := time.Now()
			require.NoError(t, check(t, w, &gate{until: began.Add(17 * time.Second)}))
			assert.Equal(t, 17*time.Second, time.Since(began))
			assert.Equal(t, int64(1), w.Em.Metrics().Requests)
		})
	})
	t.Run("a wait beyond the budget fails without sending", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := actiontest.NewWorld(t, "")
			w.Em.SetPullRequest(actiontest.Owner, actiontest.Consumer, 5, "open", headA)
			began := time.Now()
			require.ErrorContains(t, check(t, w, &gate{until: began.Add(40 * time.Second)}), "longer than this guard's remaining retry budget")
			assert.Zero(t, time.Since(began))
			assert.Zero(t, w.Em.Metrics().Requests)
		})
	})
	t.Run("the guard passes on the wait it honors", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := actiontest.NewWorld(t, "")
			w.Em.SetPullRequest(actiontest.Owner, actiontest.Consumer, 5, "open", headA)
			w.Em.AddFault(emulator.Fault{PathPattern: "/repos/acme/game/pulls/", Kind: emulator.TooManyRequests429, RetryAfter: "25", Count: 1})
			g := &gate{}
			began := time.Now()
			require.NoError(t, check(t, w, g))
			assert.Equal(t, []time.Time{began.Add(guard.MaxSleep)}, g.held, "capped at the guard's 10 s, as documented")
		})
	})
}
