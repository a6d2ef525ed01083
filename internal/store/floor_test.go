package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/store"
)

// laggingFixture is an emulator whose every ordinary read comes from a
// replica up to 10 s behind (a lag fraction of 1).
func laggingFixture(seed int64) *fixture {
	clk := clock.NewFake(epoch)
	em := emulator.New(emulator.Options{Clock: clk, Seed: seed, ReplicaLag: 10 * time.Second, ReplicaLagFraction: 1})
	em.AddOwner(owner, 1001, true)
	em.AddRepo(owner, repo, 2002, "main")
	return &fixture{em: em, clock: clk}
}

// A release step's Store knows the version its acquire saw the job admitted
// in (SeenAt, from the held marker). Under replica lag its reads never
// decide on an older version: Load reads at the branch head instead, and
// the release's compare-and-swap lands at its first round, where a Store
// without the floor decides on the older versions the replicas serve.
func TestStoreNeverDecidesBelowTheVersionItsCallerSaw(t *testing.T) {
	t.Parallel()
	cfg := lockstate.DefaultConfig()
	for seed := range int64(20) {
		f := laggingFixture(seed)
		ctx := context.Background()
		w := f.store(t)
		for i := range 3 {
			_, err := w.Update(ctx, "Queue for seats", enqueue(cfg, identity(i, ""), f.clock.Now(), nil))
			require.NoError(t, err)
			f.clock.Advance(2 * time.Second)
		}
		h := f.history()
		newest := h[len(h)-1]
		st, err := lockstate.Decode(newest.Content, lockstate.DecodeOptions{Lock: lockName})
		require.NoError(t, err)
		at, ok := lockstate.ParseTime(st.UpdatedAt)
		require.True(t, ok)

		floored := f.store(t)
		floored.SeenAt(at)
		snap, err := floored.Load(ctx)
		require.NoError(t, err)
		require.Equal(t, newest.BlobSHA, snap.SHA, "seed %d: decided below the version the caller saw", seed)

		// The release of the newest entry lands at its first round.
		f.em.ResetMetrics()
		id := identity(2, "")
		res, err := floored.Update(ctx, "Release seats", func(s *lockstate.State) error {
			next, d, err := lockstate.Cleanup(s, cfg, lockstate.CleanupRequest{HolderID: id.HolderID, RunAttempt: "1", ReservationID: "r", Identity: id}, f.clock.Now())
			if err != nil {
				return err
			}
			if !d.Changed {
				return store.ErrNoChange
			}
			*s = *next
			return nil
		})
		require.NoError(t, err)
		require.True(t, res.Written, "seed %d: the entry the caller saw was not found", seed)
		assert.Zero(t, f.em.Metrics().Conflicts, "seed %d: a compare-and-swap on an older version", seed)
	}
}

// The floor is a writer's clock: a head whose stamp is older than the floor
// (a writer whose clock runs behind) is taken as it is, after one read at
// the head, never read again and again.
func TestStoreFloorAboveEveryStampEndsAtTheHead(t *testing.T) {
	t.Parallel()
	f := laggingFixture(3)
	ctx := context.Background()
	w := f.store(t)
	_, err := w.Update(ctx, "Queue for seats", enqueue(lockstate.DefaultConfig(), identity(1, ""), f.clock.Now(), nil))
	require.NoError(t, err)
	head := f.history()[len(f.history())-1].BlobSHA
	s := f.store(t)
	s.SeenAt(f.clock.Now().Add(time.Hour))
	f.em.ResetMetrics()
	snap, err := s.Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, head, snap.SHA)
	assert.LessOrEqual(t, f.em.Metrics().Requests, int64(3), "one ordinary read, then the ref and the file at its commit")
}

// A compare-and-swap that loses because the file moved (409 "<path> does
// not match <sha>") proves its base superseded: a lagging replica that
// serves that base again is read past, and the next Update is decided at
// the branch head instead of losing a second time on the same version.
func TestALostCompareAndSwapIsNotDecidedOnItsBaseAgain(t *testing.T) {
	t.Parallel()
	cfg := lockstate.DefaultConfig()
	for seed := range int64(20) {
		f := laggingFixture(seed)
		ctx := context.Background()
		_, err := f.store(t).Update(ctx, "Queue for seats", enqueue(cfg, identity(1, ""), f.clock.Now(), nil))
		require.NoError(t, err)
		f.clock.Advance(30 * time.Second)
		a := f.store(t)
		snap, err := a.Load(ctx)
		require.NoError(t, err)
		base := snap.SHA
		// Another job writes; a's next write is decided on base.
		_, err = f.store(t).Update(ctx, "Queue for seats", enqueue(cfg, identity(2, ""), f.clock.Now(), nil))
		require.NoError(t, err)
		head := f.history()[len(f.history())-1].BlobSHA
		res, err := a.UpdateRounds(ctx, 1, msg("Queue for seats", enqueue(cfg, identity(3, ""), f.clock.Now(), nil)))
		require.ErrorIs(t, err, store.ErrTooManyConflicts, "seed %d", seed)
		assert.False(t, res.Written)

		// Every replica still serves base (the new head is 0 s old).
		control, err := f.store(t).Load(ctx)
		require.NoError(t, err)
		require.Equal(t, base, control.SHA, "seed %d: the lag did not serve the older version", seed)

		f.em.ResetMetrics()
		snap, err = a.Load(ctx)
		require.NoError(t, err)
		assert.Equal(t, head, snap.SHA, "seed %d: decided on the version it lost on", seed)
		res, err = a.UpdateRounds(ctx, 1, msg("Queue for seats", enqueue(cfg, identity(3, ""), f.clock.Now(), nil)))
		require.NoError(t, err, "seed %d", seed)
		assert.True(t, res.Written)
		assert.Zero(t, f.em.Metrics().Conflicts, "seed %d", seed)
	}
}

// msg gives a mutation a commit message (store.Store.UpdateRounds).
func msg(m string, fn func(*lockstate.State) error) func(*lockstate.State) (string, error) {
	return func(s *lockstate.State) (string, error) { return m, fn(s) }
}
