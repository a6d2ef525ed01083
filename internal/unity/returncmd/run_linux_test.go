//go:build linux

package returncmd_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/fakeeditor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/returncmd"
)

// neverFires is a proc.After whose timers never fire (the cases below end
// on their own).
func neverFires(time.Duration) <-chan time.Time { return nil }

func TestRunAgainstTheFakeEditor(t *testing.T) {
	t.Parallel()
	editorPath := fakeeditor.Install(t, filepath.Join(t.TempDir(), "Editor", "Unity.exe"))
	host := map[string]string{"USERNAME": "runner", "PATH": "/usr/bin", "UNITY_PASSWORD": "p"}
	getenv := func(k string) string { return host[k] }

	t.Run("clean", func(t *testing.T) {
		t.Parallel()
		temp := t.TempDir()
		o, err := returncmd.RunWith(context.Background(), editorPath, "clean@studio.test", "pw-Clean-1", returncmd.AllowlistedValues(getenv), temp, neverFires)
		require.NoError(t, err)
		assert.True(t, o.Completed)
		assert.True(t, o.OutputComplete)
		assert.Equal(t, int64(0), o.ExitCode)
		inv, err := fakeeditor.ReadInvocation(temp)
		require.NoError(t, err)
		assert.Equal(t, returncmd.Args("clean@studio.test", "pw-Clean-1"), inv.Args)
		assert.ElementsMatch(t, returncmd.EditorEnv(returncmd.AllowlistedValues(getenv), temp), inv.Env)
		for _, kv := range inv.Env {
			assert.NotContains(t, kv, "pw-Clean-1", "credentials never reach the environment")
			assert.False(t, strings.HasPrefix(kv, "PATH="))
		}
	})
	t.Run("secret printing is redacted", func(t *testing.T) {
		t.Parallel()
		temp := t.TempDir()
		o, err := returncmd.RunWith(context.Background(), editorPath, "secret@studio.test", "S3cr3t-Pa55", returncmd.AllowlistedValues(getenv), temp, neverFires)
		require.NoError(t, err)
		require.Contains(t, string(o.Output), "S3cr3t-Pa55", "the fake printed the password")
		p := filepath.Join(temp, "return-license.log")
		ev := returncmd.WriteEvidence(p, o.Output, o.OutputComplete, "secret@studio.test", "S3cr3t-Pa55")
		require.True(t, ev.Complete)
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		for _, s := range []string{"S3cr3t-Pa55", "secret@studio.test", fakeeditor.Serial, strings.ToLower(fakeeditor.Serial)} {
			assert.NotContains(t, string(b), s)
		}
		assert.Contains(t, string(b), fakeeditor.ULFLinePrefix+"[REDACTED]")
	})
	t.Run("a 30 MiB flood is capped and incomplete", func(t *testing.T) {
		t.Parallel()
		o, err := returncmd.RunWith(context.Background(), editorPath, "flood@studio.test", "pw", returncmd.AllowlistedValues(getenv), t.TempDir(), neverFires)
		require.NoError(t, err)
		assert.True(t, o.Overflow)
		assert.False(t, o.OutputComplete)
		assert.Len(t, o.Output, returncmd.OutputCap)
		assert.True(t, o.Completed)
		assert.Equal(t, int64(returncmd.SignalExitCode), o.ExitCode, "ended by SIGTERM: a signal-only exit reports 1")
	})
	for _, code := range []int64{137, 143} {
		t.Run("exit code passes through", func(t *testing.T) {
			t.Parallel()
			o, err := returncmd.RunWith(context.Background(), editorPath, "exit-"+map[int64]string{137: "137", 143: "143"}[code]+"@studio.test", "pw", returncmd.AllowlistedValues(getenv), t.TempDir(), neverFires)
			require.NoError(t, err)
			assert.Equal(t, code, o.ExitCode)
		})
	}
}
