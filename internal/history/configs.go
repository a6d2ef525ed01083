package history

import (
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

// variants expands the window's candidates for a transition from prev:
// at schema 5 a client of the previous generation ignores fencedAdmission
// (it knows schemas up to 5 and never migrates to 6), so each candidate
// with the flag on is also tried with it off. Every other flag is read by
// every client this core interoperates with.
func (w configWindow) variants(prev *lockstate.State) []lockstate.Config {
	out := append([]lockstate.Config(nil), w.candidates...)
	if prev == nil || prev.SchemaVersion != 5 {
		return out
	}
	for _, c := range w.candidates {
		if c.FencedAdmission {
			c.FencedAdmission = false
			dup := false
			for _, o := range out {
				dup = dup || o == c
			}
			if !dup {
				out = append(out, c)
			}
		}
	}
	return out
}

// isDefaultsOnly reports whether cfg is the safe-defaults candidate that no
// config in force matched.
func (w configWindow) isDefaultsOnly(cfg lockstate.Config) bool {
	return w.defaultsOnly >= 0 && cfg == w.candidates[w.defaultsOnly]
}
