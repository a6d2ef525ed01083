package acquire

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

func TestPollDelay(t *testing.T) {
	t.Parallel()
	const s = time.Second
	base := 15 * s
	cases := []struct {
		name string
		in   Schedule
		r    float64
		want time.Duration
	}{
		{"head polls fast", Schedule{Base: base, Rank: 0, Seats: 1}, 0, 1500 * time.Millisecond},
		{"head jitter spread is a third", Schedule{Base: base, Rank: 0, Seats: 1}, 0.999, 2 * s},
		{"second of two seats polls fast", Schedule{Base: base, Rank: 1, Seats: 2}, 0, 1500 * time.Millisecond},
		{"first tail rank polls at base", Schedule{Base: base, Rank: 2, Seats: 2}, 0, base},
		{"tail backs off by rank", Schedule{Base: base, Rank: 5, Seats: 2}, 0, 37500 * time.Millisecond},
		{"tail is capped", Schedule{Base: base, Rank: 49, Seats: 2}, 0, 120 * s},
		{"unknown rank is the tail", Schedule{Base: base, Rank: -1, Seats: 2}, 0, base},
		{"fast slots are bounded", Schedule{Base: base, Rank: 4, Seats: 64}, 0, base},
		{"fast floor is one unit", Schedule{Base: 2 * s, Rank: 0, Seats: 1}, 0, s},
		{"compressed unit", Schedule{Base: 1500 * time.Millisecond, Unit: 100 * time.Millisecond, Rank: 0, Seats: 1}, 0, 150 * time.Millisecond},
		{"sooner cooldown wins", Schedule{Base: base, Rank: 3, Seats: 1, UntilCooldown: 4 * s}, 0.5, 4*s + 125*time.Millisecond},
		{"later cooldown is ignored", Schedule{Base: base, Rank: 0, Seats: 1, UntilCooldown: 10 * s}, 0, 1500 * time.Millisecond},
		{"cooldown jitter stays under 250 ms", Schedule{Base: base, Rank: 3, Seats: 1, UntilCooldown: s}, 0.9999999, s + 249*time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := PollDelay(tc.in, tc.r)
			assert.InDelta(t, float64(tc.want), float64(got), float64(time.Millisecond))
		})
	}
}

func TestPollScheduleBoundsTheOrganizationRequestRate(t *testing.T) {
	t.Parallel()
	// 50 queued jobs behind 2 seats at the default base: total polls per
	// minute with the mean jitter draw.
	perMinute := 0.0
	for rank := 0; rank < 50; rank++ {
		d := PollDelay(Schedule{Base: 15 * time.Second, Rank: rank, Seats: 2}, 0.5)
		perMinute += float64(time.Minute) / float64(d)
	}
	assert.Less(t, perMinute, 300.0, "50 queued jobs stay under 300 requests/min")
	head := PollDelay(Schedule{Base: 15 * time.Second, Rank: 0, Seats: 2}, 0.5)
	assert.LessOrEqual(t, head, 2*time.Second, "median handoff detection ≤ 2 s")
}

// TestConflictStreakWidensTheNextWait: after writes that lost every CAS
// round, the next attempt waits at least half of an exponentially growing
// window (2 s, 4 s, ... capped at MaxConflictBackoff) instead of the fast
// poll, so a burst of jobs joining at once spreads out.
func TestConflictStreakWidensTheNextWait(t *testing.T) {
	t.Parallel()
	q := &acquirer{
		d:   Deps{Clock: clock.NewFake(time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)), Jitter: func() float64 { return 0 }, PollUnit: time.Second},
		cfg: lockstate.Config{MaxHolders: 2},
		s:   settings{poll: 15 * time.Second},
	}
	st := lockstate.Empty("seats")
	base := q.pollDelay(st)
	for streak, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 5: 16 * time.Second, 9: 16 * time.Second} {
		q.conflictStreak = streak
		assert.Equal(t, max(base, want), q.pollDelay(st), "streak %d", streak)
	}
}
