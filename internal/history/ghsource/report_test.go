package ghsource_test

import (
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history/histgen"
)

// TestReportMatchesGroundTruth: the report computed from the history read
// back through the API equals the simulation's own account of the same run:
// every count exactly, the wait percentiles exactly (both come from the
// same whole-second moments), utilization within a thousandth (the
// simulation integrates its jobs' own intervals and seat schedule; the
// report integrates the committed states).
func TestReportMatchesGroundTruth(t *testing.T) {
	t.Parallel()
	w, truth := generate(t, busy(21, 160))
	_, res := verify(t, options(t, w), nil)
	require.True(t, res.OK(), "%+v", res.FirstViolation)
	st := history.Compute(histgen.Lock, res.Base, res.Steps, history.Window{})

	assert.Equal(t, truth.Commits, st.Commits)
	assert.Equal(t, truth.Admissions, st.Admissions)
	assert.Equal(t, truth.Joins, st.Joins)
	assert.Equal(t, truth.GaveUp, st.GaveUp)
	assert.Equal(t, truth.ReaperQuarantines, st.ReaperQuarantines)
	assert.Equal(t, truth.Recoveries, st.Recoveries)
	assert.Equal(t, truth.Reclaims, st.Reclaims)
	assert.Equal(t, truth.Incidents, st.Incidents)
	assert.Equal(t, truth.IncidentRecoveries, st.IncidentRecoveries)
	assert.Equal(t, truth.Seats, st.Seats)
	require.Positive(t, truth.Admissions)
	require.Positive(t, truth.GaveUp)
	require.Positive(t, truth.ReaperQuarantines)
	require.Positive(t, truth.Reclaims)

	waits := truth.Waits()
	want := history.NewDist(waits)
	assert.Equal(t, want, st.AdmittedWait)
	sort.Slice(waits, func(i, j int) bool { return waits[i] < waits[j] })
	assert.Equal(t, waits[(len(waits)*95+99)/100-1].Seconds(), st.AdmittedWait.P95, "nearest rank, computed independently")
	// The headline's wait counts every job that waited: the admitted, those
	// that gave up (until they left) and those still queued at the end.
	assert.Equal(t, history.NewDist(truth.GaveUpWaits()), st.GaveUpWait)
	assert.Equal(t, st.AdmittedWait.Count+st.GaveUpWait.Count+st.StillWaiting, st.Wait.Count)

	perRepo := map[string]int{}
	for _, j := range truth.Jobs {
		if !j.Admitted.IsZero() {
			perRepo[j.Repository]++
		}
	}
	got := map[string]int{}
	for _, r := range st.Repositories {
		got[r.Repository] = r.Admissions
	}
	assert.Equal(t, perRepo, got)

	hours := map[time.Time]int{}
	for _, j := range truth.Jobs {
		if !j.Admitted.IsZero() {
			hours[j.Admitted.Truncate(time.Hour)]++
		}
	}
	gotHours := map[time.Time]int{}
	for _, h := range st.AdmissionsPerHour {
		gotHours[h.Hour] = h.Admissions
	}
	assert.Equal(t, hours, gotHours)

	u := truth.Utilization(st.From, st.To, 2)
	assert.InDelta(t, u, st.Utilization, 0.001, "report %.4f vs truth %.4f", st.Utilization, u)
	assert.Greater(t, st.Utilization, 0.2)
}

// TestWhatIfAtTheObservedSeatsReproducesTheRun: replaying the observed
// demand at the seat count the run had gives back the run's own waits (the
// generator admits instantly, like the replay), and more seats never make
// the median or the tail wait longer on this demand.
func TestWhatIfAtTheObservedSeatsReproducesTheRun(t *testing.T) {
	t.Parallel()
	o := histgen.Options{Seed: 22, Jobs: 120, Seats: 2, Runners: 6, UnsafeEvery: 7, DeadEvery: 17, CooldownSeconds: 45, Interarrival: 6 * time.Minute}
	w, truth := generate(t, o)
	_, res := verify(t, options(t, w), nil)
	require.True(t, res.OK(), "%+v", res.FirstViolation)
	st := history.Compute(histgen.Lock, res.Base, res.Steps, history.Window{})
	wi := history.RunWhatIf(st)
	require.Len(t, wi.Scenarios, 4)
	seats := []int{}
	for _, sc := range wi.Scenarios {
		seats = append(seats, sc.Seats)
	}
	assert.Equal(t, []int{1, 2, 3, 4}, seats)
	observed := wi.Scenarios[1]
	assert.True(t, observed.Observed)
	assert.Equal(t, history.NewDist(truth.Waits()), observed.Wait)
	assert.Equal(t, truth.Admissions, observed.Admitted)
	for i := 1; i < len(wi.Scenarios); i++ {
		assert.LessOrEqual(t, wi.Scenarios[i].Wait.P95, wi.Scenarios[i-1].Wait.P95)
		assert.LessOrEqual(t, wi.Scenarios[i].Wait.P50, wi.Scenarios[i-1].Wait.P50)
	}
	assert.Greater(t, wi.Scenarios[0].Wait.P95, observed.Wait.P95, "one seat fewer must hurt this demand")
}

// TestReportWindow: a window keeps only its commits, and the state at its
// start comes from the version before it (read once).
func TestReportWindow(t *testing.T) {
	t.Parallel()
	w, truth := generate(t, histgen.Options{Seed: 23, Jobs: 80})
	mid := truth.Jobs[40].Arrival
	o := options(t, w)
	o.From = mid
	l, res := verify(t, o, nil)
	require.True(t, res.OK(), "%+v", res.FirstViolation)
	require.NotNil(t, l.Input.Base)
	assert.True(t, l.Input.Base.Time.Before(mid))
	assert.False(t, res.First.Time.Before(mid))
	st := history.Compute(histgen.Lock, res.Base, res.Steps, history.Window{Since: mid})
	n := 0
	for _, j := range truth.Jobs {
		if !j.Admitted.IsZero() && !j.Admitted.Before(mid) {
			n++
		}
	}
	assert.Equal(t, n, st.Admissions)
}
