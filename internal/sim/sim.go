// Package sim is the seeded, fault-injected simulation of the build lock
// (reliability goals R-S*, R-L2, R-F*, R-C1, R-V2, R-T1/R-T2; see
// docs/simulation.md). One seed decides everything: the lock config and
// schema path, the jobs (repositories, runners, matrix legs, reruns, pull
// request heads that move), when and how each job dies, the fault schedule
// and the runners' clock offsets. The REAL acquire, release,
// acquire-with-cleanup post step, scheduled reaper and operator recovery
// run in-process through their Run functions against the GitHub emulator's
// in-memory transport, inside a testing/synctest bubble, so hours of
// virtual time take a fraction of a second.
//
// After every run internal/checker audits every committed version of the
// state file, and the simulation adds the checks that need ground truth:
// who wrote each version (attributed by the PUT body each process sent),
// whether the reaper's removals were backed by a terminal run, whether
// acquired=true was backed by a committed holder entry, Retry-After
// compliance per token, and the secret scan. A liveness phase follows the
// fault window.
package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/acquire"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap"
	recovery "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/recover"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/release"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// Config overrides what the seed would choose. The zero value lets the
// seed choose everything.
type Config struct {
	// Jobs is the number of first-attempt jobs (0: the seed picks 8..20).
	Jobs int
	// NoFaults disables every injected API fault (deaths and clock skew
	// stay).
	NoFaults bool
	// FaultWindow is how long jobs start and faults fire (default 40 min).
	FaultWindow time.Duration
	// Liveness is the bound of the liveness phase after the faults stop
	// (default 60 min).
	Liveness time.Duration
	// Aging forces (1) or forbids (-1) the aging phase that runs the
	// reaper past the 240-minute quarantine grace; 0 lets the seed decide.
	Aging int
	// Schema forces the target schema path (2..6); 0 lets the seed decide.
	Schema int
	// Debug fills Report.Debug with every process's stdout.
	Debug bool
	// Inspect, when set, is called with the emulator after every actor
	// stopped and before the audit, inside the bubble (the history tests
	// read the seed's lock-state history back through its REST API).
	Inspect func(em *emulator.Emulator)
}

// Report is what one seed did and found.
type Report struct {
	Seed         uint64
	Schedule     string
	MaxHolders   int
	Schema       int // target schema path
	FinalSchema  int
	Cooldown     int
	MaxOvertakes int
	Jobs         int
	Versions     int
	Requests     int64
	Admissions   int
	// Faults counts the fired faults by kind, plus the simulation's own
	// events (sigkill, sigint, zombie, reaper-skipped, ...).
	Faults map[string]int64
	// Violations lists every broken invariant; empty means the seed passed.
	Violations []string
	// Liveness figures: waiters alive when the faults stopped, and how
	// many of them were admitted or cleanly gave up within the bound.
	LiveWaiters, LiveResolved int
	// EarlyCooldowns counts cooldowns pruned early by a skewed runner
	// clock (a liveness/handoff degradation, not a safety violation).
	EarlyCooldowns int
	MaxOvertaken   int
	// Digest summarizes the committed history (reservation IDs, which are
	// random UUIDs, normalized): equal digests mean an identical replay.
	Digest string
	// Debug is every process's stdout (Config.Debug).
	Debug string
}

// OK reports whether the seed broke no invariant.
func (r Report) OK() bool { return len(r.Violations) == 0 }

// ReplayCommand is the one command that replays seed.
func ReplayCommand(seed uint64) string {
	return fmt.Sprintf("go test ./internal/sim -run 'TestSimulation/seed=%d$' -count=1 -v", seed)
}

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
	// lateZombie (death "zombie"): right before this process releases,
	// its attempt ends and the rerun takes the seat or queues, so the stale
	// attempt's release meets the rerun's entry (scenarios.go).
	lateZombie bool

	clk    skewClock
	dead   atomic.Bool
	cancel context.CancelFunc
	out    *syncBuffer
	dir    string
	env    map[string]string

	mu         sync.Mutex
	acquiredAt time.Time // outputs said acquired=true at this time
	token      string
	waitEnded  time.Time
	ended      time.Time
	outputs    []map[string]string
	summaries  []string
}

