package sim

// What the seed chooses before anything runs: the lock config and schema
// path, the seeded state, and the jobs with their pull request heads.

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

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
	s.chooseSeats(c)
	s.chooseMachines(c)
	// Upgrades while jobs keep arriving: start one or two schema levels
	// lower and raise the config flags later; admission pauses until the
	// lock drains, then the next writer upgrades it (docs/state-schema.md
	// §10). The upgrade choices come from a stream of their own, so the
	// draws above (and every earlier seed's schedule) stay as they were.
	up := rand.New(rand.NewPCG(s.seed, upgradeStream))
	start := max(2, schema-s.intn(3))
	s.writeConfig(start)
	if up.IntN(4) == 0 {
		// A brand-new lock: no state file and no lock-state branch; the
		// first write creates it at the schema the config asks for.
		s.sched = append(s.sched, fmt.Sprintf("fresh lock (config schema %d)", start))
		s.event("fresh-lock")
		s.linTrack(nil)
	} else {
		s.seedState(start)
	}
	// One flag per step, like a careful operator, or (a third of the
	// seeds) every flag at once: either way nothing fails, the waiters
	// keep their place and the lock climbs when it has drained.
	levels := []int{}
	for level := start + 1; level <= schema; level++ {
		levels = append(levels, level)
	}
	if len(levels) > 1 && up.IntN(3) == 0 {
		levels = levels[len(levels)-1:]
	}
	at := time.Duration(0)
	for _, level := range levels {
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

// cfgChange is one config write: from at on, the config asks for level.
type cfgChange struct {
	at    time.Time
	level int
}

// upgradeStream is the PCG stream of the upgrade choices (fresh lock, all
// flags at once), apart from the seed's main stream.
const upgradeStream = 0x757067726164 // "upgrad"

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
	s.linTrack(data)
}

func (s *sim) writeConfig(level int) {
	// One config write at a time: a seat seed's live seat change and a
	// schema step may race.
	s.cfgWriteMu.Lock()
	defer s.cfgWriteMu.Unlock()
	seats, holders := s.seatMembers(level)
	cfg := fmt.Sprintf(`{"maxHolders":%d,"releaseCooldownSeconds":%d,"maxOvertakes":%d,"runnerSerialization":%t,"resourceLifecycle":%t,"accountHealth":%t,"fencedAdmission":%t%s%s}`,
		holders, s.cfg.ReleaseCooldownSeconds, s.cfg.MaxOvertakes, level >= 3, level >= 4, level >= 5, level >= 6, seats, s.serializeByKey(level))
	s.cfgLevel.Store(int32(level))
	s.cfgMu.Lock()
	s.cfgChanges = append(s.cfgChanges, cfgChange{at: time.Now(), level: level})
	s.cfgMu.Unlock()
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
