package returnlicense

import (
	"path/filepath"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/editor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/evidence"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/jsinput"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/returncmd"
)

// Settings are everything return-unity-license reads from its environment,
// parsed once by LoadSettings before any output, command or request.
type Settings struct {
	// Masks are the raw and trimmed credential values, masked first.
	Masks []string
	// Evidence are the evidence paths (RUNNER_TEMP, GITHUB_RUN_ID,
	// GITHUB_RUN_ATTEMPT, evidence-suffix); evidenceOK when they are valid
	// (the return-log-path output is written only then).
	Evidence   paths
	evidenceOK bool
	// Inputs are unity-version, tool-cache, editor-layout and the
	// credentials.
	Inputs inputs
	// EditorEnv is the runner's allowlisted variables the return command
	// passes on to the editor (returncmd.EnvAllowlist), read once here.
	EditorEnv returncmd.Passed
}

// LoadSettings reads and validates every input and runner variable. On bad
// input it returns one *lockaction.SettingsError listing every problem,
// the evidence path's first (its reason code is the first problem's).
func LoadSettings(getenv func(string) string) (Settings, error) {
	var s Settings
	var p lockaction.Problems
	a := lockaction.Inputs(getenv)
	email, password := jsinput.Input(a, InputUnityEmail), jsinput.Input(a, InputUnityPassword)
	s.Masks = []string{a.RawInput(InputUnityEmail), email, a.RawInput(InputUnityPassword), password}
	ev, err := evidencePaths(getenv, a)
	p.Add(err)
	s.Evidence, s.evidenceOK = ev, err == nil
	s.Inputs = readInputs(a, email, password, &p)
	s.EditorEnv = returncmd.AllowlistedValues(getenv)
	return s, p.Err()
}

// paths of this step's evidence.
type paths struct{ runnerTemp, dir, log string }

// evidencePaths validates what the evidence path is made of: RUNNER_TEMP
// (absolute), GITHUB_RUN_ID and GITHUB_RUN_ATTEMPT (^[1-9][0-9]*$) and
// evidence-suffix.
func evidencePaths(getenv func(string) string, a *actionio.IO) (paths, error) {
	temp := getenv("RUNNER_TEMP")
	if temp == "" || !filepath.IsAbs(temp) {
		return paths{}, &RefusalError{Code: CodeRunnerEnvironment, Message: "RUNNER_TEMP must be set to an absolute path"}
	}
	runID, attempt := getenv("GITHUB_RUN_ID"), getenv("GITHUB_RUN_ATTEMPT")
	if !evidence.ValidRunNumber(runID) || !evidence.ValidRunNumber(attempt) {
		return paths{}, &RefusalError{Code: CodeRunnerEnvironment, Message: "GITHUB_RUN_ID and GITHUB_RUN_ATTEMPT must match ^[1-9][0-9]*$"}
	}
	suffix := jsinput.Input(a, InputEvidenceSuffix)
	if suffix == "" {
		suffix = evidence.DefaultSuffix
	}
	if !evidence.ValidSuffix(suffix) {
		return paths{}, &actionio.InputError{Input: InputEvidenceSuffix, Code: actionio.CodePatternMismatch, Message: "must match " + evidence.SuffixPattern}
	}
	temp = filepath.Clean(temp)
	dir := filepath.Join(temp, evidence.DirName(runID, attempt, suffix))
	return paths{runnerTemp: temp, dir: dir, log: filepath.Join(dir, evidence.LogFileName)}, nil
}

type inputs struct {
	version, toolCache, email, password string
	layout                              editor.Layout
}

func readInputs(a *actionio.IO, email, password string, p *lockaction.Problems) inputs {
	var in inputs
	var err error
	if in.version, err = jsinput.Pattern(a, InputUnityVersion, "", editor.ReturnVersionRE); err != nil {
		p.Add(err)
	}
	if in.toolCache, err = jsinput.Required(a, InputToolCache); err != nil {
		p.Add(err)
	} else if !filepath.IsAbs(in.toolCache) {
		p.Add(&actionio.InputError{Input: InputToolCache, Code: actionio.CodePatternMismatch, Message: "must be an absolute path (use ${{ runner.tool_cache }})"})
	}
	layout := jsinput.Input(a, InputEditorLayout)
	if layout == "" {
		layout = string(editor.LayoutCanonical)
	}
	var ok bool
	if in.layout, ok = editor.ParseLayout(layout); !ok {
		p.Add(&actionio.InputError{Input: InputEditorLayout, Code: actionio.CodePatternMismatch, Message: "must be canonical or ci-managed-alternate"})
	}
	if email == "" {
		p.Add(&actionio.InputError{Input: InputUnityEmail, Code: actionio.CodeRequired, Message: "is required"})
	}
	if password == "" {
		p.Add(&actionio.InputError{Input: InputUnityPassword, Code: actionio.CodeRequired, Message: "is required"})
	}
	in.email, in.password = email, password
	return in
}
