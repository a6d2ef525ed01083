package store_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
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

// A write a branch rule refuses ends the Update at its first round with a
// BranchRulesError (reason code state-branch-rules, naming buildlock
// doctor), where a conflict would have re-read and tried again.
func TestUpdateRefusedByABranchRuleFailsFast(t *testing.T) {
	t.Parallel()
	for _, rules := range [][]emulator.BranchRule{
		{{Type: "update"}},
		{{Type: "pull_request"}},
		{{Type: emulator.RuleProtectedBranch}},
	} {
		t.Run(rules[0].Type, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			s := f.store(t)
			ctx := context.Background()
			_, err := s.Update(ctx, "Queue for seats", enqueue(lockstate.DefaultConfig(), identity(1, ""), epoch, nil))
			require.NoError(t, err)
			require.NoError(t, f.em.SetBranchRules(owner, repo, branch, rules))
			f.em.ResetMetrics()
			sleeps := len(f.clock.Sleeps())
			res, err := s.Update(ctx, "Queue for seats", enqueue(lockstate.DefaultConfig(), identity(2, ""), epoch, nil))
			var br *store.BranchRulesError
			require.ErrorAs(t, err, &br)
			assert.Equal(t, store.ReasonBranchRules, br.ReasonCode())
			assert.True(t, store.IsBranchRules(err))
			assert.False(t, ghclient.IsConflict(err))
			assert.Contains(t, err.Error(), "buildlock doctor --lock-repository acme/build-lock")
			assert.Contains(t, err.Error(), "lock-state")
			assert.Equal(t, 1, res.Rounds)
			assert.Equal(t, 0, res.Conflicts)
			assert.False(t, res.Written)
			m := f.em.Metrics()
			assert.EqualValues(t, 1, m.Paths["PUT /repos/acme/build-lock/contents/"+statePath].Requests, "one write, never a second attempt")
			for _, d := range f.clock.Sleeps()[sleeps:] {
				assert.LessOrEqual(t, d, time.Second, "no conflict sleep (only the client's write spacing)")
			}
			assert.Len(t, f.history(), 1, "nothing written")
		})
	}
}

// The ruleset_violation fault is told from a conflict the same way; a
// genuine conflict still re-reads and wins the next round.
func TestRulesetFaultVersusConflict(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.store(t)
	other := f.store(t)
	ctx := context.Background()
	_, err := s.Update(ctx, "Queue for seats", enqueue(lockstate.DefaultConfig(), identity(1, ""), epoch, nil))
	require.NoError(t, err)
	_, err = other.Update(ctx, "Queue for seats", enqueue(lockstate.DefaultConfig(), identity(2, ""), epoch, nil))
	require.NoError(t, err)
	res, err := s.Update(ctx, "Queue for seats", enqueue(lockstate.DefaultConfig(), identity(3, ""), epoch, nil))
	require.NoError(t, err, "a CAS conflict is retried")
	assert.Equal(t, 1, res.Conflicts)
	assert.Equal(t, 2, res.Rounds)

	f.em.AddFault(emulator.Fault{Method: "PUT", Kind: emulator.RulesetViolation, Count: 1})
	res, err = s.Update(ctx, "Queue for seats", enqueue(lockstate.DefaultConfig(), identity(4, ""), epoch, nil))
	require.Error(t, err)
	assert.True(t, store.IsBranchRules(err))
	assert.Equal(t, 1, res.Rounds)
}

// Any other 422 on the state write is an invalid write: fatal with its own
// code, never retried as a conflict.
func TestInvalidWriteIsNotAConflict(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	puts := 0
	c, err := ghclient.New(context.Background(), ghclient.Config{
		APIURL: "http://emulator.test/", Token: "test-writer-secret-invalid", Clock: f.clock, Jitter: func() float64 { return 0.5 },
		Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodPut {
				puts++
				body := `{"message":"Invalid request.\n\nFor 'properties/message', nil is not a string.","documentation_url":"https://docs.github.com/rest","status":"422"}`
				return &http.Response{StatusCode: 422, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
			}
			return f.em.Transport().RoundTrip(r)
		}),
	})
	require.NoError(t, err)
	f.em.AddToken("test-writer-secret-invalid", emulator.TokenScope{Label: "w", Repos: []string{owner + "/" + repo}, Permissions: map[string]string{"contents": "write"}})
	s, err := store.New(store.Options{Client: c, Owner: owner, Repo: repo, Lock: lockName, Clock: f.clock, Jitter: func() float64 { return 0 }})
	require.NoError(t, err)
	require.NoError(t, f.em.CreateBranch(owner, repo, branch, "main"))
	res, err := s.Update(context.Background(), "Queue for seats", enqueue(lockstate.DefaultConfig(), identity(2, ""), epoch, nil))
	require.Error(t, err)
	assert.True(t, ghclient.IsInvalidWrite(err), "%v", err)
	assert.False(t, ghclient.IsConflict(err))
	assert.False(t, store.IsBranchRules(err))
	assert.Equal(t, 1, res.Rounds)
	assert.Equal(t, 1, puts)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Under replica lag a read after the Store's own write may return the
