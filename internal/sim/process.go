package sim

// One job process: its environment and injected edges, and the lock steps
// it runs (acquire or acquire-with-cleanup, release, the post step) with its
// death.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/acquire"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/release"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// start launches one job process (and, for reruns and zombies, the next
// attempt).
func (s *sim) start(j *job, siblings []*job) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		time.Sleep(j.start)
		j.clk.start = time.Now()
		s.runJob(j)
		s.finishJob(j, siblings)
	}()
}

// baseEnv is the step environment of a job.
func (s *sim) baseEnv(j *job) map[string]string {
	env := map[string]string{
		"GITHUB_ACTION_REPOSITORY":   owner + "/" + lockRepo,
		"GITHUB_REPOSITORY":          owner + "/" + j.repo,
		"GITHUB_REPOSITORY_ID":       "42",
		"GITHUB_REPOSITORY_OWNER_ID": strconv.Itoa(ownerID),
		"GITHUB_RUN_ID":              strconv.FormatInt(j.runID, 10),
		"GITHUB_RUN_ATTEMPT":         strconv.Itoa(j.attempt),
		"GITHUB_JOB":                 j.name,
		"GITHUB_WORKFLOW":            "Unity",
		"GITHUB_EVENT_NAME":          "push",
		"GITHUB_SERVER_URL":          serverURL,
		"GITHUB_API_URL":             apiURL,
		"GITHUB_OUTPUT":              j.dir + "/output",
		"GITHUB_STATE":               j.dir + "/state",
		"GITHUB_STEP_SUMMARY":        j.dir + "/summary",
		lockaction.EnvAppID:          strconv.Itoa(writerAppID),
		lockaction.EnvAppPrivateKey:  writerPEM,
		"INPUT_LOCK-NAME":            lockName,
		"INPUT_RUNNER-ID":            j.runner,
		"RUNNER_NAME":                j.runner,
		"RUNNER_OS":                  "Linux",
		"RUNNER_ARCH":                "X64",
		"RUNNER_TEMP":                j.dir + "/runner-temp",
		"INPUT_TIMEOUT-MINUTES":      strconv.Itoa(j.timeout),
		"INPUT_LEASE-MINUTES":        strconv.Itoa(j.lease),
		"INPUT_GITHUB-TOKEN":         consumerToken,
		"BUILD_LOCK_CONFIG_TTL_MS":   "60000",
	}
	if j.noToken {
		delete(env, "INPUT_GITHUB-TOKEN")
	}
	if j.jobID > 0 && j.idx%2 == 1 {
		// Every second job runs as on github.com, where the runner fills
		// job-check-run-id in from ${{ job.check_run_id }}; the others as
		// on GitHub Enterprise Server or nektos/act (the job is looked up).
		env["INPUT_JOB-CHECK-RUN-ID"] = strconv.FormatInt(j.jobID, 10)
	}
	if j.runnerInput != "" {
		env["INPUT_RUNNER-ID"] = j.runnerInput
	}
	if j.pr > 0 {
		env["GITHUB_EVENT_NAME"] = "pull_request"
		env["INPUT_PULL-REQUEST-NUMBER"] = strconv.Itoa(j.pr)
		env["INPUT_EXPECTED-HEAD-SHA"] = j.prHead
	}
	return env
}

func (s *sim) deps(j *job, proc string, env map[string]string, sig *lockaction.Signals) actionkit.Deps {
	r := rand.New(rand.NewPCG(s.seed, uint64(j.idx)<<8|uint64(j.attempt)))
	var mu sync.Mutex
	return actionkit.Deps{
		Getenv:    func(k string) string { return env[k] },
		Stdout:    j.out,
		Transport: actorTransport{rec: s.rec, actor: j.actor(), proc: proc, drift: j.clk.drift, dead: &j.dead, base: s.linBase(j.linActor())},
		Signals:   sig,
		Clock:     j.clk,
		Jitter: func() float64 {
			mu.Lock()
			defer mu.Unlock()
			return r.Float64()
		},
		MachineID: s.machineID(j),
	}
}

