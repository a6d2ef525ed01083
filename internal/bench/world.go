package bench

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/acquire"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/release"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/checker"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// The simulated organization of the workloads: one lock repository with the
// writer App installed on it alone, consumer repositories with their own
// GITHUB_TOKEN and the reader App (the scheduled reaper's evidence
// credential) installed on them.
const (
	simOwner     = "bench-org"
	simOwnerID   = 81001
	simLockRepo  = "build-lock"
	simLockID    = 81002
	simLock      = "seats"
	simWriterApp = 8101
	simReaderApp = 8102
	simAPIURL    = "https://api.github.com"
	simServerURL = "https://github.com"
	simBranch    = "lock-state"
	simStatePath = "locks/" + simLock + ".json"
	// simConsumers is how many consumer repositories the jobs come from.
	simConsumers = 4
	// PollSeconds is the poll-seconds input of every job: the production
	// default. PollUnit stays one second, so time is not compressed.
	PollSeconds = acquire.DefaultPollSeconds
)

var (
	simKeyOnce            sync.Once
	simWriterKey, simRKey *rsa.PrivateKey
	simKeyErr             error
)

func simKeys() (*rsa.PrivateKey, *rsa.PrivateKey, error) {
	simKeyOnce.Do(func() {
		if simWriterKey, simKeyErr = rsa.GenerateKey(rand.Reader, 2048); simKeyErr != nil {
			return
		}
		simRKey, simKeyErr = rsa.GenerateKey(rand.Reader, 2048)
	})
	return simWriterKey, simRKey, simKeyErr
}

func keyPEM(k *rsa.PrivateKey) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
}

// Latency is the emulated request latency: every request is delayed by
// Read before the emulator handles it, contents writes by Write. It is what
// opens the read→write window in which compare-and-swap writes conflict.
type Latency struct {
	Read  time.Duration `json:"read_ms"`
	Write time.Duration `json:"write_ms"`
}

// DefaultLatency is in the range measured from GitHub-hosted runners
// (docs/performance.md "Method": 150–600 ms per REST call, ~0.6 s per
// contents commit).
var DefaultLatency = Latency{Read: 250 * time.Millisecond, Write: 500 * time.Millisecond}

// FastLatency answers faster than anything measured from GitHub-hosted
// runners (150 ms at the fastest, above): 80 ms, a write 330 ms (its 250 ms
// commit window included), as a runner close to GitHub or an emulator may.
// What a job reads of a burst must not depend on how fast it is answered.
var FastLatency = Latency{Read: 80 * time.Millisecond, Write: 330 * time.Millisecond}

// world is one emulated organization inside a synctest bubble.
type world struct {
	t         testing.TB
	em        *emulator.Emulator
	start     time.Time
	seed      uint64
	writerPEM string
	readerPEM string
	repos     []string
	repoIDs   map[string]int64
	tokens    map[string]string
	cfg       lockstate.Config
	// writerInst and readerInst are the Apps' installation IDs.
	writerInst, readerInst int64

	mu       sync.Mutex
	jobs     []*simJob
	removals []checker.Removal
	reaps    int
}

