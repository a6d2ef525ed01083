package store_test

import (
	"context"
	"errors"
	"fmt"
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

const (
	owner     = "acme"
	repo      = "build-lock"
	lockName  = "seats"
	statePath = "locks/seats.json"
	branch    = "lock-state"
)

var epoch = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

// fixture is one emulator with a lock repository and a writer token.
type fixture struct {
	em    *emulator.Emulator
	clock *clock.Fake
	n     int
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	clk := clock.NewFake(epoch)
	em := emulator.New(emulator.Options{Clock: clk, Seed: 7})
	em.AddOwner(owner, 1001, true)
	em.AddRepo(owner, repo, 2002, "main")
	return &fixture{em: em, clock: clk}
}

// client returns a GitHub client with its own writer token, as a separate job
// would have.
func (f *fixture) client(t *testing.T) *ghclient.Client {
	t.Helper()
	f.n++
	secret := fmt.Sprintf("test-writer-secret-%d", f.n)
	f.em.AddToken(secret, emulator.TokenScope{Label: fmt.Sprintf("writer-%d", f.n), Repos: []string{owner + "/" + repo},
		Permissions: map[string]string{"contents": "write"}, RateLimit: 5000})
	c, err := ghclient.New(context.Background(), ghclient.Config{
		APIURL: "http://emulator.test/", Token: secret, Transport: f.em.Transport(), Clock: f.clock,
		Jitter: func() float64 { return 0.5 },
	})
	require.NoError(t, err)
	return c
}

func (f *fixture) store(t *testing.T) *store.Store {
	t.Helper()
	s, err := store.New(store.Options{Client: f.client(t), Owner: owner, Repo: repo, Lock: lockName,
		Clock: f.clock, Jitter: func() float64 { return 0 }})
	require.NoError(t, err)
	return s
}

func (f *fixture) history() []emulator.Version { return f.em.History(owner, repo, branch, statePath) }

func identity(n int, runner string) lockstate.Identity {
	id := lockstate.Identity{
		Repository: "acme/game", Workflow: "CI", Job: "build", RunID: fmt.Sprint(100 + n), RunAttempt: "1",
		RunnerID: runner, QueuedAt: epoch,
	}
	id.HolderID = fmt.Sprintf("%s:%s:%s:default", id.Repository, id.RunID, id.Job)
	id.RunURL = "https://github.com/" + id.Repository + "/actions/runs/" + id.RunID
	return id
}

// enqueue is a mutation that adds id through the real Acquire transition.
func enqueue(cfg lockstate.Config, id lockstate.Identity, now time.Time, out *lockstate.AcquireDecision) func(*lockstate.State) error {
	return func(s *lockstate.State) error {
		next, d, err := lockstate.Acquire(s, cfg, lockstate.AcquireRequest{Identity: id, Lease: time.Hour}, now)
		if err != nil {
			return err
		}
		if out != nil {
			*out = d
		}
		if !d.Changed {
			return store.ErrNoChange
		}
		*s = *next
		return nil
	}
}

func TestLoadMissingFileIsEmptyState(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	snap, err := f.store(t).Load(context.Background())
	require.NoError(t, err)
	assert.False(t, snap.Exists())
	assert.Equal(t, lockstate.Empty(lockName), snap.State)
}

func TestFirstUpdateCreatesStateBranchOnlyWhenTheWriteSaysItIsMissing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.store(t)
	res, err := s.Update(context.Background(), "Queue for seats", enqueue(lockstate.DefaultConfig(), identity(1, ""), epoch, nil))
	require.NoError(t, err)
	assert.True(t, res.Written)
	hist := f.history()
	require.Len(t, hist, 1)
	assert.Equal(t, "Queue for seats", hist[0].Message)
	assert.Equal(t, res.SHA, hist[0].BlobSHA, "the store reports the blob SHA GitHub assigned")

	m := f.em.Metrics()
	assert.Equal(t, int64(1), m.Paths["POST /repos/acme/build-lock/git/refs"].Writes, "branch created once, from main")
	// Second update: the branch exists, so no ref is read at all.
	_, err = s.Update(context.Background(), "Queue for seats", enqueue(lockstate.DefaultConfig(), identity(2, ""), epoch, nil))
	require.NoError(t, err)
	m2 := f.em.Metrics()
	assert.Equal(t, m.Paths["GET /repos/acme/build-lock/git/ref/heads/lock-state"].Requests,
		m2.Paths["GET /repos/acme/build-lock/git/ref/heads/lock-state"].Requests)
}