func (j *job) holderID() string {
	return fmt.Sprintf("%s/%s:%d:%s:default", owner, j.repo, j.runID, j.name)
}

func (j *job) actor() string {
	p := "job:"
	if j.oldCli {
		p = "old:"
	}
	return fmt.Sprintf("%s%s@%d", p, j.holderID(), j.attempt)
}

// runTruth is the ground truth of one workflow run over time.
type runTruth struct {
	// attempts[n] is when attempt n started; terminal[n] when it became
	// terminal (zero: not yet).
	started  map[int]time.Time
	terminal map[int]time.Time
	long     bool // a sibling job keeps the run active to the end
}

type sim struct {
	tb   testing.TB
	seed uint64
	rng  *rand.Rand
	rmu  sync.Mutex
	em   *emulator.Emulator
	rec  *recorder
	t0   time.Time

	cfg     lockstate.Config
	schema  int
	aging   bool
	window  time.Duration
	live    time.Duration
	sched   []string
	events  map[string]int64
	evMu    sync.Mutex
	jobsMu  sync.Mutex
	jobs    []*job
	runs    map[int64]*runTruth
	jobDone map[int64]time.Time // jobID -> completed at
	// recovered lists reservation IDs the operator recovered with proof.
	recovered   map[string]time.Time
	incidentsOK map[string]time.Time
	reaperOut   []string
	hung        []string
	primaryAt   time.Time
	stop        atomic.Bool
	wg          sync.WaitGroup
	nextRes     atomic.Int64
	cfgLevel    atomic.Int32 // the schema level the operator's config asks for
}

func (s *sim) intn(n int) int {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	return s.rng.IntN(n)
}

func (s *sim) float() float64 {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	return s.rng.Float64()
}

func (s *sim) event(name string) {
	s.evMu.Lock()
	s.events[name]++
	s.evMu.Unlock()
}