func newWorld(t testing.TB, seed uint64, config string, lat Latency) (*world, error) {
	wk, rk, err := simKeys()
	if err != nil {
		return nil, err
	}
	cfg, _ := lockstate.DecodeConfig([]byte(config))
	// GitHub's secondary rate limits are on (internal/emulator/secondary.go):
	// a burst that exceeds them is answered as GitHub would answer it.
	// Replica lag and branch-head conflicts are on at GitHub's realistic
	// values (issue 21; multilock.go).
	em := emulator.New(fidelity(emulator.Options{Clock: clock.Real{}, Seed: int64(seed), ServerURL: simServerURL, LogLimit: 5_000_000,
		SecondaryLimits: emulator.GitHubSecondaryLimits()}))
	em.AddOwner(simOwner, simOwnerID, true)
	em.AddRepo(simOwner, simLockRepo, simLockID, "main")
	w := &world{t: t, em: em, start: time.Now(), seed: seed, writerPEM: keyPEM(wk), readerPEM: keyPEM(rk),
		repoIDs: map[string]int64{}, tokens: map[string]string{}, cfg: cfg}
	for i := range simConsumers {
		name := fmt.Sprintf("game-%c", 'a'+i)
		w.repos = append(w.repos, name)
		w.repoIDs[name] = int64(simLockID + 1 + i)
		em.AddRepo(simOwner, name, w.repoIDs[name], "main")
		w.tokens[name] = "ghs_" + fmt.Sprintf("benchworkflowtoken%c%026d", 'a'+i, i)
		em.AddToken(w.tokens[name], emulator.TokenScope{Label: name + "-workflow", Repos: []string{simOwner + "/" + name},
			Permissions: map[string]string{"actions": "read", "contents": "read", "metadata": "read"}})
	}
	em.AddApp(simWriterApp, &wk.PublicKey)
	w.writerInst = em.InstallApp(simWriterApp, simOwner, []string{simLockRepo})
	em.AddApp(simReaderApp, &rk.PublicKey)
	w.readerInst = em.InstallApp(simReaderApp, simOwner, append([]string(nil), w.repos...))
	if _, err := em.PutFile(simOwner, simLockRepo, "main", "locks/"+simLock+".config.json", []byte(config)); err != nil {
		return nil, err
	}
	// The lock has been used before: the state branch holds an empty state
	// (a first-ever acquire would also create the branch's file).
	if err := em.CreateBranch(simOwner, simLockRepo, simBranch, "main"); err != nil {
		return nil, err
	}
	data, err := lockstate.Encode(lockstate.Empty(simLock))
	if err != nil {
		return nil, err
	}
	if _, err := em.PutFile(simOwner, simLockRepo, simBranch, simStatePath, data); err != nil {
		return nil, err
	}
	// The lock has been in place for a while: no replica still serves the
	// branches from before the seeding (replica lag is on, multilock.go).
	settle()
	w.start = time.Now()
	if lat.Read > 0 {
		em.AddFault(emulator.Fault{Kind: emulator.Latency, Latency: lat.Read})
	}
	// A write's extra time is its commit (Options.CommitLatency, the window
	// in which a concurrent commit makes it fail); only what exceeds it is
	// added as plain latency, so a write still takes lat.Write.
	if extra := lat.Write - lat.Read - emulator.DefaultCommitLatency; extra > 0 {
		em.AddFault(emulator.Fault{Method: http.MethodPut, Kind: emulator.Latency, Latency: extra})
	}
	return w, nil
}

// since is virtual time since the world started.
func (w *world) since(t time.Time) time.Duration { return t.Sub(w.start) }

// simJob is one workflow job that needs a seat.
type simJob struct {
	idx      int
	name     string
	repo     string
	runner   string
	arrival  time.Duration // after world start
	hold     time.Duration
	dieAfter time.Duration // > 0: dies this long after admission, holding its seat

	runID, jobID int64
	holderID     string
	tap          *tap
	// lock is the lock the job acquires; "" is the workload's lock (simLock).
	lock string
	// labels and priority are the seat-labels and priority inputs (the
	// seats workload, seats.go); "" and 0 leave them out.
	labels   string
	priority int
	// reference runs the job as the reference client (reference.go)
	// instead of our acquire and release actions.
	reference bool

	// guarded by world.mu
	arrived, admitted, released, died time.Time
	err                               error
	cancelled                         bool
}

// tap records, per job, the request IDs of its traffic, so the emulator's
// request log can be attributed to jobs and phases.
type tap struct {
	base http.RoundTripper
	mu   sync.Mutex
	ids  map[string]string // x-github-request-id → phase
	// puts is every contents PUT status in order (to count CAS rounds).
	puts []int
	// phase is "acquire" or "release".
	phase string
}

func (t *tap) setPhase(p string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.phase = p
}

func (t *tap) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if resp == nil {
		return resp, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if id := resp.Header.Get("X-GitHub-Request-Id"); id != "" {
		t.ids[id] = t.phase
	}
	if req.Method == http.MethodPut {
		t.puts = append(t.puts, resp.StatusCode)
	}
	return resp, err
}

// maxRounds is the longest run of contents PUTs ending in an accepted write
// (conflicts count as rounds, even across polls).
func (t *tap) maxRounds() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	best, run := 0, 0
	for _, s := range t.puts {
		run++
		if s >= 200 && s < 300 {
			best = max(best, run)
			run = 0
		}
	}
	return max(best, run)
}

// addJob registers a job (call before its goroutine starts).
func (w *world) addJob(j *simJob) {
	w.mu.Lock()
	defer w.mu.Unlock()
	j.idx = len(w.jobs)
	if j.name == "" {
		j.name = fmt.Sprintf("job-%03d", j.idx+1)
	}
	if j.repo == "" {
		j.repo = w.repos[j.idx%len(w.repos)]
	}
	if j.runner == "" {
		j.runner = fmt.Sprintf("runner-%03d", j.idx+1)
	}
	j.tap = &tap{base: w.em.Transport(), ids: map[string]string{}, phase: "acquire"}
	w.jobs = append(w.jobs, j)
}

func (w *world) set(f func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f()
}

