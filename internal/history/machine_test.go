package history

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

const machA = "0123456789abcdef0123456789abcdef"

// step applies one acquire or release of id on machine machA.
func (h *hist) onMachine(n int, release *lockstate.Report) lockstate.AcquireDecision {
	h.t.Helper()
	id := ident(n)
	id.MachineID = machA
	id.QueuedAt = h.now
	if release != nil {
		next, _, err := lockstate.Cleanup(h.state, h.cfg, lockstate.CleanupRequest{HolderID: id.HolderID, RunAttempt: "1", RunnerID: id.RunnerID,
			Report: *release, ReservationID: "res-" + strconv.Itoa(n), Identity: id, ServerURL: lockstate.DefaultServerURL}, h.now)
		require.NoError(h.t, err)
		h.commit(next, "Release")
		return lockstate.AcquireDecision{}
	}
	next, dec, err := lockstate.Acquire(h.state, h.cfg, lockstate.AcquireRequest{Identity: id, Lease: time.Hour}, h.now)
	require.NoError(h.t, err)
	if dec.Changed {
		h.commit(next, "Acquire")
	}
	return dec
}

// TestVerifyMachineSerialization: a history of two runner agents of one
// machine on a two-seat lock serialized by machine replays clean (the
// sibling waits with a seat free, then reclaims the machine's quarantine);
// a version giving the machine a second seat breaks machine-serialization.
func TestVerifyMachineSerialization(t *testing.T) {
	t.Parallel()
	c := cfg(2)
	c.SerializeBy = lockstate.SerializeByMachine
	h := newHist(t, c)
	require.Equal(t, lockstate.OutcomeAdmitted, h.onMachine(1, nil).Outcome)
	require.Equal(t, lockstate.OutcomeQueued, h.onMachine(2, nil).Outcome, "a seat is free, but not for this machine")
	unproven := lockstate.Report{Status: lockstate.StatusUnknown, Health: lockstate.HealthHealthy, Reason: "return-timeout"}
	h.onMachine(1, &unproven)
	dec := h.onMachine(2, nil)
	require.True(t, dec.QuarantineRecovered, "the sibling agent reclaims the machine's quarantine")
	res := Verify(h.input())
	require.Equal(t, StatusClean, res.Status, "%+v", res.FirstViolation)
	assert.Equal(t, 1, res.Results["reclaimed"])

	h.onMachine(2, &confirmed)
	require.Equal(t, lockstate.OutcomeAdmitted, h.onMachine(3, nil).Outcome)
	h.planted(func(s *lockstate.State) {
		id := ident(4)
		id.MachineID = machA
		s.FencingToken++
		s.Holders = append(s.Holders, lockstate.Holder{Entry: lockstate.Entry{HolderID: id.HolderID, Repository: id.Repository, Workflow: id.Workflow,
			Job: id.Job, RunID: id.RunID, RunAttempt: "1", RunURL: id.RunURL, QueuedAt: lockstate.FormatTime(h.now), RunnerID: id.RunnerID, MachineID: machA},
			AcquiredAt: lockstate.FormatTime(h.now), ExpiresAt: lockstate.FormatTime(h.now.Add(time.Hour)), FencingToken: s.FencingToken})
	})
	res = Verify(h.input())
	require.NotNil(t, res.FirstViolation)
	assert.Equal(t, RuleMachineSerialization, res.FirstViolation.Rule)
}

// TestVerifyPreviousGenerationClientBesideAMachine: a client of the
// previous generation does not know serializeBy, so it records no machine
// id and is not refused machine-id-unavailable; the core it runs still
// serializes by the machines the state records. Its admission with a seat
// free while the holder's sibling agent waits is explained at schema 5 or
// lower, and at schema 6 (which that generation refuses to write) it is
// not.
func TestVerifyPreviousGenerationClientBesideAMachine(t *testing.T) {
	t.Parallel()
	for _, schema := range []int{3, 5, 6} {
		c := lockstate.Config{MaxHolders: 2, RunnerSerialization: true, ResourceLifecycle: schema >= 4, AccountHealth: schema >= 5,
			FencedAdmission: schema >= 6, MaxOvertakes: 2, SerializeBy: lockstate.SerializeByMachine}
		h := &hist{t: t, cfg: c, now: t0, author: writer}
		s := lockstate.Empty(lockName)
		s.SchemaVersion = schema
		if schema >= 4 {
			s.Reservations = []lockstate.Reservation{}
		}
		h.commit(s, "Bootstrap")
		require.Equal(t, lockstate.OutcomeAdmitted, h.onMachine(1, nil).Outcome)
		require.Equal(t, lockstate.OutcomeQueued, h.onMachine(2, nil).Outcome, "a seat is free, but not for this machine")

		old := c
		old.SerializeBy = ""
		id := ident(3)
		id.QueuedAt = h.now
		next, dec, err := lockstate.Acquire(h.state, old, lockstate.AcquireRequest{Identity: id, Lease: time.Hour}, h.now)
		require.NoError(t, err)
		require.Equal(t, lockstate.OutcomeAdmitted, dec.Outcome, "schema %d: no machine id, so a machine of its own", schema)
		h.commit(next, "Acquire")

		res := Verify(h.input())
		if schema <= 5 {
			require.Equal(t, StatusClean, res.Status, "schema %d: %+v", schema, res.FirstViolation)
			continue
		}
		require.NotNil(t, res.FirstViolation, "schema %d", schema)
		assert.Equal(t, RuleUnexplainedTransition, res.FirstViolation.Rule, "schema %d", schema)
	}
}