// Run simulates one seed and returns its report. It MUST be called inside
// a testing/synctest bubble (synctest.Test): every sleep, timeout and
// timestamp is the bubble's virtual clock, and the emulator is reached
// through its in-memory transport. tb receives no failures; the caller
// decides what to do with Report.Violations.
func Run(tb testing.TB, seed uint64, c Config) Report {
	keys()
	s := &sim{
		tb: tb, seed: seed, rng: rand.New(rand.NewPCG(seed, 0x5eed5eed)), rec: &recorder{},
		events: map[string]int64{}, runs: map[int64]*runTruth{}, jobDone: map[int64]time.Time{},
		recovered: map[string]time.Time{}, incidentsOK: map[string]time.Time{},
		window: c.FaultWindow, live: c.Liveness,
	}
	if s.window <= 0 {
		s.window = 40 * time.Minute
	}
	if s.live <= 0 {
		s.live = 60 * time.Minute
	}
	s.t0 = time.Now()
	s.em = emulator.New(emulator.Options{Clock: clock.Real{}, Seed: int64(seed), ServerURL: serverURL})
	s.em.AddOwner(owner, ownerID, true)
	s.em.AddRepo(owner, lockRepo, lockRepoID, "main")
	for _, r := range consumers {
		s.em.AddRepo(owner, r, 0, "main")
	}
	s.em.AddApp(writerAppID, &writerKey.PublicKey)
	s.em.InstallApp(writerAppID, owner, []string{lockRepo})
	s.em.AddApp(readerAppID, &readerKey.PublicKey)
	s.em.InstallApp(readerAppID, owner, consumers)
	s.em.AddToken(consumerToken, emulator.TokenScope{Label: "consumers", Repos: []string{owner + "/game", owner + "/engine", owner + "/tools"}, RateLimit: 100000})

	s.chooseConfig(c)
	n := c.Jobs
	if n <= 0 {
		n = 8 + s.intn(13)
	}
	s.planJobs(n)
	if !c.NoFaults {
		s.planFaults()
	}
	s.aging = s.schema >= 5 && s.intn(3) == 0
	if c.Aging > 0 {
		s.aging = true
	} else if c.Aging < 0 {
		s.aging = false
	}
	s.planScenarios()

	// Background actors: the scheduled reaper and the operator.
	bg, stopBG := context.WithCancel(context.Background())
	var bgwg sync.WaitGroup
	bgwg.Add(2)
	go func() { defer bgwg.Done(); s.reaperLoop(bg) }()
	go func() { defer bgwg.Done(); s.operatorLoop(bg) }()

	// Fault window, then heal.
	time.Sleep(s.window)
	s.em.ClearFaults()
	s.event("faults-cleared")
	healed := time.Now()
	liveWaiting := s.waitingJobs()
	allDone := make(chan struct{})
	go func() { s.wg.Wait(); close(allDone) }()
	select {
	case <-allDone:
	case <-time.After(s.live + 3*time.Hour):
		// Jobs still running hours after their own timeouts are hung (a
		// stalled request without a deadline, for example): report them,
		// then kill them so the bubble can end.
		s.jobsMu.Lock()
		for _, j := range s.jobs {
			j.mu.Lock()
			if j.ended.IsZero() && !j.clk.start.IsZero() {
				s.hung = append(s.hung, j.actor())
				j.dead.Store(true)
				if j.cancel != nil {
					j.cancel()
				}
			}
			j.mu.Unlock()
		}
		s.jobsMu.Unlock()
		<-allDone
	}
	jobsDone := time.Now()
	if d := time.Until(healed.Add(s.live)); d > 0 {
		time.Sleep(d)
	}
	if s.aging {
		// Long enough for the 240-minute quarantine grace to pass for
		// quarantines made in the fault window.
		time.Sleep(4*time.Hour + 10*time.Minute)
	}
	s.stop.Store(true)
	stopBG()
	bgwg.Wait()

	if c.Inspect != nil {
		c.Inspect(s.em)
	}
	rep := s.audit(healed, jobsDone, liveWaiting)
	rep.Seed = seed
	if c.Debug {
		var b strings.Builder
		for _, j := range s.jobs {
			fmt.Fprintf(&b, "=== %s (runner %s, death %s at %s, start %s, clock %+v)\n%s\n", j.actor(), j.runner, j.death, j.deathAt, j.start, j.clk, j.out.String())
		}
		for _, o := range s.reaperOut {
			b.WriteString("=== reaper/recover\n" + o + "\n")
		}
		if h := s.em.History(owner, lockRepo, stateBranch, statePath); len(h) > 0 {
			fmt.Fprintf(&b, "=== final state (%s, %s)\n%s\n", h[len(h)-1].Time.Format(time.RFC3339), h[len(h)-1].Message, h[len(h)-1].Content)
		}
		rep.Debug = b.String()
	}
	return rep
}

// chooseConfig picks the lock config, the schema path and its timing.
func (s *sim) chooseConfig(c Config) {
	schema := 2 + s.intn(5)
	if c.Schema >= 2 && c.Schema <= 6 {
		schema = c.Schema
	}
	s.schema = schema
	s.cfg = lockstate.Config{
		MaxHolders:             1 + s.intn(4),
		ReleaseCooldownSeconds: []int{0, 1, 30}[s.intn(3)],
		MaxOvertakes:           s.intn(4),
		RunnerSerialization:    schema >= 3,
		ResourceLifecycle:      schema >= 4,
		AccountHealth:          schema >= 5,
		FencedAdmission:        schema >= 6,
	}
	// Drained migrations: start one or two schema levels lower and raise
	// the config flags later; each client migrates when it finds the lock
	// drained.
	start := max(2, schema-s.intn(3))
	s.writeConfig(start)
	s.seedState(start)
	// One flag per step, like an operator: each step takes effect when a
	// client finds the lock drained (clients fail closed until then).
	at := time.Duration(0)
	for level := start + 1; level <= schema; level++ {
		at += time.Duration(s.intn(int(s.window/2/time.Second))) * time.Second
		s.sched = append(s.sched, fmt.Sprintf("config schema %d at %s", level, at))
		when := at
		go func() {
			time.Sleep(when)
			s.writeConfig(level)
			s.event("config-upgrade")
		}()
	}
	s.sched = append(s.sched, fmt.Sprintf("maxHolders=%d schema=%d cooldown=%ds maxOvertakes=%d",
		s.cfg.MaxHolders, schema, s.cfg.ReleaseCooldownSeconds, s.cfg.MaxOvertakes))
}

