package lockview_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockview"
)

// TestUpgradeViewNamesEveryBlocker: busyState at schema 5 with a config
// asking for fencedAdmission: draining; the holders, the live cooldown, the
// quarantine (with its recover command) and the incident block; the
// expired cooldown does not; every entry without this suite's runner
// fields counts as another client, which the advice addresses.
func TestUpgradeViewNamesEveryBlocker(t *testing.T) {
	t.Parallel()
	s := busyState()
	s.Queue[1].RunnerName = "unity-linux-02"
	cfg := busyOptions().Config
	cfg.FencedAdmission = true
	v := lockview.BuildUpgrade(s, cfg, "acme/build-lock", now)
	assert.Equal(t, lockview.UpgradeDraining, v.Status)
	assert.Equal(t, 5, v.From)
	assert.Equal(t, 6, v.To)
	assert.Equal(t, "fencedAdmission", v.Features)
	require.Len(t, v.Holders, 2)
	assert.True(t, v.Holders[0].Blocks)
	require.Len(t, v.Waiting, 2)
	assert.Equal(t, lockview.ClientOther, v.Waiting[0].Client)
	assert.Equal(t, lockview.ClientSuite, v.Waiting[1].Client)
	assert.Equal(t, 3, v.OtherClients)
	kinds := []string{}
	for _, b := range v.Blockers {
		kinds = append(kinds, b.Kind)
	}
	assert.Equal(t, []string{"cooldown", "quarantine", "incident"}, kinds, "the expired cooldown does not block")
	assert.Equal(t, lockview.RecoverQuarantineCommand("7b0c1d2e-0000-4000-8000-000000000002", "acme/build-lock"), v.Blockers[1].Command)
	assert.Contains(t, strings.Join(v.Advice, " "), "do not pause")

	var table bytes.Buffer
	require.NoError(t, lockview.RenderUpgrade(&table, v, lockview.FormatTable))
	text := table.String()
	assert.Contains(t, text, "Draining: admission is paused")
	assert.Contains(t, text, "--repo acme/build-lock -f operation=recover -f reservation-id=7b0c1d2e-0000-4000-8000-000000000002")
	assert.NotContains(t, text, "<b>mac</b>\n", "a holder id stays on its line")
	var js bytes.Buffer
	require.NoError(t, lockview.RenderUpgrade(&js, v, lockview.FormatJSON))
	var back lockview.UpgradeView
	require.NoError(t, json.Unmarshal(js.Bytes(), &back))
	assert.Equal(t, v.Status, back.Status)
	assert.Error(t, lockview.RenderUpgrade(&js, v, "markdown"))
}

func TestUpgradeViewStatuses(t *testing.T) {
	t.Parallel()
	empty := lockstate.Empty("unity-seats")
	v := lockview.BuildUpgrade(empty, lockstate.DefaultConfig(), "", now)
	assert.Equal(t, lockview.UpgradeNone, v.Status)
	var b bytes.Buffer
	require.NoError(t, lockview.RenderUpgrade(&b, v, lockview.FormatTable))
	assert.Contains(t, b.String(), "No upgrade is pending")

	cfg := lockstate.Config{MaxHolders: 2, RunnerSerialization: true, ResourceLifecycle: true}
	v = lockview.BuildUpgrade(empty, cfg, "", now)
	assert.Equal(t, lockview.UpgradeReady, v.Status, "a brand-new lock has nothing to drain")
	assert.Equal(t, 4, v.To)

	// Schema 2 with a waiter that has no runner id recorded yet.
	s := lockstate.Empty("unity-seats")
	s.Queue = []lockstate.Entry{{HolderID: "a/b:1:j:default", RunURL: "https://github.com/a/b/actions/runs/1", RunAttempt: "1"}}
	v = lockview.BuildUpgrade(s, cfg, "", now)
	assert.Equal(t, lockview.UpgradeDraining, v.Status)
	assert.True(t, v.Waiting[0].Blocks)
	s.Queue[0].PendingRunnerID = "win-01"
	v = lockview.BuildUpgrade(s, cfg, "", now)
	assert.Equal(t, lockview.UpgradeReady, v.Status)
	assert.Equal(t, lockview.ClientSuiteAware, v.Waiting[0].Client)
}
