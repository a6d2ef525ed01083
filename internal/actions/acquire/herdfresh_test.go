package acquire

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/store"
)

// A paced newcomer whose slot has come on an ordinary read decides at the
// branch head (herdFresh): under replica lag the read may be a version
// whose arrival log misses the herd's latest first write, so its slot came
// too early and its write would lose a compare-and-swap that the writer
// App's secondary limit still counts. On the head's version the slot has
// not come yet. The head is read once a run (herdMaxHeadReads), and never
// for a snapshot that is the head already.
func TestAPacedWriteDueOnALaggingReadIsDecidedAtTheHead(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewFake(herdT0)
	em := emulator.New(emulator.Options{Clock: clk, Seed: 11, ReplicaLag: 10 * time.Second, ReplicaLagFraction: 1})
	em.AddOwner("acme", 1001, true)
	em.AddRepo("acme", "build-lock", 2002, "main")
	require.NoError(t, em.CreateBranch("acme", "build-lock", "lock-state", "main"))
	em.AddToken("writer-secret", emulator.TokenScope{Label: "writer", Repos: []string{"acme/build-lock"},
		Permissions: map[string]string{"contents": "write"}, RateLimit: 5000})
	c, err := ghclient.New(ctx, ghclient.Config{APIURL: "http://emulator.test/", Token: "writer-secret",
		Transport: em.Transport(), Clock: clk, Jitter: func() float64 { return 0.5 }})
	require.NoError(t, err)
	st, err := store.New(store.Options{Client: c, Owner: "acme", Repo: "build-lock", Branch: "lock-state", Lock: "seats",
		Clock: clk, Jitter: func() float64 { return 0 }})
	require.NoError(t, err)

	const window = 1700003600
	put := func(s *lockstate.State) string {
		data, err := lockstate.Encode(s)
		require.NoError(t, err)
		sha, err := em.PutFile("acme", "build-lock", "lock-state", "locks/seats.json", data)
		require.NoError(t, err)
		return sha
	}
	// Two earlier arrivals (tickets 10 and 12) wrote 2 s apart; this job
	// holds ticket 14.
	older := lockstate.Empty("seats")
	older.NoteArrival(clk.Now(), window, 10)
	older.UpdatedAt = lockstate.FormatTime(clk.Now())
	put(older)
	clk.Advance(30 * time.Second)
	head := older.Clone()
	head.NoteArrival(clk.Now(), window, 12)
	head.UpdatedAt = lockstate.FormatTime(clk.Now())
	put(head)

	// Every replica still serves the older version.
	snap, err := st.Load(ctx)
	require.NoError(t, err)
	require.Len(t, snap.State.RecentArrivals, 1, "the read lags")

	cfg := lockstate.DefaultConfig()
	q := &acquirer{st: st, last: snap.State, id: lockstate.Identity{HolderID: "acme/game:7:build:default"},
		herd: &herdPlan{rate: 5, t: ticket{window: window, count: 14}, start: clk.Now()}}
	share := cfg.Share()
	assert.False(t, q.herd.slot(snap.State, share, clk.Now()).After(clk.Now()), "on the lagging read the slot has come")

	fresh := q.herdFresh(ctx, snap)
	require.NotNil(t, fresh, "the due write is decided at the head")
	assert.Len(t, fresh.State.RecentArrivals, 2)
	assert.Equal(t, fresh.State, q.last)
	assert.True(t, q.herd.slot(fresh.State, share, clk.Now()).After(clk.Now()), "on the head's version the slot has not come")

	assert.Nil(t, q.herdFresh(ctx, *fresh), "the head's own snapshot is not read again")
	assert.Nil(t, q.herdFresh(ctx, snap), "at most herdMaxHeadReads head reads a run")
	q.herd = nil
	q.herdHeadReads = 0
	assert.Nil(t, q.herdFresh(ctx, snap), "an unpaced job writes as before")
}
