package machineslot_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit/machineslot"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	mq "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue/filestore"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue/liveness"
)

// tree is an injected process table: pid → parent and name.
type tree struct {
	procs   map[int]liveness.Parent
	lookErr error
}

func (t tree) ParentOf(pid int) (liveness.Parent, error) {
	p, ok := t.procs[pid]
	if !ok {
		return liveness.Parent{}, errors.New("no such process")
	}
	return p, nil
}

func (t tree) Lookup(pid int) (mq.Process, error) {
	if t.lookErr != nil {
		return mq.Process{}, t.lookErr
	}
	return mq.Process{PID: pid, Start: "test:1"}, nil
}

// TestFindOwner: the owner is the nearest Runner.Worker ancestor, however
// many processes the step's launch put between them; no worker, a broken
// walk, a cycle or a too-deep tree is machine-slot-owner-unavailable.
func TestFindOwner(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		procs   map[int]liveness.Parent
		lookErr error
		want    int
	}{
		"composite run: step exec'd by the worker's shell": {procs: map[int]liveness.Parent{
			100: {PPID: 50, Name: "acquire"}, 50: {PPID: 10, Name: "Runner.Worker"}, 10: {PPID: 5, Name: "Runner.Listener"}}, want: 50},
		"node24 with-cleanup: worker, node, binary": {procs: map[int]liveness.Parent{
			100: {PPID: 60, Name: "acquire"}, 60: {PPID: 50, Name: "node"}, 50: {PPID: 10, Name: "Runner.Worker"}, 10: {PPID: 1, Name: "Runner.Listener"}}, want: 50},
		"windows: powershell between, any case": {procs: map[int]liveness.Parent{
			100: {PPID: 70, Name: "acquire.exe"}, 70: {PPID: 50, Name: "powershell.exe"}, 50: {PPID: 10, Name: "RUNNER.WORKER.EXE"}}, want: 50},
		"the nearest of two workers": {procs: map[int]liveness.Parent{
			100: {PPID: 50, Name: "acquire"}, 50: {PPID: 40, Name: "Runner.Worker"}, 40: {PPID: 1, Name: "Runner.Worker"}}, want: 50},
		"no worker: the top of the tree": {procs: map[int]liveness.Parent{
			100: {PPID: 50, Name: "acquire"}, 50: {PPID: 1, Name: "bash"}}},
		"container job: the step's pid namespace ends at 0": {procs: map[int]liveness.Parent{
			100: {PPID: 7, Name: "acquire"}, 7: {PPID: 0, Name: "sh"}}},
		"a name that only contains the worker's": {procs: map[int]liveness.Parent{
			100: {PPID: 50, Name: "acquire"}, 50: {PPID: 1, Name: "Runner.Worker2"}}},
		"unreadable ancestor":   {procs: map[int]liveness.Parent{100: {PPID: 50, Name: "acquire"}}},
		"cycle":                 {procs: map[int]liveness.Parent{100: {PPID: 100, Name: "acquire"}}},
		"worker not lookupable": {procs: map[int]liveness.Parent{100: {PPID: 50, Name: "acquire"}, 50: {PPID: 1, Name: "Runner.Worker"}}, lookErr: errors.New("exited")},
	}
	deep := map[int]liveness.Parent{}
	for pid := 100; pid < 100+machineslot.MaxAncestors+2; pid++ {
		deep[pid] = liveness.Parent{PPID: pid + 1, Name: "sh"}
	}
	cases["deeper than MaxAncestors"] = struct {
		procs   map[int]liveness.Parent
		lookErr error
		want    int
	}{procs: deep}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			owner, err := machineslot.FindOwner(tree{procs: tc.procs, lookErr: tc.lookErr}, 100)
			if tc.want == 0 {
				require.Error(t, err)
				assert.Equal(t, machineslot.CodeOwnerUnavailable, lockaction.ReasonCode(err))
				assert.True(t, owner.IsZero())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, mq.Process{PID: tc.want, Start: "test:1"}, owner)
		})
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	parse := func(env map[string]string) (machineslot.Settings, error) {
		getenv := func(k string) string { return env[k] }
		var p edgesettings.Problems
		s := machineslot.Parse(getenv, lockaction.Inputs(getenv), &p)
		return s, p.Err()
	}
	s, err := parse(nil)
	require.NoError(t, err)
	assert.False(t, s.On(), "empty is off")
	s, err = parse(map[string]string{"INPUT_MACHINE_SLOTS": "2", machineslot.EnvMachineDir: "/srv/q/"})
	require.NoError(t, err)
	assert.Equal(t, machineslot.Settings{Slots: 2, Dir: "/srv/q"}, s)
	s, err = parse(map[string]string{"INPUT_MACHINE-SLOTS": "64"})
	require.NoError(t, err)
	assert.Equal(t, 64, s.Slots)
	assert.Equal(t, filestore.DefaultDir("linux", ""), s.Dir, "the default directory (this test runs on Linux)")
	for _, bad := range []string{"0", "65", "two", "-1", "1.5"} {
		_, err := parse(map[string]string{"INPUT_MACHINE-SLOTS": bad})
		assert.Equal(t, "input-invalid-positive-integer", lockaction.ReasonCode(err), "%q", bad)
	}
	_, err = parse(map[string]string{"INPUT_MACHINE-SLOTS": "1", machineslot.EnvMachineDir: "relative/dir"})
	assert.Equal(t, machineslot.CodeDirInvalid, lockaction.ReasonCode(err))
	s, err = parse(map[string]string{machineslot.EnvMachineDir: "relative/dir"})
	require.NoError(t, err, "the directory is not read while machine-slots is off")
	assert.False(t, s.On())
}

