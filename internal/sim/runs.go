package sim

// Workflow runs over time: how a job's end completes its run, reruns and
// zombie attempts, and the ground-truth queries the audit asks.

import (
	"strconv"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
)

// runTruth is the ground truth of one workflow run over time.
type runTruth struct {
	// attempts[n] is when attempt n started; terminal[n] when it became
	// terminal (zero: not yet).
	started  map[int]time.Time
	terminal map[int]time.Time
	long     bool // a sibling job keeps the run active to the end
}

// finishJob marks the job completed in the Actions API (after the runner
// lost timeout for a killed runner) and maybe starts a rerun.
func (s *sim) finishJob(j *job, siblings []*job) {
	j.mu.Lock()
	j.ended = time.Now()
	j.mu.Unlock()
	if j.death == "zombie" {
		return // its attempt was ended by zombieRerun already
	}
	if j.dead.Load() {
		time.Sleep(time.Duration(60+s.intn(540)) * time.Second)
	}
	s.completeJob(j, "success")
	rt := s.runs[j.runID]
	s.jobsMu.Lock()
	allDone := true
	for _, o := range siblings {
		o.mu.Lock()
		if o.ended.IsZero() {
			allDone = false
		}
		o.mu.Unlock()
	}
	s.jobsMu.Unlock()
	if !allDone || rt.long {
		return
	}
	s.completeRun(j)
	if j.attempt < 3 && s.intn(5) == 0 && !s.stop.Load() {
		// Rerun of the whole run: same holderId, a higher run attempt.
		time.Sleep(time.Duration(30+s.intn(300)) * time.Second)
		s.rerun(j)
	}
}

func (s *sim) completeJob(j *job, conclusion string) {
	s.lin.JobCompleted(strconv.FormatInt(j.jobID, 10))
	_ = s.em.SetJobStatus(owner, j.repo, j.jobID, "completed", conclusion)
	s.jobsMu.Lock()
	s.jobDone[j.jobID] = time.Now()
	s.jobsMu.Unlock()
}

// completeRun makes attempt j.attempt of j's run terminal. Only the run's
// latest attempt decides the run's status in the Actions API: a job of an
// attempt that a rerun already superseded (the sibling of a zombie) must
// not mark the rerun's attempt completed (the reaper would rightly drop the
// rerun's entries on that evidence). jobsMu also orders this against
// rerun's status change.
func (s *sim) completeRun(j *job) {
	s.jobsMu.Lock()
	defer s.jobsMu.Unlock()
	rt := s.runs[j.runID]
	if rt.terminal[j.attempt].IsZero() {
		s.lin.RunTerminal(strconv.FormatInt(j.runID, 10), j.attempt)
		rt.terminal[j.attempt] = time.Now()
	}
	for a := range rt.started {
		if a > j.attempt {
			return
		}
	}
	_ = s.em.SetRunStatus(owner, j.repo, j.runID, "completed", "failure")
}

// rerun starts attempt+1 of j's run with one job of the same name.
func (s *sim) rerun(j *job) {
	s.jobsMu.Lock()
	attempt := s.linRerun(j, func() int { return s.em.NewRunAttempt(owner, j.repo, j.runID) })
	rt := s.runs[j.runID]
	rt.started[attempt] = time.Now()
	_ = s.em.SetRunStatus(owner, j.repo, j.runID, "in_progress", "")
	s.jobsMu.Unlock()
	s.event("rerun")
	n := s.newJobLocked(j, attempt)
	n.jobID = s.em.AddJob(owner, j.repo, j.runID, attempt, emulator.Job{Name: n.name, RunnerName: n.runner, Status: "in_progress"})
	s.start(n, []*job{n})
}

func (s *sim) newJobLocked(j *job, attempt int) *job {
	s.jobsMu.Lock()
	defer s.jobsMu.Unlock()
	n := s.newJob(j.repo, j.runID, j.name, j.runner, attempt, j.pr)
	n.start = 0
	n.labels, n.priority = j.labels, j.priority
	if n.death == "zombie" {
		n.death = ""
	}
	return n
}

// zombieRerun ends j's attempt in the Actions API while j keeps running
// and starts the next attempt, like a runner that lost its connection.
func (s *sim) zombieRerun(j *job) {
	s.completeJob(j, "failure")
	s.completeRun(j)
	s.rerun(j)
}

// runFinished reports whether attempt att of run runID was terminal, or
// superseded by a later attempt, at t (ground truth).
func (s *sim) runFinished(runID int64, att int, t time.Time) bool {
	s.jobsMu.Lock()
	defer s.jobsMu.Unlock()
	rt, ok := s.runs[runID]
	if !ok {
		return false
	}
	if tt := rt.terminal[att]; !tt.IsZero() && !tt.After(t) {
		return true
	}
	for a, st := range rt.started {
		if a > att && !st.After(t) {
			return true
		}
	}
	return false
}

func (s *sim) jobFinished(jobID string, t time.Time) bool {
	id, err := strconv.ParseInt(jobID, 10, 64)
	if err != nil {
		return false
	}
	s.jobsMu.Lock()
	defer s.jobsMu.Unlock()
	d, ok := s.jobDone[id]
	return ok && !d.After(t)
}
