package demo

import (
	"context"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/recover"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/checker"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// The demo's crash-recovery story, in the order it happens:
//
//  1. A job dies holding its seat; its run is marked failed, its runner
//     goes offline.
//  2. The scheduled reaper (every Options.ReapEvery, compressed from
//     GitHub's 5 minutes) proves the run terminal and quarantines the seat:
//     the license may still be activated on that machine, so the seat stays
//     consumed instead of being freed on a guess.
//  3. The runner reboots and rejoins the pool; the next job that runs on it
//     reclaims the quarantine at admission (return-at-start), which is the
//     strongest recovery because that job returns the license.
//  4. If no job ran on that runner by the end, an operator runs the recover
//     workflow with the exact reservation id and resource-safe=true, and the
//     seat returns to service.

// lockStepEnv is the environment of a step running in the lock repository
// itself (the reaper and recovery workflows).
func (w *world) lockStepEnv(name string, inputs map[string]string) (map[string]string, error) {
	dir, err := os.MkdirTemp(w.dir, name+"-")
	if err != nil {
		return nil, err
	}
	env := map[string]string{
		"GITHUB_ACTION_REPOSITORY":   owner + "/" + lockRep,
		"GITHUB_REPOSITORY":          owner + "/" + lockRep,
		"GITHUB_REPOSITORY_ID":       strconv.Itoa(lockID),
		"GITHUB_REPOSITORY_OWNER_ID": strconv.Itoa(ownerID),
		"GITHUB_SERVER_URL":          "https://github.com",
		"GITHUB_API_URL":             w.apiURL,
		"GITHUB_OUTPUT":              filepath.Join(dir, "output"),
		"GITHUB_STEP_SUMMARY":        filepath.Join(dir, "summary.md"),
		lockaction.EnvAppID:          strconv.Itoa(appID),
		lockaction.EnvAppPrivateKey:  string(w.keyPEM),
		lockaction.EnvReaderAppID:    strconv.Itoa(appID),
		lockaction.EnvReaderAppKey:   string(w.keyPEM),
		"INPUT_LOCK_NAME":            lock,
	}
	for k, v := range inputs {
		env["INPUT_"+strings.ToUpper(strings.ReplaceAll(k, "-", "_"))] = v
	}
	return env, nil
}

func (w *world) recoverDeps(env map[string]string, seed uint64) recover.Deps {
	rng := mrand.New(mrand.NewPCG(seed, 2))
	return recover.Deps{
		Getenv:    func(k string) string { return env[k] },
		Stdout:    &actionio.SyncBuffer{},
		Clock:     clock.Real{},
		Jitter:    rng.Float64,
		Transport: w.transport,
	}
}

// reaperLoop runs the real reaper on its schedule until ctx ends.
func (w *world) reaperLoop(ctx context.Context) {
	t := time.NewTicker(w.opts.ReapEvery)
	defer t.Stop()
	for i := uint64(1); ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if w.reapOnce(ctx, i) != nil && ctx.Err() != nil {
			return
		}
	}
}

// reapOnce is one scheduled reaper run (the n-th).
func (w *world) reapOnce(ctx context.Context, n uint64) error {
	env, err := w.lockStepEnv("reaper", map[string]string{"operation": "reap"})
	if err != nil {
		return err
	}
	err = reap.Run(ctx, w.recoverDeps(env, w.opts.Seed+n))
	outs, _ := actionio.ReadFileCommands(env["GITHUB_OUTPUT"])
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		w.logf("reaper run %d FAILED: %v", n, err)
		return err
	}
	if outs["reaped"] == "true" {
		w.logf("reaper run %d quarantined stale state (state %s)", n, shortHex(outs["state-sha"]))
	}
	w.rebootRecoveredRunners()
	return nil
}

// deadHolderRemains reports whether a dead job still holds its seat (the
// reaper has not quarantined it yet).
func (w *world) deadHolderRemains() bool {
	st := w.latestState()
	if st == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, j := range w.jobs {
		if j.state == "dead" && lockstate.HolderIndex(st, j.holderID) >= 0 {
			return true
		}
	}
	return false
}

// rebootRecoveredRunners returns a dead job's runner to the pool once the
// reaper has quarantined its seat: the machine was rebooted, and the next
// job on it will reclaim the quarantine.
func (w *world) rebootRecoveredRunners() {
	st := w.latestState()
	if st == nil {
		return
	}
	w.mu.Lock()
	var back []string
	for _, j := range w.jobs {
		if j.state != "dead" || j.rebooted {
			continue
		}
		for _, r := range st.Reservations {
			if r.HolderID == j.holderID && r.State == lockstate.ReservationQuarantine {
				j.rebooted = true
				back = append(back, j.runner)
			}
		}
	}
	w.mu.Unlock()
	for _, r := range back {
		w.logf("%s rebooted and rejoined the runner pool; its next job will reclaim the quarantined seat", r)
		w.runners <- r
	}
}

