package cleanupevidence_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/cleanupevidence"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/evidence"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/fakeeditor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/returncmd"
)

const positive = fakeeditor.EntitlementLine + "\n" + fakeeditor.ULFLinePrefix + "[REDACTED]\n"

type fixture struct {
	r      *fakeeditor.Runner
	dir    string
	log    string
	stdout *actionio.SyncBuffer
}

// newFixture writes evidence the way the return action does and sets the
// classifier's inputs from what the return action would output.
func newFixture(t *testing.T, content string, exit string) *fixture {
	t.Helper()
	r := fakeeditor.NewRunner(t)
	dir := filepath.Join(r.RunnerTemp, "unity-return-4242-1-unity-tests")
	require.NoError(t, returncmd.PrepareDir(r.RunnerTemp, dir))
	log := filepath.Join(dir, evidence.LogFileName)
	ev := returncmd.WriteEvidence(log, []byte(content), true)
	require.True(t, ev.Complete)
	r.Input("return-log-path", log)
	r.Input("return-command-completed", "true")
	r.Input("return-exit-code", exit)
	r.Input("evidence-capture-complete", "true")
	r.Input("return-log-digest", ev.Digest)
	return &fixture{r: r, dir: dir, log: log, stdout: &actionio.SyncBuffer{}}
}

func (f *fixture) run() error {
	return cleanupevidence.Run(context.Background(), cleanupevidence.Deps{Getenv: f.r.Getenv, Stdout: f.stdout})
}

func defaults() map[string]string {
	return map[string]string{"resource-safe": "false", "resource-cleanup-status": "unknown", "resource-health": "healthy",
		"resource-reason": "return-log-truncated", "classification-complete": "false", "evidence-digest": evidence.ZeroDigest}
}

// temps lists RUNNER_TEMP's entries that are evidence directories.
func (f *fixture) evidenceDirs(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(f.r.RunnerTemp)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), evidence.DirPrefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestConfirmedEvidenceIsClassifiedThenDeleted(t *testing.T) {
	t.Parallel()
	f := newFixture(t, positive, "0")
	b, err := os.ReadFile(f.log)
	require.NoError(t, err)
	require.NoError(t, f.run())
	assert.Equal(t, map[string]string{"resource-safe": "true", "resource-cleanup-status": "confirmed", "resource-health": "healthy",
		"resource-reason": "cleanup-confirmed", "classification-complete": "true", "evidence-digest": evidence.Digest(b, nil)}, f.r.Outputs())
	assert.Equal(t, []string{"resource-safe", "resource-cleanup-status", "resource-health", "resource-reason", "evidence-digest", "classification-complete"},
		f.r.OutputOrder(), "defaults first, in the same order as the verdict block")
	assert.Empty(t, f.evidenceDirs(t), "the evidence and its claimed directory are gone")
	assert.Contains(t, f.stdout.String(), "rule 8")
	assert.NotContains(t, f.stdout.String(), fakeeditor.EntitlementLine, "the log content is never echoed")
}

func TestVerdictsOfTheNineRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, content, exit    string
		status, health, reason string
	}{
		{"20111", "Error 20111\n" + positive, "0", "unknown", "blocked", "unity-account-limit-20111"},
		{"20111 inside a longer token", "mapped at 0x20111\n" + positive, "0", "unknown", "healthy", "cleanup-evidence-unknown"},
		{"400006", "status 400006\n" + positive, "0", "unknown", "healthy", "unity-return-400006"},
		{"terminated", positive, "137", "unknown", "healthy", "return-terminated"},
		{"windows terminated", positive, "-1073741510", "unknown", "healthy", "return-terminated"},
		{"timeout", positive, "124", "unknown", "healthy", "return-timeout"},
		{"20113", "20113\n" + positive, "0", "unknown", "healthy", "unity-20113-unclassified"},
		{"ulf skipped", fakeeditor.EntitlementLine + "\nSerial number unavailable for ULF return\n", "0", "unknown", "healthy", "return-ulf-skipped"},
		{"missing positive", "Exiting batchmode successfully now!\n", "0", "unknown", "healthy", "return-missing-positive-evidence"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tt.content, tt.exit)
			require.NoError(t, f.run())
			out := f.r.Outputs()
			assert.Equal(t, "true", out["classification-complete"])
			assert.Equal(t, "false", out["resource-safe"])
			assert.Equal(t, []string{tt.status, tt.health, tt.reason}, []string{out["resource-cleanup-status"], out["resource-health"], out["resource-reason"]})
			assert.Empty(t, f.evidenceDirs(t))
		})
	}
}

