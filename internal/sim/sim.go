package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/linearizability"
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
	// UnappliedWrites, when above 0, adds one fault on top of the seed's
	// own: each write of the state file is dropped before it applies (a
	// connection reset) with this probability. The client's retry of such
	// a write meets a 409 whenever another writer landed meanwhile, the
	// ambiguous outcome the store must reconcile by reading; the seed's
	// own schedule makes that rare (docs/simulation.md).
	UnappliedWrites float64
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
	// Seats forces (1) or forbids (-1) named seats, labels and priority
	// classes on a seed whose target schema is 6 (seats.go); 0 lets the
	// seed decide.
	Seats int
	// Machines forces (1) or forbids (-1) serializeBy "machine" with
	// several runner agents per machine on a seed whose target schema is 3
	// or later (machines.go); 0 lets the seed decide.
	Machines int
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
	// Upgrades counts the schema upgrades written; MaxUpgradeLag is the
	// longest time from "nothing left to drain" to the upgrade's commit.
	Upgrades      int
	MaxUpgradeLag time.Duration
	// Digest summarizes the committed history (reservation IDs, which are
	// random UUIDs, normalized): equal digests mean an identical replay.
	Digest string
	// Debug is every process's stdout (Config.Debug).
	Debug string
	// Linearizability is the porcupine check of the seed's history.
	Linearizability linearizability.Result
}

// OK reports whether the seed broke no invariant.
func (r Report) OK() bool { return len(r.Violations) == 0 }

// ReplayCommand is the one command that replays seed.
func ReplayCommand(seed uint64) string {
	return fmt.Sprintf("go test ./internal/sim -run 'TestSimulation/seed=%d$' -count=1 -v", seed)
}

type sim struct {
	tb   testing.TB
	seed uint64
	rng  *rand.Rand
	rmu  sync.Mutex
	em   *emulator.Emulator
	rec  *recorder
	lin  *linearizability.Recorder // the history the linearizability check reads
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
	// cfgChanges is every config write, in order (the drain audit).
	cfgChanges []cfgChange
	cfgMu      sync.Mutex
	cfgWriteMu sync.Mutex
	// seats is a seat seed's world (nil otherwise).
	seats *seatWorld
	// machines is how many machines a machine seed's agents share (0: not
	// a machine seed; machines.go).
	machines int
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
		tb: tb, seed: seed, rng: rand.New(rand.NewPCG(seed, 0x5eed5eed)), rec: &recorder{}, lin: linearizability.NewRecorder(nil),
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
	// GitHub's secondary rate limits are on, as on GitHub (issue 14).
	// Replica lag and branch-head conflicts are on, as on GitHub (issue 21;
	// neighbours.go).
	s.em = emulator.New(fidelityOptions(emulator.Options{Clock: clock.Real{}, Seed: int64(seed), ServerURL: serverURL, SecondaryLimits: emulator.GitHubSecondaryLimits()}))
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
	if c.UnappliedWrites > 0 {
		s.em.AddFault(emulator.Fault{Method: "PUT", PathPattern: "/repos/" + owner + "/" + lockRepo + "/contents/" + statePath,
			Kind: emulator.TransportReset, Probability: c.UnappliedWrites})
		s.sched = append(s.sched, fmt.Sprintf("unapplied-writes p=%.3f", c.UnappliedWrites))
	}
	s.aging = s.schema >= 5 && s.intn(3) == 0
	if c.Aging > 0 {
		s.aging = true
	} else if c.Aging < 0 {
		s.aging = false
	}
	s.planScenarios()
	s.seatChanges()

	// Background actors: the scheduled reaper and the operator.
	bg, stopBG := context.WithCancel(context.Background())
	var bgwg sync.WaitGroup
	s.seedNeighbours()
	bgwg.Add(3)
	go func() { defer bgwg.Done(); s.runNeighbours(bg) }()
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
	// The world runs until the bound the liveness audit judges at (a
	// primary-limit exhaustion moves its start to the reset).
	if d := time.Until(s.livenessStart(healed).Add(s.live)); d > 0 {
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
	s.countMachineEvents()
	rep := s.audit(healed, jobsDone, liveWaiting)
	s.auditNeighbours(&rep)
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
