package requestbudget

import (
	"fmt"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
)

// EnvRequestBudget is the environment variable every budgeted binary reads
// (the scheduled reaper, recovery and the monitors); an action input of the
// same meaning (InputRequestBudget) takes precedence over it.
const EnvRequestBudget = "BUILD_LOCK_REQUEST_BUDGET"

// InputRequestBudget is the action input of reap-stale-locks and
// recover-build-lock.
const InputRequestBudget = "request-budget"

// Knob is one binary's budget setting: its default and the bounds a
// configured value must lie in.
type Knob struct {
	Default, Min, Max int
}

// Resolve returns the budget: the input value when it is valid, else the
// environment value when it is valid, else the default. Empty values are
// unset. A value that is not all ASCII digits or lies outside [Min, Max]
// is ignored with a warning, as the retry knobs are (spec §3.6: a tuning
// typo must not fail a run; the default is the safe value).
func (k Knob) Resolve(input, env string) (int, []string) {
	var warnings []string
	if v := strings.TrimSpace(input); v != "" {
		if n, ok, _ := ghclient.ParseKnob(InputRequestBudget, v, k.Min, k.Max); ok {
			return n, nil
		}
		warnings = append(warnings, fmt.Sprintf("Ignoring invalid input %s; expected an integer between %d and %d.", InputRequestBudget, k.Min, k.Max))
	}
	if n, ok, w := ghclient.ParseKnob(EnvRequestBudget, strings.TrimSpace(env), k.Min, k.Max); ok {
		return n, warnings
	} else if w != "" {
		warnings = append(warnings, w)
	}
	return k.Default, warnings
}

// New resolves the budget from input and env (see Resolve), reports each
// warning through warn (may be nil) and returns the run's Budget.
func (k Knob) New(input, env string, warn func(string)) (*Budget, error) {
	limit, warnings := k.Resolve(input, env)
	for _, w := range warnings {
		if warn != nil {
			warn(w)
		}
	}
	return New(limit)
}
