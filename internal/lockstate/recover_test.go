package lockstate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRecoverQuarantine(t *testing.T) {
	t.Parallel()
	now := t0.Add(time.Hour)
	s := stateAt(4)
	s.Reservations = []Reservation{quarantineOn("q1", "r1"), cooldownOn("c1", "r2", now.Add(time.Minute)), cooldownOn("old", "r3", now)}
	before := s.Clone()

	out, d, err := RecoverQuarantine(s, cfgLifecycle(1), "q1", now)
	require.NoError(t, err)
	require.Equal(t, before, s)
	assert.True(t, d.Changed)
	assert.Equal(t, 1, d.PrunedCooldowns)
	require.Len(t, out.Reservations, 2)
	r := out.Reservations[0]
	assert.Equal(t, ReservationCooldown, r.State)
	assert.Equal(t, ReasonOperatorRecovery, r.Reason)
	assert.Equal(t, FormatTime(now.Add(360*time.Second)), r.AvailableAt)
	assert.Equal(t, &r, d.Reservation)
	mustEncodeDecode(t, out)

	zero := cfgLifecycle(1)
	zero.ReleaseCooldownSeconds = 0
	out, d, err = RecoverQuarantine(s, zero, "q1", now)
	require.NoError(t, err)
	assert.True(t, d.Freed)
	assert.Len(t, out.Reservations, 1)
	mustEncodeDecode(t, out)

	_, _, err = RecoverQuarantine(s, cfgLifecycle(1), "c1", now)
	requireCode(t, err, CodeReservationNotFound)
	_, _, err = RecoverQuarantine(s, cfgLifecycle(1), "", now)
	requireCode(t, err, CodeReservationIDRequired)
	_, _, err = RecoverQuarantine(stateAt(3), cfgLifecycle(1), "q1", now)
	requireCode(t, err, CodeSchemaTooOld)
}

func TestRecoverIncident(t *testing.T) {
	t.Parallel()
	now := t0.Add(time.Hour)
	inc, err := IncidentFor(ident(50, "r9"), t0, "")
	require.NoError(t, err)
	s := stateAt(5)
	s.ActiveIncident = inc
	before := s.Clone()

	out, d, err := RecoverIncident(s, cfgHealth(1), inc.IncidentID, now, "rec-1")
	require.NoError(t, err)
	require.Equal(t, before, s)
	assert.Nil(t, out.ActiveIncident)
	require.Len(t, out.Reservations, 1)
	r := out.Reservations[0]
	assert.Equal(t, "Ambiguous-Interactive/repo:50:job:incident-recovery", r.HolderID)
	assert.Equal(t, "portal cleanup confirmed for "+inc.IncidentID, r.Reason)
	assert.Equal(t, "r9", r.RunnerID)
	assert.Equal(t, ReservationCooldown, r.State)
	assert.True(t, d.Changed)
	mustEncodeDecode(t, out)

	zero := cfgHealth(1)
	zero.ReleaseCooldownSeconds = 0
	out, d, err = RecoverIncident(s, zero, inc.IncidentID, now, "")
	require.NoError(t, err, "cooldown 0 must not write an unreadable reservation")
	assert.True(t, d.Freed)
	assert.Empty(t, out.Reservations)
	assert.Nil(t, out.ActiveIncident)
	mustEncodeDecode(t, out)

	_, _, err = RecoverIncident(s, cfgHealth(1), "incident-000000000000000000000000", now, "rec-1")
	requireCode(t, err, CodeIncidentNotFound)
	_, _, err = RecoverIncident(s, cfgHealth(1), "", now, "rec-1")
	requireCode(t, err, CodeIncidentNotFound)
	_, _, err = RecoverIncident(stateAt(5), cfgHealth(1), inc.IncidentID, now, "rec-1")
	requireCode(t, err, CodeIncidentNotFound)
	_, _, err = RecoverIncident(stateAt(4), cfgHealth(1), inc.IncidentID, now, "rec-1")
	requireCode(t, err, CodeSchemaTooOld)
	_, _, err = RecoverIncident(s, cfgHealth(1), inc.IncidentID, now, "")
	requireCode(t, err, CodeReservationIDRequired)

	busy := s.Clone()
	busy.Reservations = []Reservation{quarantineOn("q9", "r9")}
	_, _, err = RecoverIncident(busy, cfgHealth(2), inc.IncidentID, now, "rec-1")
	requireCode(t, err, CodeRunnerConflict)
	held := s.Clone()
	held.Holders = []Holder{holderFor(ident(3, "r9"), 5)}
	_, _, err = RecoverIncident(held, cfgHealth(2), inc.IncidentID, now, "rec-1")
	requireCode(t, err, CodeRunnerConflict)
}

