// Package classify is the mode table of cmd/classify, the one binary of the
// design card's "classify" family: each classifier action's action.yml
// passes its mode as the first argument (tools/launcher/launch.sh classify
// <mode>), and Run dispatches to that action's entry point. Adding a mode
// is one entry in Modes.
package classify

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/classifychanges"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/cleanupevidence"
)

// Entry is the entry point shape every mode shares with the other actions.
type Entry func(ctx context.Context, deps actionkit.Deps) error

// Modes maps a mode (the first argument) to its action.
var Modes = map[string]Entry{
	"changes":          classifychanges.Run, // .github/actions/classify-unity-changes
	"cleanup-evidence": cleanupevidence.Run, // .github/actions/classify-unity-cleanup-evidence
}

// ErrMode reports a missing, unknown or over-long mode argument.
var ErrMode = errors.New("classify: bad mode")

// Run dispatches args[0] through modes. No mode, an unknown mode or extra
// arguments are an error listing the modes; nothing else runs.
func Run(ctx context.Context, modes map[string]Entry, args []string, deps actionkit.Deps) error {
	names := make([]string, 0, len(modes))
	for name := range modes {
		names = append(names, name)
	}
	slices.Sort(names)
	list := strings.Join(names, ", ")
	switch {
	case len(args) == 0:
		return fmt.Errorf("%w: a mode is required as the first argument; the modes are: %s", ErrMode, list)
	case len(args) > 1:
		return fmt.Errorf("%w: exactly one argument (the mode) is expected, got %d; the modes are: %s", ErrMode, len(args), list)
	}
	entry, ok := modes[args[0]]
	if !ok {
		return fmt.Errorf("%w: unknown mode %q; the modes are: %s", ErrMode, printable(args[0]), list)
	}
	return entry(ctx, deps)
}

// printable bounds an argument for an error message.
func printable(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}
