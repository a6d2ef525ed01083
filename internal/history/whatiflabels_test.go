package history

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// oneProOnePlus is a named-seat lock with one pro and one plus seat.
func oneProOnePlus() lockstate.Config {
	c := cfg(2)
	c.Seats = lockstate.NewSeatList([]lockstate.SeatConfig{{Name: "pro-1", Labels: []string{"pro"}}, {Name: "plus-1", Labels: []string{"plus"}}})
	c.Priority = lockstate.PriorityConfig{Max: 5, MaxForPullRequests: 0}
	return c
}

func group(t *testing.T, gs []GroupStats, key string) GroupStats {
	t.Helper()
	for _, g := range gs {
		if g.Key == key {
			return g
		}
	}
	t.Fatalf("no group %q in %+v", key, gs)
	return GroupStats{}
}

// Three pro jobs and one plus job arrive together, each holding 10
// minutes: the pro jobs wait 0, 10 and 20 minutes on the one pro seat.
// One pro seat more halves the longest pro wait and changes nothing for
// plus; one plus seat more changes nothing for anyone.
func TestWhatIfOneSeatMorePerLabel(t *testing.T) {
	t.Parallel()
	hold := 10 * time.Minute
	jobs := []ReplayJob{
		{Arrival: t0, Hold: hold, Runner: "a", Labels: "pro", Release: ReleaseConfirmed},
		{Arrival: t0.Add(time.Second), Hold: hold, Runner: "b", Labels: "pro", Release: ReleaseConfirmed},
		{Arrival: t0.Add(2 * time.Second), Hold: hold, Runner: "c", Labels: "pro", Release: ReleaseConfirmed},
		{Arrival: t0.Add(3 * time.Second), Hold: hold, Runner: "d", Labels: "plus", Release: ReleaseConfirmed},
	}
	st := &Stats{Jobs: jobs, Seats: 2, Schema: lockstate.FencedSchemaVersion, Config: oneProOnePlus()}
	wi := RunWhatIf(st)

	require.Len(t, wi.Scenarios, 1, "a named-seat lock gets no anonymous seat counts")
	base := wi.Scenarios[0]
	assert.True(t, base.Observed)
	assert.Equal(t, 4, base.Admitted)
	assert.InDelta(t, (20*time.Minute - 2*time.Second).Seconds(), group(t, base.ByLabel, "pro").Wait.Max, 0.001)
	assert.InDelta(t, 0, group(t, base.ByLabel, "plus").Wait.Max, 0.001)

	require.Len(t, wi.LabelScenarios, 2, "one scenario per label the seats carry")
	byLabel := map[string]Scenario{}
	for _, sc := range wi.LabelScenarios {
		byLabel[sc.Label] = sc
	}
	pro := byLabel["pro"]
	assert.Equal(t, 2, pro.SeatsWithLabel, "one pro seat now, two in the scenario")
	assert.Equal(t, 3, pro.Seats)
	assert.InDelta(t, (10*time.Minute - 2*time.Second).Seconds(), group(t, pro.ByLabel, "pro").Wait.Max, 0.001)
	assert.InDelta(t, 0, group(t, pro.ByLabel, "plus").Wait.Max, 0.001)
	plus := byLabel["plus"]
	assert.Equal(t, 2, plus.SeatsWithLabel)
	assert.InDelta(t, group(t, base.ByLabel, "pro").Wait.Max, group(t, plus.ByLabel, "pro").Wait.Max, 0.001,
		"a plus seat does not serve pro jobs")
}

// A priority-5 job arriving after two priority-0 jobs is replayed ahead
// of them, as the lock admitted it: its class waits less.
func TestWhatIfReplaysPriorityClasses(t *testing.T) {
	t.Parallel()
	hold := 10 * time.Minute
	jobs := []ReplayJob{
		{Arrival: t0, Hold: hold, Runner: "a", Labels: "pro", Release: ReleaseConfirmed},
		{Arrival: t0.Add(time.Second), Hold: hold, Runner: "b", Labels: "pro", Release: ReleaseConfirmed},
		{Arrival: t0.Add(2 * time.Second), Hold: hold, Runner: "c", Labels: "pro", Release: ReleaseConfirmed},
		{Arrival: t0.Add(3 * time.Second), Hold: hold, Runner: "d", Labels: "pro", Priority: 5, Release: ReleaseConfirmed},
	}
	sc := ReplaySeats(jobs, oneProOnePlus(), lockstate.FencedSchemaVersion, "")
	require.Equal(t, 4, sc.Admitted)
	require.Len(t, sc.ByClass, 2)
	assert.Equal(t, "5", sc.ByClass[0].Key, "highest class first")
	assert.InDelta(t, (10*time.Minute - 3*time.Second).Seconds(), sc.ByClass[0].Wait.Max, 0.001, "admitted at the first release, ahead of jobs b and c")
	assert.InDelta(t, (30*time.Minute - 2*time.Second).Seconds(), sc.ByClass[1].Wait.Max, 0.001)
}

// A job asking for any seat is counted under "any"; the what-if seat's
// name never collides with a configured one.
func TestWhatIfSeatNameIsUnique(t *testing.T) {
	t.Parallel()
	seats := []lockstate.SeatConfig{{Name: "whatif-pro", Labels: []string{"pro"}}, {Name: "whatif_pro-2", Labels: []string{"pro"}}}
	name := extraSeatName(seats, "pro")
	assert.True(t, lockstate.ValidSeatName(name))
	assert.Equal(t, "whatif-pro-3", name, "whatif-pro is taken, whatif-pro-2 selects the same secret suffix as whatif_pro-2")
	long := extraSeatName(nil, string(make([]byte, 0))+"abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghij1234")
	assert.LessOrEqual(t, len(long), lockstate.MaxSeatNameLength)
	assert.True(t, lockstate.ValidSeatName(long))

	jobs := []ReplayJob{{Arrival: t0, Hold: time.Minute, Runner: "a", Release: ReleaseConfirmed}}
	sc := ReplaySeats(jobs, oneProOnePlus(), lockstate.FencedSchemaVersion, "plus")
	assert.Equal(t, 1, group(t, sc.ByLabel, "any").Admissions)
}
