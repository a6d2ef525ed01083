package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestMixedFleetHandoffTargetsJudgeOurWaiters: in a mixed fleet the
// reference client's waiters notice at their own 15-20 s poll, so the
// handoff targets judge our waiters; elsewhere every handoff counts.
func TestMixedFleetHandoffTargetsJudgeOurWaiters(t *testing.T) {
	t.Parallel()
	pooled := Dist{N: 40, MedianS: 3, P95S: 17}
	ours := Dist{N: 20, MedianS: 1.4, P95S: 3.5}
	value := func(wl Workload, id string) (float64, bool) {
		for _, tg := range targets(wl, &Result{HandoffGap: pooled, HandoffOurs: &ours}) {
			if tg.ID == id {
				return tg.Value, tg.Pass
			}
		}
		t.Fatalf("no target %s", id)
		return 0, false
	}
	v, pass := value(Workload{Mixed: true}, TargetHandoffMedian)
	assert.Equal(t, 1.4, v)
	assert.True(t, pass)
	v, pass = value(Workload{Mixed: true}, TargetHandoffP95)
	assert.Equal(t, 3.5, v)
	assert.True(t, pass)
	v, pass = value(Workload{}, TargetHandoffP95)
	assert.Equal(t, 17.0, v)
	assert.False(t, pass)
}

// TestBudgetBoundBurstsAreJudgedOnTheirOwnTail: where the paced write
// budget, not the seats, bounds admissions, a freed seat waits for the
// next paced write by construction; such a burst is judged on its own
// handoff-noticed p95, not the all-workload median and p95.
func TestBudgetBoundBurstsAreJudgedOnTheirOwnTail(t *testing.T) {
	t.Parallel()
	r := &Result{HandoffGap: Dist{N: 288, MedianS: 6.4, P95S: 10.9}}
	ids := func(wl Workload) map[string]bool {
		m := map[string]bool{}
		for _, tg := range targets(wl, r) {
			m[tg.ID] = tg.Pass
		}
		return m
	}
	tail := Workload{NoticedP95: 10e9}
	assert.Contains(t, ids(tail), TargetHandoffP95)
	tail.BudgetBound = true
	got := ids(tail)
	assert.NotContains(t, got, TargetHandoffMedian)
	assert.NotContains(t, got, TargetHandoffP95)
	pass, judged := got[TargetNoticedP95]
	assert.True(t, judged, "its own p95 is judged")
	assert.False(t, pass, "10.9 s against 10 s")
}
