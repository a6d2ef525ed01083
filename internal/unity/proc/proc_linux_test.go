//go:build linux

package proc_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/fakeeditor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/proc"
)

const (
	timeout = 240 * time.Second
	grace   = 30 * time.Second
)

type env struct {
	temp string
	spec proc.Spec
}

// setup runs this test binary as the fake editor in mode.
func setup(t *testing.T, mode string, limit int64) env {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	temp := t.TempDir()
	return env{temp: temp, spec: proc.Spec{
		Path: self, Args: []string{"-quit", "-returnlicense", "-username", mode + "@example.test", "-password", "pw"},
		Env: []string{"TEMP=" + temp, "MARKER=kept"}, Dir: temp, Timeout: timeout, Grace: grace, OutputCap: limit,
	}}
}

type outcome struct {
	res proc.Result
	err error
}

func start(ctx context.Context, e env, tm *fakeeditor.Timers) chan outcome {
	done := make(chan outcome, 1)
	go func() {
		r, err := proc.Run(ctx, e.spec, tm.After)
		done <- outcome{r, err}
	}()
	return done
}

func TestCleanExitCapturesCombinedOutputAndExactEnvironment(t *testing.T) {
	t.Parallel()
	e := setup(t, "clean", 1<<20)
	tm := fakeeditor.NewTimers()
	r, err := proc.Run(context.Background(), e.spec, tm.After)
	require.NoError(t, err)
	assert.True(t, r.Completed)
	assert.True(t, r.OutputComplete)
	assert.False(t, r.TimedOut || r.Overflow || r.Signaled || r.Cancelled)
	assert.Equal(t, int64(0), r.ExitCode)
	assert.Contains(t, string(r.Output), fakeeditor.EntitlementLine+"\n"+fakeeditor.ULFLinePrefix)
	assert.Equal(t, timeout, tm.Next(t).D, "the first timer is the timeout")
	inv, err := fakeeditor.ReadInvocation(e.temp)
	require.NoError(t, err)
	assert.Equal(t, e.spec.Args, inv.Args)
	assert.ElementsMatch(t, e.spec.Env, inv.Env, "the environment is exactly the spec's")
}

func TestExitCodesAreReported(t *testing.T) {
	t.Parallel()
	for _, code := range []int64{1, 137, 143} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			t.Parallel()
			r, err := proc.Run(context.Background(), setup(t, fmt.Sprintf("exit-%d", code), 1<<20).spec, fakeeditor.NewTimers().After)
			require.NoError(t, err)
			assert.True(t, r.Completed)
			assert.False(t, r.Signaled)
			assert.Equal(t, code, r.ExitCode)
		})
	}
}

func TestOverflowTerminatesTheTreeAndKeepsExactlyTheCap(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	r, err := proc.Run(context.Background(), setup(t, "flood", limit).spec, fakeeditor.NewTimers().After)
	require.NoError(t, err)
	assert.True(t, r.Overflow)
	assert.False(t, r.OutputComplete)
	assert.Len(t, r.Output, limit)
	assert.True(t, r.Completed, "SIGTERM ended it within the grace")
	assert.True(t, r.Signaled)
	assert.Equal(t, int64(-1), r.ExitCode)
}

// TestTimeoutTerminatesChildAndGrandchild: the hung editor and the
// grandchild it started both end when the 240 s timer fires (SIGTERM to the
// group), inside the grace, so the command counts as completed.
func TestTimeoutTerminatesChildAndGrandchild(t *testing.T) {
	t.Parallel()
	e := setup(t, "hang", 1<<20)
	wait := fakeeditor.ReadyPipe(t, e.temp)
	tm := fakeeditor.NewTimers()
	done := start(context.Background(), e, tm)
	pid, child := wait()
	to := tm.Next(t)
	require.Equal(t, timeout, to.D)
	to.Fire()
	o := <-done
	require.NoError(t, o.err)
	assert.True(t, o.res.TimedOut)
	assert.True(t, o.res.Completed)
	assert.True(t, o.res.Signaled)
	assert.True(t, o.res.OutputComplete)
	assert.Equal(t, grace, tm.Next(t).D, "termination starts the grace")
	assert.True(t, fakeeditor.Gone(pid), "editor %d still runs", pid)
	assert.True(t, fakeeditor.Gone(child), "grandchild %d still runs", child)
}