// TestIncompleteCaptureStillClassifiesAndDeletes: a return log written
// from an incomplete capture, bound by its digest, is classified: a 20111
// in it still wins (rule 1 before rule 2).
func TestIncompleteCaptureStillClassifiesAndDeletes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "Error 20111\n", "1")
	f.r.Input("evidence-capture-complete", "false")
	require.NoError(t, f.run())
	assert.Equal(t, "unity-account-limit-20111", f.r.Outputs()["resource-reason"], "20111 wins over a truncated capture")

	g := newFixture(t, positive, "")
	g.r.Input("return-command-completed", "false")
	g.r.Input("evidence-capture-complete", "false")
	require.NoError(t, g.run())
	assert.Equal(t, "return-log-truncated", g.r.Outputs()["resource-reason"])
	assert.Equal(t, "true", g.r.Outputs()["classification-complete"])
	assert.Empty(t, g.evidenceDirs(t))
}

// TestRefusalsLeaveTheDefaults: every refusal exits with an error and
// leaves the six default outputs.
func TestRefusalsLeaveTheDefaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(t *testing.T, f *fixture)
		want  string
	}{
		{"digest mismatch", func(t *testing.T, f *fixture) { f.r.Input("return-log-digest", strings.Repeat("a", 64)) }, "does not match"},
		{"uppercase digest", func(t *testing.T, f *fixture) { f.r.Input("return-log-digest", strings.Repeat("A", 64)) }, "return-log-digest"},
		{"digest missing", func(t *testing.T, f *fixture) { f.r.Input("return-log-digest", "") }, "return-log-digest"},
		{"digest mismatch while incomplete", func(t *testing.T, f *fixture) {
			f.r.Input("evidence-capture-complete", "false")
			f.r.Input("return-log-digest", strings.Repeat("b", 64))
		}, "return-log-digest-mismatch"},
		{"no digest while incomplete", func(t *testing.T, f *fixture) {
			f.r.Input("evidence-capture-complete", "false")
			f.r.Input("return-log-digest", "")
		}, "return-log-digest-missing"},
		{"exit code missing", func(t *testing.T, f *fixture) { f.r.Input("return-exit-code", "") }, "return-exit-code"},
		{"exit code while not completed", func(t *testing.T, f *fixture) { f.r.Input("return-command-completed", "false") }, "return-exit-code"},
		{"exit code not decimal", func(t *testing.T, f *fixture) { f.r.Input("return-exit-code", "0x1") }, "return-exit-code"},
		{"completed not literal", func(t *testing.T, f *fixture) { f.r.Input("return-command-completed", "TRUE") }, "return-command-completed"},
		{"another run's path", func(t *testing.T, f *fixture) { f.r.Env["GITHUB_RUN_ID"] = "4243" }, "not this run's evidence path"},
		{"another attempt's path", func(t *testing.T, f *fixture) { f.r.Env["GITHUB_RUN_ATTEMPT"] = "2" }, "not this run's evidence path"},
		{"path with dot-dot", func(t *testing.T, f *fixture) {
			f.r.Input("return-log-path", filepath.Join(f.dir, "x")+string(filepath.Separator)+".."+string(filepath.Separator)+evidence.LogFileName)
		}, "not this run's evidence path"},
		{"outside RUNNER_TEMP", func(t *testing.T, f *fixture) {
			other := t.TempDir()
			f.r.Input("return-log-path", filepath.Join(other, "unity-return-4242-1-unity-tests", evidence.LogFileName))
		}, "not this run's evidence path"},
		{"wrong file name", func(t *testing.T, f *fixture) { f.r.Input("return-log-path", filepath.Join(f.dir, "other.log")) }, "not this run's evidence path"},
		{"hard-linked log", func(t *testing.T, f *fixture) {
			require.NoError(t, os.Link(f.log, filepath.Join(f.r.RunnerTemp, "alias.log")))
		}, "exactly one link"},
		{"extra file in the directory", func(t *testing.T, f *fixture) {
			require.NoError(t, os.WriteFile(filepath.Join(f.dir, "extra.txt"), []byte("x"), 0o600))
		}, "exactly return-license.log"},
		{"log not valid UTF-8", func(t *testing.T, f *fixture) {
			require.NoError(t, os.WriteFile(f.log, []byte("\xff"), 0o600))
			f.r.Input("return-log-digest", evidence.FileDigest([]byte("\xff")))
		}, "unreadable"},
		{"log with NUL", func(t *testing.T, f *fixture) {
			require.NoError(t, os.WriteFile(f.log, []byte("a\x00"), 0o600))
			f.r.Input("return-log-digest", evidence.FileDigest([]byte("a\x00")))
		}, "unreadable"},
		{"RUNNER_TEMP unset", func(t *testing.T, f *fixture) { f.r.Env["RUNNER_TEMP"] = "" }, "RUNNER_TEMP"},
	}
	if runtime.GOOS != "windows" {
		tests = append(tests, struct {
			name  string
			setup func(t *testing.T, f *fixture)
			want  string
		}{"symlinked log", func(t *testing.T, f *fixture) {
			real := filepath.Join(f.r.RunnerTemp, "real.log")
			require.NoError(t, os.Rename(f.log, real))
			require.NoError(t, os.Symlink(real, f.log))
		}, "link-in-path"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, positive, "0")
			tt.setup(t, f)
			err := f.run()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Equal(t, defaults(), f.r.Outputs())
		})
	}
}

