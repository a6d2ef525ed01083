package sim

// The linearizability check of a seed (docs/simulation.md
// "Linearizability"): every state write of every process is recorded with
// its invocation and answer, every outcome an action reported, and what the
// Actions API made true meanwhile; after the run the history is checked
// with porcupine against the semaphore's sequential model.

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/release"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/linearizability"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/recovery"
)

// linFile is the lock's state file in the history.
var linFile = linearizability.File{Owner: owner, Repo: lockRepo, Branch: stateBranch, Path: statePath}

// linTrack starts the history at the seeded state (nil: a brand-new lock
// with no state file).
func (s *sim) linTrack(seeded []byte) {
	s.lin.Track(linFile, &linearizability.LockRules{
		Lock: lockName, ServerURL: serverURL, MaxHolders: s.cfg.MaxHolders, MaxOvertakes: s.cfg.MaxOvertakes,
	}, seeded, seeded != nil)
}

// linActor is the job's identity in the history.
func (j *job) linActor() linearizability.Actor {
	kind := linearizability.ActorJob
	if j.oldCli {
		kind = linearizability.ActorOldClient
	}
	return linearizability.Actor{Kind: kind, HolderID: j.holderID(), Attempt: strconv.Itoa(j.attempt), RunnerName: j.runner}
}

// opActor is a reaper or recovery process's identity (its inputs).
func opActor(env map[string]string) linearizability.Actor {
	return linearizability.OperatorActor(env["INPUT_OPERATION"], env["INPUT_RESERVATION_ID"], env["INPUT_INCIDENT_ID"])
}

// linBase is the emulator transport of a process, recording its writes.
func (s *sim) linBase(a linearizability.Actor) http.RoundTripper {
	return s.lin.Transport(s.em.Transport(), a)
}

// linAcquired records an acquire step's reported admission.
func (s *sim) linAcquired(j *job, call int64, out map[string]string) {
	if out["acquired"] == "true" {
		s.lin.Acquired(linFile, j.linActor(), call, out["fencing-token"], out["state-sha"])
	}
}

// linReleased records a release step that reported removing the job's
// entries.
func (s *sim) linReleased(j *job, call int64, out map[string]string) {
	if out[release.OutputReleased] == "true" || out[release.OutputQueueCleaned] == "true" {
		s.lin.Released(linFile, j.linActor(), call)
	}
}

// linRecovered records a recovery that reported reaped=true.
func (s *sim) linRecovered(a linearizability.Actor, call int64, out map[string]string) {
	if a.Kind != linearizability.ActorReaper && out[recovery.OutputReaped] == "true" {
		s.lin.Recovered(linFile, a, call)
	}
}

// linAudit reads the final state and checks the seed's history; a history
// that is not linearizable writes porcupine's visualization to the test's
// artifact directory (go test -artifacts keeps it).
func (s *sim) linAudit(rep *Report, violate func(format string, args ...any)) {
	if s.seats != nil {
		// The sequential model knows anonymous seats and FIFO only: named
		// seats, labels and priority classes admit out of FIFO order by
		// design, so a seat seed's history is judged by the checker's seat
		// rules and auditSeats instead (docs/simulation.md).
		s.event("lin-not-modelled-seats")
		return
	}
	s.lin.Observe(linFile, func() ([]byte, bool) {
		h := s.em.History(owner, lockRepo, stateBranch, statePath)
		if len(h) == 0 || h[len(h)-1].Content == nil {
			return nil, false
		}
		return h[len(h)-1].Content, true
	})
	res := s.lin.Check(linearizability.Options{VisualizeDir: s.tb.ArtifactDir, Name: fmt.Sprintf("seed-%d", s.seed)})
	rep.Linearizability = res
	for _, v := range res.Violations {
		violate("linearizability (%s): %s", v.Code, v.Detail)
	}
	if res.Visualization != "" {
		violate("linearizability: porcupine's visualization of seed %d is %s (go test -artifacts keeps it)", s.seed, res.Visualization)
	}
}

// latest is the highest attempt started.
func latest(started map[int]time.Time) int {
	n := 0
	for a := range started {
		n = max(n, a)
	}
	return n
}

// linRerun records the rerun's attempt as started before newAttempt makes
// it visible in the Actions API (so a reaper write that relies on it is
// judged with it), and returns the attempt newAttempt started.
func (s *sim) linRerun(j *job, newAttempt func() int) int {
	run := strconv.FormatInt(j.runID, 10)
	want := latest(s.runs[j.runID].started) + 1
	s.lin.RunAttemptStarted(run, want)
	got := newAttempt()
	if got != want {
		s.lin.RunAttemptStarted(run, got)
	}
	return got
}
