package requestbudget_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/google/go-github/v66/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/requestbudget"
)

const (
	owner = "acme"
	repo  = "build-lock"
	token = "ghs_workflowtoken"
)

// world is an emulator with one repository and a workflow token on it.
func world(t *testing.T, rateLimit int) *emulator.Emulator {
	t.Helper()
	em := emulator.New(emulator.Options{Clock: clock.Real{}, Seed: 1})
	em.AddOwner(owner, 1, true)
	em.AddRepo(owner, repo, 2, "main")
	em.AddToken(token, emulator.TokenScope{Label: "ci", Repos: []string{owner + "/" + repo},
		Permissions: map[string]string{"contents": "write"}, RateLimit: rateLimit})
	return em
}

func client(t *testing.T, em *emulator.Emulator, b *requestbudget.Budget) *ghclient.Client {
	t.Helper()
	c, err := ghclient.New(context.Background(), ghclient.Config{APIURL: "http://emulator.test/", Token: token,
		Transport: b.Transport(em.Transport()), Jitter: func() float64 { return 0.5 }})
	require.NoError(t, err)
	return c
}

func getRepo(ctx context.Context, c *ghclient.Client) error {
	return c.Do(ctx, ghclient.Op{Name: "GET repo"}, func(ctx context.Context) (*github.Response, error) {
		_, resp, err := c.GitHub().Repositories.Get(ctx, owner, repo)
		return resp, err
	})
}

// TestRefusedRequestIsNotSentAndStopsTheRetryLoop: with a ceiling of 3,
// three reads reach GitHub; the fourth is not sent, is not retried (no
// backoff against a budget that cannot refill), cancels its context with a
// cause Spent recognises, and a refused write is never taken for one that
// may have landed.
func TestRefusedRequestIsNotSentAndStopsTheRetryLoop(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		em := world(t, 1000)
		b, err := requestbudget.New(5)
		require.NoError(t, err)
		c := client(t, em, b)
		ctx, cancel := b.Within(context.Background(), 3)
		defer cancel()
		for range 3 {
			require.NoError(t, getRepo(ctx, c))
		}
		err = getRepo(ctx, c)
		require.Error(t, err)
		assert.True(t, requestbudget.Spent(ctx))
		var se *requestbudget.SpentError
		require.ErrorAs(t, context.Cause(ctx), &se)
		assert.Equal(t, requestbudget.SpentError{Limit: 5, Ceiling: 3}, *se)
		assert.Equal(t, int64(3), em.Metrics().Requests, "the refused request never reached GitHub")
		assert.Equal(t, 3, b.Used())
		assert.Equal(t, 1, b.Refused())
		assert.Equal(t, 2, b.Remaining())
		assert.Zero(t, c.Stats().Retries, "no backoff against a spent budget")

		// The rest of the budget is still there for a checkpoint write.
		wctx, wcancel := b.Within(context.Background(), b.Limit())
		defer wcancel()
		put := func() error {
			return c.Do(wctx, ghclient.Op{Name: "PUT file", Mutation: true}, func(ctx context.Context) (*github.Response, error) {
				_, resp, err := c.GitHub().Repositories.CreateFile(ctx, owner, repo, "x.txt", &github.RepositoryContentFileOptions{
					Message: github.String("m"), Content: []byte("x"), Branch: github.String("main")})
				return resp, err
			})
		}
		require.NoError(t, getRepo(wctx, c))
		require.NoError(t, put())
		err = put()
		require.Error(t, err)
		var ge *ghclient.Error
		require.ErrorAs(t, err, &ge)
		assert.False(t, ge.MaybeApplied, "a refused write was never sent: not ambiguous")
		assert.NotEqual(t, ghclient.ClassAmbiguous, ge.Class)
		assert.True(t, requestbudget.Spent(wctx))
		assert.Equal(t, int64(5), em.Metrics().Requests)
	})
}

// TestWithoutAPhaseTheLimitStillHolds: a context that did not come from
// Within is refused at the limit too (nothing to cancel, so the client's
// attempt budget ends the call, still without sending anything).
func TestWithoutAPhaseTheLimitStillHolds(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		em := world(t, 1000)
		b, err := requestbudget.New(1)
		require.NoError(t, err)
		c := client(t, em, b)
		require.NoError(t, getRepo(context.Background(), c))
		require.Error(t, getRepo(context.Background(), c))
		assert.Equal(t, int64(1), em.Metrics().Requests)
		assert.Equal(t, 1, b.Used())
		assert.Positive(t, b.Refused())
	})
}

