package sim_test

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/sim"
)

// runSeed runs one seed in its own bubble and fails t with the replay
// command when an invariant broke.
func runSeed(t *testing.T, seed uint64, cfg sim.Config) sim.Report {
	t.Helper()
	var rep sim.Report
	synctest.Test(t, func(t *testing.T) { rep = sim.Run(t, seed, cfg) })
	assert.Empty(t, rep.Violations, "seed %d failed (%s)\nreplay: %s", seed, rep.Schedule, sim.ReplayCommand(seed))
	return rep
}

// TestSimulation runs a few seeds (more without -race / -short). One seed
// is selected with -run 'TestSimulation/seed=N$' (the replay command every
// failure prints) or SIM_SEED=N.
func TestSimulation(t *testing.T) {
	t.Parallel()
	// Seeds 3, 8, 9, 12, 18, 20, 23, 27, 33, 34, 36, 37, 39 failed before
	// their triage (docs/simulation.md "Triaged findings") and are back in
	// the default set, with 50, 51 and 57 (found by seeds 1-100 after it),
	// and 89, 473, 481, 531, 657 and 683 (found when the audit began to
	// fail requests inside a primary rate-limit window; docs/simulation.md
	// "Found since the CI tier joined make test"), 101092, 106635 and
	// 109417 (the first 10,000-seed soak), and 107466 and 101107 (the soak
	// with direct handoff: docs/simulation.md "Found by the soak with direct
	// handoff"), 101248 (the soak with replica lag: docs/simulation.md
	// "Found by the 10,000-seed soak with replica lag") and 101285 (a seat
	// seed upgraded from schema 5: docs/simulation.md "Found by the
	// 3,000-seed soak after issue 23's request cuts").
	seeds := []uint64{1, 2, 4, 5, 6, 7, 10, 11, 3, 8, 9, 12, 18, 20, 23, 27, 33, 34, 36, 37, 39, 50, 51, 57, 89, 473, 481, 531, 657, 683, 101092, 106635, 109417, 107466, 101107, 101248, 101285}
	if raceEnabled || testing.Short() {
		seeds = seeds[:3]
	}
	if v := os.Getenv("SIM_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, "SIM_SEED")
		seeds = []uint64{n}
	}
	if f := flagRun(); strings.Contains(f, "seed=") {
		// -run 'TestSimulation/seed=N$' selects any seed, listed or not.
		if _, after, ok := strings.Cut(f, "seed="); ok {
			if n, err := strconv.ParseUint(strings.TrimRight(after, "$"), 10, 64); err == nil {
				seeds = []uint64{n}
			}
		}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			rep := runSeed(t, seed, sim.Config{Debug: os.Getenv("SIM_DEBUG") != ""})
			if rep.Debug != "" {
				t.Log(rep.Debug)
			}
			t.Logf("seed %d: %d jobs, %d versions, %d requests, %d admissions, faults %v, digest %s; %s",
				seed, rep.Jobs, rep.Versions, rep.Requests, rep.Admissions, rep.Faults, rep.Digest, rep.Schedule)
		})
	}
}

// ciSeeds is the fixed seed set of the CI tier.
const ciSeeds = 1000

// TestSimulationCITier runs the CI tier: ciSeeds fixed seeds (R-S1 CI
// target), without the race detector (make test runs it on its own line).
// It prints the tier totals.
func TestSimulationCITier(t *testing.T) {
	if raceEnabled || testing.Short() || os.Getenv("SIM_CI") == "" {
		t.Skip("the CI tier runs on its own, without -race: SIM_CI=1 go test -run '^TestSimulationCITier$' ./internal/sim (make sim-ci)")
	}
	runTier(t, 1, ciSeeds)
}

// TestSoak runs SIM_SEEDS seeds from SIM_FIRST (make soak).
func TestSoak(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SIM_SEEDS"))
	if n <= 0 {
		t.Skip("set SIM_SEEDS (make soak SEEDS=N)")
	}
	first, _ := strconv.ParseUint(os.Getenv("SIM_FIRST"), 10, 64)
	if first == 0 {
		first = 100000
	}
	runTier(t, first, n)
}

