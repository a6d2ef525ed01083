package reap_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap/reaptest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/markdown"
)

// hostileQueue returns n queue entries, each of its own run (ids from
// firstRun on) in one of repos nonexistent repositories of the organization
// ("ghost-0" ...): the shape of the document that spent a writer
// installation's hourly budget in one reap run.
func hostileQueue(n, repos int, firstRun int64, now time.Time) []lockstate.Entry {
	out := make([]lockstate.Entry, n)
	for i := range out {
		out[i] = entry(fmt.Sprintf("ghost-%d", i%repos), firstRun+int64(i), fmt.Sprintf("r%d", i), 0, now)
	}
	return out
}

// TestReapHostileDocumentIsBounded is the reproduction: 15,500 queued
// entries from 50 nonexistent repositories, each of its own run. Before the
// fix one reap run sent thousands of requests (a run read and a repository
// probe per entry, until the reader installation's hourly limit answered
// 403). Now the document is refused before any per-entry work, with a stable
// code and an actionable message, and the run costs a handful of requests.
func TestReapHostileDocumentIsBounded(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := reaptest.New(t, cfgLifecycle)
		now := time.Now()
		s := state(4)
		s.Queue = hostileQueue(15500, 50, 1_000_000, now)
		w.SeedState(s)
		w.Em.ResetMetrics()

		err := reap.Run(context.Background(), deps(w, nil))
		m := w.Em.Metrics()
		t.Logf("hostile 15,500-entry document: %d requests in one reap run", m.Requests)
		assert.LessOrEqual(t, m.Requests, int64(reap.DefaultRequestBudget), "one reap run stays inside its request budget")
		var re *reap.Error
		require.ErrorAs(t, err, &re)
		assert.Equal(t, reap.CodeStateTooLarge, re.Code)
		assert.Contains(t, re.Error(), "15500 entries")
		assert.Contains(t, re.Error(), "docs/runbook.md")
		assert.Zero(t, m.Routes["GET /repos/{owner}/{repo}/actions/runs/{run_id}"].Requests, "no per-entry read")
		assert.Equal(t, int64(1), m.Routes["GET /repos/{owner}/{repo}"].Requests, "only the lock repository's own check: no repository probe")
		assert.Equal(t, []string{seedM}, w.Messages(), "nothing written")
		assert.Contains(t, w.Summary(), markdown.Text(reap.CodeStateTooLarge))
	})
}

// requests is the emulator's request count since its last reset.
func requests(w *reaptest.World) int64 { return w.Em.Metrics().Requests }

// TestReapHostileDocumentUnderTheBound: 900 entries, each in its own
// nonexistent repository, is under the entry bound but would cost two
// requests per entry. The run stops at its budget, keeps every entry it did
// not verify, warns with REAP_REQUEST_BUDGET_SPENT, and still fails with
// REAP_EVIDENCE_UNAVAILABLE for the repositories it could not verify.
func TestReapHostileDocumentUnderTheBound(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := reaptest.New(t, cfgLifecycle)
		now := time.Now()
		s := state(4)
		s.Queue = hostileQueue(900, 900, 2_000_000, now)
		w.SeedState(s)
		w.Em.ResetMetrics()

		err := reap.Run(context.Background(), deps(w, nil))
		n := requests(w)
		t.Logf("hostile 900-entry document (900 repositories): %d requests in one reap run", n)
		assert.LessOrEqual(t, n, int64(reap.DefaultRequestBudget))
		assert.GreaterOrEqual(t, n, int64(reap.DefaultRequestBudget-reap.WriteReserve(reap.DefaultRequestBudget)), "the scan used its share")
		var re *reap.Error
		require.ErrorAs(t, err, &re)
		assert.Equal(t, reap.CodeEvidenceUnavailable, re.Code)
		assert.Equal(t, []string{seedM}, w.Messages())
		assert.Equal(t, s.Queue, w.State().Queue, "nothing unverified changes")
		assert.Contains(t, w.Stdout.String(), "::warning::"+reap.CodeRequestBudgetSpent)
		sum := w.Summary()
		assert.Contains(t, sum, markdown.Text("The status scan stopped early (REAP_REQUEST_BUDGET_SPENT)"))
		assert.Contains(t, sum, "not verified: the run's request budget was spent")
	})
}