// TestEveryRequestCounts: 304 revalidations count like any other request
// (GitHub does not charge them, the budget does: it bounds what one run
// sends, not what it is billed).
func TestEveryRequestCounts(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		em := world(t, 1000)
		b, err := requestbudget.New(10)
		require.NoError(t, err)
		c := client(t, em, b)
		ctx, cancel := b.Within(context.Background(), b.Limit())
		defer cancel()
		for range 4 {
			require.NoError(t, getRepo(ctx, c))
		}
		m := em.Metrics()
		assert.Equal(t, int64(4), m.Requests)
		assert.Positive(t, m.NotModified, "the repeated reads were conditional")
		assert.Equal(t, 4, b.Used())
	})
}

// TestBelowFloor follows x-ratelimit-remaining of x-ratelimit-limit.
func TestBelowFloor(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		em := world(t, 10)
		b, err := requestbudget.New(100)
		require.NoError(t, err)
		c := client(t, em, b)
		ctx, cancel := b.Within(context.Background(), b.Limit())
		defer cancel()
		assert.False(t, b.BelowFloor(20), "nothing observed yet")
		// Conditional GETs answered 304 are not charged; read a different
		// file each time so each read is.
		for i := range 9 {
			_, err := em.PutFile(owner, repo, "main", fmt.Sprintf("f%d", i), []byte("x"))
			require.NoError(t, err)
		}
		charged := func(i int) {
			require.NoError(t, c.Do(ctx, ghclient.Op{Name: "GET file"}, func(ctx context.Context) (*github.Response, error) {
				_, _, resp, err := c.GitHub().Repositories.GetContents(ctx, owner, repo, fmt.Sprintf("f%d", i), nil)
				return resp, err
			}))
		}
		for i := range 8 {
			charged(i)
		}
		assert.False(t, b.BelowFloor(20), "2 of 10 left is not below 20%%")
		charged(8)
		assert.True(t, b.BelowFloor(20), "1 of 10 left is below 20%%")
		assert.False(t, b.BelowFloor(10))
	})
}

// TestBudgetMatchesItsModel is the property: for any limit, any set of
// (possibly nested, possibly out-of-range) ceilings and any order of
// requests under them, the transport forwards a request exactly when fewer
// than its innermost ceiling (and the limit) were forwarded before, and a
// refusal is a local 429 that cancels exactly the context it was made
// under.
func TestBudgetMatchesItsModel(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		limit := rapid.IntRange(1, 40).Draw(rt, "limit")
		b, err := requestbudget.New(limit)
		require.NoError(rt, err)
		sent := 0
		tr := b.Transport(roundTripFunc(func(*http.Request) (*http.Response, error) {
			sent++
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody}, nil
		}))
		type ph struct {
			ctx     context.Context
			ceiling int
		}
		var phases []ph
		for i, n := 0, rapid.IntRange(1, 4).Draw(rt, "phases"); i < n; i++ {
			parent := context.Background()
			if i > 0 && rapid.Bool().Draw(rt, "nested") {
				parent = phases[i-1].ctx // the innermost ceiling applies, even when larger than its parent's
			}
			c := rapid.IntRange(-2, limit+5).Draw(rt, "ceiling")
			ctx, cancel := b.Within(parent, c)
			defer cancel()
			phases = append(phases, ph{ctx: ctx, ceiling: min(max(c, 0), limit)})
		}
		model := 0
		for i, n := 0, rapid.IntRange(0, 60).Draw(rt, "requests"); i < n; i++ {
			p := phases[rapid.IntRange(0, len(phases)-1).Draw(rt, "phase")]
			req, _ := http.NewRequestWithContext(p.ctx, http.MethodGet, "http://x.test/", nil)
			resp, err := tr.RoundTrip(req)
			require.NoError(rt, err)
			if model < p.ceiling {
				model++
				require.Equal(rt, http.StatusOK, resp.StatusCode, "request %d under ceiling %d after %d sent", i, p.ceiling, model-1)
				continue
			}
			require.Equal(rt, http.StatusTooManyRequests, resp.StatusCode)
			require.Equal(rt, "spent", resp.Header.Get(requestbudget.HeaderRefused))
			require.True(rt, requestbudget.Spent(p.ctx))
		}
		require.Equal(rt, model, sent)
		require.Equal(rt, model, b.Used())
		require.LessOrEqual(rt, sent, limit)
	})
}

