package returnlicense

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/jsstr"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/markdown"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/editor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/fileid"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/proc"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/returncmd"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/signature"
)

// Input names (reference-behavior §1.9).
const (
	InputUnityVersion   = "unity-version"
	InputToolCache      = "tool-cache"
	InputUnityEmail     = "unity-email"
	InputUnityPassword  = "unity-password"
	InputEvidenceSuffix = "evidence-suffix"
	InputEditorLayout   = "editor-layout"
)

// Output names.
const (
	OutputReturnLogPath           = "return-log-path"
	OutputReturnCommandCompleted  = "return-command-completed"
	OutputReturnExitCode          = "return-exit-code"
	OutputEvidenceCaptureComplete = "evidence-capture-complete"
	OutputReturnLogDigest         = "return-log-digest"
)

// Deps are the edges of one run. main sets Getenv, Stdout and Signals;
// tests also inject the platform, the verifier and the timers.
type Deps struct {
	// Getenv reads the environment. Required.
	Getenv func(string) string
	// Stdout receives workflow commands. Required.
	Stdout io.Writer
	// Signals tells which runner signal cancelled the context (nil: none).
	Signals *lockaction.Signals
	// GOOS is the platform; default runtime.GOOS.
	GOOS string
	// Verifier verifies the editor; default signature.ForPlatform(GOOS).
	Verifier signature.Verifier
	// After arms the return command's timers; default time.After.
	After proc.After
}

// Refusal codes of this action (beyond signature and file-identity ones).
const (
	CodePlatformRefused = "platform-refused"
	CodeEditorMissing   = "editor-missing"
	// CodeRunnerEnvironment: RUNNER_TEMP, GITHUB_RUN_ID or
	// GITHUB_RUN_ATTEMPT is not usable.
	CodeRunnerEnvironment = "runner-environment-invalid"
	// CodeReturnNotClean: the command did not complete, exited non-zero or
	// was not captured completely (the outputs say which; the classifier
	// decides what it means for the seat).
	CodeReturnNotClean = "return-not-clean"
)

// RefusalError is a refusal with a stable Code.
type RefusalError struct {
	Code    string
	Message string
}

// Error implements error.
func (e *RefusalError) Error() string { return e.Code + ": " + e.Message }

// ReasonCode returns Code (the ::error title and the job summary's code).
func (e *RefusalError) ReasonCode() string { return e.Code }

// Run is the return-unity-license action.
func Run(ctx context.Context, deps Deps) error {
	if ctx == nil {
		return errors.New("returnlicense: nil context")
	}
	if deps.GOOS == "" {
		deps.GOOS = runtime.GOOS
	}
	if deps.Verifier == nil {
		deps.Verifier = signature.ForPlatform(deps.GOOS)
	}
	a := edgesettings.IO(deps.Getenv, deps.Stdout)
	st, serr := LoadSettings(deps.Getenv)
	// 1. Mask first: nothing below may print a credential, but the runner's
	// masking is the backstop.
	maskOnce(a, st.Masks...)
	// 2. Pessimistic outputs before any check.
	if err := setAll(a, OutputReturnCommandCompleted, "false", OutputEvidenceCaptureComplete, "false"); err != nil {
		return err
	}
	if !st.evidenceOK {
		return serr
	}
	ev := st.Evidence
	if err := a.SetOutput(OutputReturnLogPath, ev.log); err != nil {
		return err
	}
	// 3. Platform.
	if err := checkPlatform(deps.GOOS); err != nil {
		return err
	}
	if serr != nil {
		return serr
	}
	in := st.Inputs
	// 4. Editor path, derived only.
	editorPath, err := editor.ManagedPath(filepath.Join(in.toolCache, editor.ToolCacheDir), in.version, in.layout, deps.GOOS)
	if err != nil {
		return err
	}
	if err := fileid.CheckAncestry(editorPath); err != nil {
		if fileid.IsNotExist(err) {
			return &RefusalError{Code: CodeEditorMissing, Message: fmt.Sprintf("no managed Unity editor at %s (layout %s); provision it first (docs/actions.md, ensure-unity-editor)", editorPath, in.layout)}
		}
		return fmt.Errorf("refusing the editor path %s: %w", editorPath, err)
	}
	// 5. Signature, pinned until the command ends.
	verified, err := deps.Verifier.Verify(ctx, editorPath)
	if err != nil {
		return err
	}
	defer verified.Close()
	// 6. Evidence directory, command, evidence. The command's environment
	// is the runner's (returncmd derives the child's from it).
	if err := returncmd.PrepareDir(ev.runnerTemp, ev.dir); err != nil {
		return err
	}
	a.Group("Returning the Unity license")
	out, err := returncmd.RunWith(ctx, editorPath, in.email, in.password, st.EditorEnv, ev.runnerTemp, deps.After)
	a.EndGroup()
	if err != nil {
		return err
	}
	if out.Completed {
		if err := setAll(a, OutputReturnCommandCompleted, "true", OutputReturnExitCode, strconv.FormatInt(out.ExitCode, 10)); err != nil {
			return err
		}
	}
	written := returncmd.WriteEvidence(ev.log, out.Output, out.OutputComplete, in.email, in.password)
	// The digest binds every log written, complete or not, to this step:
	// the classifier (ours and the reference's) verifies the log it
	// classifies against it, and a 20111 in an incomplete capture still
	// counts (docs/divergences.md U3).
	if written.Written {
		if err := a.SetOutput(OutputReturnLogDigest, written.Digest); err != nil {
			return err
		}
	}
	if written.Complete {
		if err := a.SetOutput(OutputEvidenceCaptureComplete, "true"); err != nil {
			return err
		}
	}
	if out.HeldOpen {
		a.Notice(fmt.Sprintf("A process the Unity editor started still held its output %s after the editor exited; it was ended with the editor's process tree. Everything the editor wrote was captured; to keep that process's own log as evidence, pass it to classify-unity-cleanup-evidence as supplemental-evidence-paths.", returncmd.Grace))
	}
	summarize(a, editorPath, verified.Thumbprint, ev.log, out, written)
	if !out.Completed || !written.Complete || out.ExitCode != 0 {
		return &RefusalError{Code: CodeReturnNotClean, Message: fmt.Sprintf("the Unity license return did not finish cleanly (%s); the cleanup-evidence classifier decides what this means for the seat", describe(out, written))}
	}
	return nil
}