// seedState commits an empty state at schema (the lock's starting point).
func (s *sim) seedState(schema int) {
	if err := s.em.CreateBranch(owner, lockRepo, stateBranch, "main"); err != nil {
		s.tb.Fatalf("sim: %v", err)
	}
	st := lockstate.Empty(lockName)
	st.SchemaVersion = schema
	if schema >= 4 {
		st.Reservations = []lockstate.Reservation{}
	}
	data, err := lockstate.Encode(st)
	if err != nil {
		s.tb.Fatalf("sim: %v", err)
	}
	if _, err := s.em.PutFile(owner, lockRepo, stateBranch, statePath, data); err != nil {
		s.tb.Fatalf("sim: %v", err)
	}
}

func (s *sim) writeConfig(level int) {
	cfg := fmt.Sprintf(`{"maxHolders":%d,"releaseCooldownSeconds":%d,"maxOvertakes":%d,"runnerSerialization":%t,"resourceLifecycle":%t,"accountHealth":%t,"fencedAdmission":%t}`,
		s.cfg.MaxHolders, s.cfg.ReleaseCooldownSeconds, s.cfg.MaxOvertakes, level >= 3, level >= 4, level >= 5, level >= 6)
	s.cfgLevel.Store(int32(level))
	if _, err := s.em.PutFile(owner, lockRepo, "main", configPath, []byte(cfg)); err != nil {
		s.tb.Fatalf("sim: write config: %v", err)
	}
}

// planJobs creates the runs and jobs and starts their goroutines.
func (s *sim) planJobs(n int) {
	runners := 2 + s.intn(5)
	for i := 0; i < n; i++ {
		repo := consumers[s.intn(len(consumers))]
		runID := s.em.CreateRun(owner, repo, emulator.Run{Workflow: "unity.yml", Status: "in_progress", RunAttempt: 1})
		rt := &runTruth{started: map[int]time.Time{1: time.Now()}, terminal: map[int]time.Time{}, long: s.intn(4) == 0}
		s.runs[runID] = rt
		legs := 1
		if s.intn(4) == 0 {
			legs = 2 // matrix legs, possibly on one runner
		}
		runner := fmt.Sprintf("runner-%d", s.intn(runners))
		pr := 0
		if s.intn(4) == 0 {
			pr = 1 + i
			s.em.SetPullRequest(owner, repo, pr, "open", headSHA(s.seed, pr, 0))
		}
		var siblings []*job
		for leg := 0; leg < legs; leg++ {
			j := s.newJob(repo, runID, fmt.Sprintf("build-%d", leg), runner, 1, pr)
			if leg > 0 && s.intn(2) == 0 {
				j.runner = fmt.Sprintf("runner-%d", s.intn(runners))
			}
			siblings = append(siblings, j)
		}
		if rt.long {
			s.em.AddJob(owner, repo, runID, 1, emulator.Job{Name: "long-tests", RunnerName: "hosted", Status: "in_progress"})
		}
		for _, j := range siblings {
			j.jobID = s.em.AddJob(owner, repo, runID, 1, emulator.Job{Name: j.name, RunnerName: j.runner, Status: "in_progress"})
			s.start(j, siblings)
		}
		if pr > 0 && s.intn(2) == 0 {
			at := time.Duration(s.intn(int(s.window/time.Second))) * time.Second
			go func() {
				time.Sleep(at)
				s.em.SetPullRequest(owner, repo, pr, "open", headSHA(s.seed, pr, 1))
				s.event("pr-head-moved")
			}()
		}
	}
}