func runTier(t *testing.T, first uint64, n int) {
	start := time.Now()
	var mu sync.Mutex
	tot := struct {
		seeds, versions, requests, admissions, violations, failed, liveWaiters, liveResolved, early, maxOvertaken, upgrades int64
		maxUpgradeLag                                                                                                       time.Duration
		faults                                                                                                              map[string]int64
		schemas                                                                                                             map[int]int
		lin                                                                                                                 linTotals
	}{faults: map[string]int64{}, schemas: map[int]int{}}
	t.Run("seeds", func(t *testing.T) {
		for i := range n {
			seed := first + uint64(i)
			t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
				t.Parallel()
				rep := runSeed(t, seed, sim.Config{})
				mu.Lock()
				defer mu.Unlock()
				tot.seeds++
				tot.versions += int64(rep.Versions)
				tot.requests += rep.Requests
				tot.admissions += int64(rep.Admissions)
				tot.violations += int64(len(rep.Violations))
				tot.liveWaiters += int64(rep.LiveWaiters)
				tot.liveResolved += int64(rep.LiveResolved)
				tot.early += int64(rep.EarlyCooldowns)
				tot.maxOvertaken = max(tot.maxOvertaken, int64(rep.MaxOvertaken))
				tot.upgrades += int64(rep.Upgrades)
				tot.maxUpgradeLag = max(tot.maxUpgradeLag, rep.MaxUpgradeLag)
				tot.schemas[rep.FinalSchema]++
				tot.lin.add(rep.Linearizability)
				if !rep.OK() {
					tot.failed++
				}
				for k, v := range rep.Faults {
					tot.faults[k] += v
				}
				if line, ok := progress(tot.seeds, int64(n), tot.violations, tot.failed, time.Since(start)); ok {
					// Straight to stdout: t.Log of a parallel subtest would
					// only appear when the whole tier ends.
					fmt.Fprintln(os.Stdout, line)
				}
			})
		}
	})
	keys := make([]string, 0, len(tot.faults))
	for k := range tot.faults {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  %-40s %d", k, tot.faults[k])
	}
	t.Logf("simulation: seeds=%d (from %d) schedules=%d (final schemas %v) state-versions-checked=%d requests=%d admissions=%d violations=%d failed-seeds=%d wall=%s on %d CPUs\n"+
		"liveness: waiters-at-heal=%d resolved-within-bound=%d; cooldowns pruned early by skewed clocks=%d; max overtakes of one waiter=%d\n"+
		"upgrades: written=%d, longest from nothing-left-to-drain to written (faults healed)=%s\n%s\nfaults and events injected:%s",
		tot.seeds, first, tot.seeds, tot.schemas, tot.versions, tot.requests, tot.admissions, tot.violations, tot.failed, time.Since(start).Round(time.Second), runtime.NumCPU(),
		tot.liveWaiters, tot.liveResolved, tot.early, tot.maxOvertaken, tot.upgrades, tot.maxUpgradeLag.Round(time.Second), tot.lin, b.String())
}

// progressEvery is how often (in seeds done) a tier prints its progress.
const progressEvery = 100

// progress is the tier's progress line after done of total seeds, printed
// every progressEvery seeds and after the last one (ok reports whether to
// print now).
func progress(done, total, violations, failed int64, elapsed time.Duration) (string, bool) {
	if done%progressEvery != 0 && done != total {
		return "", false
	}
	return fmt.Sprintf("simulation progress: %d/%d seeds done, %d violations so far (%d failed seeds), %s",
		done, total, violations, failed, elapsed.Round(time.Second)), true
}

func TestProgressCadence(t *testing.T) {
	var printed []int64
	for done := int64(1); done <= 250; done++ {
		if _, ok := progress(done, 250, 0, 0, 0); ok {
			printed = append(printed, done)
		}
	}
	assert.Equal(t, []int64{100, 200, 250}, printed)
	line, ok := progress(300, 1000, 2, 1, 61*time.Second+400*time.Millisecond)
	assert.True(t, ok)
	assert.Equal(t, "simulation progress: 300/1000 seeds done, 2 violations so far (1 failed seeds), 1m1s", line)
}

// flagRun returns the -test.run pattern.
func flagRun() string {
	if f := flag.Lookup("test.run"); f != nil {
		return f.Value.String()
	}
	return ""
}
