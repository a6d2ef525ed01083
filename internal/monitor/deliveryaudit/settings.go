package deliveryaudit

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/requestbudget"
)

// Settings is everything one reaper-delivery-audit run reads from its
// arguments and environment, read once by LoadSettings before any request.
type Settings struct {
	// Monitor is the environment, the repository and the request budget.
	Monitor monitor.Settings
	// Config is the validated audit target and thresholds.
	Config Config
}

// LoadSettings parses the flags (--workflow, --max-delivery-delay,
// --max-run-duration, --repo, --request-budget; usage on stderr) and reads
// the environment. A malformed flag stops the parse (flag.ErrHelp for
// -h); every other problem (the environment, the repository, the budget,
// the workflow and thresholds) is listed in one *edgesettings.Error, each
// a monitor.ErrUsage.
func LoadSettings(args []string, getenv func(string) string, stderr io.Writer) (Settings, error) {
	fs := flag.NewFlagSet("reaper-delivery-audit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	workflow := fs.String("workflow", DefaultWorkflow, "the scheduled reaper's workflow file")
	delay := fs.Duration("max-delivery-delay", DefaultMaxDeliveryDelay, "newest scheduled run must be younger than this")
	duration := fs.Duration("max-run-duration", DefaultMaxRunDuration, "no scheduled run may stay active longer than this")
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
	s := Settings{Monitor: monitor.LoadSettings(getenv, monitor.Flags{Repo: *repo, RequestBudget: *budget}, &p)}
	s.Config = Config{Owner: s.Monitor.Owner, Repo: s.Monitor.Repo, Workflow: *workflow, MaxDeliveryDelay: *delay,
		MaxRunDuration: *duration, ServerURL: s.Monitor.Env.ServerURL}
	s.Config.problems(&p)
	return s, p.Err()
}
