package bench

import (
	"fmt"
	mrand "math/rand/v2"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/checker"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// ConfigStep is an operator's config change at a moment of a workload.
type ConfigStep struct {
	At     time.Duration
	Config string
}

// UpgradeStat is one config step of a workload and when its upgrade landed.
type UpgradeStat struct {
	// ConfigAtS is when the config asked for Schema (seconds from start).
	ConfigAtS float64 `json:"config_at_s"`
	Schema    int     `json:"schema"`
	// WrittenAtS is when the state reached Schema (seconds from start);
	// -1 when it never did.
	WrittenAtS float64 `json:"written_at_s"`
	// DrainS is WrittenAtS - ConfigAtS: how long the lock took to drain
	// and upgrade while jobs kept arriving.
	DrainS float64 `json:"drain_s"`
	// AdmittedDuring counts the admissions between the config change and
	// the upgrade (jobs that had not yet re-read the config, at most one
	// config TTL after the change, and same-runner reclaims).
	AdmittedDuring int `json:"admitted_during_drain"`
}

// upgradeConfig is the bench lock's config at a schema level: 2 seats, a
// 30-second release cooldown, the flags up to level.
func upgradeConfig(level int) string {
	return fmt.Sprintf(`{"maxHolders":2,"releaseCooldownSeconds":30,"runnerSerialization":%t,"resourceLifecycle":%t,"accountHealth":%t,"fencedAdmission":%t}`+"\n",
		level >= 3, level >= 4, level >= 5, level >= 6)
}

// upgradeWorkload climbs a busy lock from schema 2 to 6 one feature at a
// time, 30 minutes apart, while jobs keep arriving (about 6 always queued
// on 2 seats, 4-6 minute holds): every pending upgrade must pause
// admission, drain and land without failing a job.
func upgradeWorkload() Workload {
	return Workload{
		Name: "upgrade", Seats: 2, Latency: DefaultLatency, Config: upgradeConfig(2),
		Description: "2 seats, about 6 jobs always queued, 4-6 minute holds; the operator turns on runnerSerialization, resourceLifecycle, accountHealth and fencedAdmission 30 minutes apart while jobs keep arriving (schema 2 to 6)",
		Jobs: func(rng *mrand.Rand) []*simJob {
			var js []*simJob
			for i := range 8 {
				js = append(js, &simJob{arrival: time.Duration(i) * 20 * time.Second, hold: jitter(rng, 4*time.Minute, 2*time.Minute)})
			}
			return js
		},
		RefillUntil: 140 * time.Minute, RefillHold: 5 * time.Minute, RefillHoldSpread: 2 * time.Minute,
		ConfigSteps: []ConfigStep{
			{At: 20 * time.Minute, Config: upgradeConfig(3)},
			{At: 50 * time.Minute, Config: upgradeConfig(4)},
			{At: 80 * time.Minute, Config: upgradeConfig(5)},
			{At: 110 * time.Minute, Config: upgradeConfig(6)},
		},
	}
}

// applyConfigSteps commits each step's config at its moment (until done).
func (w *world) applyConfigSteps(steps []ConfigStep, done <-chan struct{}) {
	for _, s := range steps {
		select {
		case <-time.After(time.Until(w.start.Add(s.At))):
		case <-done:
			return
		}
		_, _ = w.em.PutFile(simOwner, simLockRepo, "main", "locks/"+simLock+".config.json", []byte(s.Config))
	}
}

// upgradeStats measures each config step: when the state reached the
// schema it asks for, and how many admissions happened in between.
func upgradeStats(w *world, steps []ConfigStep, versions []checker.Version, adm []checker.Admission) []UpgradeStat {
	var out []UpgradeStat
	for _, s := range steps {
		cfg, _ := lockstate.DecodeConfig([]byte(s.Config))
		at := w.start.Add(s.At)
		st := UpgradeStat{ConfigAtS: round2(s.At.Seconds()), Schema: lockstate.TargetSchema(cfg), WrittenAtS: -1, DrainS: -1}
		written := time.Time{}
		for _, v := range versions {
			if v.Content == nil || v.Time.Before(at) {
				continue
			}
			if d, err := lockstate.Decode(v.Content, lockstate.DecodeOptions{Lock: simLock, ServerURL: simServerURL}); err == nil && d.SchemaVersion >= st.Schema {
				written = v.Time
				break
			}
		}
		if !written.IsZero() {
			st.WrittenAtS, st.DrainS = round2(written.Sub(w.start).Seconds()), round2(written.Sub(at).Seconds())
			for _, a := range adm {
				if a.Time.After(at) && a.Time.Before(written) {
					st.AdmittedDuring++
				}
			}
		}
		out = append(out, st)
	}
	return out
}

// Upgrade target IDs.
const (
	TargetUpgradeFailed = "upgrade-failed-jobs"
	TargetUpgradeDrain  = "upgrade-max-drain"
)

// upgradeDrainBound is the drain target: every waiter re-reads the config
// within one TTL (5 minutes), the jobs admitted until then hold their seats
// for up to 6 minutes, a cooldown of 30 s follows, and the next poll
// writes the upgrade.
const upgradeDrainBound = 15 * time.Minute

// upgradeTargets judges an upgrade workload: no job failed, every upgrade
// landed within upgradeDrainBound.
func upgradeTargets(r *Result, le func(id, name, bar string, v, limit float64)) {
	le(TargetUpgradeFailed, "upgrade under arrivals: failed jobs", "0", float64(r.FailedJobs), 0)
	worst := 0.0
	for _, u := range r.Upgrades {
		if u.DrainS < 0 {
			worst = 1e9 // never landed
			break
		}
		worst = max(worst, u.DrainS/60)
	}
	le(TargetUpgradeDrain, "upgrade under arrivals: longest drain (config change to upgrade, min)", fmt.Sprintf("≤ %.0f min", upgradeDrainBound.Minutes()), round2(worst), upgradeDrainBound.Minutes())
}
