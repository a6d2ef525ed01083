package editor_test

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/editor"
)

func TestManagedPaths(t *testing.T) {
	t.Parallel()
	p, err := editor.ManagedPath("/tc/u6-v3", "6000.0.1f1", editor.LayoutCanonical, "windows")
	require.NoError(t, err)
	assert.Equal(t, filepath.FromSlash("/tc/u6-v3/6000.0.1f1/Editor/Unity.exe"), p)
	p, err = editor.ManagedPath("/tc/u6-v3/", "6000.0.1f1", editor.LayoutCIManagedAlternate, "windows")
	require.NoError(t, err)
	assert.Equal(t, filepath.FromSlash("/tc/u6-v3/_ci-managed-editors/6000.0.1f1/Editor/Unity.exe"), p)
	p, err = editor.ManagedPath("/tc", "6000.0.1f1", editor.LayoutCanonical, "darwin")
	require.NoError(t, err)
	assert.Equal(t, filepath.FromSlash("/tc/6000.0.1f1/Unity.app/Contents/MacOS/Unity"), p)
	for _, bad := range []struct{ root, ver string }{{"relative", "6000.0.1f1"}, {"/tc", "../x"}, {"/tc", ".."}, {"/tc", ""}, {"/tc", `a\b`}} {
		_, err := editor.ManagedPath(bad.root, bad.ver, editor.LayoutCanonical, "windows")
		assert.Error(t, err, "%+v", bad)
	}
	_, err = editor.ManagedPath("/tc", "6000.0.1f1", "other", "windows")
	assert.Error(t, err)
	c, err := editor.Candidates("/r", "6000.0.1f1", "windows")
	require.NoError(t, err)
	assert.Len(t, c, 2)
	l, ok := editor.ParseLayout("ci-managed-alternate")
	assert.True(t, ok)
	assert.Equal(t, editor.LayoutCIManagedAlternate, l)
	_, ok = editor.ParseLayout("Canonical")
	assert.False(t, ok)
}

func TestVersionPatterns(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"6000.0.1f1", "2022.3.10p2", "6000.5.2F1", "2023.1.0a7", "2023.2.0b12"} {
		assert.True(t, editor.ReturnVersionRE.MatchString(v), v)
	}
	for _, v := range []string{"600.0.1f1", "6000.0.1", "6000.0.1x1", " 6000.0.1f1", "6000.0.1f1\n"} {
		assert.False(t, editor.ReturnVersionRE.MatchString(v), v)
	}
	assert.True(t, editor.EnsureVersionRE.MatchString("6000.0.58f2"))
	for _, v := range []string{"6000.0.58F2", "6000.0.58p2", "6000.0.58f", "6000.0.58f2 "} {
		assert.False(t, editor.EnsureVersionRE.MatchString(v), v)
	}
}

func file() *fstest.MapFile { return &fstest.MapFile{Data: []byte("x")} }

// fullTree proves every module group.
func fullTree() fstest.MapFS {
	return fstest.MapFS{
		"WindowsStandaloneSupport/Variations/win64_player_nondevelopment_il2cpp/UnityPlayer.dll": file(),
		"WebGLSupport/UnityEditor.WebGL.Extensions.dll":                                          file(),
		"WebGLSupport/BuildTools/Emscripten/emscripten/emscripten-version.txt":                   file(),
		"LinuxStandaloneSupport/Variations/linux64_player_development_mono/LinuxPlayer":          file(),
		"LinuxStandaloneSupport/Variations/linux64_player_nondevelopment_il2cpp/UnityPlayer.so":  file(),
		"AndroidPlayer/Tools/Source.properties":                                                  file(),
		"AndroidPlayer/SDK/platform-tools/adb.exe":                                               file(),
		"AndroidPlayer/NDK/source.properties":                                                    file(),
		"AndroidPlayer/NDK/toolchains/llvm/prebuilt/windows-x86_64/bin/clang++.exe":              file(),
		"AndroidPlayer/OpenJDK/bin/java.exe":                                                     file(),
	}
}

