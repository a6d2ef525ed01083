package returnlicense_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/returnlicense"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/evidence"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/fakeeditor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/signature"
)

const (
	version  = "6000.0.58f2"
	password = "Pa55-w0rd-Secret!"
)

// verifier is a signature.Verifier for the fake editor (an ELF binary, so
// the Authenticode rules themselves are tested in internal/unity/signature):
// it records the paths it was asked about and returns err.
type verifier struct {
	mu    sync.Mutex
	paths []string
	err   error
}

func (v *verifier) Verify(_ context.Context, p string) (*signature.Verified, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.paths = append(v.paths, p)
	if v.err != nil {
		return nil, v.err
	}
	return &signature.Verified{Thumbprint: "0123456789ABCDEF0123456789ABCDEF01234567"}, nil
}

type fixture struct {
	r      *fakeeditor.Runner
	v      *verifier
	tm     *fakeeditor.Timers
	stdout *actionio.SyncBuffer
	goos   string
}

func newFixture(t *testing.T, mode string) *fixture {
	t.Helper()
	r := fakeeditor.NewRunner(t)
	r.InstallEditor(version)
	r.Input("unity-version", version)
	r.Input("tool-cache", r.ToolCache)
	r.Input("unity-email", mode+"@studio.test")
	r.Input("unity-password", password)
	r.Input("evidence-suffix", "unity-tests")
	return &fixture{r: r, v: &verifier{}, tm: fakeeditor.NewTimers(), stdout: &actionio.SyncBuffer{}, goos: "windows"}
}

func (f *fixture) deps() returnlicense.Deps {
	return returnlicense.Deps{Getenv: f.r.Getenv, Stdout: f.stdout, GOOS: f.goos, Verifier: f.v, After: f.tm.After}
}

func (f *fixture) run() error { return returnlicense.Run(context.Background(), f.deps()) }

func (f *fixture) logPath() string {
	return filepath.Join(f.r.RunnerTemp, "unity-return-4242-1-unity-tests", "return-license.log")
}

// noLeak asserts the password appears in no output, log line or summary
// (beyond the ::add-mask:: registering it).
func (f *fixture) noLeak(t *testing.T) {
	t.Helper()
	log := f.stdout.String()
	masks := strings.Count(log, "::add-mask::"+password)
	assert.GreaterOrEqual(t, masks, 1)
	assert.Equal(t, masks, strings.Count(log, password), "the password appears only in ::add-mask::")
	for k, v := range f.r.Outputs() {
		assert.NotContains(t, v, password, k)
	}
	assert.NotContains(t, f.r.Summary(), password)
	if b, err := os.ReadFile(f.logPath()); err == nil {
		assert.NotContains(t, string(b), password)
		assert.NotContains(t, string(b), "@studio.test")
	}
}

func TestCleanReturn(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "clean")
	require.NoError(t, f.run())
	out := f.r.Outputs()
	b, err := os.ReadFile(f.logPath())
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"return-log-path": f.logPath(), "return-command-completed": "true", "return-exit-code": "0",
		"evidence-capture-complete": "true", "return-log-digest": evidence.FileDigest(b),
	}, out)
	assert.Equal(t, []string{"return-command-completed", "evidence-capture-complete", "return-log-path", "return-exit-code", "return-log-digest"},
		f.r.OutputOrder(), "pessimistic outputs first")
	assert.True(t, strings.HasPrefix(f.stdout.String(), "::add-mask::"), "masking comes before anything else")
	assert.Equal(t, []string{filepath.Join(f.r.ToolCache, "u6-v3", version, "Editor", "Unity.exe")}, f.v.paths)
	assert.Contains(t, string(b), fakeeditor.EntitlementLine)
	assert.Contains(t, string(b), fakeeditor.ULFLinePrefix+"[REDACTED]", "the ULF serial is redacted")
	assert.Contains(t, f.r.Summary(), "Unity license return")
	inv, err := fakeeditor.ReadInvocation(f.r.RunnerTemp)
	require.NoError(t, err)
	for _, kv := range inv.Env {
		assert.False(t, strings.HasPrefix(kv, "PATH=") || strings.HasPrefix(kv, "GITHUB_") || strings.HasPrefix(kv, "INPUT_"), kv)
	}
	f.noLeak(t)
}

func TestSecretPrintingIsRedactedAndDigested(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "secret")
	require.NoError(t, f.run())
	b, err := os.ReadFile(f.logPath())
	require.NoError(t, err)
	assert.Contains(t, string(b), "Logging in as [REDACTED] with password [REDACTED]")
	assert.NotContains(t, strings.ToUpper(string(b)), fakeeditor.Serial)
	assert.Equal(t, evidence.FileDigest(b), f.r.Outputs()["return-log-digest"], "digest of the redacted bytes")
	f.noLeak(t)
}

