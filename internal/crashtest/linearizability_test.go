package crashtest

// The linearizability check of every crash case (docs/crash-testing.md
// "Linearizability"): every state write of every process of the case (the
// victim, its competitors, the setup jobs, the reaper and the operator) is
// recorded with its invocation and answer, with the outcomes the steps
// reported and the runs the case ended; porcupine checks the history
// against the semaphore's sequential model next to each history audit.

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/release"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/linearizability"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/recovery"
)

// linFile is the lock's state file in the history.
var linFile = linearizability.File{Owner: actiontest.Owner, Repo: actiontest.LockRepo, Branch: "lock-state", Path: actiontest.StatePath}

// linWorlds finds the world of a job (deps has only the job).
var linWorlds sync.Map // *actiontest.Job -> *world

// linInit starts the case's history at the seeded state, with the seats
// and overtaking bound of config.
func (w *world) linInit(config string) {
	var c struct {
		MaxHolders   int  `json:"maxHolders"`
		MaxOvertakes *int `json:"maxOvertakes"`
	}
	_ = json.Unmarshal([]byte(config), &c)
	rules := &linearizability.LockRules{Lock: actiontest.Lock, ServerURL: actiontest.ServerURL, MaxHolders: max(c.MaxHolders, 1), MaxOvertakes: lockstate.DefaultMaxOvertakes}
	if c.MaxOvertakes != nil {
		rules.MaxOvertakes = *c.MaxOvertakes
	}
	w.lin = linearizability.NewRecorder(nil)
	vs := w.versions()
	if len(vs) == 0 {
		w.lin.Track(linFile, rules, nil, false) // a brand-new lock: no state file yet
		return
	}
	w.lin.Track(linFile, rules, vs[len(vs)-1].Content, true)
}

// linJob is a job's identity in the history.
func linJob(j *actiontest.Job) linearizability.Actor {
	return linearizability.Actor{Kind: linearizability.ActorJob, HolderID: j.HolderID(), Attempt: j.Env["GITHUB_RUN_ATTEMPT"], RunnerName: j.Env["RUNNER_NAME"]}
}

// linOp is a reaper or recovery step's identity (its inputs).
func linOp(env map[string]string) linearizability.Actor {
	return linearizability.OperatorActor(env["INPUT_OPERATION"], env["INPUT_RESERVATION-ID"], env["INPUT_INCIDENT-ID"])
}

// linWrap records the state writes j's step sends through tr.
func linWrap(j *actiontest.Job, tr http.RoundTripper) http.RoundTripper {
	if w, ok := linWorlds.Load(j); ok {
		return w.(*world).lin.Transport(tr, linJob(j))
	}
	return tr
}

// linAcquired records an acquire step's reported admission.
func (w *world) linAcquired(j *actiontest.Job, call int64, out map[string]string) {
	if out["acquired"] == "true" {
		w.lin.Acquired(linFile, linJob(j), call, out["fencing-token"], out["state-sha"])
	}
}

// linReleased records a release step that reported removing the job's
// entries.
func (w *world) linReleased(j *actiontest.Job, call int64, out map[string]string) {
	if out[release.OutputReleased] == "true" || out[release.OutputQueueCleaned] == "true" {
		w.lin.Released(linFile, linJob(j), call)
	}
}

// linStep is the invocation of the victim step; while it runs, the
// victim's own release outcome is left to linVictim.
func (w *world) linStep(sc scenario, v *victim) int64 {
	if v.job == nil {
		return w.lin.Now()
	}
	w.mu.Lock()
	w.victim = v.job
	w.mu.Unlock()
	if sc.act() == "acquire" {
		return w.lin.BeginAcquire(linFile, linJob(v.job))
	}
	return w.lin.Now()
}

// linVictim records the victim step's reported outcome, from the outputs
// it wrote before it was killed (or returned).
func (w *world) linVictim(sc scenario, v *victim, call int64, out map[string]string) {
	w.mu.Lock()
	w.victim = nil
	w.mu.Unlock()
	switch {
	case v.job != nil && sc.act() == "acquire":
		w.linAcquired(v.job, call, out)
	case v.job != nil && sc.act() == "release":
		w.linReleased(v.job, call, out)
	case v.job == nil && out[recovery.OutputReaped] == "true" &&
		(v.op.Kind == linearizability.ActorRecover || v.op.Kind == linearizability.ActorRecoverIncident):
		w.lin.Recovered(linFile, v.op, call)
	}
}

// linFinish records that j's job and run ended (before the API shows it).
func (w *world) linFinish(j *actiontest.Job) {
	w.lin.JobCompleted(strconv.FormatInt(j.JobID, 10))
	w.lin.RunTerminal(strconv.FormatInt(j.RunID, 10), 1)
}

// checkLinearizable checks the case's history so far (writes still in
// flight count as unknown) after a read of the branch head.
func checkLinearizable(ct *caseT, w *world, when string) {
	w.lin.Observe(linFile, func() ([]byte, bool) {
		vs := w.versions()
		if len(vs) == 0 {
			return nil, false // a brand-new lock nobody wrote yet
		}
		return vs[len(vs)-1].Content, vs[len(vs)-1].Content != nil
	})
	res := w.lin.Check(linearizability.Options{VisualizeDir: ct.t.ArtifactDir, Name: ct.id.action + "-" + ct.id.b.Name() + "-" + ct.id.f.String()})
	ct.t.Logf("%s: %s", when, res.Summary())
	for _, v := range res.Violations {
		ct.violate("linearizability %s (%s): %s", when, v.Code, v.Detail)
	}
	if res.Visualization != "" {
		ct.violate("linearizability %s: porcupine's visualization is %s (go test -artifacts keeps it)", when, res.Visualization)
	}
}
