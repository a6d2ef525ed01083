package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// planScenarios adds, on some seeds, the targeted situations that the
// random job mix reaches too rarely (R-T1: the planted bugs
// quarantine-freed-on-time-alone and drop-run-attempt-fence must be caught
// within 100 seeds). Their choices come from a stream of their own, so the
// rest of a seed's schedule (config, jobs, faults) is drawn exactly as
// before.
//
//   - Active-run quarantine (aging seeds, 1 in 2): a long run (a sibling job
//     keeps it in progress to the end) whose acquire-with-cleanup job skips
//     its release, so the post step quarantines its seat, on a runner of its
//     own (no same-runner reclaim consumes the quarantine). The aging phase
//     runs the reaper past the 240-minute grace: the quarantine must stay,
//     because the owning run never becomes terminal (spec §4.1 step 5).
//   - Late zombie (schema >= 3, 1 in 4, once the lock reached the target
//     schema): the runner loses contact right before the job's release
//     step; GitHub ends the attempt, the reaper reconciles its seat, the
//     rerun (same holderId, attempt+1) takes the seat or queues, and only
//     then does the stale process release. Its cleanup must refuse the
//     newer attempt's entry (spec §2.5 run-attempt fence).
//   - Shared holder id (1 in 4, its own stream): two matrix legs of one run
//     with the default holder-id-suffix and no github-token, so they
//     compute one holder id and no job id tells them apart, on two runners
//     a few seconds apart. The second must be refused (its recorded runner
//     differs), never take the first's seat as its retry, and its always()
//     release must not free the first leg's seat.
func (s *sim) planScenarios() {
	xr := rand.New(rand.NewPCG(s.seed, 0x5ce7a1))
	if s.aging && xr.IntN(2) == 0 {
		j := s.scenarioJob(xr, "runner-q", s.window/4, s.window/2)
		j.withPost, j.skipRelease = true, true
		s.sched = append(s.sched, fmt.Sprintf("scenario active-run-quarantine at %s", j.start))
		s.startScenario(j, true, 5)
	}
	if s.schema >= 3 && xr.IntN(4) == 0 {
		j := s.scenarioJob(xr, "runner-z", 0, s.window/2)
		j.death, j.lateZombie = "zombie", true
		s.sched = append(s.sched, fmt.Sprintf("scenario late-zombie at %s", j.start))
		s.startScenario(j, false, s.schema)
	}
	// A stream of its own, so the scenarios above are drawn as before.
	if sr := rand.New(rand.NewPCG(s.seed, 0x5a4ed1d)); sr.IntN(4) == 0 {
		a := s.scenarioJob(sr, "runner-s1", 0, s.window/2)
		b := s.scenarioJob(sr, "runner-s2", 0, time.Second)
		_ = s.em.SetRunStatus(owner, b.repo, b.runID, "completed", "cancelled") // b joins a's run instead
		b.repo, b.runID, b.start = a.repo, a.runID, a.start+time.Duration(1+sr.IntN(5))*time.Second
		// Both legs pass one runner-id (a constant in the workflow), so
		// only the runner each process really runs on tells them apart.
		a.noToken, b.noToken = true, true
		a.runnerInput, b.runnerInput = "unity-pool", "unity-pool"
		s.sched = append(s.sched, fmt.Sprintf("scenario shared-holder-id at %s", a.start))
		s.jobsMu.Lock()
		s.runs[a.runID] = &runTruth{started: map[int]time.Time{1: time.Now()}, terminal: map[int]time.Time{}}
		s.jobsMu.Unlock()
		legs := []*job{a, b}
		for _, j := range legs {
			s.startLeg(j, legs)
		}
	}
}

// startLeg starts j, one job of a registered scenario run, at j.start; the
// run completes when every sibling finished.
func (s *sim) startLeg(j *job, siblings []*job) {
	j.jobID = s.em.AddJob(owner, j.repo, j.runID, 1, emulator.Job{Name: j.name, RunnerName: j.runner, Status: "in_progress"})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		time.Sleep(j.start)
		j.clk.start = time.Now()
		s.runJob(j)
		s.finishJob(j, siblings)
	}()
}

