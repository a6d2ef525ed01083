package e2e_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/acquire"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit/machineslot"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/release"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

// The machine-queue acceptance test (machine_linux_test.go) runs each job
// the way a GitHub runner does: one worker process per job (a copy of this
// test binary named Runner.Worker, so the real owner rule finds it by
// walking parent pids) starts the job's steps one after another as its
// children. The acquire and release steps are this test binary again,
// running the real acquire.Run / release.Run exactly as cmd/acquire and
// cmd/release do, plus one test-only hook: every machine queue state the
// step reads under the queue's lock is appended to a journal, so the test
// sees every committed state (every state is read by the next writer).
const (
	// envWorkerSpec: run as a job's Runner.Worker (the value is the path
	// of its workerSpec).
	envWorkerSpec = "BUILDLOCK_E2E_WORKER"
	// envStep: run as the acquire or release step.
	envStep = "BUILDLOCK_E2E_STEP"
	// envJournal: the machine queue journal a step appends to.
	envJournal = "BUILDLOCK_E2E_JOURNAL"
)

// workerSpec is what one job's worker runs.
type workerSpec struct {
	Acquire, Hold, Release stepSpec
	// KillAcquireAfter SIGKILLs the acquire step after this long (0:
	// never): the step dies, the job goes on to its always() release.
	KillAcquireAfter time.Duration
	// Result is where the worker writes its workerResult.
	Result string
}

// stepSpec is one step process.
type stepSpec struct {
	Path   string
	Env    []string
	Output string
}

// workerResult is what the worker saw.
type workerResult struct {
	AcquireExit    int
	AcquireKilled  bool
	Acquired       bool
	AcquireOutputs map[string]string
	ReleaseAt      time.Time
	ReleaseExit    int
	ReleaseOutputs map[string]string
	Log            string
}

// machineMain runs the worker or step mode of the test binary; ok reports
// whether it ran.
func machineMain() (code int, ok bool) {
	if spec := os.Getenv(envWorkerSpec); spec != "" {
		return workerMain(spec), true
	}
	switch os.Getenv(envStep) {
	case "acquire":
		return stepMain(func(ctx context.Context, d acquire.Deps) error { return acquire.Run(ctx, d) }), true
	case "release":
		return stepMain(func(ctx context.Context, d release.Deps) error { return release.Run(ctx, d) }), true
	}
	return 0, false
}

// stepMain is cmd/acquire's or cmd/release's main with the journal hook.
func stepMain(run func(context.Context, acquire.Deps) error) int {
	ctx, sig := lockaction.NotifyContext(context.Background())
	var mu sync.Mutex
	journal := os.Getenv(envJournal)
	d := acquire.Deps{Getenv: os.Getenv, Stdout: os.Stdout, Signals: sig}
	d.Machine = machineslot.Edges{Observe: func(state []byte) {
		mu.Lock()
		defer mu.Unlock()
		appendJournal(journal, state)
	}}
	err := run(ctx, d)
	sig.Stop()
	return lockaction.Finish(actionio.New(os.Getenv, os.Stdout), sig, err)
}

// appendJournal appends one state as a base64 line ("-" for no file) in
// one write to an O_APPEND file, so lines of concurrent processes never
// interleave.
func appendJournal(path string, state []byte) {
	if path == "" {
		return
	}
	line := "-\n"
	if state != nil {
		line = base64.StdEncoding.EncodeToString(state) + "\n"
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	_, _ = f.WriteString(line)
	_ = f.Close()
}

// workerMain runs a job: acquire; the licensed step only when acquired;
// release always.
func workerMain(specPath string) int {
	data, err := os.ReadFile(specPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var spec workerSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var res workerResult
	var log []byte
	runStep := func(s stepSpec, kill time.Duration) (int, bool) {
		cmd := exec.Command(s.Path)
		cmd.Env = s.Env
		out := &syncBuffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			log = append(log, err.Error()...)
			return -1, false
		}
		killed := false
		var timer *time.Timer
		var mu sync.Mutex
		if kill > 0 {
			timer = time.AfterFunc(kill, func() {
				mu.Lock()
				defer mu.Unlock()
				killed = cmd.Process.Kill() == nil
			})
		}
		_ = cmd.Wait()
		if timer != nil {
			timer.Stop()
		}
		log = append(log, out.String()...)
		mu.Lock()
		defer mu.Unlock()
		return cmd.ProcessState.ExitCode(), killed && !cmd.ProcessState.Success()
	}
	res.AcquireExit, res.AcquireKilled = runStep(spec.Acquire, spec.KillAcquireAfter)
	res.AcquireOutputs = readOutputs(spec.Acquire.Output)
	res.Acquired = res.AcquireOutputs["acquired"] == "true" && !res.AcquireKilled
	if res.Acquired {
		runStep(spec.Hold, 0)
	}
	res.ReleaseAt = time.Now()
	// The release may land and the whole job be killed before the result
	// below is written: the test reads the release's start from here then
	// (releaseStart), so the removal it makes is authorized from it.
	if err := os.WriteFile(spec.Result+".release", []byte(res.ReleaseAt.Format(time.RFC3339Nano)), 0o600); err != nil {
		return 2
	}
	res.ReleaseExit, _ = runStep(spec.Release, 0)
	res.ReleaseOutputs = readOutputs(spec.Release.Output)
	res.Log = string(log)
	data, _ = json.Marshal(res)
	tmp := spec.Result + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return 2
	}
	if err := os.Rename(tmp, spec.Result); err != nil {
		return 2
	}
	return 0
}

// releaseStart is when the worker whose result file is result started its
// release step, if it did (workerMain writes it before the step).
func releaseStart(result string) (time.Time, bool) {
	data, err := os.ReadFile(result + ".release")
	if err != nil {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, string(data))
	return t, err == nil
}

func readOutputs(path string) map[string]string {
	out, err := actionio.ReadFileCommands(path)
	if err != nil {
		return map[string]string{}
	}
	return out
}

// stepEnv is the environment j.uses gives the composite action's step,
// as a list, for a step process the worker starts.
func (j *job) stepEnv(id, action string, with, env map[string]string) (map[string]string, error) {
	stepEnv, _, err := j.w.actionEnv(action, with, j)
	if err != nil {
		return nil, err
	}
	files, err := j.stepFiles(id)
	if err != nil {
		return nil, err
	}
	full := map[string]string{}
	for _, m := range []map[string]string{j.env, files} {
		for k, v := range m {
			full[k] = v
		}
	}
	full["GITHUB_ACTION"] = id
	full["GITHUB_ACTION_PATH"] = filepath.Join(j.w.actionRoot, ".github", "actions", action)
	full["GITHUB_ACTION_REF"] = j.w.actionSHA
	full["GITHUB_ACTION_REPOSITORY"] = ""
	for _, m := range []map[string]string{env, stepEnv} {
		for k, v := range m {
			full[k] = v
		}
	}
	return full, nil
}

func envList(m map[string]string) []string {
	out := minimalEnv()
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}