// TestReapMemoizesEveryFact: thousands of entries about a few facts cost
// one request per fact. 1,000 entries: 400 in 4 nonexistent repositories
// (one run read and one probe per repository, 404s memoized), 300 in 3
// owners without a reader installation (one installation lookup per
// owner), 300 spread over 10 live runs of a visible repository (one run
// read and one job list per run).
func TestReapMemoizesEveryFact(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := reaptest.New(t, cfgLifecycle)
		now := time.Now()
		s := state(4)
		s.Queue = hostileQueue(400, 4, 3_000_000, now)
		for i := range 300 {
			e := entry(game, int64(4_000_000+i), fmt.Sprintf("o%d", i), 0, now)
			e.Repository = fmt.Sprintf("stranger-%d/app", i%3)
			e.HolderID = fmt.Sprintf("%s:%s:build:default", e.Repository, e.RunID)
			e.RunURL = fmt.Sprintf("%s/%s/actions/runs/%s", reaptest.ServerURL, e.Repository, e.RunID)
			s.Queue = append(s.Queue, e)
		}
		var live []int64
		for range 10 {
			id := run(w, game, "in_progress", "")
			job(w, game, id, "runner", "in_progress", "")
			live = append(live, id)
		}
		for i := range 300 {
			e := entry(game, live[i%10], "runner", 0, now)
			e.HolderID = fmt.Sprintf("%s/%s:%d:build:leg-%d", owner, game, live[i%10], i)
			e.JobID = "1" // no such job: the list is still read once per attempt
			s.Queue = append(s.Queue, e)
		}
		w.SeedState(s)
		w.Em.ResetMetrics()

		err := reap.Run(context.Background(), deps(w, nil))
		m := w.Em.Metrics()
		t.Logf("1,000 entries about 17 facts: %d requests", m.Requests)
		assert.Equal(t, int64(4+10), m.Routes["GET /repos/{owner}/{repo}/actions/runs/{run_id}"].Requests, "one run read per repository of missing runs and per live run")
		assert.Equal(t, int64(1+4), m.Routes["GET /repos/{owner}/{repo}"].Requests, "the lock repository's check, then one probe per nonexistent repository")
		assert.Equal(t, int64(10), m.Routes["GET /repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt}/jobs"].Requests, "one job list per live attempt")
		assert.LessOrEqual(t, m.Routes["GET /orgs/{org}/installation"].Requests, int64(1+3), "one installation lookup per owner")
		assert.Less(t, m.Requests, int64(50))
		var re *reap.Error
		require.ErrorAs(t, err, &re)
		assert.Equal(t, reap.CodeEvidenceUnavailable, re.Code, "the unverifiable entries still fail the run visibly")
		assert.NotContains(t, w.Stdout.String(), reap.CodeRequestBudgetSpent)
		assert.Equal(t, s.Queue, w.State().Queue)
	})
}

// TestReapBudgetCheckpointsAndTheNextRunContinues: 1,000 queue entries of
// 500 finished runs need more than one budget. The first run proves what
// its budget allows, removes those entries in its queue checkpoint, keeps
// the rest in order, warns and exits 0; the second run finishes the job.
func TestReapBudgetCheckpointsAndTheNextRunContinues(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := reaptest.New(t, cfgLifecycle)
		now := time.Now()
		s := state(4)
		var runs []int64
		for range 500 {
			runs = append(runs, run(w, game, "completed", "success"))
		}
		for i := range 1000 {
			e := entry(game, runs[i%500], fmt.Sprintf("r%d", i), 0, now)
			e.HolderID = fmt.Sprintf("%s/%s:%d:build:leg-%d", owner, game, runs[i%500], i)
			s.Queue = append(s.Queue, e)
		}
		w.SeedState(s)

		var perRun []int64
		for attempt := 1; attempt <= 2; attempt++ {
			w.Em.ResetMetrics()
			require.NoError(t, os.Truncate(w.SummaryPath, 0))
			stdout := len(w.Stdout.String())
			require.NoError(t, reap.Run(context.Background(), deps(w, nil)), "run %d", attempt)
			perRun = append(perRun, requests(w))
			assert.LessOrEqual(t, requests(w), int64(reap.DefaultRequestBudget), "run %d", attempt)
			left := w.State().Queue
			if attempt == 1 {
				require.NotEmpty(t, left, "one budget cannot verify 500 runs")
				assert.Less(t, len(left), 1000)
				assert.Contains(t, w.Stdout.String()[stdout:], "::warning::"+reap.CodeRequestBudgetSpent)
				assert.Contains(t, w.Summary(), fmt.Sprintf("%d entries remain unverified or unwritten", len(left)))
				// The survivors keep their relative order.
				idx := map[string]int{}
				for i, e := range s.Queue {
					idx[e.HolderID] = i
				}
				for i := 1; i < len(left); i++ {
					assert.Less(t, idx[left[i-1].HolderID], idx[left[i].HolderID])
				}
			} else {
				assert.Empty(t, left, "the second run finished the cleanup")
				assert.NotContains(t, w.Stdout.String()[stdout:], reap.CodeRequestBudgetSpent)
			}
		}
		t.Logf("1,000 entries of 500 finished runs: requests per run %v", perRun)
		assert.Equal(t, []string{seedM, msgQE, msgQE}, w.Messages())
	})
}