func TestAlternateLayout(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "clean")
	alt := filepath.Join(f.r.ToolCache, "u6-v3", "_ci-managed-editors", version, "Editor", "Unity.exe")
	fakeeditor.Install(t, alt)
	f.r.Input("editor-layout", "ci-managed-alternate")
	require.NoError(t, f.run())
	assert.Equal(t, []string{alt}, f.v.paths)
}

func TestFailedReturnsStillWriteEvidence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode, exit string
		captured   bool
	}{
		{"blocked", "1", true},
		{"exit-137", "137", true},
		{"exit-143", "143", true},
		{"flood", "1", false},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tt.mode)
			err := f.run()
			require.Error(t, err)
			assert.Contains(t, err.Error(), "did not finish cleanly")
			out := f.r.Outputs()
			assert.Equal(t, "true", out["return-command-completed"])
			assert.Equal(t, tt.exit, out["return-exit-code"])
			assert.Equal(t, map[bool]string{true: "true", false: "false"}[tt.captured], out["evidence-capture-complete"])
			b, err := os.ReadFile(f.logPath())
			require.NoError(t, err)
			assert.Equal(t, evidence.FileDigest(b), out["return-log-digest"], "every log written is bound by its digest, complete or not")
			f.noLeak(t)
		})
	}
}

func TestTimeoutReports124AndGraceExpiryReportsIncomplete(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("uses a FIFO and pidfds")
	}
	for _, hard := range []bool{false, true} {
		t.Run(map[bool]string{false: "hang", true: "hang-hard"}[hard], func(t *testing.T) {
			t.Parallel()
			mode := map[bool]string{false: "hang", true: "hang-hard"}[hard]
			f := newFixture(t, mode)
			wait := fakeeditor.ReadyPipe(t, f.r.RunnerTemp)
			done := make(chan error, 1)
			go func() { done <- f.run() }()
			pid, child := wait()
			f.tm.Next(t).Fire() // the 240 s timeout
			if hard {
				f.tm.Next(t).Fire() // the 30 s grace
			}
			require.Error(t, <-done)
			out := f.r.Outputs()
			if hard {
				assert.Equal(t, "false", out["return-command-completed"])
				assert.NotContains(t, out, "return-exit-code")
			} else {
				assert.Equal(t, "true", out["return-command-completed"])
				assert.Equal(t, "124", out["return-exit-code"])
			}
			assert.True(t, fakeeditor.Gone(pid))
			assert.True(t, fakeeditor.Gone(child), "the grandchild is killed too")
			assert.FileExists(t, f.logPath())
		})
	}
}

func TestRefusalsNeverRunTheEditor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(*fixture)
		want  string
	}{
		{"linux", func(f *fixture) { f.goos = "linux" }, "platform-refused"},
		{"darwin by policy", func(f *fixture) { f.goos = "darwin" }, "darwin-return-not-approved"},
		{"signature invalid", func(f *fixture) {
			f.v.err = &signature.Error{Reason: signature.ReasonInvalid, Code: 41, Detail: "bad"}
		}, "signature-invalid"},
		{"signer not allowlisted", func(f *fixture) {
			f.v.err = &signature.Error{Reason: signature.ReasonNotAllowlisted, Code: 42, Detail: "x"}
		}, "signer-not-allowlisted"},
		{"no code-signing EKU", func(f *fixture) {
			f.v.err = &signature.Error{Reason: signature.ReasonNoCodeSigningEKU, Code: 43, Detail: "x"}
		}, "signer-missing-code-signing-eku"},
		{"missing editor", func(f *fixture) { f.r.Input("unity-version", "6000.0.59f1") }, "editor-missing"},
		{"bad version", func(f *fixture) { f.r.Input("unity-version", "6000.0") }, "unity-version"},
		{"relative tool cache", func(f *fixture) { f.r.Input("tool-cache", "tool") }, "tool-cache"},
		{"bad layout", func(f *fixture) { f.r.Input("editor-layout", "Canonical") }, "editor-layout"},
		{"no password", func(f *fixture) { f.r.Input("unity-password", "") }, "unity-password"},
		{"bad suffix", func(f *fixture) { f.r.Input("evidence-suffix", "../x") }, "evidence-suffix"},
		{"bad run id", func(f *fixture) { f.r.Env["GITHUB_RUN_ID"] = "0" }, "GITHUB_RUN_ID"},
		{"symlink in the tool cache", func(f *fixture) {
			if runtime.GOOS == "windows" {
				return
			}
			link := filepath.Join(filepath.Dir(f.r.ToolCache), "linked")
			require.NoError(t, os.Symlink(f.r.ToolCache, link))
			f.r.Input("tool-cache", link)
		}, "link-in-path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, "clean")
			tt.setup(f)
			err := f.run()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotEmpty(t, lockaction.ReasonCode(err), "every refusal has a code for its ::error title")
			_, statErr := os.Stat(filepath.Join(f.r.RunnerTemp, fakeeditor.InvocationFile))
			assert.True(t, errors.Is(statErr, os.ErrNotExist), "the editor never ran")
			out := f.r.Outputs()
			assert.Equal(t, "false", out["return-command-completed"])
			assert.Equal(t, "false", out["evidence-capture-complete"])
			assert.NotContains(t, out, "return-exit-code")
			assert.NotContains(t, out, "return-log-digest")
			assert.NotContains(t, err.Error(), password)
			assert.NotContains(t, f.stdout.String(), "::add-mask::\n", "never masks an empty value")
		})
	}
}

