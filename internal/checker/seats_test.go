package checker_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/checker"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

var proPlus = []lockstate.SeatConfig{{Name: "pro-a-1", Labels: []string{"pro"}}, {Name: "pro-a-2", Labels: []string{"pro"}}, {Name: "plus-1", Labels: []string{"plus"}}}

func seatedHolder(n int, runner, seat, labels string, prio int, token int64) lockstate.Holder {
	h := holder(n, runner)
	h.Seat, h.Labels, h.Priority, h.FencingToken = seat, labels, prio, token
	return h
}

func seatWaiter(n int, runner, labels string, prio, overtakes int) lockstate.Entry {
	e := entry(n, runner)
	e.Labels, e.Priority, e.Overtakes = labels, prio, overtakes
	return e
}

// version6 encodes a schema-6 state.
func version6(t *testing.T, sec int, holders []lockstate.Holder, queue []lockstate.Entry) checker.Version {
	t.Helper()
	s := lockstate.Empty("seats")
	s.SchemaVersion = 6
	s.Holders, s.Queue, s.Reservations = holders, queue, []lockstate.Reservation{}
	for _, h := range holders {
		s.FencingToken = max(s.FencingToken, h.FencingToken)
	}
	s.UpdatedAt = lockstate.FormatTime(t0.Add(time.Duration(sec) * time.Second))
	data, err := lockstate.Encode(s)
	require.NoError(t, err)
	return checker.Version{Time: t0.Add(time.Duration(sec) * time.Second), Content: data, Message: "v"}
}

func seatInput() checker.Input {
	return checker.Input{Lock: "seats", MaxHolders: 3, Seats: proPlus, MaxOvertakes: 2, CheckOvertakes: true,
		Removals: []checker.Removal{removal(1, 0), removal(2, 0), removal(3, 0), removal(4, 0), removal(5, 0)}}
}

func TestSeatHistoryPasses(t *testing.T) {
	t.Parallel()
	busy := []lockstate.Holder{seatedHolder(1, "r1", "pro-a-1", "pro", 0, 1), seatedHolder(2, "r2", "pro-a-2", "pro", 0, 2)}
	vs := []checker.Version{
		version6(t, 0, busy, []lockstate.Entry{seatWaiter(3, "r3", "pro", 0, 0), seatWaiter(4, "r4", "pro", 5, 0)}),
		// A plus job passes the pro waiters: they could not use plus-1.
		version6(t, 1, append(busy, seatedHolder(5, "r5", "plus-1", "plus", 0, 3)), []lockstate.Entry{seatWaiter(3, "r3", "pro", 0, 0), seatWaiter(4, "r4", "pro", 5, 0)}),
		// pro-a-1 frees; the class-5 waiter takes it past the class-0 one.
		version6(t, 2, []lockstate.Holder{busy[1], seatedHolder(5, "r5", "plus-1", "plus", 0, 3)}, []lockstate.Entry{seatWaiter(3, "r3", "pro", 0, 0), seatWaiter(4, "r4", "pro", 5, 0)}),
		version6(t, 3, []lockstate.Holder{busy[1], seatedHolder(5, "r5", "plus-1", "plus", 0, 3), seatedHolder(4, "r4", "pro-a-1", "pro", 5, 4)}, []lockstate.Entry{seatWaiter(3, "r3", "pro", 0, 1)}),
	}
	rep := checker.Check(vs, seatInput())
	assert.True(t, rep.OK(), rep.Violations)
	assert.Equal(t, 1, rep.MaxOvertaken)
}

func TestCheckerCatchesSeatGivenTwice(t *testing.T) {
	t.Parallel()
	good := version6(t, 0, []lockstate.Holder{seatedHolder(1, "r1", "pro-a-1", "pro", 0, 1), seatedHolder(2, "r2", "pro-a-2", "pro", 0, 2)}, nil)
	bad := good
	bad.Content = []byte(strings.ReplaceAll(string(good.Content), `"seat": "pro-a-2"`, `"seat": "pro-a-1"`))
	require.NotEqual(t, good.Content, bad.Content)
	bad.Time = t0.Add(time.Second)
	rep := checker.Check([]checker.Version{good, bad}, seatInput())
	assert.False(t, rep.OK())
	assert.Equal(t, 1, rep.SeatViolations, rep.Violations)
}

func TestCheckerCatchesWrongLabels(t *testing.T) {
	t.Parallel()
	vs := []checker.Version{
		version6(t, 0, nil, []lockstate.Entry{seatWaiter(1, "r1", "pro", 0, 0)}),
		version6(t, 1, []lockstate.Holder{seatedHolder(1, "r1", "plus-1", "pro", 0, 1)}, nil),
	}
	rep := checker.Check(vs, seatInput())
	assert.Equal(t, 1, rep.SeatViolations, rep.Violations)
}