// version the write replaced; the Store never goes back to it.
func TestOwnWriteIsNeverUndoneByALaggingRead(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(epoch)
	em := emulator.New(emulator.Options{Clock: clk, Seed: 3, ReplicaLag: 10 * time.Second})
	em.AddOwner(owner, 1001, true)
	em.AddRepo(owner, repo, 2002, "main")
	f := &fixture{em: em, clock: clk}
	s := f.store(t)
	ctx := context.Background()
	var last string
	for i := range 4 {
		res, err := s.Update(ctx, "Queue for seats", enqueue(lockstate.DefaultConfig(), identity(i, ""), epoch, nil))
		require.NoError(t, err)
		last = res.SHA
		for range 20 {
			snap, err := s.Load(ctx)
			require.NoError(t, err)
			require.Equal(t, last, snap.SHA, "a read after the own write went back in time")
			require.Equal(t, i+1, len(snap.State.Holders)+len(snap.State.Queue))
		}
		clk.Advance(time.Second)
	}
	assert.Positive(t, s.StaleReadsIgnored(), "the lag did serve older versions")
	assert.Positive(t, em.Metrics().LaggedReads)
	var br *store.BranchRulesError
	assert.False(t, errors.As(nil, &br))
}

// A renamed lock repository: the store's reads and compare-and-swap writes
// follow GitHub's redirect to the same repository id, and refuse a
// redirect to any other.
func TestStoreFollowsTheRenamedLockRepository(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.store(t)
	ctx := context.Background()
	_, err := s.Update(ctx, "Queue for seats", enqueue(lockstate.DefaultConfig(), identity(1, ""), epoch, nil))
	require.NoError(t, err)
	reader := f.store(t)
	c := f.client(t) // tokens are scoped by repository, so they survive the rename
	require.NoError(t, f.em.RenameRepo(owner, repo, "build-lock-2"))
	res, err := s.Update(ctx, "Queue for seats", enqueue(lockstate.DefaultConfig(), identity(2, ""), epoch, nil))
	require.NoError(t, err)
	assert.True(t, res.Written)
	h := f.em.History(owner, "build-lock-2", branch, statePath)
	require.Len(t, h, 2)
	snap, err := reader.Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, h[1].BlobSHA, snap.SHA)

	c.PinRepository(owner, repo, 9999)
	other, err := store.New(store.Options{Client: c, Owner: owner, Repo: repo, Lock: lockName, Clock: f.clock, Jitter: func() float64 { return 0 }})
	require.NoError(t, err)
	_, err = other.Update(ctx, "Queue for seats", enqueue(lockstate.DefaultConfig(), identity(3, ""), epoch, nil))
	var ge *ghclient.Error
	require.ErrorAs(t, err, &ge)
	assert.Equal(t, ghclient.CodeRedirectRefused, ge.Code)
	assert.Len(t, f.em.History(owner, "build-lock-2", branch, statePath), 2, "nothing written")
}

// A Store made for a later phase of the same action (a cleanup with its own
// budget) inherits what the main Store saw and wrote: under replica lag its
// Update never decides on a version older than the main Store's own write,
// so the cleanup finds the entry the main Store queued.
func TestInheritedStoreNeverDecidesOnAnOlderReplica(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(epoch)
	em := emulator.New(emulator.Options{Clock: clk, Seed: 5, ReplicaLag: 10 * time.Second})
	em.AddOwner(owner, 1001, true)
	em.AddRepo(owner, repo, 2002, "main")
	f := &fixture{em: em, clock: clk}
	ctx := context.Background()
	main := f.store(t)
	_, err := main.Update(ctx, "Queue for seats", enqueue(lockstate.DefaultConfig(), identity(1, ""), epoch, nil))
	require.NoError(t, err)
	id := identity(2, "")
	res, err := main.Update(ctx, "Queue for seats", enqueue(lockstate.DefaultConfig(), id, epoch, nil))
	require.NoError(t, err)
	own := res.SHA
	for i := range 30 {
		cleanup := f.store(t)
		cleanup.Inherit(main)
		snap, err := cleanup.Load(ctx)
		require.NoError(t, err)
		require.Equal(t, own, snap.SHA, "round %d: the cleanup saw a version older than the main Store's write", i)
		require.Equal(t, 1, lockstate.QueuePosition(snap.State, id.HolderID))
	}
	// Without Inherit the lag is visible (the reason for it).
	older := 0
	for range 30 {
		snap, err := f.store(t).Load(ctx)
		require.NoError(t, err)
		if snap.SHA != own {
			older++
		}
	}
	assert.Positive(t, older, "the replica lag served older versions to a fresh Store")
}

