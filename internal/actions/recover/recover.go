// Package recover is the recover-build-lock action (cmd/recover): operator
// recovery of a quarantine (operation=recover) or of the account incident
// (operation=recover-incident). The recovery itself is internal/recovery,
// which the reap-stale-locks action runs for the same operations.
package recover

import (
	"context"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/recovery"
)

// Deps are the injected edges of a run (see recovery.Deps).
type Deps = recovery.Deps

// Run performs the recovery the inputs ask for: LoadSettings once, then
// the recovery on them.
func Run(ctx context.Context, d Deps) error {
	d, err := d.WithDefaults()
	if err != nil {
		return err
	}
	s, err := LoadSettings(d.Getenv)
	return recovery.Execute(ctx, edgesettings.IO(d.Getenv, d.Stdout), d, s, err)
}

// Main runs the action and returns its exit code (0, 1, 130 or 143).
func Main(ctx context.Context, d Deps, sig *lockaction.Signals) int {
	d, err := d.WithDefaults()
	if err != nil {
		return lockaction.ExitFailure
	}
	a := edgesettings.IO(d.Getenv, d.Stdout)
	s, err := LoadSettings(d.Getenv)
	return lockaction.Finish(a, sig, recovery.Execute(ctx, a, d, s, err))
}