// prober says every recorded process is alive but the dead ones.
type prober map[mq.Process]bool

func (p prober) Probe(proc mq.Process) mq.Verdict {
	if p[proc] {
		return mq.VerdictDead
	}
	return mq.VerdictAlive
}

// TestFreeByMarker: Free releases exactly the slot the marker names, then
// removes the marker; no marker is nothing to do; a second Free finds
// nothing.
func TestFreeByMarker(t *testing.T) {
	t.Parallel()
	dir, temp := t.TempDir(), t.TempDir()
	target := lockaction.Target{Owner: "acme", Repo: "build-lock", Lock: "unity"}
	owner := mq.Process{PID: 50, Start: "test:worker"}
	e := machineslot.Edges{Prober: prober{}, Self: mq.Process{PID: 100, Start: "test:step"}}
	st, err := e.Open(dir, clock.Real{})
	require.NoError(t, err)
	ctx := context.Background()
	g, err := st.Take(ctx, filestore.Request{HolderID: "acme/game:1:unity:default", Slots: 2, Owner: owner})
	require.NoError(t, err)
	require.Equal(t, 1, g.Slot)

	f, err := machineslot.Free(ctx, temp, target, "acme/game:1:unity:default", e, clock.Real{})
	require.NoError(t, err)
	assert.False(t, f.Found, "no marker, nothing freed")

	m := machineslot.Marker{HolderID: "acme/game:1:unity:default", Dir: dir, Owner: owner, Slots: 2, Slot: 1}
	require.NoError(t, machineslot.WriteMarker(temp, target, m))
	got, ok, err := machineslot.ReadMarker(temp, target, m.HolderID)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "acme/build-lock", got.Repository)
	_, ok, _ = machineslot.ReadMarker(temp, lockaction.Target{Owner: "acme", Repo: "build-lock", Lock: "other"}, m.HolderID)
	assert.False(t, ok, "another lock's marker")

	f, err = machineslot.Free(ctx, temp, target, m.HolderID, e, clock.Real{})
	require.NoError(t, err)
	assert.True(t, f.Found)
	assert.Equal(t, mq.ReleaseFreed, f.Decision.Outcome)
	snap, err := st.Snapshot(ctx)
	require.NoError(t, err)
	assert.Empty(t, snap.Holders)
	_, ok, err = machineslot.ReadMarker(temp, target, m.HolderID)
	require.NoError(t, err)
	assert.False(t, ok, "the marker is removed")
	matches, _ := filepath.Glob(filepath.Join(temp, "ambiguous-build-lock", "machine-*"))
	assert.Empty(t, matches)
}
