package classifychanges

import (
	"fmt"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/changes"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/jsinput"
)

// DefaultWorkspace is the directory git runs in when GITHUB_WORKSPACE is
// unset: the current directory, where a local run checks out the project.
const DefaultWorkspace = "."

// Settings is everything classify-unity-changes reads from the
// environment, read once by LoadSettings.
type Settings struct {
	// Files are the step's file-command paths; Files.Output is set.
	Files edgesettings.Files
	// Declared are the parsed independent-paths declarations.
	Declared []string
	// Event is the event-name input ("" is not a pull request).
	Event string
	// Base and Head are the compared commits, lower-cased; set (and valid)
	// only for a pull_request event.
	Base, Head string
	// Workspace is the checkout git runs in (GITHUB_WORKSPACE, default
	// DefaultWorkspace).
	Workspace string
}

// LoadSettings reads and validates every input: GITHUB_OUTPUT must be set,
// independent-paths must parse, and for a pull_request event base-sha and
// head-sha must be 40-hex SHAs. Every problem is listed in one
// *edgesettings.Error (the first one's code is the ::error title).
// When GITHUB_OUTPUT is set, Run still writes the fail-closed
// unity-required=true before it reports the problems (spec §1.1: the
// default is written before anything else), and nothing more.
func LoadSettings(getenv func(string) string) (Settings, error) {
	var p edgesettings.Problems
	s := Settings{Files: edgesettings.ReadFiles(getenv), Event: jsinput.Value(edgesettings.Input(getenv, InputEventName)),
		Workspace: jsinput.Value(getenv("GITHUB_WORKSPACE"))}
	if s.Workspace == "" {
		s.Workspace = DefaultWorkspace
	}
	if s.Files.Output == "" {
		p.Add(failedCode(CodeOutputFileMissing, fmt.Errorf("GITHUB_OUTPUT is not set, so this action cannot write its fail-closed outputs: %w", actionio.ErrFileCommandUnavailable)))
	}
	declared, err := changes.ParseIndependentPaths(edgesettings.Input(getenv, InputIndependentPaths))
	if err != nil {
		p.Add(err)
	}
	s.Declared = declared
	if s.Event == changes.PullRequestEvent {
		base, head := jsinput.Value(edgesettings.Input(getenv, InputBaseSHA)), jsinput.Value(edgesettings.Input(getenv, InputHeadSHA))
		for _, in := range []struct{ name, value string }{{InputBaseSHA, base}, {InputHeadSHA, head}} {
			if !shaRE.MatchString(in.value) {
				p.Add(&actionio.InputError{Input: in.name, Code: actionio.CodePatternMismatch, Message: "must be a 40-character hexadecimal commit SHA for a pull_request event"})
			}
		}
		s.Base, s.Head = strings.ToLower(base), strings.ToLower(head)
	}
	return s, p.Err()
}
