package lockstate

// Tests that pin deliberate divergences of the state transitions from the
// JavaScript reference (docs/divergences.md).

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAPollThatOnlyPrunesWritesNothing: the reference prunes expired
// cooldowns in every acquire iteration and marks the state changed (spec
// §3.5 step 6), so a waiting job that finds one writes "Queue for <lock>"
// only to drop it. Here a poll whose only effect would be that pruning is
// not a write: admission is decided on the pruned state, so the expired
// cooldown never keeps a seat, and the next write of any client drops it. A poll that writes anyway (joining the
// queue, admission) carries the pruning with it.
func TestAPollThatOnlyPrunesWritesNothing(t *testing.T) {
	t.Parallel()
	now := t0.Add(time.Minute)
	a, b, c := ident(1, "r1"), ident(2, "r2"), ident(3, "r3")
	s := stateAt(4)
	s.Holders = []Holder{holderFor(a, 4)}
	s.Queue = []Entry{entryFor(b, 4)}
	s.Reservations = []Reservation{cooldownOn("expired", "r9", t0)}
	mustEncodeDecode(t, s)
	cfg := cfgLifecycle(1)

	out, d, err := Acquire(s, cfg, AcquireRequest{Identity: b, Lease: lease}, now)
	require.NoError(t, err)
	assert.Equal(t, OutcomeQueued, d.Outcome, "the one seat is held")
	assert.False(t, d.Changed, "pruning alone is not a write")
	assert.Equal(t, s, out)

	out, d, err = Acquire(s, cfg, AcquireRequest{Identity: c, Lease: lease}, now)
	require.NoError(t, err)
	require.True(t, d.Changed, "joining the queue is a write")
	assert.Empty(t, out.Reservations, "and it drops the expired cooldown")
	assert.Len(t, out.Queue, 2)

	// Cleanup keeps the reference's rule: expired cooldowns make its write.
	_, cd, err := Cleanup(s, cfg, CleanupRequest{HolderID: ident(7, "r7").HolderID, RunAttempt: "1", RunnerID: "r7"}, now)
	require.NoError(t, err)
	assert.Equal(t, ResultNoop, cd.Result)
	assert.True(t, cd.Changed)
}