func TestOwnWriteIsTheNextCASBase(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.store(t)
	ctx := context.Background()
	for i := range 3 {
		_, err := s.Update(ctx, "Queue for seats", enqueue(lockstate.DefaultConfig(), identity(i, ""), epoch, nil))
		require.NoError(t, err)
	}
	m := f.em.Metrics()
	reads := m.Paths["GET /repos/acme/build-lock/contents/locks/seats.json"].Requests
	assert.Equal(t, int64(1), reads, "only the very first update reads; later ones use the SHA of our own write")
	assert.Len(t, f.history(), 3)
}

func TestConflictReappliesTheMutationToTheFreshState(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a, b := f.store(t), f.store(t)
	ctx := context.Background()
	cfg := lockstate.Config{MaxHolders: 1, ReleaseCooldownSeconds: 360}
	_, err := a.Load(ctx)
	require.NoError(t, err)
	_, err = b.Update(ctx, "Acquire seats", enqueue(cfg, identity(1, ""), epoch, nil))
	require.NoError(t, err)

	var dec lockstate.AcquireDecision
	res, err := a.Update(ctx, "Queue for seats", enqueue(cfg, identity(2, ""), epoch, &dec))
	require.NoError(t, err)
	assert.Equal(t, 2, res.Rounds)
	assert.Equal(t, 1, res.Conflicts)
	assert.Equal(t, lockstate.OutcomeQueued, dec.Outcome, "the second job saw the first one's admission and queued")
	require.Len(t, res.State.Holders, 1)
	assert.Equal(t, identity(1, "").HolderID, res.State.Holders[0].HolderID)
	require.Len(t, res.State.Queue, 1)
	assert.Equal(t, identity(2, "").HolderID, res.State.Queue[0].HolderID)
	// One jittered conflict sleep; the other two are the write spacing
	// (ghclient.MinWriteSpacing) between two writes of one client in the
	// same second (b's branch creation and its PUT; a's two rounds).
	assert.Equal(t, []time.Duration{time.Second, time.Second, time.Second}, f.clock.Sleeps(), "spacing, one jittered conflict sleep, spacing")
	assert.Equal(t, int64(1), f.em.Metrics().Conflicts)
}

func TestLostWriteResponseIsReconciledFromTheNextRead(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.store(t)
	ctx := context.Background()
	_, err := s.Update(ctx, "Queue for seats", enqueue(lockstate.DefaultConfig(), identity(1, ""), epoch, nil))
	require.NoError(t, err)
	f.em.AddFault(emulator.Fault{Method: "PUT", Kind: emulator.WriteAcceptedResponseLost, Count: 1})

	var dec lockstate.AcquireDecision
	res, err := s.Update(ctx, "Queue for seats", enqueue(lockstate.DefaultConfig(), identity(2, ""), epoch, &dec))
	require.NoError(t, err)
	assert.True(t, res.Ambiguous, "the write's outcome was unknown until the next read")
	assert.False(t, res.Written, "the write landed; the re-applied mutation found nothing left to do")
	assert.Equal(t, 1, lockstate.QueuePosition(res.State, identity(2, "").HolderID), "behind the holder, first in the queue")
	hist := f.history()
	require.Len(t, hist, 2, "the lost write was not blindly repeated")
	last, err := lockstate.Decode(hist[1].Content, lockstate.DecodeOptions{Lock: lockName})
	require.NoError(t, err)
	assert.Len(t, last.Holders, 1)
	assert.Len(t, last.Queue, 1, "no duplicate entry")
}

func TestServerErrorOnWriteIsRetriedWithinTheBudget(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.store(t)
	f.em.AddFault(emulator.Fault{Method: "PUT", Kind: emulator.ServerError, Status: 502, Count: 2})
	res, err := s.Update(context.Background(), "Queue for seats", enqueue(lockstate.DefaultConfig(), identity(1, ""), epoch, nil))
	require.NoError(t, err)
	assert.True(t, res.Written)
	assert.False(t, res.Ambiguous, "a 5xx followed by success is not ambiguous")
	assert.Len(t, f.history(), 1)
}

func TestUnchangedStateReadCostsA304(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.store(t)
	ctx := context.Background()
	_, err := s.Update(ctx, "Queue for seats", enqueue(lockstate.DefaultConfig(), identity(1, ""), epoch, nil))
	require.NoError(t, err)
	_, err = s.Load(ctx)
	require.NoError(t, err)
	before := f.em.Metrics()
	snap, err := s.Load(ctx)
	require.NoError(t, err)
	after := f.em.Metrics()
	assert.Equal(t, before.NotModified+1, after.NotModified)
	assert.Equal(t, before.Charged, after.Charged, "a 304 is not charged against the hourly limit")
	assert.Len(t, snap.State.Holders, 1)
}

func TestNoChangeWritesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.store(t)
	ctx := context.Background()
	id := identity(1, "")
	cfg := lockstate.Config{MaxHolders: 1, ReleaseCooldownSeconds: 360}
	// Fill the seat, then queue id; polling again must not write.
	_, err := s.Update(ctx, "Acquire seats", enqueue(cfg, identity(9, ""), epoch, nil))
	require.NoError(t, err)
	_, err = s.Update(ctx, "Queue for seats", enqueue(cfg, id, epoch, nil))
	require.NoError(t, err)
	res, err := s.Update(ctx, "Queue for seats", enqueue(cfg, id, epoch.Add(time.Minute), nil))
	require.NoError(t, err)
	assert.False(t, res.Written)
	assert.Len(t, f.history(), 2)
}

func TestConflictBudgetIsBounded(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s, err := store.New(store.Options{Client: f.client(t), Owner: owner, Repo: repo, Lock: lockName, Clock: f.clock, MaxRounds: 3})
	require.NoError(t, err)
	ctx := context.Background()
	other := f.store(t)
	n := 0
	_, err = s.Update(ctx, "Queue for seats", func(st *lockstate.State) error {
		// A competitor writes between our read and our write, every round.
		n++
		_, err := other.Update(ctx, "Queue for seats", enqueue(lockstate.DefaultConfig(), identity(100+n, ""), epoch, nil))
		require.NoError(t, err)
		return enqueue(lockstate.DefaultConfig(), identity(1, ""), epoch, nil)(st)
	})
	require.ErrorIs(t, err, store.ErrTooManyConflicts)
	assert.Equal(t, 3, n)
}

func TestLoadConfigFallbacks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("missing file is the default config with a warning", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		snap, err := f.store(t).ReadConfig(ctx)
		require.NoError(t, err)
		assert.Equal(t, lockstate.DefaultConfig(), snap.Config)
		assert.True(t, snap.Missing)
		assert.False(t, snap.Unavailable)
		require.Len(t, snap.Warnings, 1)
		assert.Contains(t, snap.Warnings[0], "does not exist on the default branch")
	})
	t.Run("valid file is read from the default branch", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		_, err := f.em.PutFile(owner, repo, "main", "locks/seats.config.json", []byte(`{"maxHolders":3,"releaseCooldownSeconds":0}`))
		require.NoError(t, err)
		cfg, warnings, err := f.store(t).LoadConfig(ctx)
		require.NoError(t, err)
		assert.Equal(t, 3, cfg.MaxHolders)
		assert.Equal(t, 0, cfg.ReleaseCooldownSeconds)
		assert.Empty(t, warnings)
	})
	t.Run("malformed JSON falls back with a warning", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		_, err := f.em.PutFile(owner, repo, "main", "locks/seats.config.json", []byte(`{"maxHolders":`))
		require.NoError(t, err)
		cfg, warnings, err := f.store(t).LoadConfig(ctx)
		require.NoError(t, err)
		assert.Equal(t, lockstate.DefaultConfig(), cfg)
		assert.NotEmpty(t, warnings)
	})
	t.Run("unavailable config falls back to safe defaults with a warning", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		_, err := f.em.PutFile(owner, repo, "main", "locks/seats.config.json", []byte(`{"maxHolders":3}`))
		require.NoError(t, err)
		f.em.AddFault(emulator.Fault{PathPattern: "/repos/acme/build-lock/contents/locks/seats.config.json", Kind: emulator.ServerError, Status: 503})
		cfg, warnings, err := f.store(t).LoadConfig(ctx)
		require.NoError(t, err)
		assert.Equal(t, lockstate.DefaultConfig(), cfg)
		require.Len(t, warnings, 1)
		assert.Contains(t, warnings[0], "using safe defaults")
	})
	t.Run("a cancelled read is an error, not a fallback", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, _, err := f.store(t).LoadConfig(cctx)
		require.Error(t, err)
	})
}

func TestNewRejectsBadOptions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client(t)
	for name, opts := range map[string]store.Options{
		"no client":     {Owner: owner, Repo: repo, Lock: lockName},
		"no repository": {Client: c, Lock: lockName},
		"bad lock name": {Client: c, Owner: owner, Repo: repo, Lock: "a/b"},
		"dot-dot lock":  {Client: c, Owner: owner, Repo: repo, Lock: ".."},
		"empty lock":    {Client: c, Owner: owner, Repo: repo},
		"too long lock": {Client: c, Owner: owner, Repo: repo, Lock: strings.Repeat("x", 81)},
	} {
		_, err := store.New(opts)
		assert.Error(t, err, name)
	}
}

