package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/store"
)

// Neighbour locks. Organizations keep several locks on one lock-state branch
// (locks/<name>.json each), and on GitHub concurrent commits to one branch
// fail with 409 "is at X but expected Y" even for different files
// (emulator Options.CommitLatency). Every seed therefore runs neighbour
// locks beside the audited one: a few jobs per neighbour acquire, hold and
// release through the real store and lockstate transitions, so the audited
// lock's writes meet branch-head conflicts caused by other files. Each
// neighbour's own history is audited for its capacity bound.

// neighbourLocks are the other locks on the state branch.
var neighbourLocks = []string{"builders", "signing"}

// fidelityOptions are GitHub's eventual consistency and branch-head
// conflicts at their realistic defaults (docs/emulator.md).
func fidelityOptions(o emulator.Options) emulator.Options {
	o.ReplicaLag = emulator.DefaultReplicaLag
	o.ReplicaLagFraction = emulator.DefaultReplicaLagFraction
	o.CommitLatency = emulator.DefaultCommitLatency
	return o
}

// seedNeighbours commits the neighbours' configs (one seat each).
func (s *sim) seedNeighbours() {
	for _, n := range neighbourLocks {
		if _, err := s.em.PutFile(owner, lockRepo, "main", "locks/"+n+".config.json", []byte(`{"maxHolders":1}`)); err != nil {
			s.tb.Fatalf("seed neighbour %s: %v", n, err)
		}
	}
}

// neighbourJobs is how many jobs cycle on each neighbour lock.
const neighbourJobs = 2

// runNeighbours runs every neighbour's jobs through the fault window (when
// the audited lock's jobs are busiest), or until ctx ends.
func (s *sim) runNeighbours(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, s.window)
	defer cancel()
	done := make(chan struct{}, len(neighbourLocks)*neighbourJobs)
	n := 0
	for li, name := range neighbourLocks {
		for k := range neighbourJobs {
			n++
			go func() {
				defer func() { done <- struct{}{} }()
				s.neighbourJob(ctx, name, li*10+k)
			}()
		}
	}
	for range n {
		<-done
	}
}

// neighbourJob acquires, holds and releases name in cycles until ctx ends.
func (s *sim) neighbourJob(ctx context.Context, name string, idx int) {
	r := rand.New(rand.NewPCG(s.seed, uint64(1000+idx)))
	actor := fmt.Sprintf("neighbour:%s#%d", name, idx)
	c, err := ghclient.New(ctx, ghclient.Config{
		APIURL: apiURL + "/", AppID: writerAppID, PrivateKey: []byte(writerPEM),
		InstallationRepository: owner + "/" + lockRepo, TokenRepositories: []string{lockRepo},
		Transport: actorTransport{rec: s.rec, actor: actor, proc: "neighbour", base: s.em.Transport()},
		Jitter:    r.Float64, Warn: func(string) {},
	})
	if err != nil {
		return
	}
	st, err := store.New(store.Options{Client: c, Owner: owner, Repo: lockRepo, Lock: name, ServerURL: serverURL, Jitter: r.Float64})
	if err != nil {
		return
	}
	cfg, _, err := st.LoadConfig(ctx)
	if err != nil {
		return
	}
	for cycle := 0; ctx.Err() == nil; cycle++ {
		if !sleepCtx(ctx, time.Duration(30+r.IntN(150))*time.Second) {
			return
		}
		run := fmt.Sprintf("%d", 900000+idx*1000+cycle)
		id := lockstate.Identity{
			HolderID: owner + "/tools:" + run + ":" + name + ":default", Repository: owner + "/tools", Workflow: "Neighbour", Job: name,
			RunID: run, RunAttempt: "1", RunURL: serverURL + "/" + owner + "/tools/actions/runs/" + run, QueuedAt: time.Now(),
		}
		admitted := false
		for range 40 {
			var dec lockstate.AcquireDecision
			_, err := st.Update(ctx, "Acquire "+name, func(cur *lockstate.State) error {
				next, d, err := lockstate.Acquire(cur, cfg, lockstate.AcquireRequest{Identity: id, Lease: time.Hour}, time.Now())
				if err != nil {
					return err
				}
				dec = d
				if !d.Changed {
					return store.ErrNoChange
				}
				*cur = *next
				return nil
			})
			if err == nil && (dec.Outcome == lockstate.OutcomeAdmitted || dec.Outcome == lockstate.OutcomeAlreadyHolder) {
				admitted = true
				break
			}
			if !sleepCtx(ctx, time.Duration(10+r.IntN(10))*time.Second) {
				break
			}
		}
		if admitted {
			s.event("neighbour-admitted")
			sleepCtx(ctx, time.Duration(30+r.IntN(120))*time.Second)
		}
		// Release (or leave the queue); the world's end may cut it short.
		for range 5 {
			_, err := st.Update(context.WithoutCancel(ctx), "Release "+name, func(cur *lockstate.State) error {
				next, d, err := lockstate.Cleanup(cur, cfg, lockstate.CleanupRequest{
					HolderID: id.HolderID, RunAttempt: id.RunAttempt,
					Report:        lockstate.Report{Status: lockstate.StatusConfirmed, Health: lockstate.HealthHealthy, Reason: "cleanup-confirmed"},
					ReservationID: fmt.Sprintf("neighbour-%d-%d", idx, cycle), Identity: id, ServerURL: serverURL,
				}, time.Now())
				if err != nil {
					return err
				}
				if !d.Changed {
					return store.ErrNoChange
				}
				*cur = *next
				return nil
			})
			if err == nil {
				break
			}
			time.Sleep(5 * time.Second)
		}
	}
}

// sleepCtx sleeps d unless ctx ends first; it reports whether it slept.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// auditNeighbours checks each neighbour's capacity on every version it
// committed and reports the branch-level fidelity counters.
func (s *sim) auditNeighbours(rep *Report) {
	for _, name := range neighbourLocks {
		hist := s.em.History(owner, lockRepo, stateBranch, "locks/"+name+".json")
		for i, v := range hist {
			if v.Content == nil {
				continue
			}
			st, err := lockstate.Decode(v.Content, lockstate.DecodeOptions{Lock: name, ServerURL: serverURL})
			if err != nil {
				rep.Violations = append(rep.Violations, fmt.Sprintf("neighbour %s version %d does not decode: %v", name, i, err))
				continue
			}
			if len(st.Holders) > 1 {
				rep.Violations = append(rep.Violations, fmt.Sprintf("neighbour %s version %d has %d holders (maxHolders 1)", name, i, len(st.Holders)))
			}
		}
		rep.Faults["neighbour-versions:"+name] = int64(len(hist))
	}
	m := s.em.Metrics()
	rep.Faults["branch-head-conflict"] = m.BranchHeadConflicts
	rep.Faults["lagged-read"] = m.LaggedReads
}