func TestMissingGITHUBOUTPUTIsAnError(t *testing.T) {
	t.Parallel()
	f := newFixture(t, positive, "0")
	f.r.Env["GITHUB_OUTPUT"] = ""
	assert.ErrorContains(t, f.run(), "GITHUB_OUTPUT")
	assert.FileExists(t, f.log, "nothing was claimed")
}

func TestSupplementalEvidence(t *testing.T) {
	t.Parallel()
	write := func(t *testing.T, p, s string) string {
		t.Helper()
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
		return p
	}
	t.Run("a 20111 marker in a supplemental file blocks, and the digest covers the set", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, positive, "0")
		d := t.TempDir()
		a := write(t, filepath.Join(d, "activation.log"), "\xEF\xBB\xBFlicensing error 20111\n")
		f.r.Input("supplemental-evidence-paths", a+"\n\n"+a+"\n")
		logBytes, _ := os.ReadFile(f.log)
		require.NoError(t, f.run())
		out := f.r.Outputs()
		assert.Equal(t, "unity-account-limit-20111", out["resource-reason"])
		assert.Equal(t, evidence.Digest(logBytes, [][]byte{[]byte("\xEF\xBB\xBFlicensing error 20111\n")}), out["evidence-digest"], "a file listed twice is read once")
		assert.FileExists(t, a, "supplemental evidence is never deleted")
	})
	t.Run("directories are read depth-first in sorted order, other files skipped", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, positive, "0")
		d := t.TempDir()
		write(t, filepath.Join(d, "b.txt"), "b")
		write(t, filepath.Join(d, "a", "z.log"), "az")
		write(t, filepath.Join(d, "a", "image.png"), "\x89PNG")
		write(t, filepath.Join(d, "c.LOG"), "c")
		f.r.Input("supplemental-evidence-paths", d)
		logBytes, _ := os.ReadFile(f.log)
		require.NoError(t, f.run())
		out := f.r.Outputs()
		assert.Equal(t, "cleanup-confirmed", out["resource-reason"])
		assert.Equal(t, evidence.Digest(logBytes, [][]byte{[]byte("az"), []byte("b"), []byte("c")}), out["evidence-digest"])
	})
	incomplete := []struct {
		name  string
		setup func(t *testing.T) string
	}{
		{"missing path", func(t *testing.T) string { return filepath.Join(t.TempDir(), "nope.log") }},
		{"relative path", func(t *testing.T) string { return "relative.log" }},
		{"invalid UTF-8", func(t *testing.T) string { return write(t, filepath.Join(t.TempDir(), "x.log"), "\xff") }},
		{"NUL", func(t *testing.T) string { return write(t, filepath.Join(t.TempDir(), "x.log"), "\x00") }},
		{"over 25 MiB in total", func(t *testing.T) string {
			return write(t, filepath.Join(t.TempDir(), "big.log"), strings.Repeat("x", evidence.MaxTotalBytes-10))
		}},
		{"more than 256 files", func(t *testing.T) string {
			d := t.TempDir()
			for i := range evidence.MaxFiles {
				write(t, filepath.Join(d, fmt.Sprintf("%04d.log", i)), "x")
			}
			return d
		}},
		{"more than 4096 entries", func(t *testing.T) string {
			d := t.TempDir()
			for i := range evidence.MaxEntries + 1 {
				write(t, filepath.Join(d, fmt.Sprintf("%05d.bin", i)), "")
			}
			return d
		}},
	}
	if runtime.GOOS != "windows" {
		incomplete = append(incomplete, struct {
			name  string
			setup func(t *testing.T) string
		}{"a symlink inside a directory", func(t *testing.T) string {
			d := t.TempDir()
			target := write(t, filepath.Join(t.TempDir(), "t.log"), "x")
			require.NoError(t, os.Symlink(target, filepath.Join(d, "l.log")))
			return d
		}})
	}
	for _, tt := range incomplete {
		t.Run("incomplete: "+tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, positive, "0")
			f.r.Input("supplemental-evidence-paths", tt.setup(t))
			require.NoError(t, f.run(), "a supplemental problem never fails the step")
			out := f.r.Outputs()
			assert.Equal(t, "return-log-truncated", out["resource-reason"])
			assert.Equal(t, "true", out["classification-complete"])
			assert.Contains(t, f.stdout.String(), "::warning::Supplemental evidence is incomplete")
		})
	}
}