// maskOnce registers every distinct line of values with the runner's log
// redaction, each once: a trimmed value is usually the raw one, and masking
// it again only doubled the ::add-mask:: lines.
func maskOnce(a *actionio.IO, values ...string) {
	seen := map[string]bool{}
	for _, v := range values {
		for _, line := range strings.Split(strings.ReplaceAll(v, "\r\n", "\n"), "\n") {
			line = strings.TrimRight(line, "\r")
			if jsstr.Trim(line) == "" || seen[line] {
				continue
			}
			seen[line] = true
			a.Mask(line)
		}
	}
}

func setAll(a *actionio.IO, kv ...string) error {
	for i := 0; i+1 < len(kv); i += 2 {
		if err := a.SetOutput(kv[i], kv[i+1]); err != nil {
			return err
		}
	}
	return nil
}

func checkPlatform(goos string) error {
	switch goos {
	case "windows":
		return nil
	case "darwin":
		if signature.DarwinReturnApproved {
			return nil
		}
		return &RefusalError{Code: string(signature.ReasonDarwinNotApproved), Message: "the macOS license return is refused by central policy until a reviewed Unity team identifier and a native macOS run exist (docs/actions.md)"}
	}
	return &RefusalError{Code: CodePlatformRefused, Message: fmt.Sprintf("the Unity license return runs only on Windows (and macOS once approved); %s is refused with no fallback", goos)}
}

func describe(o returncmd.Outcome, e returncmd.Evidence) string {
	s := "command completed=" + strconv.FormatBool(o.Completed)
	if o.Completed {
		s += ", exit code " + strconv.FormatInt(o.ExitCode, 10)
	}
	switch {
	case o.TimedOut:
		s += ", stopped by the " + returncmd.Timeout.String() + " timeout"
	case o.Overflow:
		s += ", stopped when its output exceeded 25 MiB"
	case o.Cancelled:
		s += ", cancelled by the runner"
	}
	s += ", evidence capture complete=" + strconv.FormatBool(e.Complete)
	if e.Problem != "" {
		s += " (" + e.Problem + ")"
	}
	return s
}

func summarize(a *actionio.IO, editorPath, thumbprint, logPath string, o returncmd.Outcome, e returncmd.Evidence) {
	exit := ""
	if o.Completed {
		exit = strconv.FormatInt(o.ExitCode, 10)
	}
	rows := []actionkit.Row{
		{Field: "Editor", Value: markdown.Code(editorPath)},
		{Field: "Signer thumbprint", Value: markdown.Code(thumbprint)},
		{Field: "Command completed", Value: strconv.FormatBool(o.Completed)},
		{Field: "Exit code", Value: exit},
		{Field: "Evidence capture complete", Value: strconv.FormatBool(e.Complete)},
		{Field: "Evidence", Value: markdown.Code(logPath)},
	}
	if e.Written {
		rows = append(rows, actionkit.Row{Field: "Evidence SHA-256", Value: markdown.Code(e.Digest)})
	}
	_ = a.Summary(actionkit.Table("Unity license return", rows))
}
