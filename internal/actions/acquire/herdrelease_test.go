package acquire

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
)

// A paced first write is kept clear of the releases the current holders
// are forecast to decide (docs/performance.md §31).

func TestForecastReleasesNeedsAlikeLoggedHolds(t *testing.T) {
	t.Parallel()
	const s = time.Second
	const ms = time.Millisecond
	now := forecastT0.Add(3 * s)
	rtt := 250 * ms
	holders := holdersAt(0, 1500*ms)

	assert.Nil(t, forecastReleases(shortHolds(holders), now, rtt), "no hold logged")
	assert.Nil(t, forecastReleases(shortHolds(holders, 5*s), now, rtt), "one hold says nothing of their spread")
	assert.Nil(t, forecastReleases(shortHolds(holders, 5*s, 7*s), now, rtt), "holds 2 s apart: too unalike to say when the next ends")
	assert.Nil(t, forecastReleases(shortHolds(holders, 5*s, 5200*ms), now, 0), "no round trip measured yet")
	assert.Nil(t, forecastReleases(shortHolds(holdersAt(0, 4*s), 5*s, 5200*ms), now, rtt), "an acquiredAt ahead of now: a skewed writer clock")
	assert.Nil(t, forecastReleases(nil, now, rtt))

	// Alike holds: each holder's acquiredAt, plus the median hold, plus
	// four round trips (its admission's answer, the release's mint and
	// read).
	due := forecastReleases(shortHolds(holders, 5*s, 5200*ms, 5100*ms), now, rtt)
	require.Len(t, due, 2)
	assert.Equal(t, forecastT0.Add(5100*ms+4*rtt), due[0])
	assert.Equal(t, forecastT0.Add(1500*ms+5100*ms+4*rtt), due[1])

	assert.Empty(t, forecastReleases(shortHolds(nil, 5*s, 5*s), now, rtt), "no holder, no release")

	// The margin is four of the job's reads: a second at 250 ms, a third
	// of one at 80 ms, where holds 0.4 s apart are already too unalike.
	assert.Equal(t, time.Second, newReleaseForecast(shortHolds(holders, 5*s, 5*s), now, rtt).margin)
	fast := newReleaseForecast(shortHolds(holders, 5*s, 5400*ms), now, 80*ms)
	assert.Equal(t, 320*ms, fast.margin)
	assert.Nil(t, fast.due)
	assert.Len(t, newReleaseForecast(shortHolds(holders, 5*s, 5400*ms), now, rtt).due, 2)
}

func TestClearSlotMovesAPacedWriteOffARelease(t *testing.T) {
	t.Parallel()
	const ms = time.Millisecond
	at := func(d time.Duration) time.Time { return herdT0.Add(d) }
	lead := 250 * ms
	w := herdSlotLength(1)
	for _, tc := range []struct {
		name  string
		due   []time.Duration
		slot  time.Duration
		floor time.Duration
		want  time.Duration
	}{
		{name: "no forecast", slot: 10000 * ms, want: 10000 * ms},
		{name: "a second clear of it", due: []time.Duration{11250 * ms}, slot: 10000 * ms, want: 10000 * ms},
		{name: "just short of a second", due: []time.Duration{11200 * ms}, slot: 10000 * ms, floor: 9000 * ms, want: 9950 * ms},
		{name: "room before it: written a margin ahead of the release", due: []time.Duration{10500 * ms}, slot: 10000 * ms, floor: 9000 * ms, want: 9250 * ms},
		{name: "no room before it (the write ahead): a margin after", due: []time.Duration{10500 * ms}, slot: 10000 * ms, floor: 9500 * ms, want: 11250 * ms},
		{name: "the room before clashes with an earlier release", due: []time.Duration{9000 * ms, 10500 * ms}, slot: 10000 * ms, floor: 8000 * ms, want: 11250 * ms},
		{name: "room before both", due: []time.Duration{9800 * ms, 10500 * ms}, slot: 10000 * ms, floor: 8000 * ms, want: 8550 * ms},
		{name: "after it meets the next: past both", due: []time.Duration{10200 * ms, 11000 * ms}, slot: 10000 * ms, floor: 9500 * ms, want: 11750 * ms},
		{name: "releases back to back past a slot's length: stays", due: []time.Duration{10500 * ms, 11600 * ms, 12700 * ms}, slot: 10000 * ms, floor: 9500 * ms, want: 10000 * ms},
	} {
		f := releaseForecast{lead: lead, margin: time.Second}
		for _, d := range tc.due {
			f.due = append(f.due, at(d))
		}
		assert.Equal(t, at(tc.want), f.clearSlot(at(tc.slot), at(tc.floor), w), tc.name)
	}
}

