package demo

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/store"
)

// job is one simulated workflow job that needs a licensed seat.
type job struct {
	name    string
	repo    string
	arrival time.Duration
	hold    time.Duration
	dies    bool
	seed    uint64

	// guarded by world.mu
	state    string // pending, queued, holding, released, dead, failed
	position int
	runner   string

	// written only by the job's goroutine, read after the run
	holderID   string
	queuedAt   time.Time
	admittedAt time.Time
	polls      int
	conflicts  int
	writes     int
	waitedFor  time.Duration
}

// runJob takes a free runner, acquires a seat through the real store and
// transitions, holds it, and releases it (or dies holding it).
func (w *world) runJob(ctx context.Context, j *job) error {
	if err := (clock.Real{}).Sleep(ctx, j.arrival); err != nil {
		return err
	}
	var runner string
	select {
	case runner = <-w.runners:
	case <-ctx.Done():
		return ctx.Err()
	}
	w.mu.Lock()
	j.runner = runner
	w.mu.Unlock()
	rng := mrand.New(mrand.NewPCG(j.seed, 1))

	runID := w.em.CreateRun(owner, j.repo, emulator.Run{Workflow: "Unity build", Event: "push", Status: "in_progress", RunAttempt: 1})
	jobID := w.em.AddJob(owner, j.repo, runID, 1, emulator.Job{Name: "build", RunnerName: runner, Status: "in_progress"})

	client, err := ghclient.New(ctx, ghclient.Config{
		APIURL:                 w.apiURL,
		AppID:                  appID,
		PrivateKey:             w.keyPEM,
		InstallationRepository: owner + "/" + lockRep,
		TokenRepositories:      []string{lockRep},
		Permissions:            &github.InstallationPermissions{Contents: github.String("write")},
		Clock:                  clock.Real{},
		Jitter:                 rng.Float64,
		Warn:                   func(msg string) { w.logf("%s warning: %s", j.name, msg) },
	})
	if err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	st, err := store.New(store.Options{Client: client, Owner: owner, Repo: lockRep, Lock: lock, Jitter: rng.Float64,
		ConflictDelay: w.opts.Poll / 2})
	if err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	cfg, warnings, err := st.LoadConfig(ctx)
	if err != nil {
		return fmt.Errorf("%s: read lock config: %w", j.name, err)
	}
	for _, warn := range warnings {
		w.logf("%s config warning: %s", j.name, warn)
	}

	now := time.Now()
	id := lockstate.Identity{
		Repository: owner + "/" + j.repo,
		Workflow:   "Unity build",
		Job:        "build",
		RunID:      fmt.Sprint(runID),
		RunAttempt: "1",
		RunnerID:   runner,
		JobID:      fmt.Sprint(jobID),
		QueuedAt:   now,
	}
	id.HolderID = fmt.Sprintf("%s:%s:%s:%s", id.Repository, id.RunID, id.Job, "default")
	id.RunURL = fmt.Sprintf("https://github.com/%s/actions/runs/%s", id.Repository, id.RunID)
	j.holderID, j.queuedAt = id.HolderID, now

	if err := w.acquire(ctx, j, st, cfg, id, rng); err != nil {
		w.setState(j, "failed", 0)
		w.logf("%s on %s FAILED to acquire: %v", j.name, runner, err)
		return fmt.Errorf("%s: %w", j.name, err)
	}
	if err := (clock.Real{}).Sleep(ctx, j.hold); err != nil {
		return err
	}
	if j.dies {
		w.setState(j, "dead", 0)
		w.em.SetJobStatus(owner, j.repo, jobID, "completed", "failure")
		w.em.SetRunStatus(owner, j.repo, runID, "completed", "failure")
		w.logf("%s on %s DIED while holding its seat (runner lost; the seat stays held until the reaper recovers it)", j.name, runner)
		return nil // the runner is not returned: it died with the job
	}
	if err := w.release(ctx, j, st, cfg, id); err != nil {
		w.setState(j, "failed", 0)
		return fmt.Errorf("%s: release: %w", j.name, err)
	}
	w.em.SetJobStatus(owner, j.repo, jobID, "completed", "success")
	w.em.SetRunStatus(owner, j.repo, runID, "completed", "success")
	w.runners <- runner
	return nil
}