// runJob runs the job's lock steps: acquire (or acquire-with-cleanup), the
// licensed work, release, and the post step, with its death if any.
func (s *sim) runJob(j *job) {
	dir, err := os.MkdirTemp(tempRoot(), "sim-job-")
	if err != nil {
		s.tb.Fatalf("sim: %v", err)
	}
	defer os.RemoveAll(dir)
	j.dir = dir
	if j.oldCli {
		s.runOldClient(j)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	j.mu.Lock()
	j.cancel = cancel
	j.mu.Unlock()
	sig := &lockaction.Signals{}
	var deathTimer *time.Timer
	if j.death != "" && !j.lateZombie {
		deathTimer = time.AfterFunc(j.deathAt, func() {
			switch j.death {
			case "sigkill":
				j.dead.Store(true)
				s.event("sigkill")
				cancel()
			case "sigint":
				sig.Simulate(os.Interrupt)
				s.event("sigint")
				cancel()
			case "zombie":
				// The runner lost contact: GitHub ends the attempt and a
				// rerun starts, while this process keeps running.
				s.event("zombie")
				s.zombieRerun(j)
			}
		})
		defer deathTimer.Stop()
	}
	env := s.baseEnv(j)
	seatEnv(j, env)
	if j.withPost {
		env["BUILD_LOCK_MODE"] = acquire.ModeAcquireWithCleanup
	}
	call := s.lin.BeginAcquire(linFile, j.linActor())
	err = acquire.Run(ctx, s.deps(j, "acquire", env, sig))
	if err != nil {
		fmt.Fprintf(j.out, "sim: acquire: %v\n", err)
	}
	s.collect(j, true)
	s.linAcquired(j, call, j.lastOutputs())
	j.mu.Lock()
	j.waitEnded = time.Now()
	if err != nil {
		j.acquireReason = lockaction.ReasonCode(err)
	}
	if out := j.outputs[len(j.outputs)-1]; err != nil && ctx.Err() == nil && !j.dead.Load() && !typedAdmissionResult[out["admission-result"]] {
		// Ended by itself with an error that no typed refusal reported
		// (acquired=false with the reason code as admission-result): the
		// audit proves its admission is not in the state (a lost write
		// response must be decided by the next read, or reported as
		// admission-unknown).
		j.silentFailAt = j.waitEnded
	}
	j.mu.Unlock()
	if err == nil && ctx.Err() == nil {
		_ = clock.Real{}.Sleep(ctx, j.hold)
	}
	if j.lateZombie && err == nil && ctx.Err() == nil {
		// The runner lost contact just before its release step: GitHub
		// ends the attempt and the rerun starts (and queues or holds)
		// while this process goes on to release with its stale attempt.
		s.lateZombie(ctx, j)
	}
	// The release step runs with if: always() (README consumer workflow):
	// also after a failed acquire, which may have left an admission behind
	// (admission-unknown) or a queue entry.
	if !j.dead.Load() && !j.skipRelease && !(j.death == "sigint" && ctx.Err() != nil && j.withPost) {
		renv := s.baseEnv(j)
		switch {
		case j.blocked:
			renv["INPUT_RESOURCE-HEALTH"] = "blocked"
			renv["INPUT_RESOURCE-CLEANUP-STATUS"] = "unknown"
		case j.unsafe:
			renv["INPUT_RESOURCE-SAFE"] = "false"
		default:
			renv["INPUT_RESOURCE-SAFE"] = "true"
		}
		j.reset()
		call, began := s.lin.Now(), time.Now()
		rerr := release.Run(ctx, s.deps(j, "release", renv, sig))
		s.collect(j, false)
		out := j.lastOutputs()
		s.linReleased(j, call, out)
		if rerr == nil && out[release.OutputCleanupResult] == string(lockstate.ResultNoop) {
			j.mu.Lock()
			j.noopReleases = append(j.noopReleases, interval{began, time.Now()})
			j.mu.Unlock()
		}
	}
	if j.withPost && !j.dead.Load() {
		penv := s.baseEnv(j)
		penv["BUILD_LOCK_MODE"] = acquire.ModePostCleanup
		// The runner exposes what the main step saved in GITHUB_STATE to
		// the post step as STATE_<name> (spec §1.3: the post step cleans up
		// only when the main step recorded build_lock_cleanup=enabled).
		for k, v := range readFileCommands(j.dir + "/state") {
			penv["STATE_"+k] = v
		}
		j.reset()
		_ = acquire.Run(context.Background(), s.deps(j, "post", penv, &lockaction.Signals{}))
		s.collect(j, false)
	}
}

// typedAdmissionResult are the admission-result values of the typed
// refusals (docs/actions.md), each with its own cleanup contract; any other
// failure reports its reason code there and must hold no admission.
var typedAdmissionResult = map[string]bool{
	"acquired": true, "timeout": true, "account-blocked": true, "account-blocked-cleanup-failed": true,
	"superseded": true, "pr-head-check-failed": true, "pr-head-cleanup-failed": true, "admission-unknown": true,
}

func (j *job) reset() {
	_ = os.Remove(j.env["GITHUB_OUTPUT"])
	_ = os.Remove(j.dir + "/output")
	_ = os.Remove(j.dir + "/summary")
}

// collect reads the step's outputs and summary right after it returned.
func (s *sim) collect(j *job, isAcquire bool) {
	out := readFileCommands(j.dir + "/output")
	sum, _ := os.ReadFile(j.dir + "/summary")
	j.mu.Lock()
	defer j.mu.Unlock()
	j.outputs = append(j.outputs, out)
	j.summaries = append(j.summaries, string(sum))
	if isAcquire && out["acquired"] == "true" {
		j.acquiredAt = time.Now()
		j.token = out["fencing-token"]
	}
}

// lastOutputs is what the step collect read last.
func (j *job) lastOutputs() map[string]string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.outputs[len(j.outputs)-1]
}

func readFileCommands(path string) map[string]string {
	data, err := os.ReadFile(path)
	out := map[string]string{}
	if err != nil {
		return out
	}
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			if k, v, ok := strings.Cut(lines[i], "="); ok {
				out[k] = v
			}
			continue
		}
		var val []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			val = append(val, lines[i])
		}
		out[name] = strings.Join(val, "\n")
	}
	return out
}