// scenarioJob is a first-attempt job of a new run on its own runner,
// started in [from, from+span), with a close runner clock and no random
// death, drawn from xr.
func (s *sim) scenarioJob(xr *rand.Rand, runner string, from, span time.Duration) *job {
	repo := consumers[xr.IntN(len(consumers))]
	runID := s.em.CreateRun(owner, repo, emulator.Run{Workflow: "unity.yml", Status: "in_progress", RunAttempt: 1})
	j := &job{
		repo: repo, runID: runID, name: "build-0", runner: runner, attempt: 1,
		start:   from + time.Duration(xr.IntN(int(span/time.Millisecond)))*time.Millisecond,
		hold:    time.Duration(60+xr.IntN(240)) * time.Second,
		timeout: 40 + xr.IntN(20), lease: []int{30, 60, 240}[xr.IntN(3)],
		out: &syncBuffer{},
	}
	j.clk.offset = time.Duration(xr.IntN(4000)-2000) * time.Millisecond
	s.jobsMu.Lock()
	j.idx = len(s.jobs)
	s.jobs = append(s.jobs, j)
	s.jobsMu.Unlock()
	return j
}

// startScenario registers the job's run (long: a sibling job keeps it in
// progress to the end) and starts the job once the lock is at schema
// minSchema or can migrate to it (the config asks for it and the lock is
// drained); a job whose lock never gets there by the end of the fault
// window does not run (its run is cancelled).
func (s *sim) startScenario(j *job, long bool, minSchema int) {
	s.jobsMu.Lock()
	s.runs[j.runID] = &runTruth{started: map[int]time.Time{1: time.Now()}, terminal: map[int]time.Time{}, long: long}
	s.jobsMu.Unlock()
	if long {
		s.em.AddJob(owner, j.repo, j.runID, 1, emulator.Job{Name: "long-tests", RunnerName: "hosted", Status: "in_progress"})
	}
	j.jobID = s.em.AddJob(owner, j.repo, j.runID, 1, emulator.Job{Name: j.name, RunnerName: j.runner, Status: "in_progress"})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		time.Sleep(j.start)
		for !s.schemaReady(minSchema) {
			if time.Since(s.t0) >= s.window {
				s.event("scenario-skipped")
				j.mu.Lock()
				j.clk.start, j.waitEnded, j.ended = time.Now(), time.Now(), time.Now()
				j.mu.Unlock()
				s.completeJob(j, "cancelled")
				return
			}
			time.Sleep(30 * time.Second)
		}
		j.clk.start = time.Now()
		s.runJob(j)
		s.finishJob(j, []*job{j})
	}()
}

// schemaReady reports whether a client starting now runs at schema >= min:
// the committed state is there already, or the config asks for it and the
// lock is drained, so the client migrates.
func (s *sim) schemaReady(min int) bool {
	st := s.currentState()
	if st == nil {
		st = lockstate.Empty(lockName) // a brand-new lock: no state file yet
	}
	if st.SchemaVersion >= min {
		return true
	}
	return int(s.cfgLevel.Load()) >= min && len(st.Holders) == 0 && len(st.Queue) == 0 && len(st.Reservations) == 0
}

// lateZombie ends j's attempt while j keeps running, waits (bounded) until
// the reaper has reconciled j's entry, starts the rerun and waits (bounded)
// until the rerun's entry is committed; j then goes on to its release.
func (s *sim) lateZombie(ctx context.Context, j *job) {
	s.event("zombie")
	s.completeJob(j, "failure")
	s.completeRun(j)
	id, att, next := j.holderID(), strconv.Itoa(j.attempt), strconv.Itoa(j.attempt+1)
	s.waitState(ctx, 20*time.Minute, func(st *lockstate.State) bool { return !hasEntry(st, id, att) })
	s.rerun(j)
	s.waitState(ctx, 15*time.Minute, func(st *lockstate.State) bool { return hasEntry(st, id, next) })
}

// waitState polls the committed state every 30 s until ok or the bound.
func (s *sim) waitState(ctx context.Context, bound time.Duration, ok func(*lockstate.State) bool) {
	for end := time.Now().Add(bound); time.Now().Before(end); {
		if st := s.currentState(); st != nil && ok(st) {
			return
		}
		if (clock.Real{}).Sleep(ctx, 30*time.Second) != nil {
			return
		}
	}
}

// hasEntry reports a holder or queue entry of holderID at attempt.
func hasEntry(st *lockstate.State, holderID, attempt string) bool {
	for _, h := range st.Holders {
		if h.HolderID == holderID && h.RunAttempt == attempt {
			return true
		}
	}
	for _, e := range st.Queue {
		if e.HolderID == holderID && e.RunAttempt == attempt {
			return true
		}
	}
	return false
}
