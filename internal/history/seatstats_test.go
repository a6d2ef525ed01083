package history

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

func TestStatsPerClassLabelAndSeat(t *testing.T) {
	t.Parallel()
	h := seatScene(t, seatsCfg())
	require.Equal(t, lockstate.OutcomeAdmitted, h.acquireSeat(5, "pro", 5).Outcome) // queued at minute 5, admitted at 7
	res := Verify(h.input())
	require.Equal(t, StatusClean, res.Status, "%+v", res.FirstViolation)
	st := Compute(lockName, res.Base, res.Steps, Window{})

	require.Len(t, st.Classes, 2)
	assert.Equal(t, "5", st.Classes[0].Key, "highest class first")
	assert.Equal(t, 1, st.Classes[0].Admissions)
	assert.InDelta(t, 120, st.Classes[0].Wait.Max, 0.001)
	assert.Equal(t, "0", st.Classes[1].Key)
	assert.Equal(t, 3, st.Classes[1].Admissions)
	assert.Equal(t, []string{"plus", "pro"}, []string{st.LabelSets[0].Key, st.LabelSets[1].Key})
	assert.Equal(t, 1, st.LabelSets[0].Admissions)
	assert.Equal(t, 3, st.LabelSets[1].Admissions)

	require.Len(t, st.SeatUse, 3)
	use := map[string]SeatStats{}
	for _, s := range st.SeatUse {
		use[s.Seat] = s
	}
	assert.Equal(t, 2, use["pro-a-1"].Admissions)
	assert.Equal(t, 0, use["pro-a-1"].AffinityHits, "job 5 ran on another runner than pro-a-1's last holder")
	// The window runs from minute 0 to 7: pro-a-2 was held from minute 2.
	assert.InDelta(t, 5.0/7, use["pro-a-2"].Utilization, 0.001)
	assert.InDelta(t, 4.0/7, use["plus-1"].Utilization, 0.001)
	assert.InDelta(t, 5.0/7, use["pro-a-1"].Utilization, 0.001, "held minutes 1-6, free 6-7")
}

func TestStatsSeatAffinityHit(t *testing.T) {
	t.Parallel()
	h := newHist(t, seatsCfg())
	require.Equal(t, "pro-a-1", h.acquireSeat(1, "pro", 0).Seat)
	h.release(1, confirmed)
	require.Equal(t, "pro-a-1", h.acquireSeat(1, "pro", 0).Seat, "the runner's last seat, not the never-used pro-a-2")
	res := Verify(h.input())
	require.Equal(t, StatusClean, res.Status, "%+v", res.FirstViolation)
	st := Compute(lockName, res.Base, res.Steps, Window{})
	for _, s := range st.SeatUse {
		if s.Seat == "pro-a-1" {
			assert.Equal(t, 2, s.Admissions)
			assert.Equal(t, 1, s.AffinityHits)
		}
	}
}

func TestStatsWithoutSeatsOmitTheSeatFigures(t *testing.T) {
	t.Parallel()
	h := newHist(t, cfg(1))
	h.acquire(1)
	h.release(1, confirmed)
	res := Verify(h.input())
	require.Equal(t, StatusClean, res.Status, "%+v", res.FirstViolation)
	st := Compute(lockName, res.Base, res.Steps, Window{})
	assert.Nil(t, st.Classes)
	assert.Nil(t, st.LabelSets)
	assert.Nil(t, st.SeatUse)
}