// TestGraceExpiryKillsATreeThatIgnoresSIGTERM: both processes ignore
// SIGTERM; when the grace expires the group is killed and the command did
// not complete.
func TestGraceExpiryKillsATreeThatIgnoresSIGTERM(t *testing.T) {
	t.Parallel()
	e := setup(t, "hang-hard", 1<<20)
	wait := fakeeditor.ReadyPipe(t, e.temp)
	tm := fakeeditor.NewTimers()
	done := start(context.Background(), e, tm)
	pid, child := wait()
	tm.Next(t).Fire()
	g := tm.Next(t)
	require.Equal(t, grace, g.D)
	g.Fire()
	o := <-done
	require.NoError(t, o.err)
	assert.True(t, o.res.TimedOut)
	assert.False(t, o.res.Completed)
	assert.Equal(t, int64(-1), o.res.ExitCode)
	assert.True(t, fakeeditor.Gone(pid))
	assert.True(t, fakeeditor.Gone(child))
}

// TestOutputAChildPrintsAfterTheEditorExitedIsCaptured: on Windows the
// output pipe's handles are inheritable, so a process the editor started
// (its licensing client) keeps the output open and may still write after
// the editor has exited. Capture goes on until end of file: the late line
// is kept, no timer fires, and the capture is complete.
func TestOutputAChildPrintsAfterTheEditorExitedIsCaptured(t *testing.T) {
	t.Parallel()
	tm := fakeeditor.NewTimers()
	r, err := proc.Run(context.Background(), setup(t, "late-child", 1<<20).spec, tm.After)
	require.NoError(t, err)
	assert.True(t, r.Completed)
	assert.Equal(t, int64(0), r.ExitCode)
	assert.True(t, r.OutputComplete)
	assert.False(t, r.HeldOpen || r.TimedOut)
	out := string(r.Output)
	assert.Contains(t, out, fakeeditor.EntitlementLine+"\n")
	assert.Contains(t, out, fakeeditor.ULFLinePrefix+fakeeditor.Serial+"\n"+fakeeditor.LateChildLine+"\n", "what the child wrote after the editor exited")
	assert.Equal(t, timeout, tm.Next(t).D)
	assert.Equal(t, grace, tm.Next(t).D, "the drain window was armed when the editor exited")
}

// TestAChildHoldingTheOutputIsEndedAfterTheDrainWindow: the editor exits 0
// while a grandchild keeps the output open and prints nothing more. Capture
// waits for the drain window (the 30 s grace) after the editor's exit, then
// ends the tree; what was printed is complete, HeldOpen says a child was
// ended, and the grandchild is gone.
func TestAChildHoldingTheOutputIsEndedAfterTheDrainWindow(t *testing.T) {
	t.Parallel()
	tm := fakeeditor.NewTimers()
	e := setup(t, "leave-grandchild", 1<<20)
	done := start(context.Background(), e, tm)
	require.Equal(t, timeout, tm.Next(t).D)
	drain := tm.Next(t)
	require.Equal(t, grace, drain.D, "armed when the editor exited")
	select {
	case o := <-done:
		t.Fatalf("returned before the drain window ended: %+v", o.res)
	default:
	}
	drain.Fire()
	o := <-done
	require.NoError(t, o.err)
	r := o.res
	assert.True(t, r.Completed)
	assert.Equal(t, int64(0), r.ExitCode)
	assert.True(t, r.OutputComplete, "the editor's whole output was captured")
	assert.True(t, r.HeldOpen)
	out := string(r.Output)
	i := strings.Index(out, "licensing client pid")
	require.GreaterOrEqual(t, i, 0, out)
	var child int
	_, err := fmt.Sscanf(out[i:], "licensing client pid %d", &child)
	require.NoError(t, err)
	assert.True(t, fakeeditor.Gone(child), "grandchild %d still runs", child)
}

func TestCancellationKillsTheTree(t *testing.T) {
	t.Parallel()
	e := setup(t, "hang-hard", 1<<20)
	wait := fakeeditor.ReadyPipe(t, e.temp)
	ctx, cancel := context.WithCancel(context.Background())
	done := start(ctx, e, fakeeditor.NewTimers())
	pid, child := wait()
	cancel()
	o := <-done
	require.NoError(t, o.err)
	assert.True(t, o.res.Cancelled)
	assert.False(t, o.res.Completed)
	assert.True(t, fakeeditor.Gone(pid))
	assert.True(t, fakeeditor.Gone(child))
}

func TestStartFailure(t *testing.T) {
	t.Parallel()
	e := setup(t, "clean", 1<<20)
	e.spec.Path = filepath.Join(e.temp, "missing.exe")
	_, err := proc.Run(context.Background(), e.spec, fakeeditor.NewTimers().After)
	assert.ErrorIs(t, err, proc.ErrStart)
}
