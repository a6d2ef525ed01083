package prhead

import (
	"context"
	"fmt"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/prhead"
)

// Deps are the injected edges of a run (see actionkit.Deps).
type Deps = actionkit.Deps

// Outputs of the require-current-pr-head action.
const (
	OutputIsCurrent      = "is-current"
	OutputCurrentHeadSHA = "current-head-sha"
)

// Run is the require-current-pr-head action. Outside a pull request run it
// reports is-current=true without any request. Otherwise it validates its
// inputs, fetches the pull request, writes is-current and current-head-sha,
// and fails when the head moved on. A failed lookup writes no outputs.
func Run(ctx context.Context, deps Deps) error {
	d := deps.WithDefaults()
	a := edgesettings.IO(d.Getenv, d.Stdout)
	s, err := LoadSettings(d.Getenv)
	if s.Inputs.Request.Token != "" {
		a.Mask(s.Inputs.Request.Token)
	}
	if err != nil {
		return err
	}
	return run(ctx, d, a, s)
}

// run is the guard on validated settings.
func run(ctx context.Context, d Deps, a *actionio.IO, s Settings) error {
	in := s.Inputs
	if !in.Scoped {
		a.Notice("Not a pull request run; the current-head guard has nothing to check.")
		return writeOutputs(a, "true", in.Request.ExpectedSHA)
	}
	res, err := prhead.Checker{Transport: d.Transport, Clock: d.Clock}.Check(ctx, in.Request)
	if err != nil {
		return err
	}
	if err := writeOutputs(a, fmt.Sprint(res.Current), res.HeadSHA); err != nil {
		return err
	}
	if !res.Current {
		return fmt.Errorf("stale pull request run for %s; pull request #%s now points to %s", in.Request.ExpectedSHA, in.Request.Number, res.HeadSHA)
	}
	return nil
}

func writeOutputs(a *actionio.IO, current, sha string) error {
	if err := a.SetOutput(OutputIsCurrent, current); err != nil {
		return err
	}
	return a.SetOutput(OutputCurrentHeadSHA, sha)
}
