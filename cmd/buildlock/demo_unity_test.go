package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDemoUnity runs `buildlock demo --unity --json` end to end (real HTTP
// to the emulator, real git) and checks the story it tells.
func TestDemoUnity(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run(context.Background(), []string{"demo", "--unity", "--json"}, &out, &errOut), errOut.String())
	var sum struct {
		Preflight struct {
			Passed     bool   `json:"passed"`
			Registered string `json:"registered_runner_count"`
			Matched    string `json:"matched_runners"`
			Warnings   int    `json:"warnings"`
			TokenMints int    `json:"token_mints"`
		} `json:"preflight"`
		Changes []struct {
			UnityRequired string `json:"unity_required"`
		} `json:"changes"`
		Gates []struct {
			Safe bool `json:"safe"`
		} `json:"gates"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &sum), out.String())
	assert.True(t, sum.Preflight.Passed)
	assert.Equal(t, "4", sum.Preflight.Registered, "the tools-team group is not visible to game-a")
	assert.NotContains(t, sum.Preflight.Matched, "win-tools-1")
	assert.Equal(t, 1, sum.Preflight.Warnings, "the macOS set waits on an offline runner")
	assert.Equal(t, 1, sum.Preflight.TokenMints)
	require.Len(t, sum.Changes, 2)
	assert.Equal(t, "false", sum.Changes[0].UnityRequired, "docs-only")
	assert.Equal(t, "true", sum.Changes[1].UnityRequired, "Assets/")
	require.Len(t, sum.Gates, 2)
	assert.True(t, sum.Gates[0].Safe)
	assert.False(t, sum.Gates[1].Safe)
}