// TestRecoverIncidentWithEverySeatTaken: the incident's job held no seat,
// so a recovery cooldown on top of full seats would count more seats than
// maxHolders (divergence V5). With a seat freed by an expired cooldown, the
// recovery cooldown takes that seat.
func TestRecoverIncidentWithEverySeatTaken(t *testing.T) {
	t.Parallel()
	now := t0.Add(time.Hour)
	inc, err := IncidentFor(ident(50, "r9"), t0, "")
	require.NoError(t, err)
	full := stateAt(5)
	full.ActiveIncident = inc
	full.Holders = []Holder{holderFor(ident(3, "r1"), 5)}
	full.Reservations = []Reservation{quarantineOn("q2", "r2")}

	out, d, err := RecoverIncident(full, cfgHealth(2), inc.IncidentID, now, "rec-1")
	require.NoError(t, err)
	assert.True(t, d.NoFreeSeat)
	assert.True(t, d.Freed)
	assert.Nil(t, d.Reservation)
	assert.Nil(t, out.ActiveIncident)
	assert.Len(t, out.Reservations, 1, "only the quarantine is left")
	assert.LessOrEqual(t, len(out.Holders)+len(out.Reservations), 2)
	mustEncodeDecode(t, out)

	// A lowered maxHolders leaves the seats over-full already: still no cooldown.
	out, d, err = RecoverIncident(full, cfgHealth(1), inc.IncidentID, now, "rec-1")
	require.NoError(t, err)
	assert.True(t, d.NoFreeSeat)
	assert.Len(t, out.Reservations, 1)

	expiring := full.Clone()
	expiring.Reservations = []Reservation{cooldownOn("c2", "r2", now.Add(-time.Second))}
	out, d, err = RecoverIncident(expiring, cfgHealth(2), inc.IncidentID, now, "rec-1")
	require.NoError(t, err)
	assert.False(t, d.NoFreeSeat)
	assert.Equal(t, 1, d.PrunedCooldowns)
	require.NotNil(t, d.Reservation)
	assert.Equal(t, "rec-1", d.Reservation.ReservationID)
	assert.Len(t, out.Holders, 1)
	assert.Len(t, out.Reservations, 1, "the expired cooldown gave its seat to the recovery cooldown")
}

func TestHelpers(t *testing.T) {
	t.Parallel()
	s := stateAt(4)
	s.Queue = []Entry{entryFor(ident(1, "r1"), 4), entryFor(ident(2, "r2"), 4)}
	s.Reservations = []Reservation{quarantineOn("q", "r5"), cooldownOn("c1", "r6", t0.Add(time.Minute)), cooldownOn("c2", "r7", t0.Add(30*time.Second))}
	assert.Equal(t, 2, QueuePosition(s, ident(2, "").HolderID))
	assert.Equal(t, 0, QueuePosition(s, "nope"))
	assert.Equal(t, -1, FreeSlots(s, Config{MaxHolders: 2}))
	next, ok := NextCooldownExpiry(s, t0)
	require.True(t, ok)
	assert.Equal(t, t0.Add(30*time.Second), next)
	_, ok = NextCooldownExpiry(s, t0.Add(time.Hour))
	assert.False(t, ok)
	pruned, n := PruneExpiredCooldowns(s, t0.Add(45*time.Second))
	assert.Equal(t, 1, n)
	assert.Len(t, pruned.Reservations, 2)
	assert.Len(t, s.Reservations, 3)
	assert.True(t, EffectiveRunnerSerialization(s, DefaultConfig()))
	assert.False(t, EffectiveRunnerSerialization(stateAt(2), DefaultConfig()))
	assert.Equal(t, CodeLockMismatch, CodeOf(&Error{Code: CodeLockMismatch}))
	assert.Equal(t, Code(""), CodeOf(assert.AnError))
	assert.Equal(t, "lock-mismatch", (&Error{Code: CodeLockMismatch}).Error())
}
