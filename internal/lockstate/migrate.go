package lockstate

import (
	"fmt"
	"strings"
	"time"
)

// TargetSchema returns the schema cfg asks for: 6 with fencedAdmission, 5
// with accountHealth, 4 with resourceLifecycle, 3 with runnerSerialization,
// otherwise 2 (the default write schema). A state never moves below the
// schema it already has, whatever the config says.
func TargetSchema(cfg Config) int {
	switch {
	case cfg.FencedAdmission:
		return FencedSchemaVersion
	case cfg.AccountHealth:
		return 5
	case cfg.ResourceLifecycle:
		return 4
	case cfg.RunnerSerialization:
		return 3
	}
	return 2
}

// schemaFeatures names the config flag that introduces each schema.
var schemaFeatures = map[int]string{
	3: "runnerSerialization",
	4: "resourceLifecycle",
	5: "accountHealth",
	6: "fencedAdmission",
}

// Upgrade is a schema upgrade the config asks for and the state has not
// reached, and what it still waits for (docs/state-schema.md §10).
//
// An upgrade is written in one step, from whatever schema the state has to
// the schema the config asks for, by the first write of an acquire or a
// release that finds nothing left to drain: no holder (a holder admitted
// under the old rules cannot be carried to the new ones), no live cooldown
// or quarantine when the state has reservations (schema >= 4) and the
// target adds the account incident or fencing (schema >= 5), no active
// incident, and, when the upgrade adds runner serialization, a runner id
// recorded for every queued job (PendingRunnerID). Queued jobs are carried
// across in their order. Until then admission pauses: holders finish and
// release normally, new and queued jobs keep (or take) their place and
// wait; only a same-runner quarantine reclaim, which takes no free seat and
// is how a quarantine that blocks the drain ends, is still admitted.
//
// A brand-new lock (no state file, or nothing in it) has nothing to drain,
// so its first write creates it directly at the target schema.
type Upgrade struct {
	// From is the state's schema; To the schema the config asks for. To
	// <= From means no upgrade is pending.
	From, To int
	// Holders are the holderIds still holding a seat.
	Holders []string
	// Reservations are the live cooldowns and quarantines that must end
	// first (only when the step goes from schema >= 4 to >= 5).
	Reservations []Reservation
	// Incident is the active incident that must be recovered first (a step
	// from schema 5).
	Incident *Incident
	// Unready are the queued holderIds whose entries cannot be carried to
	// schema 3 yet: no runner id is recorded for them (queued by the
	// reference client or an older build, or before their own job read the
	// config). Each job records its runner id on its next poll, or leaves.
	Unready []string
}

// Pending reports whether the config asks for a schema above the state's.
func (u Upgrade) Pending() bool { return u.To > u.From }

// Ready reports a pending upgrade with nothing left to drain: the next
// write of an acquire or a release writes it.
func (u Upgrade) Ready() bool {
	return u.Pending() && len(u.Holders) == 0 && len(u.Reservations) == 0 && u.Incident == nil && len(u.Unready) == 0
}

// Paused reports a pending upgrade that still waits for the lock to drain:
// admission is paused.
func (u Upgrade) Paused() bool { return u.Pending() && !u.Ready() }

// Features names the config flags the upgrade turns on, in schema order
// ("runnerSerialization, resourceLifecycle").
func (u Upgrade) Features() string {
	var f []string
	for v := max(u.From+1, 3); v <= u.To; v++ {
		f = append(f, schemaFeatures[v])
	}
	return strings.Join(f, ", ")
}

// Quarantines returns the blocking reservations that are quarantines: they
// never end by themselves (a job on the same runner reclaims one, the
// reaper auto-recovers one whose run finished at schema >= 5, or an
// operator recovers it).
func (u Upgrade) Quarantines() []Reservation {
	var q []Reservation
	for _, r := range u.Reservations {
		if r.State == ReservationQuarantine {
			q = append(q, r)
		}
	}
	return q
}