// TestInputsAreTrimmedAsJavaScriptTrims: U+FEFF around an input is trimmed
// (String.prototype.trim), U+0085 is not, so "true\u0085" is not a
// literal boolean.
func TestInputsAreTrimmedAsJavaScriptTrims(t *testing.T) {
	t.Parallel()
	f := newFixture(t, positive, "0")
	for _, name := range []string{"return-command-completed", "evidence-capture-complete", "return-exit-code", "return-log-digest", "return-log-path"} {
		v := f.r.Getenv(actionio.InputEnvNames(name)[1])
		f.r.Input(name, "\ufeff"+v+"\u2028")
	}
	require.NoError(t, f.run())
	assert.Equal(t, "cleanup-confirmed", f.r.Outputs()["resource-reason"])

	g := newFixture(t, positive, "0")
	g.r.Input("return-command-completed", "true\u0085")
	assert.ErrorContains(t, g.run(), "return-command-completed")
}

// supplementalRun runs the classifier with a confirmed return log and the
// given supplemental-evidence-paths; it returns the outputs and the return
// log's bytes.
func supplementalRun(t *testing.T, paths string, env map[string]string) (map[string]string, []byte, string) {
	t.Helper()
	f := newFixture(t, positive, "0")
	for k, v := range env {
		f.r.Env[k] = v
	}
	f.r.Input("supplemental-evidence-paths", paths)
	logBytes, err := os.ReadFile(f.log)
	require.NoError(t, err)
	require.NoError(t, f.run(), "a supplemental problem never fails the step")
	return f.r.Outputs(), logBytes, f.stdout.String()
}

func writeFile(t *testing.T, p string, b []byte) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

