package ensureeditor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/markdown"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/editor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/fileid"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/signature"
)

// Input names (reference-behavior §1.14).
const (
	InputUnityVersion           = "unity-version"
	InputInstallRoot            = "install-root"
	InputProvisioningProfile    = "provisioning-profile"
	InputDiagnosticsPath        = "diagnostics-path"
	InputCIManagedOnly          = "ci-managed-only"
	InputRequireHealthyExisting = "require-healthy-existing"
	InputWithWindowsIl2Cpp      = "with-windows-il2cpp"
	InputRequiredPayload        = "required-editor-payload-relative-path"
	// OutputEditorPath is written only on success.
	OutputEditorPath = "editor-path"
	// DefaultInstallRoot is used when neither install-root nor
	// UNITY_EDITOR_INSTALL_ROOT is set.
	DefaultInstallRoot = `C:\Unity\Editors`
	// EnvInstallRoot overrides the default install root.
	EnvInstallRoot = "UNITY_EDITOR_INSTALL_ROOT"
	// ProvisioningDocs is where a missing editor's message points.
	ProvisioningDocs = "docs/actions.md#provisioning-unity-editors"
)

// Deps are the edges of one run.
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
}

// Refusal codes of this action beyond the input, link, signature and
// module-group ones (docs/actions.md).
const (
	CodePlatformRefused  = "platform-refused"
	CodeEditorMissing    = "editor-missing"
	CodeEditorNotRegular = "editor-not-regular-file"
	CodePayloadMissing   = "editor-payload-missing"
	CodeRecord           = "diagnostics-record-invalid"
)

// RefusalError is a refusal with a stable Code (the ::error title).
type RefusalError struct {
	Code    string
	Message string
}

// Error implements error.
func (e *RefusalError) Error() string { return e.Code + ": " + e.Message }

// ReasonCode returns Code.
func (e *RefusalError) ReasonCode() string { return e.Code }