func without(m fstest.MapFS, paths ...string) fstest.MapFS {
	out := fstest.MapFS{}
	for k, v := range m {
		out[k] = v
	}
	for _, p := range paths {
		delete(out, p)
	}
	return out
}

func TestProveGroupsPerProfile(t *testing.T) {
	t.Parallel()
	proofs, err := editor.ProveGroups(fullTree(), editor.ProfileFull)
	require.NoError(t, err)
	var names []string
	for _, p := range proofs {
		names = append(names, p.Name)
		assert.NotEmpty(t, p.Proof)
	}
	assert.Equal(t, []string{"windows-il2cpp", "webgl", "linux-mono", "linux-il2cpp", "android", "android-sdk-ndk-tools", "android-open-jdk"}, names)
	assert.Contains(t, proofs[0].Proof, "WindowsStandaloneSupport", "the case-insensitive match returns the real name")

	proofs, err = editor.ProveGroups(fstest.MapFS{}, editor.ProfileEditorOnly)
	require.NoError(t, err)
	assert.Empty(t, proofs)

	proofs, err = editor.ProveGroups(fullTree(), editor.ProfileAndroid)
	require.NoError(t, err)
	assert.Len(t, proofs, 3)
	proofs, err = editor.ProveGroups(fullTree(), editor.ProfileStandaloneWindowsIl2Cpp)
	require.NoError(t, err)
	assert.Len(t, proofs, 1)
}

func TestProveGroupsNamesTheMissingGroup(t *testing.T) {
	t.Parallel()
	il2cpp := "WindowsStandaloneSupport/Variations/win64_player_nondevelopment_il2cpp/UnityPlayer.dll"
	tests := []struct {
		name    string
		fsys    fstest.MapFS
		profile editor.Profile
		group   string
	}{
		{"il2cpp missing", without(fullTree(), il2cpp), editor.ProfileStandaloneWindowsIl2Cpp, "windows-il2cpp"},
		{"an empty il2cpp variation directory is no proof", func() fstest.MapFS {
			m := without(fullTree(), il2cpp)
			m["WindowsStandaloneSupport/Variations/win64_player_development_il2cpp"] = &fstest.MapFile{Mode: fs.ModeDir}
			return m
		}(), editor.ProfileFull, "windows-il2cpp"},
		{"il2cpp variation with only a text file", func() fstest.MapFS {
			m := without(fullTree(), il2cpp)
			m["WindowsStandaloneSupport/Variations/win64_player_development_il2cpp/readme.txt"] = file()
			return m
		}(), editor.ProfileFull, "windows-il2cpp"},
		{"il2cpp proof behind a symlink", func() fstest.MapFS {
			m := without(fullTree(), il2cpp)
			m["WindowsStandaloneSupport/Variations/win64_player_development_il2cpp/UnityPlayer.dll"] = &fstest.MapFile{Mode: fs.ModeSymlink}
			return m
		}(), editor.ProfileFull, "windows-il2cpp"},
		{"webgl without the extensions dll", without(fullTree(), "WebGLSupport/UnityEditor.WebGL.Extensions.dll"), editor.ProfileFull, "webgl"},
		{"webgl without emscripten", without(fullTree(), "WebGLSupport/BuildTools/Emscripten/emscripten/emscripten-version.txt"), editor.ProfileFull, "webgl"},
		{"linux mono missing", without(fullTree(), "LinuxStandaloneSupport/Variations/linux64_player_development_mono/LinuxPlayer"), editor.ProfileFull, "linux-mono"},
		{"linux il2cpp missing", without(fullTree(), "LinuxStandaloneSupport/Variations/linux64_player_nondevelopment_il2cpp/UnityPlayer.so"), editor.ProfileFull, "linux-il2cpp"},
		{"android missing", without(fullTree(), "AndroidPlayer/Tools/Source.properties"), editor.ProfileAndroid, "android"},
		{"adb missing", without(fullTree(), "AndroidPlayer/SDK/platform-tools/adb.exe"), editor.ProfileAndroid, "android-sdk-ndk-tools"},
		{"ndk properties missing", without(fullTree(), "AndroidPlayer/NDK/source.properties"), editor.ProfileAndroid, "android-sdk-ndk-tools"},
		{"clang++ missing", without(fullTree(), "AndroidPlayer/NDK/toolchains/llvm/prebuilt/windows-x86_64/bin/clang++.exe"), editor.ProfileAndroid, "android-sdk-ndk-tools"},
		{"java missing", without(fullTree(), "AndroidPlayer/OpenJDK/bin/java.exe"), editor.ProfileAndroid, "android-open-jdk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := editor.ProveGroups(tt.fsys, tt.profile)
			var mg *editor.MissingGroupError
			require.True(t, errors.As(err, &mg), "%v", err)
			assert.Equal(t, tt.group, mg.Group)
			assert.Contains(t, err.Error(), tt.group)
			assert.Contains(t, err.Error(), "missing")
		})
	}
}