// Summary says in one line what the upgrade waits for, for logs and job
// summaries ("holders left: 1; cooldowns: 1 (ends by itself)").
func (u Upgrade) Summary() string {
	if !u.Pending() {
		return "no upgrade pending"
	}
	if u.Ready() {
		return "nothing left to drain: the next write upgrades the lock"
	}
	var parts []string
	if n := len(u.Holders); n > 0 {
		parts = append(parts, fmt.Sprintf("holders left: %d", n))
	}
	if q := len(u.Quarantines()); q > 0 {
		parts = append(parts, fmt.Sprintf("quarantines: %d (each needs a job on its runner or an operator's recover)", q))
	}
	if c := len(u.Reservations) - len(u.Quarantines()); c > 0 {
		parts = append(parts, fmt.Sprintf("cooldowns: %d (each ends by itself)", c))
	}
	if u.Incident != nil {
		parts = append(parts, "an active account incident (an operator's recover-incident ends it)")
	}
	if n := len(u.Unready); n > 0 {
		parts = append(parts, fmt.Sprintf("queued jobs without a recorded runner id: %d (each records one on its next poll, or leaves)", n))
	}
	return strings.Join(parts, "; ")
}

// PlanUpgrade reports the upgrade cfg asks for on s at now (expired
// cooldowns no longer block). s is not modified.
func PlanUpgrade(s *State, cfg Config, now time.Time) Upgrade {
	work := s.Clone()
	pruneExpired(work, now)
	return planUpgrade(work, cfg, "")
}

// planUpgrade is PlanUpgrade on a state whose expired cooldowns are already
// pruned. caller, when set, is the holderId of the acquiring job, which
// supplies its own runner id (its entry is never unready).
func planUpgrade(s *State, cfg Config, caller string) Upgrade {
	u := Upgrade{From: s.SchemaVersion, To: TargetSchema(cfg)}
	if !u.Pending() {
		return u
	}
	for _, h := range s.Holders {
		u.Holders = append(u.Holders, h.HolderID)
	}
	if u.From >= 4 && u.To >= 5 {
		u.Reservations = append(u.Reservations, s.Reservations...)
	}
	if s.SchemaVersion >= 5 && s.ActiveIncident != nil {
		inc := *s.ActiveIncident
		u.Incident = &inc
	}
	if u.From < 3 {
		seen := map[string]bool{}
		for _, e := range s.Queue {
			if seen[e.HolderID] {
				continue // a schema-2 duplicate collapses into its first copy
			}
			seen[e.HolderID] = true
			if e.PendingRunnerID == "" && e.HolderID != caller {
				u.Unready = append(u.Unready, e.HolderID)
			}
		}
	}
	return u
}

// applyUpgrade writes a ready upgrade u into work: the schema becomes u.To,
// with each added structure at its initial value (reservations empty,
// no incident, the fencing counter at 0) and the queue carried across in
// order: at the step to schema 3 each entry takes its recorded runner id
// (the caller's entry takes callerRunner) and schema-2 duplicates collapse
// into their first copy; at the step to 6 every entry starts with 0
// overtakes.
func applyUpgrade(work *State, u Upgrade, caller, callerRunner string) {
	if u.From < 3 {
		work.Queue = dedupeQueue(work.Queue)
	}
	for i := range work.Queue {
		e := &work.Queue[i]
		if u.From < 3 {
			e.RunnerID = e.PendingRunnerID
			if e.HolderID == caller {
				e.RunnerID = callerRunner
			}
		}
		e.PendingRunnerID = ""
		if u.From < FencedSchemaVersion {
			e.Overtakes = 0
		}
	}
	if u.From < 4 {
		work.Reservations = []Reservation{}
	}
	if u.From < 5 {
		work.ActiveIncident = nil
	}
	if u.From < FencedSchemaVersion {
		work.FencingToken = 0
	}
	work.SchemaVersion = u.To
}

// upgradeView is the state as it will be once the pending upgrade u has
// drained and landed: holders, blocking reservations and the incident gone,
// the queue carried across (an unready entry on a runner of its own). It is
// what a waiting job's rank is computed on while admission is paused.
func upgradeView(s *State, u Upgrade) *State {
	v := s.Clone()
	v.Holders = nil
	if u.From >= 4 && u.To >= 5 {
		v.Reservations = nil
	}
	v.ActiveIncident = nil
	if u.From < 3 {
		v.Queue = dedupeQueue(v.Queue)
		for i := range v.Queue {
			if v.Queue[i].PendingRunnerID == "" {
				v.Queue[i].PendingRunnerID = "\x00" + v.Queue[i].HolderID
			}
		}
	}
	applyUpgrade(v, Upgrade{From: u.From, To: u.To}, "", "")
	return v
}
