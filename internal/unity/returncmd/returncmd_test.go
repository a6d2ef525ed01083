package returncmd_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/evidence"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/proc"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/returncmd"
)

func TestArgs(t *testing.T) {
	t.Parallel()
	assert.Equal(t, []string{"-quit", "-batchmode", "-nographics", "-disableManagedDebugger", "-returnlicense",
		"-username", "a@b.c", "-password", "pw", "-logFile", "-"}, returncmd.Args("a@b.c", "pw"))
}

func TestEnvIsAllowlistedThenForced(t *testing.T) {
	t.Parallel()
	host := map[string]string{
		"APPDATA": `C:\Users\r\AppData\Roaming`, "USERNAME": "runner", "SystemRoot": `D:\Win`, "windir": `D:\Win`,
		"PATH": `C:\bin`, "UNITY_PASSWORD": "secret", "GITHUB_TOKEN": "ghs_x", "TEMP": `C:\elsewhere`,
	}
	env := returncmd.EditorEnv(returncmd.AllowlistedValues(func(k string) string { return host[k] }), `C:\runner\_temp`)
	assert.Equal(t, []string{
		`APPDATA=C:\Users\r\AppData\Roaming`, "USERNAME=runner",
		"SystemDrive=C:", `SystemRoot=C:\Windows`, `windir=C:\Windows`, `TEMP=C:\runner\_temp`, `TMP=C:\runner\_temp`,
	}, env)
}

func TestFromResult(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		in        proc.Result
		completed bool
		code      int64
		complete  bool
	}{
		{"clean", proc.Result{Completed: true, OutputComplete: true, ExitCode: 0}, true, 0, true},
		{"exit 1", proc.Result{Completed: true, OutputComplete: true, ExitCode: 1}, true, 1, true},
		{"terminated code", proc.Result{Completed: true, OutputComplete: true, ExitCode: -1073741510}, true, -1073741510, true},
		{"signal only", proc.Result{Completed: true, OutputComplete: true, Signaled: true, ExitCode: -1}, true, 1, true},
		{"timer fired, ended in grace with 0", proc.Result{Completed: true, OutputComplete: true, TimedOut: true, ExitCode: 0}, true, 124, true},
		{"timer fired, signalled", proc.Result{Completed: true, OutputComplete: true, TimedOut: true, Signaled: true, ExitCode: -1}, true, 124, true},
		{"grace expired", proc.Result{TimedOut: true, ExitCode: -1}, false, -1, false},
		{"overflow", proc.Result{Completed: true, Overflow: true, Signaled: true, ExitCode: -1}, true, 1, false},
		{"pipe held open", proc.Result{Completed: true, ExitCode: 0}, true, 0, false},
		{"cancelled", proc.Result{Cancelled: true, ExitCode: -1}, false, -1, false},
	}
	for _, tt := range tests {
		o := returncmd.FromResult(tt.in)
		assert.Equal(t, tt.completed, o.Completed, tt.name)
		assert.Equal(t, tt.code, o.ExitCode, tt.name)
		assert.Equal(t, tt.complete, o.OutputComplete, tt.name)
	}
}

func TestPrepareDir(t *testing.T) {
	t.Parallel()
	temp := t.TempDir()
	dir := filepath.Join(temp, "unity-return-1-1-default")
	require.NoError(t, returncmd.PrepareDir(temp, dir))
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.True(t, fi.IsDir())
	if runtime.GOOS != "windows" {
		assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	}
	// An old directory with content is removed recursively.
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "old.log"), []byte("old"), 0o600))
	require.NoError(t, returncmd.PrepareDir(temp, dir))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
	// A symlink is unlinked, never followed.
	if runtime.GOOS != "windows" {
		victim := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(victim, "keep"), []byte("x"), 0o600))
		require.NoError(t, os.RemoveAll(dir))
		require.NoError(t, os.Symlink(victim, dir))
		require.NoError(t, returncmd.PrepareDir(temp, dir))
		assert.FileExists(t, filepath.Join(victim, "keep"))
		fi, err := os.Lstat(dir)
		require.NoError(t, err)
		assert.True(t, fi.IsDir())
	}
	assert.Error(t, returncmd.PrepareDir(temp, filepath.Join(temp, "a", "b")), "not a direct child")
}

func TestWriteEvidence(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "return-license.log")
	out := []byte("user dev@studio.test pw Hunter2!Hunter2!\nserial SC-ABCD-EFGH-1234\nok\n")
	ev := returncmd.WriteEvidence(p, out, true, "dev@studio.test", "Hunter2!Hunter2!")
	require.True(t, ev.Complete, ev.Problem)
	require.True(t, ev.Written)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "user [REDACTED] pw [REDACTED]\nserial [REDACTED]\nok\n", string(b))
	assert.Equal(t, evidence.FileDigest(b), ev.Digest, "the digest is of the redacted bytes written")

	again := returncmd.WriteEvidence(p, []byte("other"), true)
	assert.False(t, again.Complete, "exclusive create: an existing file makes capture incomplete")
	assert.False(t, again.Written)
	b2, _ := os.ReadFile(p)
	assert.Equal(t, b, b2, "the first evidence is untouched")

	bad := returncmd.WriteEvidence(filepath.Join(dir, "bad.log"), []byte("20111 \xff\xfe"), true)
	assert.False(t, bad.Complete)
	assert.True(t, bad.Written)
	b3, _ := os.ReadFile(filepath.Join(dir, "bad.log"))
	_, err = evidence.DecodeText(b3)
	assert.NoError(t, err, "written as valid UTF-8 so the classifier can still see 20111")

	partial := returncmd.WriteEvidence(filepath.Join(dir, "partial.log"), []byte("x"), false)
	assert.False(t, partial.Complete)
	assert.True(t, partial.Written)

	// A short credential that grows on redaction pushes the text over the cap.
	big := []byte(strings.Repeat("x", returncmd.OutputCap-4) + "pw")
	over := returncmd.WriteEvidence(filepath.Join(dir, "over.log"), big, true, "pw")
	assert.False(t, over.Complete)
	fi, err := os.Stat(filepath.Join(dir, "over.log"))
	require.NoError(t, err)
	assert.LessOrEqual(t, fi.Size(), int64(returncmd.OutputCap))
}
