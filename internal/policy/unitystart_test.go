package policy

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestStartsUnity: every way a script can launch the editor (the
// reference flags every invocation of the executable), and look-alikes
// that do not.
func TestStartsUnity(t *testing.T) {
	t.Parallel()
	starts := []string{
		`Unity.exe -version`,
		`unity -logFile -`,
		`& "C:\Program Files\Unity\Hub\Editor\6000.0.40f1\Editor\Unity.exe" -quit`,
		`&'C:/Unity/Editor/Unity.exe'`,
		`/Applications/Unity/Hub/Editor/6000.0.40f1/Unity.app/Contents/MacOS/Unity -quit`,
		`"$UNITY_PATH" -logFile -`,
		`& $env:UNITY_EDITOR_PATH -quit`,
		`$p = & $env:UNITY_EDITOR_PATH -quit`,
		`Start-Process -FilePath "$env:UNITY_EDITOR_PATH" -Wait`,
		`Start-Process -ArgumentList '-quit' -FilePath 'D:\Editors\6000\Editor\Unity.exe'`,
		`saps Unity.exe`,
		`start "" "C:\Unity\Editor\Unity.exe"`,
		`open -a Unity.app`,
		`xvfb-run --auto-servernum unity-editor -quit`,
		`UNITY_NOPROXY=1 unity-editor -quit`,
		`cmd /c C:\Unity\Editor\Unity.exe`,
		`timeout 10m unity-editor`,
		`./ci/build.sh -batchmode -projectPath .`,
		`pwsh ./ci/run.ps1 -executeMethod Build.All`,
		"echo start\n./ci/test.ps1 -runTests -testPlatform EditMode",
		`./activate.sh -serial "$UNITY_SERIAL"`,
		`${{ steps.editor.outputs.editor-path }} -quit`,
		`ls && "$env:UNITY_EXE" -quit`,
		`Unity.exe -returnlicense -serial X`,
	}
	for _, s := range starts {
		assert.True(t, startsUnity(s), "%q", s)
	}
	inert := []string{
		`echo Unity.exe`,
		`Write-Host "Run Unity.exe later"`,
		`cd Unity`,
		`ls Assets/Unity`,
		`./ci/static-checks.sh`,
		`dotnet test UnityTools.sln`,
		`git diff --name-only`,
		`# Unity.exe -quit`,
		`Unity.exe -quit -batchmode -returnlicense -username u -password p`,
		`$env:UNITY_VERSION = '6000.0.40f1'`,
		"",
	}
	for _, s := range inert {
		assert.False(t, startsUnity(s), "%q", s)
	}
}

// FuzzStartsUnity: any script is decided without a panic, and the same way
// twice; a script that names the editor by path in command position always
// starts it, whatever follows (unless it only returns the license).
func FuzzStartsUnity(f *testing.F) {
	for _, s := range []string{"Unity.exe -quit", "& $env:UNITY_EDITOR_PATH", "echo x", "Start-Process -FilePath 'a b'", "'", "\"", "=", "a=b c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := startsUnity(s)
		if got != startsUnity(s) {
			t.Fatal("not deterministic")
		}
		if !unityReturnFlagRE.MatchString(s) && !startsUnity("C:/Unity/Editor/Unity.exe "+s) {
			t.Fatalf("the editor in command position before %q not found", s)
		}
	})
}
