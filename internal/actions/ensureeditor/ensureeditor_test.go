package ensureeditor_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/ensureeditor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/editor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/fakeeditor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/signature"
)

const version = "6000.0.58f2"

type verifier struct {
	err   error
	paths []string
}

func (v *verifier) Verify(_ context.Context, p string) (*signature.Verified, error) {
	v.paths = append(v.paths, p)
	if v.err != nil {
		return nil, v.err
	}
	return &signature.Verified{Thumbprint: "228FB6411B0A144478C86AAA3CD9473C43A8ABA7"}, nil
}

type fixture struct {
	r         *fakeeditor.Runner
	root      string
	workspace string
	v         *verifier
	goos      string
	stdout    actionio.SyncBuffer
}

func touch(t *testing.T, p string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
}

// newFixture installs an editor of version (with the Windows il2cpp module)
// under <tool cache>/u6-v3 in layout.
func newFixture(t *testing.T, layout editor.Layout) *fixture {
	t.Helper()
	r := fakeeditor.NewRunner(t)
	root := filepath.Join(r.ToolCache, "u6-v3")
	p, err := editor.ManagedPath(root, version, layout, "windows")
	require.NoError(t, err)
	touch(t, p)
	touch(t, filepath.Join(filepath.Dir(p), "Data", "PlaybackEngines", "WindowsStandaloneSupport", "Variations", "win64_player_development_il2cpp", "WindowsPlayer.exe"))
	ws := t.TempDir()
	r.Env["GITHUB_WORKSPACE"] = ws
	r.Input("unity-version", version)
	r.Input("install-root", root)
	r.Input("provisioning-profile", "StandaloneWindowsIl2Cpp")
	r.Input("diagnostics-path", "unity-editor-check.json")
	r.Input("ci-managed-only", "true")
	r.Input("require-healthy-existing", "true")
	return &fixture{r: r, root: root, workspace: ws, v: &verifier{}, goos: "windows"}
}

func (f *fixture) run() error {
	return ensureeditor.Run(context.Background(), ensureeditor.Deps{Getenv: f.r.Getenv, Stdout: &f.stdout, GOOS: f.goos, Verifier: f.v})
}

func (f *fixture) record(t *testing.T) editor.Record {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.workspace, "unity-editor-check.json"))
	require.NoError(t, err)
	var r editor.Record
	require.NoError(t, json.Unmarshal(b, &r))
	return r
}

func TestValidEditorOutputsItsPath(t *testing.T) {
	t.Parallel()
	for _, layout := range editor.Layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, layout)
			require.NoError(t, f.run())
			want, _ := editor.ManagedPath(f.root, version, layout, "windows")
			assert.Equal(t, map[string]string{"editor-path": want}, f.r.Outputs())
			assert.Equal(t, []string{want}, f.v.paths, "the signature check ran on the editor")
			rec := f.record(t)
			assert.Equal(t, "success", rec.FinalClassification)
			assert.Equal(t, string(layout), rec.Layout)
			require.Len(t, rec.ModuleGroups, 1)
			assert.Equal(t, "windows-il2cpp", rec.ModuleGroups[0].Name)
			assert.Equal(t, "228FB6411B0A144478C86AAA3CD9473C43A8ABA7", rec.SignerThumbprint)
		})
	}
}

func TestAliasAndDefaults(t *testing.T) {
	t.Parallel()
	f := newFixture(t, editor.LayoutCanonical)
	f.r.Input("provisioning-profile", "")
	f.r.Input("with-windows-il2cpp", "true")
	f.r.Input("ci-managed-only", "")
	f.r.Input("diagnostics-path", "")
	require.NoError(t, f.run())
	b, err := os.ReadFile(filepath.Join(f.root, "_diagnostics", version+"-provisioning-summary.json"))
	require.NoError(t, err)
	var rec editor.Record
	require.NoError(t, json.Unmarshal(b, &rec))
	assert.Equal(t, "StandaloneWindowsIl2Cpp", rec.ProvisioningProfile)
	assert.True(t, rec.CIManagedOnly, "defaults to GITHUB_ACTIONS == true")
}