// TestConcurrentSendersShareOneLimit: however many goroutines send, the
// budget forwards exactly min(limit, attempts) requests.
func TestConcurrentSendersShareOneLimit(t *testing.T) {
	t.Parallel()
	const limit, workers, each = 50, 8, 20
	b, err := requestbudget.New(limit)
	require.NoError(t, err)
	var mu sync.Mutex
	sent := 0
	tr := b.Transport(roundTripFunc(func(*http.Request) (*http.Response, error) {
		mu.Lock()
		sent++
		mu.Unlock()
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody}, nil
	}))
	ctx, cancel := b.Within(context.Background(), limit)
	defer cancel()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://x.test/", nil)
				resp, err := tr.RoundTrip(req)
				if assert.NoError(t, err) {
					_ = resp.Body.Close()
				}
			}
		})
	}
	wg.Wait()
	assert.Equal(t, limit, sent)
	assert.Equal(t, limit, b.Used())
	assert.Equal(t, workers*each-limit, b.Refused())
	assert.True(t, requestbudget.Spent(ctx))
}

func TestNewRefusesNonPositive(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, -1} {
		_, err := requestbudget.New(n)
		assert.Error(t, err)
	}
}

func TestSpentIsNotADeadlineOrCancellation(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.False(t, requestbudget.Spent(ctx))
	assert.False(t, requestbudget.Spent(context.Background()))
	assert.True(t, errors.Is(&requestbudget.SpentError{Limit: 1, Ceiling: 1}, requestbudget.ErrSpent))
}

// TestKnobResolve: input over environment over default; invalid values
// warn (without echoing control characters) and fall through.
func TestKnobResolve(t *testing.T) {
	t.Parallel()
	k := requestbudget.Knob{Default: 300, Min: 25, Max: 1000}
	cases := []struct {
		name, input, env string
		want             int
		warnings         []string
	}{
		{"unset", "", "", 300, nil},
		{"input", "120", "", 120, nil},
		{"input over env", "120", "500", 120, nil},
		{"env", "", "500", 500, nil},
		{"bounds are inclusive", "25", "", 25, nil},
		{"upper bound", "1000", "", 1000, nil},
		{"input too small falls to env", "24", "400", 400, []string{"Ignoring invalid input request-budget; expected an integer between 25 and 1000."}},
		{"input too large", "1001", "", 300, []string{"Ignoring invalid input request-budget; expected an integer between 25 and 1000."}},
		{"not digits", "3e2", "", 300, []string{"Ignoring invalid input request-budget; expected an integer between 25 and 1000."}},
		{"negative env", "", "-5", 300, []string{"Ignoring invalid BUILD_LOCK_REQUEST_BUDGET=-5; expected an integer between 25 and 1000."}},
		{"env with newline", "", "5\n::error::x", 300, []string{"Ignoring invalid BUILD_LOCK_REQUEST_BUDGET=5?::error::x; expected an integer between 25 and 1000."}},
		{"both invalid", "x", "y", 300, []string{
			"Ignoring invalid input request-budget; expected an integer between 25 and 1000.",
			"Ignoring invalid BUILD_LOCK_REQUEST_BUDGET=y; expected an integer between 25 and 1000."}},
		{"spaces trimmed", " 40 ", "", 40, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, warnings := k.Resolve(tc.input, tc.env)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.warnings, warnings)
		})
	}
}

// TestKnobNew reports every warning and builds the resolved budget.
func TestKnobNew(t *testing.T) {
	t.Parallel()
	var warned []string
	b, err := requestbudget.Knob{Default: 30, Min: 10, Max: 250}.New("9", "", func(s string) { warned = append(warned, s) })
	require.NoError(t, err)
	assert.Equal(t, 30, b.Limit())
	assert.Equal(t, []string{"Ignoring invalid input request-budget; expected an integer between 10 and 250."}, warned)
	b, err = requestbudget.Knob{Default: 30, Min: 10, Max: 250}.New("", "12", nil)
	require.NoError(t, err)
	assert.Equal(t, 12, b.Limit())
}

// TestWritesSentCountsOnlySentWrites: a caller tells "my write never left"
// from a real lost write by the count of writes sent.
func TestWritesSentCountsOnlySentWrites(t *testing.T) {
	t.Parallel()
	b, err := requestbudget.New(3)
	require.NoError(t, err)
	sent := 0
	tr := b.Transport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent++
		return &http.Response{StatusCode: http.StatusConflict, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
	}))
	do := func(method, path string) {
		req, err := http.NewRequest(method, "https://api.github.com"+path, nil)
		require.NoError(t, err)
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
	}
	do(http.MethodGet, "/repos/acme/build-lock/contents/locks/seats.json")
	do(http.MethodPost, "/app/installations/1/access_tokens")
	do(http.MethodPut, "/repos/acme/build-lock/contents/locks/seats.json")
	assert.Equal(t, 1, b.WritesSent(), "a read and a token mint are not writes")
	do(http.MethodPut, "/repos/acme/build-lock/contents/locks/seats.json")
	assert.Equal(t, 3, sent, "the fourth request was refused, not sent")
	assert.Equal(t, 1, b.WritesSent(), "a refused write was not sent")
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
