package incidentaudit

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/requestbudget"
)

// EnvLockName names the lock when --lock is not given: the workflow passes
// the repository variable through the environment, so no expression is
// expanded inside run:.
const EnvLockName = "BUILD_LOCK_NAME"

// Settings is everything one lock-recovery-audit run reads from its
// arguments and environment, read once by LoadSettings before any request.
type Settings struct {
	// Monitor is the environment, the repository and the request budget.
	Monitor monitor.Settings
	// Config is the validated audit target.
	Config Config
}

// LoadSettings parses the flags (--lock, --state-ref, --repo,
// --request-budget; usage on stderr) and reads the environment. A
// malformed flag stops the parse (flag.ErrHelp for -h); every other
// problem (the environment, the repository, the budget, the lock name, the
// state ref, the server URL) is listed in one *edgesettings.Error, each a
// monitor.ErrUsage.
func LoadSettings(args []string, getenv func(string) string, stderr io.Writer) (Settings, error) {
	fs := flag.NewFlagSet("lock-recovery-audit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	lock := fs.String("lock", "", "lock name (default $BUILD_LOCK_NAME; one of them is required)")
	ref := fs.String("state-ref", DefaultStateRef, "branch or ref that holds locks/<lock>.json")
	repo := fs.String("repo", "", "lock repository owner/name (default $GITHUB_REPOSITORY)")
	budget := fs.Int(monitor.FlagRequestBudget, 0, fmt.Sprintf("request budget of this run, %d-%d (default $%s, else %d)",
		monitor.MinRequestBudget, monitor.MaxRequestBudget, requestbudget.EnvRequestBudget, monitor.DefaultRequestBudget))
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return Settings{}, err
		}
		return Settings{}, fmt.Errorf("%w: %v", monitor.ErrUsage, err)
	}
	var p edgesettings.Problems
	if fs.NArg() > 0 {
		p.Add(fmt.Errorf("%w: unexpected arguments %q", monitor.ErrUsage, fs.Args()))
	}
	if *lock == "" {
		*lock = strings.TrimSpace(getenv(EnvLockName))
	}
	s := Settings{Monitor: monitor.LoadSettings(getenv, monitor.Flags{Repo: *repo, RequestBudget: *budget}, &p)}
	s.Config = Config{Lock: *lock, StateRef: *ref, Owner: s.Monitor.Owner, Repo: s.Monitor.Repo, ServerURL: s.Monitor.Env.ServerURL}
	s.Config.problems(&p)
	return s, p.Err()
}
