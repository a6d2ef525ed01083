package history

import (
	"slices"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// configWindow is what the config history allows for one write at time t.
type configWindow struct {
	// candidates are the configs the writer may have used, the one in force
	// at t first, then older ones still inside the staleness window, then
	// the safe defaults (an unreadable config file), deduplicated.
	candidates []lockstate.Config
	// defaults marks the index of the safe-defaults candidate when it is
	// not also a config that was in force.
	defaultsOnly int
	// maxHolders and maxOvertakes are the largest values any config in
	// force during the window allowed (the safe defaults are smaller).
	maxHolders, maxOvertakes int
	// inForce is the config in force at t.
	inForce lockstate.Config
}

// window returns the configs a write committed at t may have used: every
// version in force at some moment of [t − staleness, t], plus the safe
// defaults. Versions are the config file's history, oldest first; before
// the first one the file did not exist, which means the defaults.
func window(versions []ConfigVersion, t time.Time, staleness time.Duration) configWindow {
	from := t.Add(-staleness)
	var inWindow []lockstate.Config
	add := func(c lockstate.Config) {
		for _, have := range inWindow {
			if have == c {
				return
			}
		}
		inWindow = append(inWindow, c)
	}
	// in force at `from`: the last version at or before it (or defaults).
	start := lockstate.DefaultConfig()
	idx := -1
	for i, v := range versions {
		if v.Time.After(from) {
			break
		}
		start, idx = v.Config, i
	}
	// versions that took effect inside the window, newest first.
	var later []lockstate.Config
	for i := idx + 1; i < len(versions) && !versions[i].Time.After(t); i++ {
		later = append(later, versions[i].Config)
	}
	for i := len(later) - 1; i >= 0; i-- {
		add(later[i])
	}
	add(start)
	w := configWindow{inForce: inWindow[0], maxHolders: 0, defaultsOnly: -1}
	for _, c := range inWindow {
		w.maxHolders = max(w.maxHolders, c.MaxHolders)
		w.maxOvertakes = max(w.maxOvertakes, c.MaxOvertakes)
	}
	w.candidates = inWindow
	def := lockstate.DefaultConfig()
	found := false
	for _, c := range inWindow {
		if c == def {
			found = true
		}
	}
	if !found {
		w.defaultsOnly = len(w.candidates)
		w.candidates = append(w.candidates, def)
	}
	return w
}

// variants expands the window's candidates for a transition from prev with
// the writes of clients that do not know this core's upgrade rules: the
// JavaScript reference and builds before upgrades drained (they write at
// most one schema step, on a drained lock, and never carry a pending
// upgrade on a release), and, at schema 5, clients of the previous
// generation that ignore fencedAdmission (they know schemas up to 5 and
// never migrate to 6). So each candidate that asks for a schema above
// prev's is also tried with its flags lowered to every schema from prev's
// up to the one it asks for. A lowered config is what such a client
// effectively runs; it never admits beyond what the candidate allows.
//
// Clients of the previous generation do not know serializeBy (issue 26)
// either, so on a state they can write (schema 5 or lower) every candidate
// asking for it is also tried without it. Such a client records no
// machineId and is not refused machine-id-unavailable, but the core it runs
// still serializes by the machines the state records (MachineSerialization),
// so it never admits beside a holder on a recorded machine it shares.
func (w configWindow) variants(prev *lockstate.State) []lockstate.Config {
	out := append([]lockstate.Config(nil), w.candidates...)
	if prev == nil {
		return out
	}
	add := func(l lockstate.Config) {
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	for _, c := range w.candidates {
		for target := prev.SchemaVersion; target < lockstate.TargetSchema(c); target++ {
			add(lowered(c, target))
		}
	}
	if prev.SchemaVersion <= previousGenerationMaxSchema {
		for _, c := range out {
			if c.SerializeBy != "" {
				c.SerializeBy = ""
				add(c)
			}
		}
	}
	return out
}

// previousGenerationMaxSchema is the newest state schema the previous
// client generation writes: it fails closed on the fenced schema.
const previousGenerationMaxSchema = lockstate.FencedSchemaVersion - 1

// lowered returns c with the schema flags above target turned off.
func lowered(c lockstate.Config, target int) lockstate.Config {
	c.RunnerSerialization = c.RunnerSerialization && target >= 3
	c.ResourceLifecycle = c.ResourceLifecycle && target >= 4
	c.AccountHealth = c.AccountHealth && target >= 5
	c.FencedAdmission = c.FencedAdmission && target >= lockstate.FencedSchemaVersion
	return c
}

// isDefaultsOnly reports whether cfg is the safe-defaults candidate that no
// config in force matched.
func (w configWindow) isDefaultsOnly(cfg lockstate.Config) bool {
	return w.defaultsOnly >= 0 && cfg == w.candidates[w.defaultsOnly]
}
