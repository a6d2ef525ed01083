package checker_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/checker"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

const machA, machB = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"

func onMachine(e lockstate.Entry, m string) lockstate.Entry {
	e.MachineID = m
	return e
}

func holderOn(n int, runner, m string) lockstate.Holder {
	h := holder(n, runner)
	h.MachineID = m
	return h
}

// TestOneSeatPerMachine: two holders recording one machineId break the
// invariant in the version that has them; holders on two machines, or
// without a recorded machine, do not.
func TestOneSeatPerMachine(t *testing.T) {
	t.Parallel()
	clean := []checker.Version{
		version(t, 0, 3, []lockstate.Holder{holderOn(1, "agent-1", machA), holderOn(2, "agent-2", machB), holder(3, "agent-3")}, nil),
	}
	rep := checker.Check(clean, checker.Input{Lock: "seats", MaxHolders: 3})
	assert.True(t, rep.OK(), rep.Violations)

	broken := []checker.Version{
		version(t, 0, 3, []lockstate.Holder{holderOn(1, "agent-1", machA)}, []lockstate.Entry{onMachine(entry(2, "agent-2"), machA)}),
		version(t, 1, 3, []lockstate.Holder{holderOn(1, "agent-1", machA), holderOn(2, "agent-2", machA)}, nil),
	}
	rep = checker.Check(broken, checker.Input{Lock: "seats", MaxHolders: 3})
	assert.Equal(t, 1, rep.MachineViolations)
	require.NotEmpty(t, rep.Violations)
	assert.Contains(t, rep.Violations[0], "one seat per machine")
}

// TestMachineFIFOAndSiblingReclaim: an admission ahead of an earlier
// waiter of its own machine is a FIFO violation; passing a waiter whose
// machine holds a seat is the allowed skip; a sibling agent reclaiming its
// machine's quarantine displaces nobody and is no unauthorized removal.
func TestMachineFIFOAndSiblingReclaim(t *testing.T) {
	t.Parallel()
	w1, w2 := onMachine(entry(2, "agent-2"), machA), onMachine(entry(3, "agent-3"), machA)
	vs := []checker.Version{
		version(t, 0, 3, nil, []lockstate.Entry{w1, w2}),
		version(t, 1, 3, []lockstate.Holder{holderOn(3, "agent-3", machA)}, []lockstate.Entry{w1}),
	}
	rep := checker.Check(vs, checker.Input{Lock: "seats", MaxHolders: 3})
	assert.Equal(t, 1, rep.FIFOViolations, rep.Violations)
	assert.Contains(t, rep.Violations[0], "same machine")

	other := onMachine(entry(4, "agent-4"), machB)
	vs = []checker.Version{
		version(t, 0, 3, []lockstate.Holder{holderOn(1, "agent-1", machA)}, []lockstate.Entry{w1, other}),
		version(t, 1, 3, []lockstate.Holder{holderOn(1, "agent-1", machA), holderOn(4, "agent-4", machB)}, []lockstate.Entry{w1}),
	}
	rep = checker.Check(vs, checker.Input{Lock: "seats", MaxHolders: 2})
	assert.True(t, rep.OK(), rep.Violations)

	q := lockstate.Reservation{ReservationID: "q1", HolderID: entry(1, "").HolderID, Repository: "acme/game", Workflow: "CI", Job: "build",
		RunID: "1", RunAttempt: "1", RunURL: "https://github.com/acme/game/actions/runs/1", RunnerID: "agent-1", MachineID: machA,
		Reason: "cleanup-evidence-unknown", State: lockstate.ReservationQuarantine, CreatedAt: "2026-12-02T10:00:00.000Z"}
	waiter := onMachine(entry(5, "agent-5"), machB)
	s0 := withReservations(t, 4, 0, nil, []lockstate.Entry{waiter, w1}, q)
	s1 := withReservations(t, 4, 1, []lockstate.Holder{holderOn(2, "agent-2", machA)}, []lockstate.Entry{waiter})
	s1.Actor = "job:" + w1.HolderID + "@1"
	rep = checker.Check([]checker.Version{s0, s1}, checker.Input{Lock: "seats", MaxHolders: 1, Authorize: func(ev checker.RemovalEvent) string {
		return "removed " + ev.Kind
	}})
	assert.True(t, rep.OK(), rep.Violations)
}

func withReservations(t *testing.T, schema, sec int, holders []lockstate.Holder, queue []lockstate.Entry, res ...lockstate.Reservation) checker.Version {
	t.Helper()
	v := version(t, sec, schema, holders, queue)
	s, err := lockstate.Decode(v.Content, lockstate.DecodeOptions{Lock: "seats"})
	require.NoError(t, err)
	s.Reservations = res
	if s.Reservations == nil {
		s.Reservations = []lockstate.Reservation{}
	}
	v.Content, err = lockstate.Encode(s)
	require.NoError(t, err)
	return v
}
