package acquire

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// shortHolds is a state whose holders were handed their seats at the
// offsets from forecastT0 and whose releases logged the holds.
func shortHolds(holders []lockstate.Holder, logged ...time.Duration) *lockstate.State {
	st := stateWith(holders)
	for _, h := range logged {
		st.NoteHold(forecastT0, h)
	}
	for i := range 6 {
		st.Queue = append(st.Queue, lockstate.Entry{HolderID: fmt.Sprintf("acme/w:%d:build:default", 900+i), QueuedAt: lockstate.FormatTime(forecastT0)})
	}
	return st
}

func TestHandWindowForecastsAShortHoldsReleaseFromTheLog(t *testing.T) {
	t.Parallel()
	const s = time.Second
	const ms = time.Millisecond
	now := forecastT0.Add(2 * s)
	q := &acquirer{d: Deps{Clock: clock.NewFake(now), PollUnit: s}, cfg: lockstate.Config{MaxHolders: 1}, s: Settings{Poll: 15 * s}}
	q.rtt.note(300 * ms)
	q.rtt.note(250 * ms) // the shortest: a slow answer only lengthens one read
	q.rtt.note(900 * ms)
	window := func(st *lockstate.State, rank, seats int) Schedule {
		sch := Schedule{Base: q.s.Poll, Rank: rank, Seats: seats}
		q.handWindow(st, &sch, now)
		return sch
	}
	st := shortHolds(holdersAt(0), 5*s, 5*s, 5200*ms)
	sch := window(st, 0, 1)
	require.True(t, sch.HandWindow)
	assert.Equal(t, 750*ms, sch.HandLead, "three of the shortest round trips")
	// The shortest logged hold less twice its distance to the median (0),
	// plus the lead, after the holder's acquiredAt (t0), from now (t0+2).
	assert.Equal(t, 3750*ms, sch.UntilHand)
	assert.False(t, inHandWindow(sch), "asleep until then")

	sch = window(st, 1, 1)
	require.True(t, sch.HandWindow, "the fast rank past the seat")
	assert.Equal(t, 3750*ms+750*ms, sch.UntilHand, "waits for the release ahead of it to have landed")
	assert.Zero(t, sch.HandLead)

	spread := shortHolds(holdersAt(0), 4*s, 5*s, 5*s)
	// 4 s less twice its distance to the median (1 s), plus the lead, less
	// the 2 s the holder has held.
	assert.Equal(t, 4*s-2*s+750*ms-2*s, window(spread, 0, 1).UntilHand, "holds that spread open the window earlier")

	two := shortHolds(holdersAt(0, s), 5*s, 5*s)
	q.cfg.MaxHolders = 2
	assert.Equal(t, 3750*ms, window(two, 0, 2).UntilHand, "rank 0 of two seats: the first release")
	assert.Equal(t, 4750*ms, window(two, 1, 2).UntilHand, "rank 1: the second")
	q.cfg.MaxHolders = 1

	one := window(shortHolds(holdersAt(0), 4*s), 0, 1)
	require.True(t, one.HandWindow, "one logged hold")
	assert.Equal(t, 3*s+750*ms-2*s, one.UntilHand, "from three quarters of it: one hold says nothing of their spread")

	for name, st := range map[string]*lockstate.State{
		"no logged hold":                       shortHolds(holdersAt(0)),
		"holds of a minute":                    shortHolds(holdersAt(0), time.Minute, time.Minute),
		"holds too unalike":                    shortHolds(holdersAt(0), s, 5*s, 5*s),
		"a free seat is taken, not waited for": shortHolds(nil, 5*s, 5*s),
	} {
		assert.False(t, window(st, 0, 1).HandWindow, name)
	}
	assert.False(t, window(st, 2, 1).HandWindow, "not the tail")
	assert.False(t, window(st, -1, 1).HandWindow, "not an unknown rank")
	q.rtt = rttLog{}
	assert.False(t, window(st, 0, 1).HandWindow, "not before a read was timed")

	q.rtt.note(250 * ms)
	at := Schedule{Base: q.s.Poll, Rank: 0, Seats: 1}
	q.handWindow(st, &at, forecastT0.Add(6*s))
	assert.True(t, inHandWindow(at), "in the window once it opened")
}

func TestRTTLogKeepsTheShortestOfTheRecentReads(t *testing.T) {
	t.Parallel()
	var l rttLog
	assert.Zero(t, l.min())
	l.note(0)
	assert.Zero(t, l.min(), "an untimed read is not a round trip")
	l.note(100 * time.Millisecond)
	for range rttSamples {
		l.note(400 * time.Millisecond)
	}
	assert.Equal(t, 400*time.Millisecond, l.min(), "the old short read left the log")
}

func TestReadBankPaysForReadsSoonerThanTheShare(t *testing.T) {
	t.Parallel()
	const ms = time.Millisecond
	t0 := forecastT0
	var b readBank
	floor := 300 * ms
	now := t0
	for i := range readBankReads {
		assert.Equal(t, 10*ms, b.spend(now, 10*ms, floor), "banked read %d", i)
	}
	assert.Equal(t, floor, b.spend(now, 10*ms, floor), "the bank is empty: the share's pace")
	assert.Equal(t, 2*floor, b.spend(now, 2*floor, floor), "a read no sooner than the share spends nothing")
	now = now.Add(floor)
	assert.Equal(t, 10*ms, b.spend(now, 10*ms, floor), "one read accrued per share interval")
	assert.Equal(t, floor, b.spend(now, 10*ms, floor))
	now = now.Add(time.Hour)
	for range readBankReads {
		b.spend(now, 10*ms, floor)
	}
	assert.Equal(t, floor, b.spend(now, 10*ms, floor), "a long sleep banks at most readBankReads")
	assert.Equal(t, 10*ms, b.spend(now, 10*ms, 0), "no share, no bound")
}

func TestAStaleReadInTheHandWindowIsReadAgainAtOnce(t *testing.T) {
	t.Parallel()
	st := shortHolds(holdersAt(0), 5*time.Second, 5*time.Second)
	q := &acquirer{d: Deps{Jitter: func() float64 { return 0 }}, cfg: lockstate.Config{MaxHolders: 1}, last: st}
	q.id.HolderID = st.Queue[0].HolderID
	q.staleSkips = 2
	assert.Equal(t, staleReadDelay, q.staleReadWait(), "a second stale read in a row waits out the replica")
	q.handing = true
	assert.Equal(t, handStaleRereadDelay, q.staleReadWait(), "not when the release is due: at the window's back-to-back pace")
	q.staleSkips = 1
	assert.Equal(t, handStaleRereadDelay, q.staleReadWait(), "the first stale read of the window too")
	q.handing = false
	assert.Equal(t, staleRereadDelay, q.staleReadWait(), "outside the window, the first stale read waits 100-200 ms")
}