func TestFailuresLeaveEditorPathUnwritten(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(t *testing.T, f *fixture)
		want  string
	}{
		{"not Windows", func(t *testing.T, f *fixture) { f.goos = "linux" }, "validates Windows editors only"},
		{"macOS", func(t *testing.T, f *fixture) { f.goos = "darwin" }, "validates Windows editors only"},
		{"missing editor names both paths and the docs", func(t *testing.T, f *fixture) { f.r.Input("unity-version", "6000.0.59f1") },
			"_ci-managed-editors" + string(filepath.Separator) + "6000.0.59f1" + string(filepath.Separator) + "Editor" + string(filepath.Separator) + "Unity.exe; this action validates runner-owned editors and never installs one (see docs/actions.md#provisioning-unity-editors)"},
		{"profile group missing", func(t *testing.T, f *fixture) { f.r.Input("provisioning-profile", "Android") }, "module group android:"},
		{"full profile names the first missing group", func(t *testing.T, f *fixture) { f.r.Input("provisioning-profile", "Full") }, "module group webgl"},
		{"payload missing", func(t *testing.T, f *fixture) {
			f.r.Input("required-editor-payload-relative-path", "Data/PlaybackEngines\nData/Managed/UnityEngine.dll\n")
		}, "required editor payload Data/Managed/UnityEngine.dll is missing"},
		{"payload absolute", func(t *testing.T, f *fixture) { f.r.Input("required-editor-payload-relative-path", "/etc/passwd") }, "absolute"},
		{"payload duplicate", func(t *testing.T, f *fixture) { f.r.Input("required-editor-payload-relative-path", "Data\ndata") }, "duplicate"},
		{"signature refused", func(t *testing.T, f *fixture) {
			f.v.err = &signature.Error{Reason: signature.ReasonNotAllowlisted, Code: 42, Detail: "x"}
		}, "signer-not-allowlisted"},
		{"padded version", func(t *testing.T, f *fixture) { f.r.Input("unity-version", version+" ") }, "unity-version"},
		{"beta version", func(t *testing.T, f *fixture) { f.r.Input("unity-version", "6000.0.58b2") }, "final release"},
		{"install root with a newline", func(t *testing.T, f *fixture) { f.r.Input("install-root", f.root+"\n") }, "install-root"},
		{"relative install root", func(t *testing.T, f *fixture) { f.r.Input("install-root", "Editors") }, "absolute"},
		{"boolean not exact", func(t *testing.T, f *fixture) { f.r.Input("ci-managed-only", "True") }, "ci-managed-only"},
		{"alias conflicts with another profile", func(t *testing.T, f *fixture) {
			f.r.Input("with-windows-il2cpp", "true")
			f.r.Input("provisioning-profile", "Full")
		}, "conflicts"},
		{"unknown profile", func(t *testing.T, f *fixture) { f.r.Input("provisioning-profile", "full") }, "provisioning-profile"},
		{"editor is a directory", func(t *testing.T, f *fixture) {
			p, _ := editor.ManagedPath(f.root, version, editor.LayoutCanonical, "windows")
			require.NoError(t, os.Remove(p))
			require.NoError(t, os.Mkdir(p, 0o755))
		}, "not a regular file"},
	}
	if runtime.GOOS != "windows" {
		tests = append(tests, struct {
			name  string
			setup func(t *testing.T, f *fixture)
			want  string
		}{"symlinked version directory", func(t *testing.T, f *fixture) {
			real := filepath.Join(f.root, "real")
			require.NoError(t, os.Rename(filepath.Join(f.root, version), real))
			require.NoError(t, os.Symlink(real, filepath.Join(f.root, version)))
		}, "link-in-path"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, editor.LayoutCanonical)
			tt.setup(t, f)
			err := f.run()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotEmpty(t, lockaction.ReasonCode(err), "every refusal has a code for its ::error title")
			assert.NotContains(t, f.r.Outputs(), "editor-path")
		})
	}
}

func TestAFailureIsRecordedForOperators(t *testing.T) {
	t.Parallel()
	f := newFixture(t, editor.LayoutCanonical)
	f.r.Input("provisioning-profile", "Android")
	require.Error(t, f.run())
	rec := f.record(t)
	assert.Equal(t, "failure", rec.FinalClassification)
	assert.Contains(t, rec.Failure, "android")
	assert.True(t, strings.HasSuffix(rec.EditorPath, "Unity.exe"))
}

// TestEdgeWhitespaceIsJavaScripts: text inputs are not trimmed, and
// "leading or trailing whitespace" is String.prototype.trim's set: a U+FEFF
// at an edge is refused as whitespace; a U+0085 is not whitespace (the
// version pattern refuses it instead); the payload list follows the same
// rule.
func TestEdgeWhitespaceIsJavaScripts(t *testing.T) {
	t.Parallel()
	f := newFixture(t, editor.LayoutCanonical)
	f.r.Input("unity-version", "\ufeff"+version)
	var ie *actionio.InputError
	require.ErrorAs(t, f.run(), &ie)
	assert.Equal(t, actionio.CodeEdgeWhitespaceOrLine, ie.Code)

	g := newFixture(t, editor.LayoutCanonical)
	g.r.Input("unity-version", version+"\u0085")
	require.ErrorAs(t, g.run(), &ie)
	assert.Equal(t, actionio.CodePatternMismatch, ie.Code)

	h := newFixture(t, editor.LayoutCanonical)
	h.r.Input("required-editor-payload-relative-path", "Data\ufeff")
	assert.ErrorContains(t, h.run(), "leading or trailing whitespace")

	k := newFixture(t, editor.LayoutCanonical)
	k.r.Input("required-editor-payload-relative-path", "Data\u0085")
	assert.ErrorContains(t, k.run(), "Data\u0085 is missing", "NEL is part of the path")
}