func headSHA(seed uint64, pr, gen int) string {
	return fmt.Sprintf("%040x", seed*1000003+uint64(pr)*101+uint64(gen))[:40]
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
		"INPUT_TIMEOUT-MINUTES":      strconv.Itoa(j.timeout),
		"INPUT_LEASE-MINUTES":        strconv.Itoa(j.lease),
		"INPUT_GITHUB-TOKEN":         consumerToken,
		"BUILD_LOCK_CONFIG_TTL_MS":   "60000",
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
		Transport: actorTransport{rec: s.rec, actor: j.actor(), proc: proc, drift: j.clk.drift, dead: &j.dead, base: s.em.Transport()},
		Signals:   sig,
		Clock:     j.clk,
		Jitter: func() float64 {
			mu.Lock()
			defer mu.Unlock()
			return r.Float64()
		},
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
	if j.withPost {
		env["BUILD_LOCK_MODE"] = acquire.ModeAcquireWithCleanup
	}
	err = acquire.Run(ctx, s.deps(j, "acquire", env, sig))
	if err != nil {
		fmt.Fprintf(j.out, "sim: acquire: %v\n", err)
	}
	s.collect(j, true)
	j.mu.Lock()
	j.waitEnded = time.Now()
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
	if !j.dead.Load() && err == nil && !j.skipRelease && !(j.death == "sigint" && ctx.Err() != nil && j.withPost) {
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
		_ = release.Run(ctx, s.deps(j, "release", renv, sig))
		s.collect(j, false)
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
	attempt := s.em.NewRunAttempt(owner, j.repo, j.runID)
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

// reaperLoop runs the scheduled reaper every 5 virtual minutes; in the
// fault window a run is sometimes skipped or delayed (cron is best effort).
func (s *sim) reaperLoop(ctx context.Context) {
	tick := 5 * time.Minute
	for n := 0; ; n++ {
		if err := (clock.Real{}).Sleep(ctx, tick); err != nil {
			return
		}
		faulty := time.Since(s.t0) < s.window
		if s.aging && time.Since(s.t0) > s.window+s.live {
			// Aging phase: a slower cron keeps the run cheap.
			if n%6 != 0 {
				continue
			}
		}
		if faulty && s.intn(10) == 0 {
			s.event("reaper-skipped")
			continue
		}
		if faulty && s.intn(5) == 0 {
			s.event("reaper-delayed")
			if (clock.Real{}).Sleep(ctx, time.Duration(s.intn(240))*time.Second) != nil {
				return
			}
		}
		s.runReaper(ctx, map[string]string{"INPUT_OPERATION": "reap"})
	}
}

func (s *sim) reaperEnv(extra map[string]string) (map[string]string, string) {
	dir, err := os.MkdirTemp(tempRoot(), "sim-reap-")
	if err != nil {
		s.tb.Fatalf("sim: %v", err)
	}
	env := map[string]string{
		"INPUT_LOCK_NAME":                   lockName,
		"BUILD_LOCK_ACTION_REPOSITORY":      owner + "/" + lockRepo,
		"GITHUB_REPOSITORY":                 owner + "/" + lockRepo,
		"GITHUB_REPOSITORY_ID":              strconv.Itoa(lockRepoID),
		"GITHUB_REPOSITORY_OWNER_ID":        strconv.Itoa(ownerID),
		"GITHUB_API_URL":                    apiURL,
		"GITHUB_SERVER_URL":                 serverURL,
		"GITHUB_OUTPUT":                     dir + "/output",
		"GITHUB_STEP_SUMMARY":               dir + "/summary",
		"BUILD_LOCK_APP_ID":                 strconv.Itoa(writerAppID),
		"BUILD_LOCK_APP_PRIVATE_KEY":        writerPEM,
		"BUILD_LOCK_READER_APP_ID":          strconv.Itoa(readerAppID),
		"BUILD_LOCK_READER_APP_PRIVATE_KEY": readerPEM,
	}
	for k, v := range extra {
		env[k] = v
	}
	return env, dir
}

// runReaper runs one reaper (or recover) process.
func (s *sim) runReaper(ctx context.Context, extra map[string]string) error {
	env, dir := s.reaperEnv(extra)
	defer os.RemoveAll(dir)
	out := &syncBuffer{}
	actor := "reaper"
	if extra["INPUT_OPERATION"] != "reap" {
		actor = "recover"
	}
	r := rand.New(rand.NewPCG(s.seed, uint64(time.Since(s.t0))))
	err := reap.Run(context.WithoutCancel(ctx), reap.Deps{
		Getenv: func(k string) string { return env[k] }, Stdout: out,
		Transport: actorTransport{rec: s.rec, actor: actor, proc: fmt.Sprint(time.Since(s.t0)), base: s.em.Transport()},
		Jitter:    r.Float64,
		NewID:     func() string { return fmt.Sprintf("sim-res-%d", s.nextRes.Add(1)) },
	})
	sum, _ := os.ReadFile(dir + "/summary")
	outs, _ := os.ReadFile(dir + "/output")
	s.jobsMu.Lock()
	s.reaperOut = append(s.reaperOut, out.String(), string(sum), string(outs))
	s.jobsMu.Unlock()
	s.event(actor + "-runs")
	return err
}

// operatorLoop is the human operator: every 10 minutes it recovers, with
// proof, each quarantine whose owning run the simulation knows is finished
// (and, in the liveness phase, every incident after checking the portal).
func (s *sim) operatorLoop(ctx context.Context) {
	for {
		if (clock.Real{}).Sleep(ctx, 10*time.Minute) != nil {
			return
		}
		st := s.currentState()
		if st == nil {
			continue
		}
		if st.ActiveIncident != nil && (time.Since(s.t0) > s.window || s.intn(3) == 0) {
			s.jobsMu.Lock()
			s.incidentsOK[st.ActiveIncident.IncidentID] = time.Now()
			s.jobsMu.Unlock()
			_ = s.runReaper(ctx, map[string]string{"INPUT_OPERATION": recovery.OperationRecoverIncident,
				"INPUT_INCIDENT_ID": st.ActiveIncident.IncidentID, "INPUT_PORTAL_CLEANUP_CONFIRMED": "true"})
			continue
		}
		for _, r := range st.Reservations {
			if r.State != lockstate.ReservationQuarantine {
				continue
			}
			runID, _ := strconv.ParseInt(r.RunID, 10, 64)
			att, _ := strconv.Atoi(r.RunAttempt)
			if !s.runFinished(runID, att, time.Now()) || s.aging {
				continue
			}
			s.jobsMu.Lock()
			s.recovered[r.ReservationID] = time.Now()
			s.jobsMu.Unlock()
			_ = s.runReaper(ctx, map[string]string{"INPUT_OPERATION": recovery.OperationRecover,
				"INPUT_RESERVATION_ID": r.ReservationID, "INPUT_RESOURCE_SAFE": "true"})
			break
		}
	}
}

// currentState decodes the newest committed state (nil when none).
func (s *sim) currentState() *lockstate.State {
	h := s.em.History(owner, lockRepo, stateBranch, statePath)
	if len(h) == 0 || h[len(h)-1].Content == nil {
		return nil
	}
	st, err := lockstate.Decode(h[len(h)-1].Content, lockstate.DecodeOptions{Lock: lockName, ServerURL: serverURL})
	if err != nil {
		return nil
	}
	return st
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