// acquireTimeout is every simulated job's timeout-minutes: six hours,
// longer than any workload's wait unless GitHub's hourly content limit
// stops the App's writes.
const acquireTimeout = 6 * time.Hour

func (w *world) removal(holderID string, at time.Time) {
	w.set(func() { w.removals = append(w.removals, checker.Removal{HolderID: holderID, At: at}) })
}

// runJob runs the real acquire action, holds the seat, then runs the real
// release action (or dies holding the seat). onAdmit runs right after the
// admission.
func (w *world) runJob(ctx context.Context, j *simJob, onAdmit func()) {
	if d := j.arrival - w.since(time.Now()); d > 0 {
		if err := (clock.Real{}).Sleep(ctx, d); err != nil {
			return
		}
	}
	j.runID = w.em.CreateRun(simOwner, j.repo, emulator.Run{Workflow: "unity.yml", Event: "push", Status: "in_progress", RunAttempt: 1})
	j.jobID = w.em.AddJob(simOwner, j.repo, j.runID, 1, emulator.Job{Name: "build", RunnerName: j.runner, Status: "in_progress"})
	j.holderID = fmt.Sprintf("%s/%s:%d:build:default", simOwner, j.repo, j.runID)
	w.set(func() { j.arrived = time.Now() })
	if j.reference {
		rng := mrand.New(mrand.NewPCG(w.seed, uint64(j.idx)+1))
		if err := w.runReference(ctx, j, rng); err != nil && ctx.Err() == nil {
			w.set(func() { j.err = fmt.Errorf("%s (reference client): %w", j.name, err) })
		}
		return
	}
	dir := w.t.TempDir()
	env := w.stepEnv(j, dir)
	rng := mrand.New(mrand.NewPCG(w.seed, uint64(j.idx)+1))
	deps := actionkit.Deps{
		Getenv: func(k string) string { return env[k] }, Stdout: io.Discard, Clock: clock.Real{},
		Jitter: rng.Float64, Transport: j.tap, PollUnit: time.Second,
	}
	// At its timeout-minutes an acquire removes its own queue entry (exact
	// cleanup): a removal the checker may see from that deadline on, and
	// not before it.
	w.removal(j.holderID, time.Now().Add(acquireTimeout))
	err := acquire.Run(ctx, deps)
	outs, _ := actionio.ReadFileCommands(env["GITHUB_OUTPUT"])
	if ctx.Err() != nil {
		w.set(func() { j.cancelled = true })
		w.removal(j.holderID, time.Now())
		return
	}
	if err != nil || outs["acquired"] != "true" {
		w.set(func() {
			j.err = fmt.Errorf("%s: acquire (admission-result=%q): %v", j.name, outs["admission-result"], err)
		})
		return
	}
	w.set(func() { j.admitted = time.Now() })
	if onAdmit != nil {
		onAdmit()
	}
	if j.dieAfter > 0 {
		if err := (clock.Real{}).Sleep(ctx, j.dieAfter); err != nil {
			return
		}
		now := time.Now()
		_ = w.em.SetJobStatus(simOwner, j.repo, j.jobID, "completed", "failure")
		_ = w.em.SetRunStatus(simOwner, j.repo, j.runID, "completed", "failure")
		w.set(func() { j.died = now })
		// From its death on, the reaper is entitled to remove the holder.
		w.removal(j.holderID, now)
		return
	}
	if err := (clock.Real{}).Sleep(ctx, j.hold); err != nil {
		return
	}
	j.tap.setPhase("release")
	env["GITHUB_OUTPUT"] = filepath.Join(dir, "release-output")
	env["INPUT_RESOURCE_CLEANUP_STATUS"] = "confirmed"
	env["INPUT_RESOURCE_HEALTH"] = "healthy"
	env["INPUT_RESOURCE_REASON"] = "cleanup-confirmed"
	w.removal(j.holderID, time.Now())
	err = release.Run(ctx, deps)
	outs, _ = actionio.ReadFileCommands(env["GITHUB_OUTPUT"])
	if err != nil || outs["released"] != "true" {
		if ctx.Err() == nil {
			w.set(func() { j.err = fmt.Errorf("%s: release (cleanup-result=%q): %v", j.name, outs["cleanup-result"], err) })
		}
		return
	}
	w.set(func() { j.released = time.Now() })
	_ = w.em.SetJobStatus(simOwner, j.repo, j.jobID, "completed", "success")
	_ = w.em.SetRunStatus(simOwner, j.repo, j.runID, "completed", "success")
}

