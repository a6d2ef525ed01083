package bench

import (
	"context"
	"errors"
	mrand "math/rand/v2"
	"strconv"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/store"
)

// The reference client in a mixed fleet (issue 23 "Also"; docs/divergences.md
// "Mixed fleets"): a job that runs the JavaScript reference's acquire and
// release instead of ours, on the same lock. The model is the reference's
// loop as reference-behavior.md §3.5 inventories it: read the state, write
// only when Acquire changes it (one compare-and-swap round, jitter(1000)
// after a lost one), otherwise sleep base + U[0, base/3) (15–20 s); its
// release is the exact cleanup without a direct handoff. Every write it makes
// drops the runner keys it does not know (runnerName, runnerOs, runnerArch:
// divergences S1). It reads through our store (conditional reads), which only
// makes its polls cheaper than the reference's, never faster.

// refCASDelay is the reference's conflict sleep, jitter(1000) = 1000–1332 ms.
func refCASDelay(rng *mrand.Rand) time.Duration {
	return time.Second + time.Duration(rng.Int64N(int64(333*time.Millisecond)))
}

// refPollDelay is the reference's poll sleep at poll-seconds base:
// base + U[0, max(250 ms, base/3)).
func refPollDelay(rng *mrand.Rand) time.Duration {
	base := time.Duration(PollSeconds) * time.Second
	return base + time.Duration(rng.Int64N(int64(max(250*time.Millisecond, base/3))))
}

// dropRunnerKeys is what a reference write does to the keys it does not
// know: every holder and queue entry loses its runner name, OS and
// architecture.
func dropRunnerKeys(s *lockstate.State) {
	for i := range s.Holders {
		s.Holders[i].RunnerName, s.Holders[i].RunnerOS, s.Holders[i].RunnerArch = "", "", ""
	}
	for i := range s.Queue {
		s.Queue[i].RunnerName, s.Queue[i].RunnerOS, s.Queue[i].RunnerArch = "", "", ""
	}
}

// referenceStore is a store on the lock with the writer App's credentials,
// through j's request tap.
func (w *world) referenceStore(ctx context.Context, j *simJob, rng *mrand.Rand) (*store.Store, error) {
	c, err := ghclient.New(ctx, ghclient.Config{
		APIURL: simAPIURL + "/", AppID: simWriterApp, PrivateKey: []byte(w.writerPEM),
		InstallationRepository: simOwner + "/" + simLockRepo, TokenRepositories: []string{simLockRepo},
		Transport: j.tap, Clock: clock.Real{}, Jitter: rng.Float64, Warn: func(string) {},
	})
	if err != nil {
		return nil, err
	}
	return store.New(store.Options{Client: c, Owner: simOwner, Repo: simLockRepo, Lock: simLock, ServerURL: simServerURL, Clock: clock.Real{}, Jitter: rng.Float64})
}

// runReference runs j as a reference client: acquire until admitted, hold,
// release. It records admitted (the moment its loop saw itself a holder)
// and released as runJob does.
func (w *world) runReference(ctx context.Context, j *simJob, rng *mrand.Rand) error {
	st, err := w.referenceStore(ctx, j, rng)
	if err != nil {
		return err
	}
	cfg, _, err := st.LoadConfig(ctx)
	if err != nil {
		return err
	}
	id := lockstate.Identity{
		HolderID: j.holderID, Repository: simOwner + "/" + j.repo, Workflow: "Unity build", Job: "build",
		RunID: strconv.FormatInt(j.runID, 10), RunAttempt: "1",
		RunURL:   simServerURL + "/" + simOwner + "/" + j.repo + "/actions/runs/" + strconv.FormatInt(j.runID, 10),
		RunnerID: j.runner, QueuedAt: time.Now(),
	}
	req := lockstate.AcquireRequest{Identity: id, Lease: lockstate.HandoffLease}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		snap, err := st.Load(ctx)
		if err != nil {
			if ghclient.IsSecondaryLimit(err) {
				if err := (clock.Real{}).Sleep(ctx, time.Minute); err != nil {
					return err
				}
				continue
			}
			return err
		}
		_, dec, err := lockstate.Acquire(snap.State, cfg, req, time.Now())
		if err != nil {
			return err
		}
		if dec.Outcome == lockstate.OutcomeAlreadyHolder && !dec.Changed {
			break
		}
		if !dec.Changed {
			if err := (clock.Real{}).Sleep(ctx, refPollDelay(rng)); err != nil {
				return err
			}
			continue
		}
		var wrote lockstate.AcquireDecision
		res, err := st.UpdateRounds(ctx, 1, func(s *lockstate.State) (string, error) {
			next, d, err := lockstate.Acquire(s, cfg, req, time.Now())
			if err != nil {
				return "", err
			}
			if !d.Changed {
				return "", store.ErrNoChange
			}
			wrote = d
			dropRunnerKeys(next)
			*s = *next
			if d.Outcome == lockstate.OutcomeAdmitted {
				return "Acquire " + simLock, nil
			}
			return "Queue for " + simLock, nil
		})
		switch {
		case errors.Is(err, store.ErrTooManyConflicts):
			if err := (clock.Real{}).Sleep(ctx, refCASDelay(rng)); err != nil {
				return err
			}
			continue
		case ghclient.IsSecondaryLimit(err):
			if err := (clock.Real{}).Sleep(ctx, time.Minute); err != nil {
				return err
			}
			continue
		case err != nil:
			return err
		}
		if res.Written && (wrote.Outcome == lockstate.OutcomeAdmitted || wrote.Outcome == lockstate.OutcomeAlreadyHolder) {
			break
		}
		if err := (clock.Real{}).Sleep(ctx, refPollDelay(rng)); err != nil {
			return err
		}
	}
	w.set(func() { j.admitted = time.Now() })
	if err := (clock.Real{}).Sleep(ctx, j.hold); err != nil {
		return err
	}
	j.tap.setPhase("release")
	w.removal(j.holderID, time.Now())
	for range 10 {
		_, err = st.Update(ctx, "Release "+simLock, func(s *lockstate.State) error {
			next, d, err := lockstate.Cleanup(s, cfg, lockstate.CleanupRequest{
				HolderID: id.HolderID, RunAttempt: id.RunAttempt, RunnerID: id.RunnerID,
				Report:        lockstate.Report{Status: lockstate.StatusConfirmed, Health: lockstate.HealthHealthy, Reason: "cleanup-confirmed"},
				ReservationID: actionkit.NewReservationID(), Identity: id, ServerURL: simServerURL,
			}, time.Now())
			if err != nil {
				return err
			}
			if !d.Changed {
				return store.ErrNoChange
			}
			dropRunnerKeys(next)
			*s = *next
			return nil
		})
		if err == nil {
			w.set(func() { j.released = time.Now() })
			return nil
		}
		if !ghclient.IsSecondaryLimit(err) && !errors.Is(err, store.ErrTooManyConflicts) {
			return err
		}
		if err := (clock.Real{}).Sleep(ctx, time.Minute); err != nil {
			return err
		}
	}
	return err
}
