package reap_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap/reaptest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// TestReapStopsCleanlyOnASecondaryLimit: GitHub answers the status scan
// with a secondary rate limit whose wait outlasts the run. The reaper sends
// nothing more inside that wait, keeps every holder it could not verify,
// writes nothing, says why in a REAP_REQUEST_BUDGET_SPENT warning and in
// the summary, and leaves the rest to the next scheduled run.
func TestReapStopsCleanlyOnASecondaryLimit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := reaptest.New(t, cfgLifecycle)
		now := time.Now()
		done := run(w, game, "completed", "failure")
		s := state(4)
		s.Holders = []lockstate.Holder{holder(game, done, "runner-1", 0, now.Add(-time.Hour), now.Add(time.Hour))}
		w.SeedState(s)
		w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: "/repos/acme/game/actions/runs/*", Kind: emulator.SecondaryRateLimit403, RetryAfter: "3600"})
		w.Em.ResetMetrics()

		begin := time.Now()
		err := reap.Run(context.Background(), deps(w, nil))
		elapsed := time.Since(begin)
		m := w.Em.Metrics()

		assert.Equal(t, int64(1), m.Routes["GET /repos/{owner}/{repo}/actions/runs/{run_id}"].Requests, "nothing is sent inside the wait")
		assert.Less(t, elapsed, 10*time.Minute, "the run ends instead of sleeping out an hour")
		assert.Equal(t, []string{seedM}, w.Messages(), "nothing written")
		assert.Equal(t, s.Holders, w.State().Holders, "the unverified holder is kept")
		out := w.Stdout.String()
		assert.Contains(t, out, "::warning::"+reap.CodeRequestBudgetSpent)
		assert.Contains(t, out, "secondary rate limit held the run's requests back")
		assert.Contains(t, w.Summary(), "secondary rate limit")
		require.NoError(t, err, "a stop on a secondary limit is clean: a warning, and the next scheduled run continues")
	})
}