func TestHerdSlotClearsTheReleasesInTicketOrder(t *testing.T) {
	t.Parallel()
	const ms = time.Millisecond
	w := herdSlotLength(1)
	now := herdT0.Add(2 * time.Second)
	anchor := herdT0.Add(1800 * ms)
	st := arrivalsState(anchor, logged(herdT0.Add(1500*ms), 100), logged(anchor, 102))
	plan := func(count int64, f releaseForecast) *herdPlan {
		return &herdPlan{rate: 10, t: ticket{window: 1700003600, count: count}, start: herdT0, releases: f}
	}

	// Without a forecast the slots are as before: a slot per arrival ahead.
	assert.Equal(t, anchor.Add(w), plan(104, releaseForecast{}).slot(st, 1, now))
	assert.Equal(t, anchor.Add(2*w), plan(106, releaseForecast{}).slot(st, 1, now))

	// A release due as 104's write would be decided (a read after its
	// slot): 104 writes a margin before it, and 106, which counts 104
	// ahead, counts that move too and keeps a slot after it.
	f := releaseForecast{due: []time.Time{anchor.Add(w + 400*ms)}, lead: 250 * ms, margin: time.Second}
	s104 := plan(104, f).slot(st, 1, now)
	assert.Equal(t, anchor.Add(w+400*ms-time.Second-250*ms), s104)
	s106 := plan(106, f).slot(st, 1, now)
	assert.Equal(t, s104.Add(w), s106)
	// Past the last forecast release, a slot apart, however many are
	// ahead (the App's tickets count every lock's jobs).
	assert.Equal(t, s104.Add(5000*w), plan(104+2*5000, f).slot(st, 1, now))

	// The write ahead leaves no room before the release: 104 writes a
	// margin after it, and 106 a slot after that.
	f.due = []time.Time{anchor.Add(1500 * ms)}
	s104 = plan(104, f).slot(st, 1, now)
	assert.Equal(t, anchor.Add(1500*ms+time.Second-250*ms), s104)
	assert.Equal(t, s104.Add(w), plan(106, f).slot(st, 1, now))
}

// TestHerdSlotsStayOrderedAndClear: whatever the forecast, the slots of
// consecutive arrivals are ordered and at least herdFirstWaveSpacing
// apart, a slot moved ahead is never before its floor (the write before
// it, or now), and each is either clear of every forecast release or
// where the pacing alone puts it (releases too close together to pass).
func TestHerdSlotsStayOrderedAndClear(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		w := herdSlotLength(rapid.SampledFrom([]float64{1, 0.5, 0.25}).Draw(rt, "share"))
		lead := time.Duration(rapid.Int64Range(0, 800).Draw(rt, "leadMs")) * time.Millisecond
		anchor := herdT0.Add(time.Duration(rapid.Int64Range(0, 5000).Draw(rt, "anchorMs")) * time.Millisecond)
		now := anchor.Add(time.Duration(rapid.Int64Range(0, 3000).Draw(rt, "nowMs")) * time.Millisecond)
		f := releaseForecast{lead: lead, margin: herdReleaseMarginReads * lead}
		for range rapid.IntRange(0, 6).Draw(rt, "releases") {
			f.due = append(f.due, anchor.Add(time.Duration(rapid.Int64Range(-2000, 30000).Draw(rt, "dueMs"))*time.Millisecond))
		}
		prev := anchor
		for k := range rapid.IntRange(1, 8).Draw(rt, "ahead") {
			floor := clock.Later(prev.Add(herdFirstWaveSpacing), now)
			got := f.clearSlot(prev.Add(w), floor, w)
			if got.Before(prev.Add(w)) && got.Before(floor) {
				rt.Fatalf("slot %d moved ahead to %v, before its floor %v", k, got, floor)
			}
			if k > 0 && got.Sub(prev) < herdFirstWaveSpacing {
				rt.Fatalf("slot %d is %v after the one before it", k, got.Sub(prev))
			}
			if !got.Equal(prev.Add(w)) {
				for _, r := range f.due {
					if d := got.Add(lead).Sub(r); d > -f.margin && d < f.margin {
						rt.Fatalf("moved slot %d decides %v from a release", k, d)
					}
				}
			}
			prev = got
		}
	})
}