// stepEnv is the environment of the acquire/release steps of j.
func (w *world) stepEnv(j *simJob, dir string) map[string]string {
	env := map[string]string{
		"GITHUB_ACTION_REPOSITORY":   simOwner + "/" + simLockRepo,
		"GITHUB_REPOSITORY":          simOwner + "/" + j.repo,
		"GITHUB_REPOSITORY_ID":       strconv.FormatInt(w.repoIDs[j.repo], 10),
		"GITHUB_REPOSITORY_OWNER_ID": strconv.Itoa(simOwnerID),
		"GITHUB_RUN_ID":              strconv.FormatInt(j.runID, 10),
		"GITHUB_RUN_ATTEMPT":         "1",
		"GITHUB_JOB":                 "build",
		"GITHUB_WORKFLOW":            "Unity build",
		"GITHUB_EVENT_NAME":          "push",
		"GITHUB_SERVER_URL":          simServerURL,
		"GITHUB_API_URL":             simAPIURL,
		"RUNNER_NAME":                j.runner,
		"GITHUB_OUTPUT":              filepath.Join(dir, "acquire-output"),
		"GITHUB_STATE":               filepath.Join(dir, "state"),
		"GITHUB_STEP_SUMMARY":        filepath.Join(dir, "summary.md"),
		// RUNNER_TEMP is the job's, shared by its steps: acquire's notes
		// to release (the admission, the installation) live there.
		"RUNNER_TEMP":               filepath.Join(dir, "runner-temp"),
		lockaction.EnvAppID:         strconv.Itoa(simWriterApp),
		lockaction.EnvAppPrivateKey: w.writerPEM,
		"INPUT_LOCK_NAME":           j.lockName(),
		// The runner fills job-check-run-id in from its default,
		// ${{ job.check_run_id }}, as on github.com.
		"INPUT_JOB_CHECK_RUN_ID": strconv.FormatInt(j.jobID, 10),
		"INPUT_RUNNER_ID":        j.runner,
		"INPUT_GITHUB_TOKEN":     w.tokens[j.repo],
		"INPUT_POLL_SECONDS":     strconv.Itoa(PollSeconds),
		"INPUT_TIMEOUT_MINUTES":  strconv.Itoa(int(acquireTimeout / time.Minute)),
	}
	if j.labels != "" {
		env["INPUT_SEAT_LABELS"] = j.labels
	}
	if j.priority != 0 {
		env["INPUT_PRIORITY"] = strconv.Itoa(j.priority)
	}
	return env
}

// reaperLoop runs the real scheduled reaper every interval (GitHub's
// shortest cron period is 5 minutes) until ctx ends.
func (w *world) reaperLoop(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for i := uint64(1); ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		dir := w.t.TempDir()
		for _, f := range []string{"output", "summary.md"} {
			_ = os.WriteFile(filepath.Join(dir, f), nil, 0o600)
		}
		env := map[string]string{
			"INPUT_LOCK_NAME":              simLock,
			"INPUT_OPERATION":              "reap",
			"BUILD_LOCK_ACTION_REPOSITORY": simOwner + "/" + simLockRepo,
			"GITHUB_REPOSITORY":            simOwner + "/" + simLockRepo,
			"GITHUB_REPOSITORY_ID":         strconv.Itoa(simLockID),
			"GITHUB_REPOSITORY_OWNER_ID":   strconv.Itoa(simOwnerID),
			"GITHUB_API_URL":               simAPIURL,
			"GITHUB_SERVER_URL":            simServerURL,
			"GITHUB_OUTPUT":                filepath.Join(dir, "output"),
			"GITHUB_STEP_SUMMARY":          filepath.Join(dir, "summary.md"),
			lockaction.EnvAppID:            strconv.Itoa(simWriterApp),
			lockaction.EnvAppPrivateKey:    w.writerPEM,
			lockaction.EnvReaderAppID:      strconv.Itoa(simReaderApp),
			lockaction.EnvReaderAppKey:     w.readerPEM,
		}
		rng := mrand.New(mrand.NewPCG(w.seed, 1<<32+i))
		n := 0
		_ = reap.Run(ctx, reap.Deps{
			Getenv: func(k string) string { return env[k] }, Stdout: io.Discard, Clock: clock.Real{},
			Jitter: rng.Float64, Transport: w.em.Transport(),
			NewID: func() string { n++; return fmt.Sprintf("reap-%d-%d", i, n) },
		})
		w.set(func() { w.reaps++ })
	}
}

// versions is the full history of the state file for the checker.
func (w *world) versions() []checker.Version {
	var out []checker.Version
	for _, v := range w.em.History(simOwner, simLockRepo, simBranch, simStatePath) {
		out = append(out, checker.Version{Time: v.Time, Content: v.Content, Message: v.Message})
	}
	return out
}
