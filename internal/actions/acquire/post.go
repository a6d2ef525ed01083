package acquire

import (
	"context"
	"fmt"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/store"
)

// Post-step budgets (spec §1.3, §3.7).
const (
	postCASRounds     = 3
	postConflictDelay = 500 * time.Millisecond
	// postWindow bounds the whole post step.
	postWindow = 60 * time.Second
)

// runPost is the post step of acquire-build-lock-with-cleanup. It runs only
// when the main step saved build_lock_cleanup=enabled, removes this run's
// queue entries and moves a still-held slot into quarantine (the post step
// cannot prove external resource cleanup). It never fails: every problem
// is a warning.
func runPost(ctx context.Context, d Deps, a *actionio.IO, s Settings, serr error) {
	if !s.PostEnabled {
		a.Println("Build-lock post cleanup: nothing to do (the main step did not touch lock state).")
		return
	}
	s.Credentials.MaskIn(a)
	if serr != nil {
		a.Warning("Build-lock post cleanup failed: " + serr.Error())
		return
	}
	cctx, cancel := actionkit.CleanupContext(ctx, d.Signals, postWindow)
	defer cancel()
	if err := postCleanup(cctx, d, a, s); err != nil {
		a.Warning("Build-lock post cleanup failed: " + err.Error())
		return
	}
	// The organization seat first, then the machine slot.
	postFreeMachineSlot(cctx, d, a, s)
}

func postCleanup(ctx context.Context, d Deps, a *actionio.IO, s Settings) error {
	t := s.Target
	id := lockaction.IdentityFor(s.Run, t, s.Identity.Suffix, s.Identity.RunnerID, "", d.Clock.Now())
	creds := s.Credentials
	client, err := lockaction.NewJobWriterClient(ctx, a, t, creds, s.Knobs, d.ClientOptions(), s.RunnerTemp)
	if err != nil {
		return err
	}
	st, err := newStore(client, t, d, ghclient.Budget{}, postCASRounds, postConflictDelay, nil)
	if err != nil {
		return err
	}
	lockaction.SeedAdmissionFloor(st, s.RunnerTemp, t, id.HolderID)
	if t.Branch != lockaction.DefaultStateBranch {
		if err := st.CheckStateBranch(ctx); err != nil {
			return err
		}
	}
	var cfg lockstate.Config
	var warnings []string
	if snap, age, ok := lockaction.NotedConfig(s.RunnerTemp, t, creds, client, d.Clock.Now()); ok {
		// The main step read the config less than a minute ago
		// (lockaction.ConfigNoteMaxAge): one request less.
		a.Println(fmt.Sprintf("Using the lock config the main step read %s ago.", age.Round(time.Second)))
		cfg, warnings = snap.Config, snap.Warnings
	} else {
		// A conditional read with the main step's answer (a 304 while
		// the file is unchanged and the token is the main step's).
		lockaction.SeedNotedConfig(s.RunnerTemp, t, creds, st)
		if cfg, warnings, err = st.LoadConfig(ctx); err != nil {
			a.Warning("Build-lock post cleanup uses the default lock config: " + err.Error())
			cfg = lockstate.DefaultConfig()
		}
	}
	if err := lockaction.CheckOwnerPin(t, client); err != nil {
		return err
	}
	for _, w := range warnings {
		a.Warning(w)
	}
	req := lockstate.CleanupRequest{
		HolderID: id.HolderID, RunAttempt: id.RunAttempt, RunnerID: id.RunnerID,
		ReservationID: actionkit.NewReservationID(), Identity: id, ServerURL: t.ServerURL,
		RunnerName: id.RunnerName,
	}
	var dec lockstate.CleanupDecision
	update := func() (store.Result, error) {
		return st.Update(ctx, "Release "+t.Lock, func(s *lockstate.State) error {
			next, dd, err := lockstate.Cleanup(s, cfg, req, d.Clock.Now())
			if err != nil {
				return err
			}
			dec = dd
			if !dd.Changed {
				return store.ErrNoChange
			}
			*s = *next
			return nil
		})
	}
	res, err := update()
	if err != nil {
		return err
	}
	if !res.Written && !dec.Released && !dec.QueueCleaned {
		// The main step's admission is recorded: check a "nothing left"
		// read at the branch head before trusting it.
		fc, err := lockaction.CheckHeldAbsence(ctx, st, s.RunnerTemp, t, id.HolderID)
		if err != nil {
			return err
		}
		if fc.Found {
			a.Warning(fmt.Sprintf("The first read of %s was stale (it did not show this job's entry); cleaning up from the state at the branch head, commit %s.", t.Lock, shortSHA(fc.Commit)))
			if res, err = update(); err != nil {
				return err
			}
		} else {
			// The main step may have died with its write in flight.
			late, err := lockaction.AwaitInFlightWrite(ctx, st, d.Clock, s.RunnerTemp, t, id.HolderID)
			if err != nil {
				return err
			}
			if late.Found {
				a.Warning(fmt.Sprintf("The main step died with a write of %s in flight, and it landed after the first check (commit %s); cleaning it up.", t.Lock, shortSHA(late.Commit)))
				if res, err = update(); err != nil {
					return err
				}
			}
		}
	}
	_ = lockaction.RemoveEntryMarkers(s.RunnerTemp, t, id.HolderID)
	if dec.ForeignKept > 0 {
		a.Warning(fmt.Sprintf("Post cleanup kept %d entry(ies) of %s recorded on another runner: another job of this run uses the same holder id (%s).",
			dec.ForeignKept, id.HolderID, lockstate.CodeHolderIDCollision))
	}
	if dec.Released {
		a.Warning(postReleasedMessage(id.HolderID, t.Lock, res.State.SchemaVersion, dec.Result))
	}
	a.Printf("Build-lock post cleanup: %s (state %s).", dec.Result, shortSHA(res.SHA))
	return nil
}

func shortSHA(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// postReleasedMessage explains a seat the post step removed without proof
// of external resource cleanup. From schema 4 the seat is quarantined (it
// stays occupied until reclaimed or recovered); schemas 2 and 3 have no
// reservations to keep it in, so the seat is free again at once, exactly as
// the reference's post cleanup leaves it.
func postReleasedMessage(holderID, lock string, schema int, result lockstate.CleanupResult) string {
	if result == lockstate.ResultQuarantined {
		return fmt.Sprintf("Post cleanup removed %s from %s without proof of external resource cleanup; the seat is quarantined (cleanup-result=%s) until a job on the same runner reclaims it or an operator recovers it. Run the explicit release step with the cleanup report to get a cooldown instead.",
			holderID, lock, result)
	}
	return fmt.Sprintf("Post cleanup removed %s from %s without proof of external resource cleanup (cleanup-result=%s). This lock is at schema %d, which has no reservations to quarantine an unproven seat in, so the seat is free again; enable resourceLifecycle in the lock config (schema 4) to keep unproven seats out of use.",
		holderID, lock, result, schema)
}
