package sim

// The simulated jobs: their ground truth, identity and how the seed draws
// them.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// job is one workflow job that uses the lock, with its ground truth.
type job struct {
	idx      int
	repo     string
	runID    int64
	jobID    int64
	name     string
	runner   string
	attempt  int
	withPost bool
	pr       int
	prHead   string
	oldCli   bool

	start, hold time.Duration
	timeout     int // minutes
	lease       int // minutes
	death       string
	deathAt     time.Duration
	skipRelease bool
	blocked     bool
	unsafe      bool
	// noToken: no github-token input (no exact job id is recorded), as in
	// the hostile tester's two-legs-one-seat case.
	noToken bool
	// runnerInput, when set, is the runner-id input instead of the runner's
	// name (a workflow passing one constant for every leg).
	runnerInput string
	// lateZombie (death "zombie"): right before this process releases,
	// its attempt ends and the rerun takes the seat or queues, so the stale
	// attempt's release meets the rerun's entry (scenarios.go).
	lateZombie bool
	// labels and priority are the seat-labels and priority inputs (seat
	// seeds, seats.go); a rerun keeps them.
	labels   string
	priority int

	clk    skewClock
	dead   atomic.Bool
	cancel context.CancelFunc
	out    *syncBuffer
	dir    string
	env    map[string]string

	mu         sync.Mutex
	acquiredAt time.Time // outputs said acquired=true at this time
	// silentFailAt: the acquire step ended by itself with an error and no
	// outputs at this time (not killed, not cancelled).
	silentFailAt time.Time
	// noopReleases: the release steps that reported cleanup-result noop,
	// with when each began and returned (auditNoopReleases).
	noopReleases []interval
	// acquireReason is the stable reason code of a failed acquire step
	// (lockaction.ReasonCode), "" when it succeeded.
	acquireReason string
	token         string
	waitEnded     time.Time
	ended         time.Time
	outputs       []map[string]string
	summaries     []string
}

func (j *job) holderID() string {
	return fmt.Sprintf("%s/%s:%d:%s:default", owner, j.repo, j.runID, j.name)
}

func (j *job) actor() string {
	p := "job:"
	if j.oldCli {
		p = "old:"
	}
	return fmt.Sprintf("%s%s@%d#%s", p, j.holderID(), j.attempt, j.runner)
}

func (s *sim) newJob(repo string, runID int64, name, runner string, attempt, pr int) *job {
	j := &job{
		idx: len(s.jobs), repo: repo, runID: runID, name: name, runner: runner, attempt: attempt, pr: pr,
		withPost: s.intn(2) == 0, oldCli: s.schema >= 5 && s.intn(6) == 0,
		start:   time.Duration(s.intn(int(s.window*3/4/time.Millisecond))) * time.Millisecond,
		hold:    time.Duration(30+s.intn(600)) * time.Second,
		timeout: 20 + s.intn(30), lease: []int{30, 60, 240}[s.intn(3)],
		out: &syncBuffer{},
	}
	if pr > 0 {
		j.prHead = headSHA(s.seed, pr, 0)
	}
	switch r := s.intn(100); {
	case r < 12:
		j.death = "sigkill"
	case r < 22:
		j.death = "sigint"
	case r < 27:
		j.death = "zombie"
	}
	j.deathAt = time.Duration(s.intn(int((j.hold+10*time.Minute)/time.Millisecond))) * time.Millisecond
	j.skipRelease = j.withPost && s.intn(4) == 0
	j.blocked = s.schema >= 5 && s.intn(30) == 0
	j.unsafe = s.intn(5) == 0
	s.seatRequest(j)
	// Runner clocks: most are close, some are an hour off, some drift.
	switch r := s.intn(10); {
	case r < 6:
		j.clk.offset = time.Duration(s.intn(4000)-2000) * time.Millisecond
	case r < 7:
		j.clk.offset = time.Duration(s.intn(7200)-3600) * time.Second
	default:
		j.clk.drift = (s.float() - 0.5) * 0.02
	}
	s.jobs = append(s.jobs, j)
	return j
}

// waitingJobs lists the jobs still in their acquire step.
func (s *sim) waitingJobs() []*job {
	s.jobsMu.Lock()
	defer s.jobsMu.Unlock()
	var out []*job
	for _, j := range s.jobs {
		j.mu.Lock()
		if j.clk.start.IsZero() || (j.waitEnded.IsZero() && !j.dead.Load()) {
			out = append(out, j)
		}
		j.mu.Unlock()
	}
	return out
}

// interval is a step's call, from its start to its return.
type interval struct{ start, end time.Time }
