package acquire_test

import (
	"context"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/acquire"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/release"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// start runs an acquire step in the background.
func start(ctx context.Context, j *actiontest.Job) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- run(ctx, j) }()
	return ch
}

// releaseJob runs a confirmed release step of j.
func releaseJob(t *testing.T, j *actiontest.Job) {
	t.Helper()
	j.ResetFiles()
	j.Input("resource-cleanup-status", "confirmed")
	require.NoError(t, release.Run(context.Background(), j.Deps()))
}

// holderAndWaiter admits a and queues b behind it.
func holderAndWaiter(t *testing.T, w *actiontest.World, ctx context.Context, b *actiontest.Job) (*actiontest.Job, <-chan error) {
	t.Helper()
	a := w.NewJob("holder", "runner-a")
	require.NoError(t, run(context.Background(), a))
	ch := start(ctx, b)
	time.Sleep(time.Second)
	synctest.Wait()
	require.Equal(t, 1, lockstate.QueuePosition(w.State(), b.HolderID()), "b is queued")
	return a, ch
}

func TestWaitingWritesNothingAndHandoffIsFast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1,"releaseCooldownSeconds":0}`)
		b := w.NewJob("waiter", "runner-b")
		a, done := holderAndWaiter(t, w, context.Background(), b)
		puts := w.Puts()
		before := w.Em.Metrics()
		time.Sleep(time.Hour)
		synctest.Wait()
		after := w.Em.Metrics()
		assert.Equal(t, puts, w.Puts(), "a waiting job writes nothing")
		gets := resourceRequests(after) - resourceRequests(before)
		assert.Greater(t, gets, int64(100), "the head of the queue polls fast")
		assert.LessOrEqual(t, chargedInstallation(after)-chargedInstallation(before), int64(40), "≤ 40 charged requests per hour of waiting")
		assert.Contains(t, b.Out.String(), "queue position 1 of 1")

		released := time.Now()
		releaseJob(t, a)
		require.NoError(t, <-done)
		handoff := time.Since(released)
		assert.LessOrEqual(t, handoff, 2500*time.Millisecond, "the head takes a freed seat within one fast poll")
		out := b.Outputs()
		assert.Equal(t, "acquired", out["admission-result"])
		assert.Equal(t, "1", firstNonEmpty(summaryValue(b.Summary(), "Queue position at entry")))
		require.Len(t, w.State().Holders, 1)
		assert.Equal(t, b.HolderID(), w.State().Holders[0].HolderID)
	})
}

func TestTimeoutCleansUpTheQueueEntry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		b := w.NewJob("waiter", "runner-b").Input("timeout-minutes", "1")
		_, done := holderAndWaiter(t, w, context.Background(), b)
		err := <-done
		require.ErrorContains(t, err, "timed out waiting for build lock seats")
		out := b.Outputs()
		assert.Equal(t, "false", out["acquired"])
		assert.Equal(t, "timeout", out["admission-result"])
		assert.Zero(t, lockstate.QueuePosition(w.State(), b.HolderID()), "the queue entry is removed")
		assert.Contains(t, b.Summary(), "`timeout`")
	})
}

func TestSignalDuringWaitCleansUpWithinTheWindow(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := actiontest.NewWorld(t, `{"maxHolders":1}`)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				b := w.NewJob("waiter", "runner-b")
				_, done := holderAndWaiter(t, w, ctx, b)
				b.Signals.Simulate(sig)
				cancel()
				began := time.Now()
				err := <-done
				require.Error(t, err)
				assert.LessOrEqual(t, time.Since(began), 1500*time.Millisecond)
				assert.Zero(t, lockstate.QueuePosition(w.State(), b.HolderID()), "the queue entry is removed")
				assertNotAcquired(t, b, "cancelled")
				want := 130
				if sig == syscall.SIGTERM {
					want = 143
				}
				assert.Equal(t, want, lockaction.Finish(nil2io(b), b.Signals, err))
			})
		})
	}
}

// terminatedWaiter queues a waiter (BUILD_LOCK_MODE mode) behind a holder
// on a lock whose state existed before either job, adds fault, and ends
// the waiter with SIGTERM. It runs inside a synctest bubble.
func terminatedWaiter(t *testing.T, mode string, fault emulator.Fault) (*actiontest.World, *actiontest.Job) {
	t.Helper()
	w := actiontest.NewWorld(t, `{"maxHolders":1}`)
	w.SeedState(emptyState())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := w.NewJob("waiter", "runner-b")
	b.Env["BUILD_LOCK_MODE"] = mode
	_, done := holderAndWaiter(t, w, ctx, b)
	w.Em.AddFault(fault)
	b.Signals.Simulate(syscall.SIGTERM)
	cancel()
	require.Error(t, <-done)
	return w, b
}

// TestCancelledWaiterLeavesDespiteAnOlderReplica: the cleanup after a
// signal must not decide on a replica older than anything this run saw. A
// version from before the run's first read (here the seeded empty state)
// is not known to be older, and a cleanup that read it found nothing to
// remove and left the waiter's entry in the queue, ahead of every later
// job, until the reaper. The cleanup reads at the branch head.
func TestCancelledWaiterLeavesDespiteAnOlderReplica(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, b := terminatedWaiter(t, acquire.ModeAcquire, emulator.Fault{Method: "GET", PathPattern: statePathPattern, Kind: emulator.StaleRead, StaleVersions: 5})
		assert.Zero(t, lockstate.QueuePosition(w.State(), b.HolderID()), "the queue entry is removed")
		assertNotAcquired(t, b, "cancelled")
	})
}

// TestPostRemovesAQueuedEntryDespiteAnOlderReplica: a waiter whose own
// cleanup could not write (every write stalls until its signal window
// ends) leaves its queue entry to the post step. That step's first read
// comes from a replica older than the join; the entry marker the join left
// makes it confirm "nothing of this job" at the branch head, where the
// entry is, and remove it. Without the marker it ended as a no-op and the
// entry stayed in the queue until the reaper.
func TestPostRemovesAQueuedEntryDespiteAnOlderReplica(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, b := terminatedWaiter(t, acquire.ModeAcquireWithCleanup, emulator.Fault{Method: "PUT", Kind: emulator.Stall})
		require.Equal(t, 1, lockstate.QueuePosition(w.State(), b.HolderID()), "the waiter's own cleanup could not write")
		w.Em.ClearFaults()
		w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: statePathPattern, Kind: emulator.StaleRead, StaleVersions: 5, Count: 1})
		post := withEnv(b.Deps(), map[string]string{"BUILD_LOCK_MODE": "post-cleanup", "STATE_build_lock_cleanup": "enabled"})
		require.NoError(t, runDeps(context.Background(), post))
		assert.Zero(t, lockstate.QueuePosition(w.State(), b.HolderID()), "the post step removed the queue entry")
		assert.Contains(t, b.Out.String(), "was stale")
	})
}

func TestSignalDuringCleanupIsBoundedBySIGTERMWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		b := w.NewJob("waiter", "runner-b").Input("timeout-minutes", "1")
		_, done := holderAndWaiter(t, w, ctx, b)
		// Every cleanup write stalls; the timeout cleanup hangs in flight.
		w.Em.AddFault(emulator.Fault{Method: "PUT", Kind: emulator.Stall})
		time.Sleep(time.Minute + 5*time.Second)
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("returned before the signal: %v", err)
		default:
		}
		b.Signals.Simulate(syscall.SIGTERM)
		cancel()
		began := time.Now()
		err := <-done
		require.Error(t, err)
		assert.LessOrEqual(t, time.Since(began), 1500*time.Millisecond, "SIGTERM leaves 1.5 s")
		assert.Equal(t, 143, lockaction.Finish(nil2io(b), b.Signals, err))
	})
}

func TestRateLimitedPollHonorsRetryAfter(t *testing.T) {
	for _, kind := range []emulator.FaultKind{emulator.TooManyRequests429, emulator.SecondaryRateLimit403} {
		t.Run(string(kind), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := actiontest.NewWorld(t, `{"maxHolders":1}`)
				b := w.NewJob("waiter", "runner-b")
				a, done := holderAndWaiter(t, w, context.Background(), b)
				w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: "/repos/acme/build-lock/contents/locks/seats.json", Kind: kind, RetryAfter: "30", Count: 1})
				time.Sleep(10 * time.Second)
				synctest.Wait()
				log := w.Em.Metrics().Log
				var limitedAt time.Time
				for i, r := range log {
					if len(r.Faults) > 0 && limitedAt.IsZero() {
						limitedAt = r.Time
						require.False(t, r.RetryAfterUntil.IsZero())
						for _, next := range log[i+1:] {
							if next.Credential == r.Credential {
								assert.False(t, next.Time.Before(r.RetryAfterUntil), "no request before Retry-After elapsed: %s", next.Path)
							}
						}
					}
				}
				require.False(t, limitedAt.IsZero(), "the fault fired")
				time.Sleep(time.Minute)
				releaseJob(t, a)
				require.NoError(t, <-done)
			})
		})
	}
}

func TestAuthGraceWindow(t *testing.T) {
	t.Run("burst within the window", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := actiontest.NewWorld(t, `{"maxHolders":1}`)
			w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: "/repos/acme/build-lock/contents/locks/seats.json", Kind: emulator.Unauthorized401, Count: 12})
			j := w.NewJob("build", "runner-1")
			require.NoError(t, run(context.Background(), j))
			assert.Equal(t, "acquired", j.Outputs()["admission-result"])
			assert.Contains(t, j.Out.String(), "auth grace window")
		})
	})
	t.Run("beyond the window", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := actiontest.NewWorld(t, `{"maxHolders":1}`)
			w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: "/repos/acme/build-lock/contents/locks/seats.json", Kind: emulator.Unauthorized401})
			j := w.NewJob("build", "runner-1")
			j.Env["BUILD_LOCK_AUTH_GRACE_MS"] = "60000"
			began := time.Now()
			err := run(context.Background(), j)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "HTTP 401")
			assert.Less(t, time.Since(began), 3*time.Minute)
			assertNotAcquired(t, j, "GITHUB_API_RETRY_EXHAUSTED")
		})
	})
	t.Run("zero fails fast", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := actiontest.NewWorld(t, `{"maxHolders":1}`)
			w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: "/repos/acme/build-lock/contents/locks/seats.json", Kind: emulator.Unauthorized401})
			j := w.NewJob("build", "runner-1")
			j.Env["BUILD_LOCK_AUTH_GRACE_MS"] = "0"
			require.Error(t, run(context.Background(), j))
			assert.NotContains(t, j.Out.String(), "auth grace window")
		})
	})
}

func TestAmbiguousAdmissionWriteIsReconciled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		w.Em.AddFault(emulator.Fault{Method: "PUT", Kind: emulator.WriteAcceptedResponseLost, Count: 1})
		j := w.NewJob("build", "runner-1")
		require.NoError(t, run(context.Background(), j))
		out := j.Outputs()
		assert.Equal(t, "acquired", out["admission-result"])
		h := w.Em.History(actiontest.Owner, actiontest.LockRepo, "lock-state", actiontest.StatePath)
		require.Len(t, h, 1, "the lost write landed once and was not repeated")
		assert.Equal(t, h[0].BlobSHA, out["state-sha"])
	})
}