func TestCheckerCatchesPriorityInversion(t *testing.T) {
	t.Parallel()
	full := []lockstate.Holder{seatedHolder(1, "r1", "pro-a-1", "pro", 0, 1), seatedHolder(2, "r2", "plus-1", "plus", 0, 2)}
	queue := []lockstate.Entry{seatWaiter(3, "r3", "pro", 0, 0), seatWaiter(4, "r4", "pro", 5, 0)}
	vs := []checker.Version{
		version6(t, 0, full, queue),
		// The class-0 waiter takes the only free pro seat while a class-5
		// waiter that could take it waits: an inversion.
		version6(t, 1, append(full, seatedHolder(3, "r3", "pro-a-2", "pro", 0, 3)), []lockstate.Entry{seatWaiter(4, "r4", "pro", 5, 0)}),
	}
	rep := checker.Check(vs, seatInput())
	assert.Equal(t, 1, rep.PriorityInversions, rep.Violations)

	// The same admission is allowed when the class-0 waiter is a barrier.
	queue[0].Overtakes = 2
	vs[0] = version6(t, 0, full, queue)
	rep = checker.Check(vs, seatInput())
	assert.True(t, rep.OK(), rep.Violations)
}

func TestCheckerCatchesOvertakeBeyondBound(t *testing.T) {
	t.Parallel()
	full := []lockstate.Holder{seatedHolder(1, "r1", "pro-a-1", "pro", 0, 1), seatedHolder(2, "r2", "plus-1", "plus", 0, 2)}
	vs := []checker.Version{
		version6(t, 0, full, []lockstate.Entry{seatWaiter(3, "r3", "pro", 0, 2), seatWaiter(4, "r4", "pro", 9, 0)}),
		// A class-9 waiter passes a class-0 barrier (overtaken twice).
		version6(t, 1, append(full, seatedHolder(4, "r4", "pro-a-2", "pro", 9, 3)), []lockstate.Entry{seatWaiter(3, "r3", "pro", 0, 2)}),
	}
	rep := checker.Check(vs, seatInput())
	assert.Equal(t, 1, rep.OvertakeViolations, rep.Violations)
	assert.Zero(t, rep.PriorityInversions)
}

// TestSeatOvertakeIgnoresPrunedCooldown: a waiter whose runner's cooldown
// expired and was pruned by the admitting write was free, not blocked, and
// a seat is left for it: the admission passes nobody (simulation seat seed
// 138 of TestSeatSeeds, maxOvertakes 0).
func TestSeatOvertakeIgnoresPrunedCooldown(t *testing.T) {
	t.Parallel()
	at := func(sec int, holders []lockstate.Holder, queue []lockstate.Entry, res []lockstate.Reservation) checker.Version {
		v := version6(t, sec, holders, queue)
		s, err := lockstate.Decode(v.Content, lockstate.DecodeOptions{Lock: "seats"})
		require.NoError(t, err)
		s.Reservations = res
		data, err := lockstate.Encode(s)
		require.NoError(t, err)
		v.Content = data
		return v
	}
	e := entry(9, "r3")
	cooldown := lockstate.Reservation{ReservationID: "00000000-0000-4000-8000-000000000009", HolderID: e.HolderID, Repository: e.Repository,
		Workflow: e.Workflow, Job: e.Job, RunID: e.RunID, RunAttempt: e.RunAttempt, RunURL: e.RunURL, RunnerID: "r3",
		Reason: "release cooldown", State: lockstate.ReservationCooldown, CreatedAt: "2026-12-02T10:00:00.000Z", AvailableAt: "2026-12-02T10:00:30.000Z", Seat: "plus-1"}
	h1 := seatedHolder(1, "r1", "pro-a-1", "pro", 0, 1)
	vs := []checker.Version{
		at(0, []lockstate.Holder{h1}, []lockstate.Entry{seatWaiter(3, "r3", "", 0, 0), seatWaiter(4, "r4", "pro", 0, 0)}, []lockstate.Reservation{cooldown}),
		// At 40 s the cooldown has expired: r4's acquire prunes it and
		// takes pro-a-2; plus-1 is left for the waiter on r3.
		at(40, []lockstate.Holder{h1, seatedHolder(4, "r4", "pro-a-2", "pro", 0, 2)}, []lockstate.Entry{seatWaiter(3, "r3", "", 0, 0)}, []lockstate.Reservation{}),
	}
	in := seatInput()
	in.MaxOvertakes = 0
	rep := checker.Check(vs, in)
	assert.True(t, rep.OK(), rep.Violations)
	assert.Zero(t, rep.MaxOvertaken)
}