// acquire is the queue-and-poll loop: one conditional read per poll, a write
// only when the job's entry must change (joining the queue, admission).
func (w *world) acquire(ctx context.Context, j *job, st *store.Store, cfg lockstate.Config, id lockstate.Identity, rng *mrand.Rand) error {
	req := lockstate.AcquireRequest{Identity: id, Lease: 4 * time.Hour}
	lastPos := -1
	for {
		j.polls++
		if _, err := st.Load(ctx); err != nil {
			return err
		}
		var dec lockstate.AcquireDecision
		res, err := st.UpdateMessage(ctx, func(s *lockstate.State) (string, error) {
			next, d, err := lockstate.Acquire(s, cfg, req, time.Now())
			if err != nil {
				return "", err
			}
			dec = d
			if !d.Changed {
				return "", store.ErrNoChange
			}
			*s = *next
			if d.Outcome == lockstate.OutcomeAdmitted {
				return "Acquire " + lock, nil
			}
			return "Queue for " + lock, nil
		})
		j.conflicts += res.Conflicts
		if res.Written {
			j.writes++
		}
		if err != nil {
			return err
		}
		switch dec.Outcome {
		case lockstate.OutcomeAdmitted, lockstate.OutcomeAlreadyHolder:
			j.admittedAt = time.Now()
			j.waitedFor = j.admittedAt.Sub(j.queuedAt)
			w.setState(j, "holding", 0)
			w.logf("%s on %s ACQUIRED a seat after %v (%d polls) — holding for %v",
				j.name, j.runner, j.waitedFor.Round(time.Millisecond), j.polls, j.hold.Round(time.Millisecond))
			return nil
		case lockstate.OutcomeQueued:
			if dec.Position != lastPos {
				w.setState(j, "queued", dec.Position)
				w.logf("%s on %s (%s) waiting at queue position %d", j.name, j.runner, j.repo, dec.Position)
				lastPos = dec.Position
			}
		default:
			return fmt.Errorf("admission refused: %s", dec.Outcome)
		}
		delay := w.opts.Poll + time.Duration(rng.Float64()*float64(max(w.opts.Poll/3, time.Millisecond)))
		if err := (clock.Real{}).Sleep(ctx, delay); err != nil {
			return err
		}
	}
}

// release removes the job's holder entry with a confirmed-clean report.
func (w *world) release(ctx context.Context, j *job, st *store.Store, cfg lockstate.Config, id lockstate.Identity) error {
	w.addRemoval(id.HolderID)
	var dec lockstate.CleanupDecision
	res, err := st.Update(ctx, "Release "+lock, func(s *lockstate.State) error {
		next, d, err := lockstate.Cleanup(s, cfg, lockstate.CleanupRequest{
			HolderID:      id.HolderID,
			RunAttempt:    id.RunAttempt,
			RunnerID:      id.RunnerID,
			Report:        lockstate.Report{Status: "confirmed", Health: "healthy", Reason: "cleanup-confirmed"},
			ReservationID: newUUID(),
			Identity:      id,
		}, time.Now())
		if err != nil {
			return err
		}
		dec = d
		if !d.Changed {
			return store.ErrNoChange
		}
		*s = *next
		return nil
	})
	j.conflicts += res.Conflicts
	if res.Written {
		j.writes++
	}
	if err != nil {
		return err
	}
	if !res.Written && !res.Ambiguous {
		return errors.New("release found nothing to remove")
	}
	w.setState(j, "released", 0)
	w.logf("%s on %s RELEASED its seat (cleanup-result=%s)", j.name, j.runner, dec.Result)
	return nil
}

// newUUID returns a random RFC 4122 version 4 UUID, the reservation ID format
// of the reference (crypto.randomUUID).
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
