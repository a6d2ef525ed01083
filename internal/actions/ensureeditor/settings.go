package ensureeditor

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/jsstr"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
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

// Settings are everything ensure-unity-editor reads from its environment,
// parsed and validated once by LoadSettings before anything is examined.
type Settings struct {
	inputs
}

// LoadSettings reads every input (unity-version, install-root,
// provisioning-profile, with-windows-il2cpp, ci-managed-only,
// require-healthy-existing, required-payload, diagnostics-path) and the
// runner variables they default from (BUILD_LOCK_UNITY_INSTALL_ROOT,
// GITHUB_ACTIONS, GITHUB_WORKSPACE). On bad input it returns one
// *lockaction.SettingsError listing every problem (its reason code is the
// first problem's).
func LoadSettings(getenv func(string) string) (Settings, error) {
	a := lockaction.Inputs(getenv)
	var p lockaction.Problems
	var in inputs
	var err error
	if in.version, err = text(a, InputUnityVersion); err != nil {
		p.Add(err)
	} else if in.version == "" {
		p.Add(bad(InputUnityVersion, actionio.CodeRequired, "is required"))
	} else if !editor.EnsureVersionRE.MatchString(in.version) {
		p.Add(bad(InputUnityVersion, actionio.CodePatternMismatch, "must be a final release matching "+editor.EnsureVersionRE.String()))
	}
	rootOK := true
	if in.root, err = text(a, InputInstallRoot); err != nil {
		p.Add(err)
		rootOK = false
	}
	if rootOK {
		if in.root == "" {
			in.root = getenv(EnvInstallRoot)
		}
		if in.root == "" {
			in.root = DefaultInstallRoot
		}
		if !filepath.IsAbs(in.root) {
			p.Add(bad(InputInstallRoot, actionio.CodePatternMismatch, "must be an absolute path"))
		} else {
			in.root = filepath.Clean(in.root)
		}
	}
	profile, perr := text(a, InputProvisioningProfile)
	p.Add(perr)
	il2cpp, _, ierr := strictBool(a, InputWithWindowsIl2Cpp)
	p.Add(ierr)
	if perr == nil && ierr == nil {
		switch {
		case il2cpp && profile != "" && profile != string(editor.ProfileStandaloneWindowsIl2Cpp):
			p.Add(bad(InputWithWindowsIl2Cpp, actionio.CodePatternMismatch, "true is an alias for provisioning-profile StandaloneWindowsIl2Cpp and conflicts with the profile given"))
		case il2cpp:
			profile = string(editor.ProfileStandaloneWindowsIl2Cpp)
		case profile == "":
			profile = string(editor.DefaultProfile)
		}
		var ok bool
		if in.profile, ok = editor.ParseProfile(profile); !ok {
			p.Add(bad(InputProvisioningProfile, actionio.CodePatternMismatch, "must be EditorOnly, StandaloneWindowsIl2Cpp, Android or Full"))
		}
	}
	managed, set, err := strictBool(a, InputCIManagedOnly)
	p.Add(err)
	if !set {
		// Default: managed-only on a GitHub-hosted or self-hosted runner.
		managed = getenv("GITHUB_ACTIONS") == "true"
	}
	in.managedOnly = managed
	if in.requireHealthy, _, err = strictBool(a, InputRequireHealthyExisting); err != nil {
		p.Add(err)
	}
	if in.payload, err = editor.ParsePayloadList(a.RawInput(InputRequiredPayload)); err != nil {
		p.Add(err)
	}
	diag, err := text(a, InputDiagnosticsPath)
	p.Add(err)
	base := getenv("GITHUB_WORKSPACE")
	if err == nil && diag != "" && !filepath.IsAbs(diag) && !filepath.IsAbs(base) {
		p.Add(bad(InputDiagnosticsPath, actionio.CodePatternMismatch, "is relative, so GITHUB_WORKSPACE must be set to an absolute path"))
	}
	if p.Len() > 0 {
		return Settings{inputs: in}, p.Err()
	}
	in.diagnostics = editor.DiagnosticsPath(diag, in.root, in.version, base, func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.IsDir()
	})
	return Settings{inputs: in}, nil
}
