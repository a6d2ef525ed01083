//go:build linux

package liveness

import (
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue"
)

// TestMain turns the test binary into a helper process that waits until
// its standard input closes.
func TestMain(m *testing.M) {
	if os.Getenv("LIVENESS_HELPER") == "wait" {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestSelfIsAlive(t *testing.T) {
	t.Parallel()
	p, err := Self()
	require.NoError(t, err)
	assert.Equal(t, os.Getpid(), p.PID)
	assert.True(t, strings.HasPrefix(p.Start, "linux:"))
	assert.LessOrEqual(t, len(p.Start), machinequeue.MaxStartBytes)
	assert.Equal(t, machinequeue.VerdictAlive, System{}.Probe(p))

	again, err := Lookup(p.PID)
	require.NoError(t, err)
	assert.Equal(t, p, again, "the same process has the same token")
}

func TestRealChildLifecycle(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LIVENESS_HELPER=wait")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	child, err := Lookup(cmd.Process.Pid)
	require.NoError(t, err)
	assert.Equal(t, machinequeue.VerdictAlive, System{}.Probe(child))

	// The same pid with another start time is a reused pid: dead.
	boot, ns, ticks, ok := parseLinuxToken(child.Start)
	require.True(t, ok)
	reused := machinequeue.Process{PID: child.PID, Start: linuxToken(boot, ns, ticks+1)}
	assert.Equal(t, machinequeue.VerdictDead, System{}.Probe(reused))
	// Another pid namespace cannot be judged.
	assert.Equal(t, machinequeue.VerdictUnknown, System{}.Probe(machinequeue.Process{PID: child.PID, Start: linuxToken(boot, ns+1, ticks)}))

	// Killed but not yet reaped: a zombie, dead.
	require.NoError(t, cmd.Process.Kill())
	// waitid with WNOWAIT returns once the child exited and leaves it
	// unreaped.
	var info unix.Siginfo
	require.NoError(t, unix.Waitid(unix.P_PID, child.PID, &info, unix.WEXITED|unix.WNOWAIT, nil))
	st, err := readStat(child.PID)
	require.NoError(t, err)
	require.True(t, st.exited(), "state %c", st.State)
	assert.Equal(t, machinequeue.VerdictDead, System{}.Probe(child))
	_, err = Lookup(child.PID)
	assert.ErrorContains(t, err, "exited")

	// Reaped: the pid is free, dead.
	_ = stdin.Close()
	_ = cmd.Wait()
	assert.Equal(t, machinequeue.VerdictDead, System{}.Probe(child))
	_, err = Lookup(child.PID)
	assert.Error(t, err)
}

func TestParentOfSelf(t *testing.T) {
	t.Parallel()
	p, err := ParentOf(os.Getpid())
	require.NoError(t, err)
	assert.Equal(t, os.Getppid(), p.PPID)
	assert.NotEmpty(t, p.Name)
	_, err = ParentOf(0)
	assert.Error(t, err)
}