func TestPresent(t *testing.T) {
	t.Parallel()
	m := fstest.MapFS{"Data/a.dll": file(), "Data/Empty": &fstest.MapFile{Mode: fs.ModeDir}, "Data/Full/x": file()}
	assert.True(t, editor.Present(m, "Data/a.dll"))
	assert.True(t, editor.Present(m, "data/A.DLL"))
	assert.True(t, editor.Present(m, "Data/Full"))
	assert.False(t, editor.Present(m, "Data/Empty"))
	assert.False(t, editor.Present(m, "Data/missing"))
}

func TestParsePayloadList(t *testing.T) {
	t.Parallel()
	got, err := editor.ParsePayloadList("Data/a.dll\r\nData\\Tools\\b.exe\n")
	require.NoError(t, err)
	assert.Equal(t, []string{"Data/a.dll", "Data/Tools/b.exe"}, got)
	got, err = editor.ParsePayloadList("")
	require.NoError(t, err)
	assert.Nil(t, got)
	for _, tt := range []struct{ raw, rule string }{
		{"a\n\nb", "line 2: blank"},
		{"a\n\n", "line 2: blank"},
		{" a", "line 1: leading or trailing whitespace"},
		{"a\nb \n", "line 2: leading or trailing whitespace"},
		{"/abs", "absolute"},
		{`\abs`, "absolute"},
		{`C:\abs`, "absolute"},
		{`\\server\share`, "absolute"},
		{"a/../b", `".."`},
		{"a/./b", `"."`},
		{"a//b", "empty"},
		{"a\x00b", "NUL"},
		{"Data/A\ndata\\a", "line 2: duplicate of line 1"},
	} {
		_, err := editor.ParsePayloadList(tt.raw)
		require.Error(t, err, "%q", tt.raw)
		assert.Contains(t, err.Error(), tt.rule, "%q", tt.raw)
	}
}

func goodRecord(root string) editor.Record {
	return editor.Record{SchemaVersion: 1, Validator: editor.Validator, UnityVersion: "6000.0.58f2", ProvisioningProfile: "Full",
		InstallRoot: root, CIManagedOnly: true, FinalClassification: "success",
		EditorPath: filepath.Join(root, "6000.0.58f2", "Editor", "Unity.exe"), ModuleGroups: []editor.GroupProof{}, RequiredPayload: []string{}}
}

