package cleanupevidence

import (
	"path/filepath"
	"strconv"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/evidence"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/jsinput"
)

// Settings is everything classify-unity-cleanup-evidence reads from the
// environment, read once by LoadSettings.
type Settings struct {
	// Files are the step's file-command paths; Files.Output is set.
	Files edgesettings.Files
	// Inputs are the validated inputs. Inputs.logPath "" means the return
	// step named no evidence (Run reports the log missing, whatever the
	// other inputs say, as before).
	Inputs inputs
	// RunnerTemp is RUNNER_TEMP, absolute and cleaned.
	RunnerTemp string
	// RunID and Attempt are GITHUB_RUN_ID and GITHUB_RUN_ATTEMPT, each
	// ^[1-9][0-9]*$: they name this run's evidence directory.
	RunID, Attempt string
	// Workspace is GITHUB_WORKSPACE trimmed ("" when unset): relative
	// supplemental evidence paths resolve against it.
	Workspace string
}

// LoadSettings reads and validates every input and runner variable, in
// the order the action judged them one at a time before: GITHUB_OUTPUT,
// the inputs (return-command-completed, evidence-capture-complete,
// return-exit-code, return-log-digest), then RUNNER_TEMP and the run
// number. Every problem is listed in one *edgesettings.Error whose code is
// the first one's. With return-log-path empty only a missing GITHUB_OUTPUT
// is a problem: the log is missing, and Run says so.
func LoadSettings(getenv func(string) string) (Settings, error) {
	var p edgesettings.Problems
	s := Settings{Files: edgesettings.ReadFiles(getenv), Workspace: jsinput.Value(getenv("GITHUB_WORKSPACE"))}
	if s.Files.Output == "" {
		p.Add(refuse(CodeOutputFileMissing, nil, "GITHUB_OUTPUT is not set: the classifier must write its outputs"))
	}
	s.Inputs = parseInputs(getenv, &p)
	if s.Inputs.logPath == "" {
		return s, p.Err()
	}
	temp := getenv("RUNNER_TEMP")
	if temp == "" || !filepath.IsAbs(temp) {
		p.Add(refuse(CodeRunnerEnvironment, nil, "RUNNER_TEMP must be set to an absolute path"))
	} else {
		s.RunnerTemp = filepath.Clean(temp)
	}
	s.RunID, s.Attempt = getenv("GITHUB_RUN_ID"), getenv("GITHUB_RUN_ATTEMPT")
	if !evidence.ValidRunNumber(s.RunID) || !evidence.ValidRunNumber(s.Attempt) {
		p.Add(refuse(CodeRunnerEnvironment, nil, "GITHUB_RUN_ID and GITHUB_RUN_ATTEMPT must match ^[1-9][0-9]*$"))
	}
	return s, p.Err()
}

// literalBool parses an exactly-true-or-false input.
func literalBool(name, v string) (bool, error) {
	switch v {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, &actionio.InputError{Input: name, Code: actionio.CodeInvalidBoolean, Message: "must be exactly true or false"}
}

// parseInputs reads the inputs, adding every problem to p. An input whose
// rule depends on another that is itself invalid is judged as far as it
// can be.
func parseInputs(getenv func(string) string, p *edgesettings.Problems) inputs {
	in := func(name string) string { return jsinput.Value(edgesettings.Input(getenv, name)) }
	var v inputs
	v.logPath = in(InputReturnLogPath)
	if v.logPath == "" {
		return v
	}
	completed, cerr := literalBool(InputReturnCommandCompleted, in(InputReturnCommandCompleted))
	p.Add(cerr)
	captured, aerr := literalBool(InputEvidenceCaptureComplete, in(InputEvidenceCaptureComplete))
	p.Add(aerr)
	v.completed, v.captured = completed, captured
	code := in(InputReturnExitCode)
	switch {
	case cerr != nil:
		// Whether an exit code is expected is unknown.
	case v.completed && code == "":
		p.Add(&actionio.InputError{Input: InputReturnExitCode, Code: actionio.CodeRequired, Message: "is required when return-command-completed is true"})
	case !v.completed && code != "":
		p.Add(&actionio.InputError{Input: InputReturnExitCode, Code: actionio.CodePatternMismatch, Message: "must be empty when return-command-completed is false"})
	case v.completed:
		n, perr := strconv.ParseInt(code, 10, 64)
		if !exitCodeRE.MatchString(code) || perr != nil {
			p.Add(&actionio.InputError{Input: InputReturnExitCode, Code: actionio.CodePatternMismatch, Message: "must be a signed decimal integer"})
		}
		v.exitCode = n
	}
	// The digest binds the log to the return step (reference §1.10: 64
	// lowercase hex). It is required with a complete capture; with an
	// incomplete one it is given whenever the return step wrote a log
	// (this suite's return step) and absent when it wrote none (the
	// reference's).
	v.digest = in(InputReturnLogDigest)
	switch {
	case aerr == nil && v.captured && !evidence.ValidDigest(v.digest):
		p.Add(&actionio.InputError{Input: InputReturnLogDigest, Code: actionio.CodePatternMismatch, Message: "must be 64 lowercase hex digits when evidence-capture-complete is true"})
	case v.digest != "" && !evidence.ValidDigest(v.digest):
		p.Add(&actionio.InputError{Input: InputReturnLogDigest, Code: actionio.CodePatternMismatch, Message: "must be empty or 64 lowercase hex digits"})
	}
	v.supplemental = parseList(edgesettings.Input(getenv, InputSupplementalEvidencePaths))
	return v
}