// recoverLeftovers is the operator's part: every quarantine a dead job left
// that no job reclaimed is recovered with its exact reservation id.
func (w *world) recoverLeftovers(ctx context.Context) error {
	st := w.latestState()
	if st == nil {
		return nil
	}
	for i, r := range st.Reservations {
		if r.State != lockstate.ReservationQuarantine {
			continue
		}
		env, err := w.lockStepEnv("recover", map[string]string{
			"operation": "recover", "reservation-id": r.ReservationID, "resource-safe": "true",
		})
		if err != nil {
			return err
		}
		w.addRemoval(r.HolderID)
		if err := recover.Run(ctx, w.recoverDeps(env, w.opts.Seed+1000+uint64(i))); err != nil {
			return fmt.Errorf("recover %s: %w", r.ReservationID, err)
		}
		w.logf("operator recovered quarantine %s on %s after confirming the license was returned (gh workflow run recover-build-lock.yml -f operation=recover -f reservation-id=%s -f resource-safe=true)",
			r.ReservationID, r.RunnerID, r.ReservationID)
	}
	return nil
}

// StaleRecovery is how one dead holder's seat came back.
type StaleRecovery struct {
	Job    string `json:"job"`
	Runner string `json:"runner"`
	// DiedAtMS, QuarantinedAtMS and BackInServiceAtMS are since the start
	// (0 when it did not happen).
	DiedAtMS          int64 `json:"died_at_ms"`
	QuarantinedAtMS   int64 `json:"quarantined_at_ms"`
	BackInServiceAtMS int64 `json:"back_in_service_at_ms"`
	// RecoveryMS is death → back in service.
	RecoveryMS int64 `json:"recovery_ms"`
	// How is "same-runner reclaim", "operator recovery", "reaper freed it"
	// or "not recovered".
	How string `json:"how"`
}

// staleRecoveries reads from the history when each dead holder's seat was
// quarantined and when it stopped being consumed by that dead holder.
func (w *world) staleRecoveries(versions []checker.Version) []StaleRecovery {
	w.mu.Lock()
	var dead []*job
	for _, j := range w.jobs {
		if j.state == "dead" {
			dead = append(dead, j)
		}
	}
	w.mu.Unlock()
	out := []StaleRecovery{}
	for _, j := range dead {
		sr := StaleRecovery{Job: j.name, Runner: j.runner, DiedAtMS: j.diedAt.Sub(w.start).Milliseconds(), How: "not recovered"}
		consumed := false
		for _, v := range versions {
			if v.Content == nil || v.Time.Before(j.diedAt) {
				if v.Content != nil {
					if st, err := lockstate.Decode(v.Content, lockstate.DecodeOptions{Lock: lock}); err == nil {
						consumed = holdsOrReserves(st, j.holderID)
					}
				}
				continue
			}
			st, err := lockstate.Decode(v.Content, lockstate.DecodeOptions{Lock: lock})
			if err != nil {
				continue
			}
			if sr.QuarantinedAtMS == 0 {
				for _, r := range st.Reservations {
					if r.HolderID == j.holderID && r.State == lockstate.ReservationQuarantine {
						sr.QuarantinedAtMS = v.Time.Sub(w.start).Milliseconds()
					}
				}
			}
			if consumed && !holdsOrReserves(st, j.holderID) {
				sr.BackInServiceAtMS = v.Time.Sub(w.start).Milliseconds()
				sr.RecoveryMS = v.Time.Sub(j.diedAt).Milliseconds()
				switch {
				case strings.HasPrefix(v.Message, "Recover"):
					sr.How = "operator recovery"
				case runnerHolds(st, j.runner):
					sr.How = "same-runner reclaim"
				default:
					sr.How = "reaper freed it"
				}
				break
			}
			consumed = holdsOrReserves(st, j.holderID)
		}
		out = append(out, sr)
	}
	return out
}

func holdsOrReserves(st *lockstate.State, holderID string) bool {
	for _, h := range st.Holders {
		if h.HolderID == holderID {
			return true
		}
	}
	for _, r := range st.Reservations {
		if r.HolderID == holderID {
			return true
		}
	}
	return false
}

func runnerHolds(st *lockstate.State, runner string) bool {
	for _, h := range st.Holders {
		if h.RunnerID == runner {
			return true
		}
	}
	return false
}

func shortHex(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