// TestSeatOvertakeCountEndsWithTheEntry: a waiter passed once, then
// admitted and released, joins again (a rerun) with a fresh entry and is
// passed once more: with maxOvertakes 1 nobody was passed twice (forced
// seat seed 278 of TestSeatSeeds, where the count of the first entry was
// carried to the second).
func TestSeatOvertakeCountEndsWithTheEntry(t *testing.T) {
	t.Parallel()
	at := func(sec int, counter int64, holders []lockstate.Holder, queue []lockstate.Entry) checker.Version {
		v := version6(t, sec, holders, queue)
		s, err := lockstate.Decode(v.Content, lockstate.DecodeOptions{Lock: "seats"})
		require.NoError(t, err)
		s.FencingToken = counter
		data, err := lockstate.Encode(s)
		require.NoError(t, err)
		v.Content = data
		return v
	}
	blocker := seatedHolder(7, "r3", "plus-1", "plus", 0, 1)
	h2 := seatedHolder(2, "r2", "pro-a-2", "pro", 0, 2)
	h1 := seatedHolder(1, "r1", "pro-a-1", "pro", 0, 3)
	h3 := seatedHolder(3, "r3", "pro-a-2", "pro", 0, 4)
	blocker2 := seatedHolder(8, "r3", "plus-1", "plus", 0, 5)
	h6 := seatedHolder(6, "r6", "pro-a-2", "pro", 0, 6)
	vs := []checker.Version{
		// r3 is busy (it holds plus-1), so its pro waiter is blocked.
		at(0, 2, []lockstate.Holder{blocker, h2}, []lockstate.Entry{seatWaiter(3, "r3", "pro", 0, 0), seatWaiter(1, "r1", "pro", 0, 0)}),
		at(1, 3, []lockstate.Holder{blocker, h2, h1}, []lockstate.Entry{seatWaiter(3, "r3", "pro", 0, 1)}),
		// r3 frees; its waiter is admitted, then releases.
		at(2, 4, []lockstate.Holder{h1, h3}, nil),
		at(3, 4, []lockstate.Holder{h1}, nil),
		// It joins again (a new entry, overtakes 0) while r3 is busy again
		// and is passed once more.
		at(4, 5, []lockstate.Holder{h1, blocker2}, []lockstate.Entry{seatWaiter(3, "r3", "pro", 0, 0), seatWaiter(6, "r6", "pro", 0, 0)}),
		at(5, 6, []lockstate.Holder{h1, blocker2, h6}, []lockstate.Entry{seatWaiter(3, "r3", "pro", 0, 1)}),
	}
	in := seatInput()
	in.MaxOvertakes = 1
	in.Removals = append(in.Removals, removal(6, 0), removal(7, 0), removal(8, 0))
	rep := checker.Check(vs, in)
	assert.True(t, rep.OK(), rep.Violations)
	assert.Equal(t, 1, rep.MaxOvertaken)
}

// TestSeatOvertakeCountStartsAtTheUpgrade: passes counted at schema 5 (the
// anonymous check) do not carry into the seat check after the upgrade to
// schema 6, which starts every waiter at 0 overtakes. A waiter on a busy
// runner, passed twice at schema 5 and once after an upgrade that names
// seats, was passed once under the bound (soak seed 101285, where the
// upgrade write was a seat-mode pair and the count went on from 2).
func TestSeatOvertakeCountStartsAtTheUpgrade(t *testing.T) {
	t.Parallel()
	v5 := func(sec int, holders []lockstate.Holder, queue []lockstate.Entry) checker.Version {
		return version(t, sec, 5, holders, queue)
	}
	blocker := holder(7, "r3")
	vs := []checker.Version{
		v5(0, []lockstate.Holder{blocker, holder(2, "r2")}, []lockstate.Entry{entry(3, "r3"), entry(1, "r1"), entry(4, "r4")}),
		v5(1, []lockstate.Holder{blocker, holder(2, "r2"), holder(1, "r1")}, []lockstate.Entry{entry(3, "r3"), entry(4, "r4")}),
		v5(2, []lockstate.Holder{blocker, holder(1, "r1")}, []lockstate.Entry{entry(3, "r3"), entry(4, "r4")}),
		v5(3, []lockstate.Holder{blocker, holder(1, "r1"), holder(4, "r4")}, []lockstate.Entry{entry(3, "r3")}),
		v5(4, []lockstate.Holder{blocker}, []lockstate.Entry{entry(3, "r3")}),
		// The upgrade names seats: r3 still holds plus-1.
		version6(t, 5, []lockstate.Holder{seatedHolder(7, "r3", "plus-1", "", 0, 1)},
			[]lockstate.Entry{seatWaiter(3, "r3", "pro", 0, 0), seatWaiter(5, "r5", "pro", 0, 0)}),
		version6(t, 6, []lockstate.Holder{seatedHolder(7, "r3", "plus-1", "", 0, 1), seatedHolder(5, "r5", "pro-a-1", "pro", 0, 2)},
			[]lockstate.Entry{seatWaiter(3, "r3", "pro", 0, 1)}),
	}
	in := seatInput()
	in.MaxOvertakes = 1
	in.Removals = append(in.Removals, removal(7, 0))
	rep := checker.Check(vs, in)
	assert.True(t, rep.OK(), rep.Violations)
	assert.Equal(t, 2, rep.MaxOvertaken, "two passes at schema 5, one after the upgrade")
}