func TestOldEvidenceIsReplaced(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "clean")
	require.NoError(t, os.MkdirAll(filepath.Dir(f.logPath()), 0o700))
	require.NoError(t, os.WriteFile(f.logPath(), []byte("forged evidence\n"), 0o600))
	require.NoError(t, f.run())
	b, err := os.ReadFile(f.logPath())
	require.NoError(t, err)
	assert.NotContains(t, string(b), "forged")
}

// TestInputsAreTrimmedAsJavaScriptTrims: the inputs are trimmed with
// String.prototype.trim, so a U+FEFF around the version, the tool cache or
// the layout is not part of them, while a U+0085 is.
func TestInputsAreTrimmedAsJavaScriptTrims(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "clean")
	f.r.Input("unity-version", "\ufeff"+version+"\ufeff")
	f.r.Input("tool-cache", "\ufeff"+f.r.ToolCache)
	f.r.Input("editor-layout", "canonical\u2028")
	require.NoError(t, f.run())
	assert.Equal(t, "true", f.r.Outputs()["evidence-capture-complete"])

	g := newFixture(t, "clean")
	g.r.Input("unity-version", version+"\u0085")
	assert.ErrorContains(t, g.run(), "unity-version")
}

// TestOutputAChildWritesAfterTheEditorExitsIsEvidence: the licensing
// client the editor started may still hold the output and write the
// ULF-returned line after Unity.exe exited (on Windows the pipe's handles
// are inheritable). Capture goes on to end of file, so the line is in the
// evidence and the capture is complete.
func TestOutputAChildWritesAfterTheEditorExitsIsEvidence(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the fake's late child is tested on Linux")
	}
	f := newFixture(t, "late-child")
	require.NoError(t, f.run())
	b, err := os.ReadFile(f.logPath())
	require.NoError(t, err)
	assert.Contains(t, string(b), fakeeditor.ULFLinePrefix+"[REDACTED]\n"+fakeeditor.LateChildLine)
	out := f.r.Outputs()
	assert.Equal(t, "true", out["evidence-capture-complete"])
	assert.Equal(t, evidence.FileDigest(b), out["return-log-digest"])
}

// TestAChildHoldingTheOutputIsEndedAfterTheDrainWindow: a child that keeps
// the output open without writing is ended 30 s after the editor exited;
// the editor's output is complete and the log says a child was ended.
func TestAChildHoldingTheOutputIsEndedAfterTheDrainWindow(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("uses pidfds")
	}
	f := newFixture(t, "leave-grandchild")
	done := make(chan error, 1)
	go func() { done <- f.run() }()
	f.tm.Next(t)        // the 240 s timeout, never fired
	f.tm.Next(t).Fire() // the drain window after the editor exited
	require.NoError(t, <-done)
	assert.Equal(t, "true", f.r.Outputs()["evidence-capture-complete"])
	assert.Contains(t, f.stdout.String(), "::notice::A process the Unity editor started still held its output 30s after the editor exited")
}

// TestALeadingBOMIsStrippedAsTheReferenceDoes: the reference decodes the
// output with a UTF-8 decoder that drops a leading byte order mark, so the
// log (and its digest) starts after it.
func TestALeadingBOMIsStrippedAsTheReferenceDoes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "bom")
	require.NoError(t, f.run())
	b, err := os.ReadFile(f.logPath())
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(b), "Unity Editor (fake) batch mode\n"), "%q", string(b[:min(len(b), 16)]))
	assert.Equal(t, evidence.FileDigest(b), f.r.Outputs()["return-log-digest"])
}

// TestEachCredentialIsMaskedOnce: the email and the password are each
// registered with ::add-mask:: once (a trimmed value equal to the raw one
// is not masked again).
func TestEachCredentialIsMaskedOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "clean")
	require.NoError(t, f.run())
	log := f.stdout.String()
	assert.Equal(t, 1, strings.Count(log, "::add-mask::"+password+"\n"))
	assert.Equal(t, 1, strings.Count(log, "::add-mask::clean@studio.test\n"))

	g := newFixture(t, "clean")
	g.r.Input("unity-password", " "+password+"\n")
	require.NoError(t, g.run())
	log = g.stdout.String()
	assert.Equal(t, 1, strings.Count(log, "::add-mask::"+password+"\n"), "the raw value's lines and the trimmed value are the same line")
}