// TestReapBudgetStillCheckpointsProvenHolders: with the smallest budget
// the scan stops early, but every holder it proved stale is quarantined in
// one commit (the write reserve), and the unverified holders stay.
func TestReapBudgetStillCheckpointsProvenHolders(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := reaptest.New(t, cfgLifecycle)
		w.Env["INPUT_REQUEST_BUDGET"] = fmt.Sprint(reap.MinRequestBudget)
		now := time.Now()
		s := state(4)
		for i := range 12 {
			s.Holders = append(s.Holders, holder(game, run(w, game, "completed", "failure"), fmt.Sprintf("r%d", i), 0, now, now.Add(time.Duration(i+1)*time.Minute)))
		}
		w.SeedState(s)
		w.Em.ResetMetrics()

		require.NoError(t, reap.Run(context.Background(), deps(w, nil)))
		assert.LessOrEqual(t, requests(w), int64(reap.MinRequestBudget))
		final := w.State()
		reaped := len(final.Reservations)
		assert.Positive(t, reaped)
		assert.Less(t, reaped, 12, "the budget stopped the scan before every holder was read")
		assert.Equal(t, []string{seedM, msgH}, w.Messages(), "the proven holders in one checkpoint commit")
		assert.Len(t, final.Holders, 12-reaped, "one quarantine per proven holder")
		assert.Equal(t, s.Holders[reaped:], final.Holders, "the earliest leases were reaped first; the rest are untouched")
		assert.Contains(t, w.Stdout.String(), "::warning::"+reap.CodeRequestBudgetSpent)
		assert.Equal(t, "true", w.Outputs()["reaped"])
	})
}

// TestReapRateFloorStopsTheScan: once the reader installation reports less
// than a fifth of its hourly limit left, the scan stops (the rest of the
// hour belongs to the organization's jobs), and the run exits 0.
func TestReapRateFloorStopsTheScan(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := reaptest.New(t, cfgLifecycle)
		id := w.Em.InstallApp(reaptest.ReaderAppID, owner, []string{game})
		w.Em.SetRateLimit(fmt.Sprintf("installation:%d", id), 50)
		now := time.Now()
		s := state(4)
		for i := range 100 {
			s.Queue = append(s.Queue, entry(game, run(w, game, "completed", "success"), fmt.Sprintf("r%d", i), 0, now))
		}
		w.SeedState(s)
		w.Em.ResetMetrics()

		require.NoError(t, reap.Run(context.Background(), deps(w, nil)))
		runReads := w.Em.Metrics().Routes["GET /repos/{owner}/{repo}/actions/runs/{run_id}"].Requests
		assert.Less(t, runReads, int64(50), "stopped before the reader installation's limit")
		assert.GreaterOrEqual(t, runReads, int64(35))
		_, remaining, _ := w.Em.RateLimit(fmt.Sprintf("installation:%d", id))
		assert.GreaterOrEqual(t, remaining*100, 50*(reap.RateFloorPercent-5), "the floor was kept, give or take the last read")
		assert.Len(t, w.State().Queue, 100-int(runReads))
		assert.Contains(t, w.Summary(), "less than 20% of its hourly rate limit left")
		assert.Contains(t, w.Stdout.String(), "::warning::"+reap.CodeRequestBudgetSpent)
	})
}

// TestReapRequestBudgetKnob: an invalid input or environment value warns
// and falls back; a valid input wins over the environment.
func TestReapRequestBudgetKnob(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, input, env, warning string
		want                      int
	}{
		{"default", "", "", "", reap.DefaultRequestBudget},
		{"input", "40", "", "", 40},
		{"env", "", "60", "", 60},
		{"input over env", "40", "60", "", 40},
		{"invalid input", "lots", "", "Ignoring invalid input request-budget; expected an integer between 25 and 1000.", reap.DefaultRequestBudget},
		{"env over the cap", "", "5000", "Ignoring invalid BUILD_LOCK_REQUEST_BUDGET=5000; expected an integer between 25 and 1000.", reap.DefaultRequestBudget},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				w := reaptest.New(t, cfgLifecycle)
				w.Env["INPUT_REQUEST_BUDGET"] = tc.input
				w.Env["BUILD_LOCK_REQUEST_BUDGET"] = tc.env
				w.SeedState(state(4))
				require.NoError(t, reap.Run(context.Background(), deps(w, nil)))
				assert.Contains(t, w.Summary(), fmt.Sprintf(" of %d requests used", tc.want))
				if tc.warning != "" {
					assert.Contains(t, w.Stdout.String(), "::warning::"+tc.warning)
				} else {
					assert.NotContains(t, w.Stdout.String(), "request-budget")
				}
			})
		})
	}
}

