package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHistoryCommandDispatch: `buildlock history` is in the subcommand
// table, its subcommands take --help (exit 0), and a usage error exits 2
// with the reason on stderr.
func TestHistoryCommandDispatch(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"history", "verify", "--help"}, {"history", "report", "-h"}, {"history", "--help"}} {
		var out, errOut bytes.Buffer
		assert.Equal(t, 0, run(context.Background(), args, &out, &errOut), "%v", args)
		assert.Contains(t, out.String()+errOut.String(), "usage: buildlock history", "%v", args)
	}
	var out, errOut bytes.Buffer
	assert.Equal(t, 2, run(context.Background(), []string{"history"}, &out, &errOut))
	errOut.Reset()
	assert.Equal(t, 2, run(context.Background(), []string{"history", "verify", "--repo", "not-a-repo"}, &out, &errOut))
	assert.Contains(t, errOut.String(), "--repo must be OWNER/REPO")
	var help bytes.Buffer
	assert.Equal(t, 0, run(context.Background(), []string{"help"}, &help, &errOut))
	assert.Contains(t, help.String(), "history    verify every past state")
}

// TestDemoEndsByVerifyingItsHistory: the demo's JSON summary carries the
// verification of its own lock-state history: every state version
// verified, no violation, and the report's headline numbers.
func TestDemoEndsByVerifyingItsHistory(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"demo", "--json", "--jobs", "5", "--runners", "3", "--holders", "2",
		"--poll", "20ms", "--hold-min", "20ms", "--hold-max", "40ms", "--arrivals", "50ms", "--seed", "9"}, &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	var sum struct {
		StateVersions int `json:"state_versions"`
		History       struct {
			Status          string  `json:"status"`
			CommitsVerified int     `json:"commits_verified"`
			Violations      int     `json:"violations"`
			Utilization     float64 `json:"seat_utilization"`
		} `json:"history"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &sum))
	assert.Equal(t, "clean", sum.History.Status)
	assert.Equal(t, sum.StateVersions, sum.History.CommitsVerified)
	assert.Zero(t, sum.History.Violations)
	assert.Positive(t, sum.History.Utilization)
}
