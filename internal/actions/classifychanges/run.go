package classifychanges

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/markdown"

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

// Run is the classify-unity-changes action: LoadSettings, then Execute.
// unity-required=true is written first; only a pull request whose every
// changed path is Unity-independent turns it to false. Every failure (bad
// input, git missing or failing, a malformed diff) is an error, with
// unity-required left true.
func Run(ctx context.Context, deps Deps) error {
	s, err := LoadSettings(deps.Getenv)
	if err != nil && s.Files.Output == "" {
		return err
	}
	a := actionio.New(s.Files.Getenv, deps.Stdout)
	if err := a.SetOutput(OutputUnityRequired, "true"); err != nil {
		return failedCode(CodeOutputFileMissing, err)
	}
	if err != nil {
		return failed(err)
	}
	return execute(ctx, s, a)
}

// Execute is the action's core over settled settings (for callers that
// loaded them): unity-required=true first, then the classification.
func Execute(ctx context.Context, s Settings, deps Deps) error {
	a := actionio.New(s.Files.Getenv, deps.Stdout)
	if err := a.SetOutput(OutputUnityRequired, "true"); err != nil {
		return failedCode(CodeOutputFileMissing, err)
	}
	return execute(ctx, s, a)
}

// execute classifies once unity-required=true is written.
func execute(ctx context.Context, s Settings, a *actionio.IO) error {
	declared, event, base, head, dir := s.Declared, s.Event, s.Base, s.Head, s.Workspace
	// An empty event-name is not pull_request: Unity is required and the
	// step succeeds, as in the reference (nothing proves the change
	// Unity-independent, and failing would only hide the decision).
	if event != changes.PullRequestEvent {
		return report(a, changes.NotPullRequest(), event, "", "")
	}
	git, err := FindGit()
	if err != nil {
		return failedCode(CodeGitNotFound, err)
	}
	out, err := Git{Path: git, Dir: dir}.ChangedPaths(ctx, base, head)
	if err != nil {
		return failedCode(CodeGitDiffFailed, err)
	}
	paths, err := changes.ParseNULPaths(out)
	if err != nil {
		return failedCode(CodeGitDiffMalformed, err)
	}
	dec := changes.Classify(paths, declared)
	if !dec.UnityRequired {
		// Every path is in an independent folder by name. Unity still reads
		// it if a symbolic link under Assets/ (or Packages/,
		// ProjectSettings/) or a local package of Packages/manifest.json
		// leads there: read the head's links and manifest and decide.
		tree, err := Git{Path: git, Dir: dir}.Tree(ctx, head)
		if err != nil {
			return failedCode(CodeGitTreeFailed, err)
		}
		dec = changes.ClassifyVisible(dec, paths, changes.Visible(tree))
	}
	return report(a, dec, event, base, head)
}

// Refusal codes of the classifier beyond the input and declaration ones
// (docs/actions.md); each is the ::error title.
const (
	CodeOutputFileMissing = "output-file-missing"
	CodeGitNotFound       = "git-not-found"
	CodeGitDiffFailed     = "git-diff-failed"
	CodeGitDiffMalformed  = "git-diff-malformed"
	CodeGitTreeFailed     = "git-tree-failed"
)

// FailedError is a classification failure with a stable Code; Unity stays
// required.
type FailedError struct {
	Code string
	Err  error
}

// Error implements error.
func (e *FailedError) Error() string {
	return "unity change classification failed, unity-required stays true: " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *FailedError) Unwrap() error { return e.Err }

// ReasonCode returns Code.
func (e *FailedError) ReasonCode() string { return e.Code }

// failed marks an input or declaration refusal (which carries its own
// code) with what it leaves behind.
func failed(err error) error {
	return fmt.Errorf("unity change classification failed, unity-required stays true: %w", err)
}

// failedCode is failed for an error without a code of its own.
func failedCode(code string, err error) error { return &FailedError{Code: code, Err: err} }

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
	case dec.Reason == changes.ReasonUnityVisible:
		msg = fmt.Sprintf("Unity required: %s is in a Unity-independent folder by name, but Unity reads it through the %s (first of %d changed path(s)).",
			changes.DisplayPath(dec.ForcedBy), dec.Via, dec.Paths)
	case dec.Reason == changes.ReasonVisibilityUnknown:
		msg = fmt.Sprintf("Unity required: every changed path is in a Unity-independent folder by name, but what Unity reads could not be decided: %s.", dec.Unsure)
	case dec.Reason == changes.ReasonUnityPath:
		msg = fmt.Sprintf("Unity required: %s is neither in the central Unity-independent allowlist nor under a declared independent path (first of %d changed path(s)).",
			changes.DisplayPath(dec.ForcedBy), dec.Paths)
	default:
		msg = fmt.Sprintf("Unity not required: all %d changed path(s) are Unity-independent; the licensed job is skipped.", dec.Paths)
	}
	a.Notice(msg)
	rows := []actionkit.Row{
		{Field: "unity-required", Value: markdown.Code(fmt.Sprint(dec.UnityRequired))},
		{Field: "Reason", Value: markdown.Code(dec.Reason)},
		{Field: "Event", Value: markdown.Code(changes.DisplayPath(event))},
	}
	if base != "" {
		rows = append(rows, actionkit.Row{Field: "Compared", Value: markdown.Code(base[:12]) + " → " + markdown.Code(head[:12])},
			actionkit.Row{Field: "Changed paths", Value: fmt.Sprint(dec.Paths)})
	}
	if dec.ForcedBy != "" {
		rows = append(rows, actionkit.Row{Field: "First path that requires Unity", Value: markdown.Code(changes.DisplayPath(dec.ForcedBy))})
	}
	if dec.Via != "" {
		rows = append(rows, actionkit.Row{Field: "Read by Unity through", Value: markdown.Message(dec.Via)})
	}
	if dec.Unsure != "" {
		rows = append(rows, actionkit.Row{Field: "Undecided because", Value: markdown.Message(dec.Unsure)})
	}
	if err := a.Summary(actionkit.Table("Unity change classification", rows)); err != nil && !errors.Is(err, actionio.ErrFileCommandUnavailable) {
		a.Warning("Could not write the job summary: " + err.Error())
	}
	if !dec.UnityRequired {
		return a.SetOutput(OutputUnityRequired, "false")
	}
	return nil
}