func refusal(code, format string, args ...any) error {
	return &RefusalError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Run is the ensure-unity-editor action.
func Run(ctx context.Context, deps Deps) error {
	if ctx == nil {
		return errors.New("ensureeditor: nil context")
	}
	if deps.GOOS == "" {
		deps.GOOS = runtime.GOOS
	}
	if deps.Verifier == nil {
		deps.Verifier = signature.ForPlatform(deps.GOOS)
	}
	a := edgesettings.IO(deps.Getenv, deps.Stdout)
	s, serr := LoadSettings(deps.Getenv)
	if deps.GOOS != "windows" {
		return refusal(CodePlatformRefused, "ensure-unity-editor validates Windows editors only; %s is refused", deps.GOOS)
	}
	if serr != nil {
		return serr
	}
	in := s.inputs
	rec := editor.Record{
		SchemaVersion: editor.RecordSchemaVersion, Validator: editor.Validator, UnityVersion: in.version,
		ProvisioningProfile: string(in.profile), InstallRoot: in.root, CIManagedOnly: in.managedOnly,
		RequireHealthyExisting: in.requireHealthy, FinalClassification: editor.ClassificationFailure,
		ModuleGroups: []editor.GroupProof{}, RequiredPayload: in.payload,
	}
	if rec.RequiredPayload == nil {
		rec.RequiredPayload = []string{}
	}
	candidates, err := editor.Candidates(in.root, in.version, deps.GOOS)
	if err != nil {
		return err
	}
	verr := validate(ctx, deps.Verifier, in, candidates, &rec)
	if verr != nil {
		rec.Failure = verr.Error()
		rec.FinalClassification = editor.ClassificationFailure
	} else {
		rec.FinalClassification = editor.ClassificationSuccess
	}
	if err := writeRecord(in.diagnostics, rec); err != nil {
		if verr != nil {
			return verr
		}
		return refusal(CodeRecord, "write the diagnostics record %s: %v", in.diagnostics, err)
	}
	if verr != nil {
		return verr
	}
	// Re-validate what we wrote: the output is bound to the record on disk.
	raw, err := os.ReadFile(in.diagnostics)
	if err != nil {
		return refusal(CodeRecord, "re-read the diagnostics record: %v", err)
	}
	got, err := editor.ValidateRecord(raw, editor.Expect{UnityVersion: in.version, Profile: in.profile, InstallRoot: in.root,
		CIManagedOnly: in.managedOnly, Candidates: candidates, Windows: deps.GOOS == "windows"})
	if err != nil {
		return refusal(CodeRecord, "the diagnostics record does not re-validate: %v", err)
	}
	if err := editor.CheckEditorPath(got.EditorPath); err != nil || got.EditorPath != rec.EditorPath {
		return refusal(CodeRecord, "the diagnostics record does not name the validated editor")
	}
	if err := a.SetOutput(OutputEditorPath, got.EditorPath); err != nil {
		return err
	}
	groups := make([]string, 0, len(got.ModuleGroups))
	for _, g := range got.ModuleGroups {
		groups = append(groups, g.Name)
	}
	_ = a.Summary(actionkit.Table("Unity editor", []actionkit.Row{
		{Field: "Editor", Value: markdown.Code(got.EditorPath)},
		{Field: "Profile", Value: markdown.Code(got.ProvisioningProfile)},
		{Field: "Module groups", Value: markdown.Text(strings.Join(groups, ", "))},
		{Field: "Signer thumbprint", Value: markdown.Code(got.SignerThumbprint)},
		{Field: "Diagnostics", Value: markdown.Code(in.diagnostics)},
	}))
	a.Notice("Unity " + in.version + " editor validated: " + got.EditorPath)
	return nil
}

// validate finds and checks the editor, filling rec.
func validate(ctx context.Context, v signature.Verifier, in inputs, candidates []string, rec *editor.Record) error {
	editorPath, layout, err := find(candidates)
	if err != nil {
		return err
	}
	rec.EditorPath, rec.Layout = editorPath, string(layout)
	if err := editor.CheckEditorPath(editorPath); err != nil {
		return err
	}
	verified, err := v.Verify(ctx, editorPath)
	if err != nil {
		return err
	}
	defer verified.Close()
	rec.SignerThumbprint = verified.Thumbprint
	editorDir := filepath.Dir(editorPath)
	if len(editor.GroupsOf(in.profile)) > 0 {
		engines := filepath.Join(editorDir, filepath.FromSlash(editor.PlaybackEngines))
		if err := fileid.CheckAncestry(engines); err != nil && !fileid.IsNotExist(err) {
			return fmt.Errorf("module directory %s: %w", engines, err)
		}
		proofs, err := editor.ProveGroups(os.DirFS(engines), in.profile)
		if err != nil {
			return err
		}
		rec.ModuleGroups = proofs
	}
	for _, p := range in.payload {
		if !editor.Present(os.DirFS(editorDir), p) {
			return refusal(CodePayloadMissing, "required editor payload %s is missing under %s", p, editorDir)
		}
	}
	return nil
}

// find returns the first managed candidate that exists. A candidate whose
// path holds a link is refused rather than skipped.
func find(candidates []string) (string, editor.Layout, error) {
	for i, c := range candidates {
		err := fileid.CheckAncestry(c)
		if fileid.IsNotExist(err) {
			continue
		}
		if err != nil {
			return "", "", fmt.Errorf("refusing the editor path %s: %w", c, err)
		}
		id, err := fileid.Lstat(c)
		if err != nil {
			return "", "", err
		}
		if !id.Regular {
			return "", "", refusal(CodeEditorNotRegular, "the editor %s is not a regular file", c)
		}
		return c, editor.Layouts[i], nil
	}
	return "", "", refusal(CodeEditorMissing, "no Unity editor at %s or %s; this action validates runner-owned editors and never installs one (see %s)",
		candidates[0], candidates[1], ProvisioningDocs)
}

// writeRecord writes the record atomically (temporary file, then rename).
func writeRecord(path string, rec editor.Record) error {
	b, err := rec.Encode()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".ensure-editor-*.json")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return errors.Join(werr, cerr)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