func TestValidateRecord(t *testing.T) {
	t.Parallel()
	root := filepath.FromSlash("/runner/tool cache/u6-v3")
	cands, err := editor.Candidates(root, "6000.0.58f2", "windows")
	require.NoError(t, err)
	want := editor.Expect{UnityVersion: "6000.0.58f2", Profile: editor.ProfileFull, InstallRoot: root, CIManagedOnly: true, Candidates: cands}
	enc := func(r editor.Record) []byte { b, err := r.Encode(); require.NoError(t, err); return b }

	got, err := editor.ValidateRecord(enc(goodRecord(root)), want)
	require.NoError(t, err)
	assert.Equal(t, cands[0], got.EditorPath)
	alt := goodRecord(root + string(filepath.Separator))
	alt.EditorPath = cands[1]
	_, err = editor.ValidateRecord(enc(alt), want)
	assert.NoError(t, err, "alternate layout, install root with a trailing separator")

	tests := []struct {
		name string
		mut  func(*editor.Record)
		rule string
	}{
		{"version", func(r *editor.Record) { r.UnityVersion = "6000.0.58f1" }, "unityVersion"},
		{"profile", func(r *editor.Record) { r.ProvisioningProfile = "EditorOnly" }, "provisioningProfile"},
		{"install root", func(r *editor.Record) { r.InstallRoot = "/elsewhere" }, "installRoot"},
		{"managed-only", func(r *editor.Record) { r.CIManagedOnly = false }, "ciManagedOnly"},
		{"classification", func(r *editor.Record) { r.FinalClassification = "failure" }, "finalClassification"},
		{"relative editor path", func(r *editor.Record) { r.EditorPath = "Editor/Unity.exe" }, "absolute"},
		{"tab in editor path", func(r *editor.Record) { r.EditorPath = root + "/x\tUnity.exe" }, "whitespace"},
		{"newline in editor path", func(r *editor.Record) { r.EditorPath = root + "/x\nUnity.exe" }, "line break"},
		{"NBSP in editor path", func(r *editor.Record) { r.EditorPath = root + "/x\u00a0Unity.exe" }, "whitespace"},
		{"editor outside the managed layout", func(r *editor.Record) { r.EditorPath = "/other/Unity.exe" }, "managed layouts"},
	}
	for _, tt := range tests {
		r := goodRecord(root)
		tt.mut(&r)
		_, err := editor.ValidateRecord(enc(r), want)
		require.ErrorIs(t, err, editor.ErrRecord, tt.name)
		assert.Contains(t, err.Error(), tt.rule, tt.name)
	}
	_, err = editor.ValidateRecord([]byte(`{"unityVersion":"6000.0.58f2","extra":1}`), want)
	assert.ErrorContains(t, err, "malformed")
	_, err = editor.ValidateRecord(append(enc(goodRecord(root)), []byte("{}")...), want)
	assert.ErrorContains(t, err, "trailing")
	_, err = editor.ValidateRecord([]byte("not json"), want)
	assert.ErrorIs(t, err, editor.ErrRecord)

	// Windows compares case-insensitively.
	r := goodRecord(strings.ToUpper(root))
	r.EditorPath = strings.ToUpper(cands[0])
	w := want
	w.Windows = true
	_, err = editor.ValidateRecord(enc(r), w)
	assert.NoError(t, err)
	_, err = editor.ValidateRecord(enc(r), want)
	assert.Error(t, err)
}

func TestDiagnosticsPath(t *testing.T) {
	t.Parallel()
	no := func(string) bool { return false }
	j := filepath.FromSlash
	assert.Equal(t, j("/root/_diagnostics/6000.0.58f2-provisioning-summary.json"), editor.DiagnosticsPath("", j("/root"), "6000.0.58f2", j("/ws"), no))
	assert.Equal(t, j("/ws/unity-editor-check.json"), editor.DiagnosticsPath("unity-editor-check.json", j("/root"), "v", j("/ws"), no))
	assert.Equal(t, j("/ws/diag/ensure-editor-summary.json"), editor.DiagnosticsPath("diag", j("/root"), "v", j("/ws"), no))
	assert.Equal(t, j("/abs/d.v1/ensure-editor-summary.json"), editor.DiagnosticsPath(j("/abs/d.v1"), j("/root"), "v", j("/ws"), func(string) bool { return true }))
}