// TestA20111AfterASupplementalProblemIsFound: the contract searches every
// supplemental file, so a problem with one file (unreadable, over the
// size bound) makes the evidence incomplete but collection goes on; a
// 20111 in a later file still blocks the account, and the digest covers
// exactly the files that were read.
func TestA20111AfterASupplementalProblemIsFound(t *testing.T) {
	t.Parallel()
	blocked := []byte("[Licensing::Client] Error: Code 20111\n")
	tests := map[string]func(t *testing.T, d string) string{
		"an earlier file is not valid UTF-8": func(t *testing.T, d string) string {
			return writeFile(t, filepath.Join(d, "a", "first.log"), []byte("\xff\xfe")) + "\n" + writeFile(t, filepath.Join(d, "b", "second.log"), blocked)
		},
		"an earlier file pushes the total over 25 MiB": func(t *testing.T, d string) string {
			big := writeFile(t, filepath.Join(d, "a", "big.log"), []byte(strings.Repeat("x", evidence.MaxTotalBytes-10)))
			return big + "\n" + writeFile(t, filepath.Join(d, "b", "second.log"), blocked)
		},
		"an earlier file is missing": func(t *testing.T, d string) string {
			return filepath.Join(d, "gone.log") + "\n" + writeFile(t, filepath.Join(d, "b", "second.log"), blocked)
		},
		"an earlier entry of the same directory is unreadable": func(t *testing.T, d string) string {
			writeFile(t, filepath.Join(d, "a.log"), []byte("\x00"))
			writeFile(t, filepath.Join(d, "b.log"), blocked)
			return d
		},
	}
	for name, setup := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out, logBytes, stdout := supplementalRun(t, setup(t, t.TempDir()), nil)
			assert.Equal(t, []string{"unknown", "blocked", "unity-account-limit-20111"},
				[]string{out["resource-cleanup-status"], out["resource-health"], out["resource-reason"]})
			assert.Equal(t, evidence.Digest(logBytes, [][]byte{blocked}), out["evidence-digest"], "the digest covers exactly the file that was read")
			assert.Equal(t, "true", out["classification-complete"])
			assert.Contains(t, stdout, "::warning::Supplemental evidence is incomplete")
		})
	}
}

// TestSupplementalPathsAsTheReferenceReadsThem: a relative path is read
// from the workspace (the step's working directory), a file named directly
// is read whatever its extension, the 4,096th directory entry reaches the
// entry limit, and a file named ".log" has no extension (a dot file) so a
// directory walk skips it.
func TestSupplementalPathsAsTheReferenceReadsThem(t *testing.T) {
	t.Parallel()
	t.Run("relative path under the workspace", func(t *testing.T) {
		t.Parallel()
		ws := t.TempDir()
		b := []byte("editor log\n")
		writeFile(t, filepath.Join(ws, "Logs", "Editor.log"), b)
		out, logBytes, _ := supplementalRun(t, "Logs/Editor.log", map[string]string{"GITHUB_WORKSPACE": ws})
		assert.Equal(t, "cleanup-confirmed", out["resource-reason"])
		assert.Equal(t, evidence.Digest(logBytes, [][]byte{b}), out["evidence-digest"])
	})
	t.Run("relative path without a workspace", func(t *testing.T) {
		t.Parallel()
		out, _, stdout := supplementalRun(t, "Logs/Editor.log", map[string]string{"GITHUB_WORKSPACE": ""})
		assert.Equal(t, "return-log-truncated", out["resource-reason"])
		assert.Contains(t, stdout, "GITHUB_WORKSPACE")
	})
	t.Run("a file named directly is read whatever its extension", func(t *testing.T) {
		t.Parallel()
		d := t.TempDir()
		plain := writeFile(t, filepath.Join(d, "licensing.json"), []byte(`{"ok":true}`))
		out, logBytes, _ := supplementalRun(t, plain, nil)
		assert.Equal(t, "cleanup-confirmed", out["resource-reason"])
		assert.Equal(t, evidence.Digest(logBytes, [][]byte{[]byte(`{"ok":true}`)}), out["evidence-digest"])
		marked := writeFile(t, filepath.Join(d, "Editor.log.1"), []byte("code 20111\n"))
		out, _, _ = supplementalRun(t, marked, nil)
		assert.Equal(t, "unity-account-limit-20111", out["resource-reason"])
	})
	t.Run("4095 directory entries are complete", func(t *testing.T) {
		t.Parallel()
		d := t.TempDir()
		for i := range evidence.MaxEntries - 1 {
			writeFile(t, filepath.Join(d, fmt.Sprintf("%05d.bin", i)), nil)
		}
		out, _, _ := supplementalRun(t, d, nil)
		assert.Equal(t, "cleanup-confirmed", out["resource-reason"])
	})
	t.Run("the 4096th directory entry reaches the limit", func(t *testing.T) {
		t.Parallel()
		d := t.TempDir()
		for i := range evidence.MaxEntries {
			writeFile(t, filepath.Join(d, fmt.Sprintf("%05d.bin", i)), nil)
		}
		out, _, stdout := supplementalRun(t, d, nil)
		assert.Equal(t, "return-log-truncated", out["resource-reason"])
		assert.Contains(t, stdout, "4096 directory entries")
	})
	t.Run("a file named .log is skipped by a directory walk", func(t *testing.T) {
		t.Parallel()
		d := t.TempDir()
		writeFile(t, filepath.Join(d, ".log"), []byte("20111\n"))
		writeFile(t, filepath.Join(d, ".txt"), []byte("\xff"))
		b := writeFile(t, filepath.Join(d, "a.log"), []byte("a\n"))
		out, logBytes, _ := supplementalRun(t, d, nil)
		assert.Equal(t, "cleanup-confirmed", out["resource-reason"])
		assert.Equal(t, evidence.Digest(logBytes, [][]byte{[]byte("a\n")}), out["evidence-digest"], b)
	})
}

