package recover_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap/reaptest"
	recoveraction "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/recover"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/recovery"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/requestbudget"
)

// conflicting makes every contents PUT lose its compare-and-swap: just
// before it is forwarded, a concurrent writer commits a changed state.
type conflicting struct {
	w    *reaptest.World
	next http.RoundTripper
	mu   sync.Mutex
	n    int
}

func (c *conflicting) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPut {
		c.mu.Lock()
		c.n++
		st := c.w.State()
		st.Queue = append(st.Queue, lockstate.Entry{HolderID: fmt.Sprintf("acme/game:%d:build:default", 100+c.n), Repository: "acme/game",
			Workflow: "CI", Job: "build", RunID: fmt.Sprint(100 + c.n), RunAttempt: "1",
			RunURL: fmt.Sprintf("https://github.com/acme/game/actions/runs/%d", 100+c.n), QueuedAt: st.UpdatedAt, RunnerID: "r9"})
		c.w.SeedState(st)
		c.mu.Unlock()
	}
	return c.next.RoundTrip(r)
}

// TestRecoverBudgetSpentFailsWithItsCode: a recovery whose writes keep
// losing to a concurrent writer, and whose re-reads meet a burst of 401s
// (re-mint and replay), stops at its request budget instead of spending
// the installation's: RECOVER_REQUEST_BUDGET_SPENT, not one request more
// than the budget, nothing written by the recovery, and the reaper
// binary's recover operation obeys the same budget.
func TestRecoverBudgetSpentFailsWithItsCode(t *testing.T) {
	t.Parallel()
	for _, binary := range []string{"recover", "reap"} {
		t.Run(binary, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				w, _ := seeded(t, cfgHealth, 5, false)
				set(w, "INPUT_OPERATION", "recover", "INPUT_RESERVATION_ID", "q1", "INPUT_RESOURCE_SAFE", "true",
					"INPUT_REQUEST_BUDGET", "25")
				w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: "/repos/acme/build-lock/contents/locks/seats.json", Kind: emulator.Unauthorized401, Count: 4})
				d := deps(w)
				d.Transport = &conflicting{w: w, next: w.Em.Transport()}
				w.Em.ResetMetrics()
				var err error
				if binary == "recover" {
					err = recoveraction.Run(context.Background(), d)
				} else {
					err = reap.Run(context.Background(), d)
				}
				var ee *requestbudget.ExhaustedError
				require.ErrorAs(t, err, &ee, "%v", err)
				assert.Equal(t, recovery.CodeRequestBudgetSpent, ee.Code)
				assert.Equal(t, 25, ee.Limit)
				assert.Contains(t, err.Error(), "RECOVER_REQUEST_BUDGET_SPENT: the run's request budget of 25 requests was spent")
				assert.Equal(t, int64(25), w.Em.Metrics().Requests)
				for _, m := range w.Messages() {
					assert.NotEqual(t, "Recover reservation q1", m, "the recovery never landed")
				}
				assert.Empty(t, w.Outputs())
			})
		})
	}
}

// TestRecoverBudgetDefaultAndKnob: a normal recovery fits the default
// budget many times over; an invalid setting warns and keeps the default.
func TestRecoverBudgetDefaultAndKnob(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w, _ := seeded(t, cfgHealth, 5, false)
		set(w, "INPUT_OPERATION", "recover", "INPUT_RESERVATION_ID", "q1", "INPUT_RESOURCE_SAFE", "true",
			"BUILD_LOCK_REQUEST_BUDGET", "9999")
		w.Em.ResetMetrics()
		require.NoError(t, recoveraction.Run(context.Background(), deps(w)))
		assert.Less(t, w.Em.Metrics().Requests, int64(recovery.DefaultRequestBudget/5))
		assert.Contains(t, w.Stdout.String(), "::warning::Ignoring invalid BUILD_LOCK_REQUEST_BUDGET=9999; expected an integer between 25 and 1000.")
		assert.Equal(t, "true", w.Outputs()["reaped"])
	})
}