func TestBlobSHAMatchesGit(t *testing.T) {
	t.Parallel()
	// `git hash-object /dev/null` and `printf 'hello\n' | git hash-object --stdin`.
	assert.Equal(t, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391", store.BlobSHA(nil))
	assert.Equal(t, "ce013625030ba8dba906f756967f9e9ca394464a", store.BlobSHA([]byte("hello\n")))
}

// errCode extracts the lockstate error code.
func errCode(err error) lockstate.Code {
	var le *lockstate.Error
	if errors.As(err, &le) {
		return le.Code
	}
	return ""
}

func TestConflictSleepsGrowUnderRepeatedConflicts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s, err := store.New(store.Options{Client: f.client(t), Owner: owner, Repo: repo, Lock: lockName, Clock: f.clock,
		MaxRounds: 6, Jitter: func() float64 { return 0.5 }})
	require.NoError(t, err)
	ctx := context.Background()
	other := f.store(t)
	n := 0
	_, err = s.Update(ctx, "Queue for seats", func(st *lockstate.State) error {
		n++
		_, err := other.Update(ctx, "Queue for seats", enqueue(lockstate.DefaultConfig(), identity(100+n, ""), epoch, nil))
		require.NoError(t, err)
		return enqueue(lockstate.DefaultConfig(), identity(1, ""), epoch, nil)(st)
	})
	require.ErrorIs(t, err, store.ErrTooManyConflicts)
	ms := time.Millisecond
	// jitter(1 s) first, then a window doubling from 2 s to the 8 s cap,
	// each drawn from [1 s, window) at the jitter 0.5 used here.
	// The first two are the write spacing of the two clients' first writes
	// after the branch creation (ghclient.MinWriteSpacing).
	assert.Equal(t, []time.Duration{time.Second, time.Second, 1166500 * time.Microsecond, 1500 * ms, 2500 * ms, 4500 * ms, 4500 * ms}, roundMS(f.clock.Sleeps()))
}

// roundMS rounds durations to 0.5 ms so float jitter does not leak into the
// comparison.
func roundMS(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(500 * time.Microsecond)
	}
	return out
}

// A 304 reuses the last decode of the Contents response; a new version
// from another writer is decoded afresh, and the config file (another
// path on another ref) never answers with the state's bytes.
func TestRevalidatedReadsReuseTheDecodeAndNewVersionsAreSeen(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	reader, writer := f.store(t), f.store(t)
	ctx := context.Background()
	_, err := writer.Update(ctx, "Queue for seats", enqueue(lockstate.DefaultConfig(), identity(1, ""), epoch, nil))
	require.NoError(t, err)
	first, err := reader.Load(ctx)
	require.NoError(t, err)
	again, err := reader.Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, first.SHA, again.SHA)
	assert.Len(t, again.State.Holders, 1)

	_, err = writer.Update(ctx, "Queue for seats", enqueue(lockstate.DefaultConfig(), identity(2, ""), epoch, nil))
	require.NoError(t, err)
	next, err := reader.Load(ctx)
	require.NoError(t, err)
	assert.NotEqual(t, first.SHA, next.SHA, "the writer's new version is read, not the memo")
	assert.Len(t, next.State.Holders, 1)
	assert.Len(t, next.State.Queue, 1, "one seat: the second job queues")
	assert.Equal(t, f.history()[len(f.history())-1].BlobSHA, next.SHA)

	cfg, err := reader.ReadConfig(ctx)
	require.NoError(t, err)
	assert.Equal(t, lockstate.DefaultConfig(), cfg.Config, "a missing config is the default config")
}

// TestCheckStateBranchRefusesTheDefaultBranchByAnyName: the default branch
// is refused by its short name, a case variant and its qualified names
// (GitHub resolves refs/heads/main as the branch main); another branch is not.
func TestCheckStateBranchRefusesTheDefaultBranchByAnyName(t *testing.T) {
	f := newFixture(t)
	for _, b := range []string{"main", "Main", "refs/heads/main", "heads/main"} {
		s, err := store.New(store.Options{Client: f.client(t), Owner: owner, Repo: repo, Lock: lockName, Branch: b, Clock: f.clock})
		require.NoError(t, err)
		var re *store.RuleError
		require.ErrorAs(t, s.CheckStateBranch(context.Background()), &re, b)
		assert.Equal(t, store.RuleStateBranchIsDefault, re.Rule)
	}
	s, err := store.New(store.Options{Client: f.client(t), Owner: owner, Repo: repo, Lock: lockName, Branch: "refs/heads/lock-state", Clock: f.clock})
	require.NoError(t, err)
	assert.NoError(t, s.CheckStateBranch(context.Background()))
}
