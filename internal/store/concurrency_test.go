package store_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/checker"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/store"
)

// TestConcurrentJobsKeepEveryInvariant runs 32 goroutines doing
// enqueue → admit → cleanup through store.Update against the emulator, with
// random latency, 5xx answers, connection resets and writes whose response is
// lost, then audits every version of the state file the emulator committed:
// never more holders than allowed, no duplicated or lost entry, FIFO per
// runner, no schema downgrade, and every job admitted exactly once.
//
// It runs in a testing/synctest bubble over the emulator's in-memory
// transport, so the poll, hold and backoff waits are virtual time.
func TestConcurrentJobsKeepEveryInvariant(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) { runConcurrentJobs(t, seed) })
		})
	}
}

func runConcurrentJobs(t *testing.T, seed uint64) {
	const (
		jobs       = 32
		runners    = 6
		maxHolders = 3
	)
	em := emulator.New(emulator.Options{Clock: clock.Real{}, Seed: int64(seed)})
	em.AddOwner(owner, 1001, true)
	em.AddRepo(owner, repo, 2002, "main")
	_, err := em.PutFile(owner, repo, "main", "locks/seats.config.json",
		[]byte(fmt.Sprintf(`{"maxHolders":%d,"runnerSerialization":true,"releaseCooldownSeconds":0}`, maxHolders)))
	require.NoError(t, err)
	em.AddFault(emulator.Fault{Kind: emulator.Latency, Probability: 0.5, Latency: 300 * time.Millisecond})
	em.AddFault(emulator.Fault{Kind: emulator.ServerError, Status: 503, Probability: 0.04})
	em.AddFault(emulator.Fault{Kind: emulator.TransportReset, Probability: 0.02})
	em.AddFault(emulator.Fault{Method: "PUT", Kind: emulator.WriteAcceptedResponseLost, Probability: 0.06})

	// Every state write, admission and release is recorded for the
	// linearizability check (porcupine) at the end.
	lin, linFile := linRecorder(maxHolders)
	var (
		mu        sync.Mutex
		removals  []checker.Removal
		admitted  = map[string]int{}
		ambiguous int
	)
	var wg sync.WaitGroup
	for i := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			time.Sleep(time.Duration(rng.IntN(5000)) * time.Millisecond)
			secret := fmt.Sprintf("test-job-secret-%d", i)
			em.AddToken(secret, emulator.TokenScope{Label: fmt.Sprintf("job-%d", i), Repos: []string{owner + "/" + repo},
				Permissions: map[string]string{"contents": "write"}, RateLimit: 5000})
			id := identity(i, fmt.Sprintf("runner-%d", i%runners))
			actor := linActor(id)
			c, err := ghclient.New(context.Background(), ghclient.Config{APIURL: "http://emulator.test/", Token: secret,
				Transport: lin.Transport(em.Transport(), actor), Jitter: rng.Float64, Warn: func(string) {}})
			if !assert.NoError(t, err) {
				return
			}
			s, err := store.New(store.Options{Client: c, Owner: owner, Repo: repo, Lock: lockName, Jitter: rng.Float64})
			if !assert.NoError(t, err) {
				return
			}
			ctx := context.Background()
			cfg, _, err := s.LoadConfig(ctx)
			if !assert.NoError(t, err) {
				return
			}
			id.QueuedAt = time.Now()
			call := lin.BeginAcquire(linFile, actor)
			for {
				var dec lockstate.AcquireDecision
				res, err := s.Update(ctx, "Acquire seats", enqueue(cfg, id, time.Now(), &dec))
				if res.Ambiguous {
					mu.Lock()
					ambiguous++
					mu.Unlock()
				}
				if err != nil {
					// An exhausted budget or a lost write outcome is retried by
					// polling again: the next read tells what landed.
					var ge *ghclient.Error
					if errors.As(err, &ge) || errors.Is(err, store.ErrTooManyConflicts) {
						time.Sleep(time.Second)
						continue
					}
					t.Errorf("job %d: %v", i, err)
					return
				}
				if dec.Outcome == lockstate.OutcomeAdmitted || dec.Outcome == lockstate.OutcomeAlreadyHolder {
					lin.Acquired(linFile, actor, call, "", res.Snapshot.SHA)
					mu.Lock()
					admitted[id.HolderID]++
					mu.Unlock()
					break
				}
				time.Sleep(time.Second + time.Duration(rng.IntN(300))*time.Millisecond)
				if _, err := s.Load(ctx); err != nil {
					var ge *ghclient.Error
					if !errors.As(err, &ge) {
						t.Errorf("job %d: load: %v", i, err)
						return
					}
				}
			}
			time.Sleep(time.Duration(1000+rng.IntN(4000)) * time.Millisecond)
			mu.Lock()
			removals = append(removals, checker.Removal{HolderID: id.HolderID, At: time.Now()})
			mu.Unlock()
			rcall := lin.Now()
			for {
				_, err := s.Update(ctx, "Release seats", func(st *lockstate.State) error {
					next, d, err := lockstate.Cleanup(st, cfg, lockstate.CleanupRequest{
						HolderID: id.HolderID, RunAttempt: id.RunAttempt, RunnerID: id.RunnerID,
						Report: lockstate.Report{Status: "confirmed", Health: "healthy", Reason: "cleanup-confirmed"},
					}, time.Now())
					if err != nil {
						return err
					}
					if !d.Changed {
						return store.ErrNoChange
					}
					*st = *next
					return nil
				})
				if err == nil {
					lin.Released(linFile, actor, rcall)
					return
				}
				var ge *ghclient.Error
				if !errors.As(err, &ge) && !errors.Is(err, store.ErrTooManyConflicts) {
					t.Errorf("job %d: release: %v", i, err)
					return
				}
				time.Sleep(time.Second)
			}
		}()
	}
	wg.Wait()

	var versions []checker.Version
	for _, v := range em.History(owner, repo, branch, statePath) {
		versions = append(versions, checker.Version{Time: v.Time, Content: v.Content, Message: v.Message})
	}
	rep := checker.Check(versions, checker.Input{Lock: lockName, MaxHolders: maxHolders, Removals: removals})
	for _, v := range rep.Violations {
		t.Error(v)
	}
	assert.Equal(t, maxHolders, rep.MaxOccupied, "the seats were used")
	assert.Len(t, admitted, jobs, "every job was admitted")
	for id, n := range admitted {
		assert.Equal(t, 1, n, "%s admitted once", id)
	}
	held := map[string]bool{}
	for _, a := range rep.Admissions {
		assert.False(t, held[a.HolderID], "%s admitted twice in history", a.HolderID)
		held[a.HolderID] = true
	}
	assert.Len(t, held, jobs)
	last, err := lockstate.Decode(versions[len(versions)-1].Content, lockstate.DecodeOptions{Lock: lockName})
	require.NoError(t, err)
	assert.Empty(t, last.Holders, "every seat given back")
	assert.Empty(t, last.Queue, "no waiter left behind")
	linCheck(t, em, lin, linFile)
	m := em.Metrics()
	t.Logf("seed %d: %d versions, %d requests, %d conflicts, faults %v, %d ambiguous updates, handoff p50 %v",
		seed, len(versions), m.Requests, m.Conflicts, m.FaultsByKind, ambiguous, checker.Percentile(rep.HandoffGaps, 50))
	assert.Positive(t, m.FaultsByKind[emulator.WriteAcceptedResponseLost], "the lost-response fault fired")
}