// TestCheckStateBounds pins the bounds: at the bound is accepted, one more
// entry or byte is refused, and every kind of entry counts.
func TestCheckStateBounds(t *testing.T) {
	t.Parallel()
	now := time.Now()
	s := state(5)
	for i := range reap.MaxStateEntries - 2 {
		s.Queue = append(s.Queue, entry(game, int64(10+i), "r", 0, now))
	}
	s.Holders = []lockstate.Holder{holder(game, 1, "r", 0, now, now)}
	s.Reservations = []lockstate.Reservation{{ReservationID: "res-1", State: lockstate.ReservationCooldown, RunnerID: "r", HolderID: "h",
		Repository: owner + "/" + game, RunID: "2", CreatedAt: lockstate.FormatTime(now), AvailableAt: lockstate.FormatTime(now)}}
	assert.Nil(t, reap.CheckStateBounds(s, "seats"))
	s.Queue = append(s.Queue, entry(game, 5, "r", 0, now))
	err := reap.CheckStateBounds(s, "seats")
	require.NotNil(t, err)
	assert.Equal(t, reap.CodeStateTooLarge, err.Code)
	assert.Contains(t, err.Error(), "1001 entries (1 holders, 999 queued, 1 reservations), over the reaper's bound of 1000")

	big := state(4)
	e := entry(game, 1, "r", 0, now)
	e.Workflow = strings.Repeat("w", reap.MaxStateBytes)
	big.Queue = []lockstate.Entry{e}
	err = reap.CheckStateBounds(big, "seats")
	require.NotNil(t, err)
	assert.Contains(t, err.Error(), "bytes, over the reaper's bound of 1048576")
	assert.Nil(t, reap.CheckStateBounds(nil, "seats"))
}

// TestWriteReserve: a tenth of the budget, at least MinWriteReserve.
func TestWriteReserve(t *testing.T) {
	t.Parallel()
	for budget, want := range map[int]int{25: 10, 100: 10, 150: 15, 300: 30, 1000: 100} {
		assert.Equal(t, want, reap.WriteReserve(budget), "budget %d", budget)
		assert.Less(t, reap.WriteReserve(budget), budget, "the scan always gets a share")
	}
}

// TestReapRefusedCheckpointIsNotAFailure: two holders are proven stale,
// and a concurrent writer makes every compare-and-swap write of their
// checkpoint lose until the whole budget is spent. The write that would
// pass the budget is not sent: nothing of the checkpoint landed, so the run
// reports both holders as not written (the next run proves them again),
// warns and exits 0.
func TestReapRefusedCheckpointIsNotAFailure(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := reaptest.New(t, cfgLifecycle)
		w.Env["INPUT_REQUEST_BUDGET"] = fmt.Sprint(reap.MinRequestBudget)
		now := time.Now()
		s := state(4)
		first := holder(game, run(w, game, "completed", "failure"), "r1", 0, now, now.Add(time.Minute))
		second := holder(game, run(w, game, "completed", "failure"), "r2", 0, now, now.Add(time.Hour))
		s.Holders = []lockstate.Holder{first, second}
		w.SeedState(s)
		var mu sync.Mutex
		puts := 0
		tr := &hookTransport{next: w.API, match: func(r *http.Request) bool {
			if !isStatePut(r) {
				return false
			}
			mu.Lock()
			defer mu.Unlock()
			if puts++; puts > 0 {
				// A concurrent writer wins every race.
				c := w.State()
				c.Queue = append(c.Queue, entry(game, int64(900+puts), fmt.Sprintf("q%d", puts), 0, now))
				w.SeedState(c)
			}
			return false
		}}
		w.Em.ResetMetrics()

		err := reap.Run(context.Background(), deps(w, tr))
		require.NoError(t, err)
		assert.Equal(t, int64(reap.MinRequestBudget), requests(w), "the whole budget, not one request more")
		assert.Equal(t, []lockstate.Holder{first, second}, w.State().Holders, "nothing of the checkpoint landed")
		assert.Empty(t, w.State().Reservations)
		assert.Equal(t, 2, strings.Count(w.Summary(), "not written: the run's request budget (25 requests) was spent"))
		assert.Contains(t, w.Stdout.String(), "::warning::"+reap.CodeRequestBudgetSpent)
		assert.Contains(t, w.Summary(), "2 entries remain unverified or unwritten")
	})
}
