package ghsource_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history/ghsource"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/sim"
)

// The simulation's organization (internal/sim/world.go).
const (
	simOwner  = "acme"
	simRepo   = "build-lock"
	simLock   = "seats"
	simWriter = "app-601[bot]"
)

// TestSimulationHistoriesVerifyClean: the histories the project's
// fault-injected simulation writes through the real acquire, release,
// post-cleanup, reaper and recovery actions (stale reads, lost responses,
// 5xx and rate limits, skewed runner clocks, reruns, previous-generation
// clients, migrations, an unreadable config) verify clean, read back
// through the emulator's REST API.
func TestSimulationHistoriesVerifyClean(t *testing.T) {
	t.Parallel()
	seeds := []uint64{1, 2, 4, 5, 6, 7, 10, 11, 3, 8, 9, 12, 18, 20}
	if raceEnabled || testing.Short() {
		seeds = seeds[:2]
	}
	total := 0
	for _, seed := range seeds {
		var res *history.Result
		var rep sim.Report
		synctest.Test(t, func(t *testing.T) {
			rep = sim.Run(t, seed, sim.Config{Jobs: 60, Inspect: func(em *emulator.Emulator) {
				token := fmt.Sprintf("ghs_history_sim_reader_%032d", seed)
				em.AddToken(token, emulator.TokenScope{Label: "history-reader", Repos: []string{simOwner + "/" + simRepo},
					Permissions: map[string]string{"contents": "read"}, RateLimit: 1 << 20})
				c, err := ghclient.New(context.Background(), ghclient.Config{APIURL: "https://api.github.com/", Token: token, Transport: em.Transport()})
				require.NoError(t, err)
				l, err := ghsource.Load(context.Background(), ghsource.Options{Client: c, Owner: simOwner, Repo: simRepo, Lock: simLock}, nil)
				require.NoError(t, err)
				in := l.Input
				in.ServerURL, in.Writers, in.Operators = "https://github.com", []string{simWriter}, []string{emulator.SeedAuthorLogin}
				res = history.Verify(in)
			}})
		})
		require.NotNil(t, res, "seed %d", seed)
		require.True(t, rep.OK(), "seed %d: the simulation itself failed: %v", seed, rep.Violations)
		if !assert.Equal(t, history.StatusClean, res.Status, "seed %d (%s)", seed, rep.Schedule) {
			f := res.FirstViolation
			t.Logf("seed %d first violation %s at %s (%s): %s\nbefore: %s\nafter: %s", seed, f.Rule, f.Commit, f.Message, f.Detail, f.Before, f.After)
		}
		assert.Equal(t, rep.Versions, res.Commits, "seed %d", seed)
		total += res.Commits
	}
	t.Logf("%d seeds, %d commits verified", len(seeds), total)
	if !raceEnabled && !testing.Short() {
		assert.GreaterOrEqual(t, total, 1000)
	}
}
