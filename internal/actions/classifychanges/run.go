package classifychanges

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/jsinput"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/changes"
)

// Deps are the injected edges of a run (see actionkit.Deps).
type Deps = actionkit.Deps

// Inputs and the output of classify-unity-changes.
const (
	InputEventName        = "event-name"
	InputBaseSHA          = "base-sha"
	InputHeadSHA          = "head-sha"
	InputIndependentPaths = "independent-paths"
	OutputUnityRequired   = "unity-required"
)

var shaRE = regexp.MustCompile(`^[0-9a-fA-F]{40}$`)

// Run is the classify-unity-changes action. unity-required=true is written
// first; only a pull request whose every changed path is Unity-independent
// turns it to false. Every failure (bad input, git missing or failing, a
// malformed diff) is an error, with unity-required left true.
func Run(ctx context.Context, deps Deps) error {
	d := deps.WithDefaults()
	a := actionio.New(d.Getenv, d.Stdout)
	if err := a.RequireOutputFile(); err != nil {
		return failed(err)
	}
	if err := a.SetOutput(OutputUnityRequired, "true"); err != nil {
		return failed(err)
	}
	declared, err := changes.ParseIndependentPaths(a.RawInput(InputIndependentPaths))
	if err != nil {
		return failed(err)
	}
	// An empty event-name is not pull_request: Unity is required and the
	// step succeeds, as in the reference (nothing proves the change
	// Unity-independent, and failing would only hide the decision).
	event := jsinput.Input(a, InputEventName)
	if event != changes.PullRequestEvent {
		return report(a, changes.NotPullRequest(), event, "", "")
	}
	base, head := jsinput.Input(a, InputBaseSHA), jsinput.Input(a, InputHeadSHA)
	for _, in := range []struct{ name, value string }{{InputBaseSHA, base}, {InputHeadSHA, head}} {
		if !shaRE.MatchString(in.value) {
			return failed(&actionio.InputError{Input: in.name, Code: actionio.CodePatternMismatch, Message: "must be a 40-character hexadecimal commit SHA for a pull_request event"})
		}
	}
	base, head = strings.ToLower(base), strings.ToLower(head)
	git, err := FindGit()
	if err != nil {
		return failed(err)
	}
	dir := jsinput.Env(a, "GITHUB_WORKSPACE")
	if dir == "" {
		dir = "."
	}
	out, err := Git{Path: git, Dir: dir}.ChangedPaths(ctx, base, head)
	if err != nil {
		return failed(err)
	}
	paths, err := changes.ParseNULPaths(out)
	if err != nil {
		return failed(err)
	}
	return report(a, changes.Classify(paths, declared), event, base, head)
}

// failed marks every error of the classifier with what it leaves behind.
func failed(err error) error {
	return fmt.Errorf("unity change classification failed, unity-required stays true: %w", err)
}

// report logs the decision, writes the job summary and, for a skip only,
// turns unity-required to false.
func report(a *actionio.IO, dec changes.Decision, event, base, head string) error {
	var msg string
	switch {
	case dec.Reason == changes.ReasonNotPullRequest && event == "":
		msg = "Unity required: no event name was given (pass event-name: ${{ github.event_name }}), so nothing proves the change Unity-independent."
	case dec.Reason == changes.ReasonNotPullRequest:
		msg = fmt.Sprintf("Unity required: event %s is not a pull request, so nothing proves the change Unity-independent.", changes.DisplayPath(event))
	case dec.Reason == changes.ReasonEmptyDiff:
		msg = fmt.Sprintf("Unity required: git reports no changed path between %s and %s, so nothing proves the change Unity-independent.", base, head)
	case dec.Reason == changes.ReasonUnityPath:
		msg = fmt.Sprintf("Unity required: %s is neither in the central Unity-independent allowlist nor under a declared independent path (first of %d changed path(s)).",
			changes.DisplayPath(dec.ForcedBy), dec.Paths)
	default:
		msg = fmt.Sprintf("Unity not required: all %d changed path(s) are Unity-independent; the licensed job is skipped.", dec.Paths)
	}
	a.Notice(msg)
	rows := []actionkit.Row{
		{Field: "unity-required", Value: actionkit.Code(fmt.Sprint(dec.UnityRequired))},
		{Field: "Reason", Value: actionkit.Code(dec.Reason)},
		{Field: "Event", Value: actionkit.Code(changes.DisplayPath(event))},
	}
	if base != "" {
		rows = append(rows, actionkit.Row{Field: "Compared", Value: actionkit.Code(base[:12]) + " → " + actionkit.Code(head[:12])},
			actionkit.Row{Field: "Changed paths", Value: fmt.Sprint(dec.Paths)})
	}
	if dec.ForcedBy != "" {
		rows = append(rows, actionkit.Row{Field: "First path that requires Unity", Value: actionkit.Code(changes.DisplayPath(dec.ForcedBy))})
	}
	if err := a.Summary(actionkit.Table("Unity change classification", rows)); err != nil && !errors.Is(err, actionio.ErrFileCommandUnavailable) {
		a.Warning("Could not write the job summary: " + err.Error())
	}
	if !dec.UnityRequired {
		return a.SetOutput(OutputUnityRequired, "false")
	}
	return nil
}
