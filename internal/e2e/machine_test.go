package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// machineLockConfig: three seats serialized by machine (issue 26), with
// quarantines (resource lifecycle) and no cooldown.
const machineLockConfig = `{"maxHolders":3,"runnerSerialization":true,"resourceLifecycle":true,"serializeBy":"machine","releaseCooldownSeconds":0}` + "\n"

// TestProcessAgentsOfOneMachineHoldOneSeat is issue 26's acceptance on the
// emulator through the real binaries: three runner agents with different
// runner names on this one machine (the processes really read this box's
// machine id) and a three-seat lock serialized by machine. Never more than
// one of them holds a seat (every committed version is checked); the
// first's seat is quarantined when its runner dies, and the second agent
// reclaims it; the third follows once the second releases.
func TestProcessAgentsOfOneMachineHoldOneSeat(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("/etc/machine-id")
	if err != nil || len(strings.TrimSpace(string(raw))) != 32 {
		t.Skip("this box has no /etc/machine-id to share between the agents")
	}
	w := newWorld(t, machineLockConfig) // newWorld waits out the config's replica lag
	ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
	defer cancel()
	never := filepath.Join(t.TempDir(), "never")

	first, second, third := w.newJob("build-box-agent-1"), w.newJob("build-box-agent-2"), w.newJob("build-box-agent-3")

	// 1. The first agent takes a seat and its licensed step hangs.
	acq := mustStep(t)(first.uses(ctx, "acquire", "acquire-build-lock", first.acquireWith(), first.secrets())).wait()
	requireAcquired(t, first, acq)
	assert.Contains(t, acq.stdout.String(), "serializes by machine")
	hold := mustStep(t)(first.runStep(ctx, "licensed", map[string]string{envHoldUntil: never}))

	// 2. The two sibling agents queue, though two seats are free.
	waits := map[*job]*step{}
	for _, j := range []*job{second, third} {
		waits[j] = mustStep(t)(j.uses(ctx, "acquire", "acquire-build-lock", j.acquireWith(), j.secrets()))
		waitFor(t, "the sibling agent's queue entry", func() bool {
			s := w.latest()
			return s != nil && lockstate.QueuePosition(s, j.holderID()) > 0
		})
	}
	s := w.latest()
	require.Len(t, s.Holders, 1, "one seat for the machine")
	require.Len(t, s.Queue, 2)
	machine := s.Holders[0].MachineID
	require.True(t, lockstate.ValidMachineID(machine), "the holder records the machine id")
	for _, e := range s.Queue {
		assert.Equal(t, machine, e.MachineID, "every agent of the box records one machine id")
	}

	// 3. The first agent's runner dies: its release runs without a
	// cleanup report, so its seat is quarantined; the second agent, a
	// sibling on the machine, reclaims the quarantine.
	require.NoError(t, hold.signal(os.Kill))
	hold.wait()
	w.remove(first.holderID())
	rel := mustStep(t)(first.uses(ctx, "release", "release-build-lock", map[string]string{"lock-name": lockName, "runner-id": first.runner}, first.secrets())).wait()
	require.Equal(t, 0, rel.exitCode(), "release:\n%s", rel.log())
	got := waits[second].wait()
	requireAcquired(t, second, got)
	assert.Equal(t, "true", got.outputs()["quarantine-recovered"], "the sibling agent reclaims the machine's quarantine")
	s = w.latest()
	assert.Empty(t, s.Reservations, "the quarantine was consumed")

	// 4. The second releases; the third follows.
	w.remove(second.holderID())
	requireReleased(t, second, mustStep(t)(second.uses(ctx, "release", "release-build-lock", second.releaseWith(), second.secrets())).wait())
	got = waits[third].wait()
	requireAcquired(t, third, got)
	w.remove(third.holderID())
	requireReleased(t, third, mustStep(t)(third.uses(ctx, "release", "release-build-lock", third.releaseWith(), third.secrets())).wait())

	// Every committed version: at most one of the three agents holds a
	// seat or a reservation; the raw machine id is nowhere.
	rep, states := w.check(3)
	assert.Empty(t, rep.Violations, "checker")
	assert.Zero(t, rep.MachineViolations)
	agents := map[string]bool{first.holderID(): true, second.holderID(): true, third.holderID(): true}
	for i, st := range states {
		if st == nil {
			continue
		}
		n := len(st.Reservations)
		for _, h := range st.Holders {
			if agents[h.HolderID] {
				n++
			}
		}
		assert.LessOrEqual(t, n, 1, "version %d: %d seats for one machine", i, n)
	}
	final := w.latest()
	assert.Empty(t, final.Holders)
	assert.Empty(t, final.Queue)
	id := strings.TrimSpace(string(raw))
	for _, v := range w.em.history(stateBranch, "locks/"+lockName+".json") {
		assert.NotContains(t, string(v.Content), id, "the raw machine id reached the state")
	}
	for _, j := range []*job{first, second, third} {
		for _, st := range j.steps {
			assert.NotContains(t, st.stdout.String(), id, "the raw machine id was printed")
			assert.NotContains(t, st.stdout.String(), machine, "the machine hash was printed")
		}
	}
	checkNoSecrets(t, w)
}