// TestAMissingReturnLogIsReportedAsMissing: no return-log-path, or no file
// at it (the return step never ran, failed before the editor ran, or is the
// reference's, which writes no log when its capture is incomplete), is its
// own refusal, return-log-missing, in the ::error title; the report is
// unknown/healthy/cleanup-evidence-unknown (no evidence at all), not
// return-log-truncated, and classification-complete stays false.
func TestAMissingReturnLogIsReportedAsMissing(t *testing.T) {
	t.Parallel()
	tests := map[string]func(f *fixture){
		"no return-log-path, the return step never ran": func(f *fixture) {
			for _, n := range []string{"return-log-path", "return-command-completed", "return-exit-code", "evidence-capture-complete", "return-log-digest"} {
				f.r.Input(n, "")
			}
		},
		"no file at the path": func(f *fixture) { require.NoError(t, os.RemoveAll(f.dir)) },
		"the reference's return step after an incomplete capture": func(f *fixture) {
			require.NoError(t, os.RemoveAll(f.dir))
			f.r.Input("evidence-capture-complete", "false")
			f.r.Input("return-log-digest", "")
		},
	}
	for name, setup := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, positive, "0")
			setup(f)
			err := f.run()
			assert.Equal(t, cleanupevidence.CodeReturnLogMissing, lockaction.ReasonCode(err), "%v", err)
			want := defaults()
			want["resource-reason"] = "cleanup-evidence-unknown"
			assert.Equal(t, want, f.r.Outputs())
			out := &actionio.SyncBuffer{}
			lockaction.Finish(actionio.New(f.r.Getenv, out), nil, err)
			assert.Contains(t, out.String(), "::error title=return-log-missing::")
			assert.Contains(t, f.r.Summary(), "Refused: `return-log-missing`")
		})
	}
}

// TestEveryRefusalHasAReasonCode: each refusal carries a stable code for
// the ::error title.
func TestEveryRefusalHasAReasonCode(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		setup func(f *fixture)
		code  string
	}{
		"digest mismatch":     {func(f *fixture) { f.r.Input("return-log-digest", strings.Repeat("a", 64)) }, cleanupevidence.CodeDigestMismatch},
		"another run's path":  {func(f *fixture) { f.r.Env["GITHUB_RUN_ID"] = "4243" }, cleanupevidence.CodeReturnLogPath},
		"RUNNER_TEMP unset":   {func(f *fixture) { f.r.Env["RUNNER_TEMP"] = "" }, cleanupevidence.CodeRunnerEnvironment},
		"GITHUB_OUTPUT unset": {func(f *fixture) { f.r.Env["GITHUB_OUTPUT"] = "" }, cleanupevidence.CodeOutputFileMissing},
		"bad boolean":         {func(f *fixture) { f.r.Input("return-command-completed", "yes") }, "input-invalid-boolean"},
		"log not valid UTF-8": {func(f *fixture) {
			require.NoError(t, os.WriteFile(f.log, []byte("\xff"), 0o600))
			f.r.Input("return-log-digest", evidence.FileDigest([]byte("\xff")))
		}, cleanupevidence.CodeReturnLogUnreadable},
		"extra file": {func(f *fixture) {
			require.NoError(t, os.WriteFile(filepath.Join(f.dir, "extra.txt"), []byte("x"), 0o600))
		}, cleanupevidence.CodeClaimFailed},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, positive, "0")
			tt.setup(f)
			assert.Equal(t, tt.code, lockaction.ReasonCode(f.run()))
		})
	}
}