// After a write whose answer was lost, the next read decides whether it
// landed (spec: "after an ambiguous write the next read decides"). Under
// replica lag an ordinary read can return a version older than the write's
// base, one this Store never saw and so cannot know to be older: a mutation
// decided on it refuses on a past it already moved beyond (soak seed 101248:
// a rerun refused holder-earlier-attempt on the version before the reaper
// removed attempt 1, while its own admission was in the state). The read
// that decides an ambiguous write is therefore taken at the branch head.
func TestAmbiguousWriteIsDecidedAtTheBranchHead(t *testing.T) {
	t.Parallel()
	cfg := lockstate.DefaultConfig()
	cfg.MaxHolders = 1
	for seed := range int64(30) {
		clk := clock.NewFake(epoch)
		em := emulator.New(emulator.Options{Clock: clk, Seed: seed, ReplicaLag: 10 * time.Second})
		em.AddOwner(owner, 1001, true)
		em.AddRepo(owner, repo, 2002, "main")
		f := &fixture{em: em, clock: clk}
		ctx := context.Background()
		writer := f.store(t)
		_, err := writer.Update(ctx, "Queue for seats", enqueue(cfg, identity(1, ""), epoch, nil))
		require.NoError(t, err)
		clk.Advance(time.Second)
		second := identity(2, "")
		_, err = writer.Update(ctx, "Queue for seats", enqueue(cfg, second, epoch, nil))
		require.NoError(t, err)
		clk.Advance(time.Second)

		s := f.store(t)
		_, _, err = s.LoadFresh(ctx) // the base is the head, as a job's first read can be
		require.NoError(t, err)
		em.AddFault(emulator.Fault{Method: "PUT", Kind: emulator.WriteAcceptedResponseLost, Count: 1})
		third := identity(3, "")
		var seen []*lockstate.State
		res, err := s.Update(ctx, "Queue for seats", func(st *lockstate.State) error {
			seen = append(seen, st.Clone())
			return enqueue(cfg, third, epoch, nil)(st)
		})
		require.NoError(t, err, "seed %d", seed)
		assert.True(t, res.Ambiguous, "seed %d", seed)
		for i, st := range seen {
			require.Positive(t, lockstate.QueuePosition(st, second.HolderID), "seed %d: round %d decided on a version older than the lost write's base", seed, i+1)
		}
		require.Len(t, f.history(), 3, "seed %d: the lost write landed once", seed)
	}
}

// A read at the branch head is a floor: every version this Store read
// before it is at or older than it. When an Update based on that head loses
// its compare-and-swap, an ordinary read may come from a replica older than
// the head, even one this Store never saw, and a mutation that finds
// nothing to do on it (a release whose holder the older version does not
// show yet) would end the Update as a no-op with the holder still in the
// state. The round after such a lost race therefore reads at the branch
// head again.
func TestUpdateAfterAHeadReadNeverFallsBehindIt(t *testing.T) {
	t.Parallel()
	res, left := releaseAfterAHeadReadLosesARace(t)
	assert.True(t, res.Written, "the release was decided on a version older than the head it had read")
	assert.Equal(t, 1, res.Conflicts)
	assert.False(t, left, "the holder is gone from the branch head")
}

// releaseAfterAHeadReadLosesARace is the scenario of
// TestUpdateAfterAHeadReadNeverFallsBehindIt (and of the planted
// cleanup-behind-head bug): a Store reads the head, another job commits on
// top of it, and every ordinary read comes from a replica from before this
// job's admission; the Store's release Update runs. It returns the Update's
// result and whether the job still holds at the branch head.
func releaseAfterAHeadReadLosesARace(t *testing.T) (store.Result, bool) {
	t.Helper()
	f := newFixture(t)
	ctx := context.Background()
	cfg := lockstate.DefaultConfig()
	cfg.MaxHolders = 3
	other, late := identity(1, ""), identity(3, "")
	mine := identity(2, "")
	for _, id := range []lockstate.Identity{other, mine} {
		_, err := f.store(t).Update(ctx, "Acquire", enqueue(cfg, id, epoch, nil))
		require.NoError(t, err)
	}
	s := f.store(t)
	head, _, err := s.LoadFresh(ctx)
	require.NoError(t, err)
	require.GreaterOrEqual(t, lockstate.HolderIndex(head.State, mine.HolderID), 0)
	// Another job commits on top of the head this Store read.
	_, err = f.store(t).Update(ctx, "Acquire", enqueue(cfg, late, epoch, nil))
	require.NoError(t, err)
	// Every ordinary read now comes from a replica two versions back: the
	// version before this job's admission, which this Store never read.
	f.em.AddFault(emulator.Fault{Kind: emulator.StaleRead, StaleVersions: 2, Probability: 1})
	release := func(s *lockstate.State) error {
		next, d, err := lockstate.Cleanup(s, cfg, lockstate.CleanupRequest{HolderID: mine.HolderID, RunAttempt: "1", ReservationID: "r-1"}, epoch)
		if err != nil {
			return err
		}
		if !d.Changed {
			return store.ErrNoChange
		}
		*s = *next
		return nil
	}
	res, err := s.Update(ctx, "Release", release)
	require.NoError(t, err)
	h := f.history()
	last, err := lockstate.Decode(h[len(h)-1].Content, lockstate.DecodeOptions{Lock: lockName})
	require.NoError(t, err)
	require.GreaterOrEqual(t, lockstate.HolderIndex(last, late.HolderID), 0)
	return res, lockstate.HolderIndex(last, mine.HolderID) >= 0
}
