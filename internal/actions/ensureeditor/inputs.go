package ensureeditor

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/jsstr"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/editor"
)

type inputs struct {
	version, root, diagnostics string
	profile                    editor.Profile
	managedOnly                bool
	requireHealthy             bool
	payload                    []string
}

func bad(name, code, msg string) error {
	return &actionio.InputError{Input: name, Code: code, Message: msg}
}

// text reads an input untrimmed (facts §4): leading or trailing
// whitespace, CR, LF or NUL is an error, empty is unset.
func text(a *actionio.IO, name string) (string, error) {
	v := a.RawInput(name)
	if jsstr.HasEdgeSpace(v) || strings.ContainsAny(v, "\r\n\x00") {
		return "", bad(name, actionio.CodeEdgeWhitespaceOrLine, "must not have leading or trailing whitespace, a line break or NUL")
	}
	return v, nil
}

// strictBool is exactly true or false; empty is unset (ok=false).
func strictBool(a *actionio.IO, name string) (value, set bool, err error) {
	switch a.RawInput(name) {
	case "":
		return false, false, nil
	case "true":
		return true, true, nil
	case "false":
		return false, true, nil
	}
	return false, false, bad(name, actionio.CodeInvalidBoolean, "must be exactly true or false")
}

func readInputs(a *actionio.IO) (inputs, error) {
	var in inputs
	var err error
	if in.version, err = text(a, InputUnityVersion); err != nil {
		return in, err
	}
	if in.version == "" {
		return in, bad(InputUnityVersion, actionio.CodeRequired, "is required")
	}
	if !editor.EnsureVersionRE.MatchString(in.version) {
		return in, bad(InputUnityVersion, actionio.CodePatternMismatch, "must be a final release matching "+editor.EnsureVersionRE.String())
	}
	if in.root, err = text(a, InputInstallRoot); err != nil {
		return in, err
	}
	if in.root == "" {
		in.root = a.Getenv(EnvInstallRoot)
	}
	if in.root == "" {
		in.root = DefaultInstallRoot
	}
	if !filepath.IsAbs(in.root) {
		return in, bad(InputInstallRoot, actionio.CodePatternMismatch, "must be an absolute path")
	}
	in.root = filepath.Clean(in.root)
	profile, err := text(a, InputProvisioningProfile)
	if err != nil {
		return in, err
	}
	il2cpp, _, err := strictBool(a, InputWithWindowsIl2Cpp)
	if err != nil {
		return in, err
	}
	switch {
	case il2cpp && profile != "" && profile != string(editor.ProfileStandaloneWindowsIl2Cpp):
		return in, bad(InputWithWindowsIl2Cpp, actionio.CodePatternMismatch, "true is an alias for provisioning-profile StandaloneWindowsIl2Cpp and conflicts with the profile given")
	case il2cpp:
		profile = string(editor.ProfileStandaloneWindowsIl2Cpp)
	case profile == "":
		profile = string(editor.DefaultProfile)
	}
	var ok bool
	if in.profile, ok = editor.ParseProfile(profile); !ok {
		return in, bad(InputProvisioningProfile, actionio.CodePatternMismatch, "must be EditorOnly, StandaloneWindowsIl2Cpp, Android or Full")
	}
	managed, set, err := strictBool(a, InputCIManagedOnly)
	if err != nil {
		return in, err
	}
	if !set {
		managed = a.Getenv("GITHUB_ACTIONS") == "true"
	}
	in.managedOnly = managed
	if in.requireHealthy, _, err = strictBool(a, InputRequireHealthyExisting); err != nil {
		return in, err
	}
	if in.payload, err = editor.ParsePayloadList(a.RawInput(InputRequiredPayload)); err != nil {
		return in, err
	}
	diag, err := text(a, InputDiagnosticsPath)
	if err != nil {
		return in, err
	}
	base := a.Getenv("GITHUB_WORKSPACE")
	if diag != "" && !filepath.IsAbs(diag) && !filepath.IsAbs(base) {
		return in, bad(InputDiagnosticsPath, actionio.CodePatternMismatch, "is relative, so GITHUB_WORKSPACE must be set to an absolute path")
	}
	in.diagnostics = editor.DiagnosticsPath(diag, in.root, in.version, base, func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.IsDir()
	})
	return in, nil
}
