package acquire_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machineid"
)

// machineConfig is a three-seat lock serialized by machine, quarantining a
// release without a cleanup report.
const machineConfig = `{"maxHolders":3,"runnerSerialization":true,"resourceLifecycle":true,"serializeBy":"machine","releaseCooldownSeconds":0}`

// onMachine runs acquire for j as if on the machine whose id for the lock
// repository is hash (recording the repository id it was asked for).
func onMachine(ctx context.Context, j *actiontest.Job, hash string, asked *int64) error {
	d := j.Deps()
	d.MachineID = func(_ context.Context, repo int64) (string, error) {
		if asked != nil {
			*asked = repo
		}
		return hash, nil
	}
	return runDeps(ctx, d)
}

// occupantsPerMachine fails when a committed state version records one
// machine id on two holders or reservations.
func occupantsPerMachine(t *testing.T, w *actiontest.World) {
	t.Helper()
	for i, v := range w.Em.History(actiontest.Owner, actiontest.LockRepo, "lock-state", actiontest.StatePath) {
		if v.Content == nil {
			continue
		}
		s, err := lockstate.Decode(v.Content, lockstate.DecodeOptions{Lock: actiontest.Lock, ServerURL: actiontest.ServerURL})
		require.NoError(t, err)
		seen := map[string]string{}
		for _, h := range s.Holders {
			if other, dup := seen[h.MachineID]; dup && h.MachineID != "" {
				t.Fatalf("version %d: holders %s and %s on one machine", i, other, h.HolderID)
			}
			seen[h.MachineID] = h.HolderID
		}
		for _, r := range s.Reservations {
			if other, dup := seen[r.MachineID]; dup && r.MachineID != "" {
				t.Fatalf("version %d: %s and reservation %s on one machine", i, other, r.ReservationID)
			}
			seen[r.MachineID] = r.ReservationID
		}
	}
}

// TestMachineSerializationThroughTheAction: three runner agents of one
// machine on a three-seat lock serialized by machine hold one seat between
// them; an agent of another machine is admitted beside them; the machine's
// quarantine is reclaimed by the next agent of the machine.
func TestMachineSerializationThroughTheAction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, machineConfig)
		const m, other = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"
		var asked int64
		a := w.NewJob("agent-a", "agent-1")
		require.NoError(t, onMachine(context.Background(), a, m, &asked), a.Out.String())
		assert.Equal(t, int64(actiontest.LockRepoID), asked, "hashed with the lock repository's id")
		assert.NotContains(t, a.Out.String(), m, "the id is never printed")
		require.Equal(t, m, w.State().Holders[0].MachineID)

		b := w.NewJob("agent-b", "agent-2").Input("timeout-minutes", "60")
		c := w.NewJob("agent-c", "agent-3").Input("timeout-minutes", "60")
		done := map[string]chan error{}
		for _, j := range []*actiontest.Job{b, c} {
			ch := make(chan error, 1)
			done[j.Name] = ch
			go func() { ch <- onMachine(context.Background(), j, m, nil) }()
			time.Sleep(30 * time.Second)
			synctest.Wait()
		}
		x := w.NewJob("elsewhere", "agent-9")
		require.NoError(t, onMachine(context.Background(), x, other, nil), x.Out.String())
		s := w.State()
		require.Len(t, s.Holders, 2, "one seat per machine, a third seat left free")
		assert.Len(t, s.Queue, 2, "the sibling agents wait")

		// a ends without a cleanup report: its seat is quarantined, and
		// the machine's next agent reclaims it.
		require.NoError(t, releaseRun(context.Background(), a))
		require.NoError(t, <-done[b.Name], b.Out.String())
		assert.Equal(t, "true", b.Outputs()["quarantine-recovered"])
		assert.Contains(t, b.Summary(), "sibling agent")
		s = w.State()
		assert.Empty(t, s.Reservations, "the quarantine was consumed")
		b.ResetFiles()
		b.Input("resource-cleanup-status", "confirmed")
		require.NoError(t, releaseRun(context.Background(), b))
		require.NoError(t, <-done[c.Name], c.Out.String())
		assert.Equal(t, "true", c.Outputs()["acquired"])
		occupantsPerMachine(t, w)
	})
}

// TestMachineIDUnavailableRefusal: a lock serialized by machine refuses a
// runner whose machine id cannot be read, before any write, with the
// stable reason code as the error title and in the outputs and summary.
func TestMachineIDUnavailableRefusal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, machineConfig)
		j := w.NewJob("no-id", "agent-1")
		d := j.Deps()
		d.MachineID = func(context.Context, int64) (string, error) {
			return "", &machineid.Error{Code: machineid.CodeUnavailable, Message: "read this machine's id from /etc/machine-id: it is empty", Err: errors.New("empty")}
		}
		err := runDeps(context.Background(), d)
		require.Error(t, err)
		assert.Equal(t, "machine-id-unavailable", j.Outputs()["admission-result"])
		assert.Equal(t, "false", j.Outputs()["acquired"])
		assert.Contains(t, j.Summary(), "machine-id-unavailable")
		assert.Contains(t, err.Error(), "serializeBy")
		assert.Zero(t, w.Versions(), "nothing was written")

		// A malformed id is refused the same way; a runner lock never asks.
		j2 := w.NewJob("bad-id", "agent-2")
		d = j2.Deps()
		d.MachineID = func(context.Context, int64) (string, error) { return "NOT-HEX", nil }
		require.Error(t, runDeps(context.Background(), d))
		assert.Equal(t, "machine-id-unavailable", j2.Outputs()["admission-result"])
		assert.Zero(t, w.Versions())

		w.SetConfig(`{"maxHolders":3,"runnerSerialization":true}`)
		j3 := w.NewJob("runner-lock", "agent-3")
		d = j3.Deps()
		d.MachineID = func(context.Context, int64) (string, error) { return "", fmt.Errorf("must not be read") }
		require.NoError(t, runDeps(context.Background(), d), j3.Out.String())
		assert.Empty(t, w.State().Holders[0].MachineID)
	})
}
