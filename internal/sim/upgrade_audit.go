package sim

import (
	"strconv"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// drainBound is how soon a pending upgrade must be written once nothing is
// left to drain while a job of this suite waits in the queue: every waiter
// re-reads the config every minute (BUILD_LOCK_CONFIG_TTL_MS in baseEnv),
// the head of the queue polls within seconds and the tail within a few
// minutes (acquire/poll.go), so ten minutes is generous; only a writer
// that ignores a ready upgrade misses it.
const drainBound = 10 * time.Minute

// simConfigTTL is the config TTL every simulated job runs with (baseEnv).
const simConfigTTL = time.Minute

// auditUpgrades checks the upgrade rules on the finished run:
//   - no job of this suite failed because of a pending upgrade
//     (drain-required or migration-step-required: a pending upgrade pauses
//     admission, it never refuses);
//   - a ready upgrade (nothing left to drain, the config asking for it for
//     at least one config TTL, a job of this suite waiting) is written
//     within drainBound once the faults have healed.
//
// It counts the upgrades written and the longest time one took from ready
// to written (Report.Upgrades, Report.MaxUpgradeLag).
func (s *sim) auditUpgrades(rep *Report, hist []emulator.Version, states []*lockstate.State, healed time.Time, violate func(string, ...any)) {
	for _, j := range s.jobs {
		if j.oldCli {
			continue
		}
		if c := lockstate.Code(j.acquireReason); c == lockstate.CodeDrainRequired || c == lockstate.CodeMigrationStepRequired {
			violate("upgrade: %s failed with %s; a pending upgrade must pause admission, not refuse", j.actor(), c)
		}
	}
	from := s.livenessStart(healed)
	s.cfgMu.Lock()
	changes := append([]cfgChange(nil), s.cfgChanges...)
	s.cfgMu.Unlock()
	levelAt := func(t time.Time) int {
		level := 0
		for _, c := range changes {
			if !c.at.After(t) {
				level = c.level
			}
		}
		return level
	}
	written := func(after time.Time, level int) (time.Time, bool) {
		for i, v := range hist {
			if v.Time.After(after) && states[i] != nil && states[i].SchemaVersion >= level {
				return v.Time, true
			}
		}
		return time.Time{}, false
	}
	for i := 1; i < len(states); i++ {
		if states[i] != nil && states[i-1] != nil && states[i].SchemaVersion > states[i-1].SchemaVersion {
			rep.Upgrades++
		}
	}
	for i, st := range states {
		if st == nil {
			continue
		}
		end := time.Now()
		if i+1 < len(hist) {
			end = hist[i+1].Time
		}
		for _, r := range s.readyMoments(st, hist[i].Time, end, changes) {
			level := levelAt(r.Add(-simConfigTTL))
			if level <= st.SchemaVersion || r.Before(from) {
				continue
			}
			cfg := s.configAt(level)
			up := lockstate.PlanUpgrade(st, cfg, r)
			if !up.Ready() || !s.ourJobWaits(st, r, r.Add(drainBound)) {
				continue
			}
			at, ok := written(r.Add(-time.Nanosecond), level)
			switch {
			case ok && !at.After(r.Add(drainBound)):
				rep.MaxUpgradeLag = max(rep.MaxUpgradeLag, at.Sub(r))
			case ok || time.Now().After(r.Add(drainBound)):
				violate("upgrade: the lock had nothing left to drain for schema %d at %s with jobs waiting, but the upgrade was not written within %s",
					level, r.Format(time.RFC3339Nano), drainBound)
			}
			break
		}
	}
}

// readyMoments are the moments in [start, end) at which the state st can
// become ready to upgrade without a write: st's own time, each cooldown's
// expiry and each config change (plus one config TTL) inside the interval.
func (s *sim) readyMoments(st *lockstate.State, start, end time.Time, changes []cfgChange) []time.Time {
	out := []time.Time{start}
	for _, r := range st.Reservations {
		if t, ok := lockstate.ParseTime(r.AvailableAt); ok && t.After(start) && t.Before(end) {
			out = append(out, t)
		}
	}
	for _, c := range changes {
		if t := c.at.Add(simConfigTTL); t.After(start) && t.Before(end) {
			out = append(out, t)
		}
	}
	return out
}

// configAt is the lock config at level (the operator's flags up to it).
func (s *sim) configAt(level int) lockstate.Config {
	c := s.cfg
	c.RunnerSerialization, c.ResourceLifecycle, c.AccountHealth, c.FencedAdmission = level >= 3, level >= 4, level >= 5, level >= 6
	return c
}

// ourJobWaits reports whether a live job of this suite that had started by
// at is queued in st (its own attempt's entry) and still waiting at until
// (it neither got a seat nor gave up before). A rerun shares its holder id
// with earlier attempts, so the attempt must match.
func (s *sim) ourJobWaits(st *lockstate.State, at, until time.Time) bool {
	queued := map[string]bool{}
	for _, e := range st.Queue {
		queued[e.HolderID+"@"+e.RunAttempt] = true
	}
	for _, j := range s.jobs {
		if j.oldCli || j.dead.Load() || !queued[j.holderID()+"@"+strconv.Itoa(j.attempt)] {
			continue
		}
		j.mu.Lock()
		started, ended := j.clk.start, j.waitEnded
		j.mu.Unlock()
		if started.IsZero() || started.After(at) {
			continue
		}
		if ended.IsZero() || ended.After(until) {
			return true
		}
	}
	return false
}
