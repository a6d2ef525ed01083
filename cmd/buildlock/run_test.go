package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUnknownCommandIsAUsageError(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	assert.Equal(t, 2, run(context.Background(), []string{"frobnicate"}, &out, &errOut))
	assert.Contains(t, errOut.String(), "unknown command")
	assert.Equal(t, 2, run(context.Background(), nil, &out, &errOut))
}

// TestDemoJSONSummary runs a small, fast demo end to end over real HTTP and
// checks the JSON summary's stable fields and invariants.
func TestDemoJSONSummary(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"demo", "--json", "--jobs", "6", "--runners", "3", "--holders", "2",
		"--poll", "20ms", "--hold-min", "20ms", "--hold-max", "40ms", "--arrivals", "50ms", "--seed", "7"}, &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	var sum map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &sum), out.String())
	for _, key := range []string{"admissions", "max_concurrent_holders", "over_admissions", "fifo_violations", "api",
		"seat_utilization_while_waiting", "handoff_gap_ms", "handoff_gap_polls", "died_holding"} {
		assert.Contains(t, sum, key)
	}
	assert.EqualValues(t, 0, sum["over_admissions"])
	assert.EqualValues(t, 0, sum["fifo_violations"])
	assert.EqualValues(t, 6, sum["admitted_jobs"])
	assert.LessOrEqual(t, sum["max_concurrent_holders"], float64(2))
	assert.Len(t, sum["died_holding"], 1)
	api := sum["api"].(map[string]any)
	assert.Positive(t, api["requests"])
	assert.Positive(t, api["writes"])
	assert.Contains(t, api, "secondary_limit_responses", "GitHub's secondary limits are enforced in the demo")
	assert.EqualValues(t, 0, api["secondary_limit_responses"])
}

func TestDemoRejectsBadFlags(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	assert.Equal(t, 1, run(context.Background(), []string{"demo", "--holders", "0"}, &out, &errOut))
	assert.Equal(t, 2, run(context.Background(), []string{"demo", "--no-such-flag"}, &out, &errOut))
}

// TestEmulatorCommandPrintsConnectionLine starts `buildlock emulator`, reads
// its one JSON line and checks the private key file is private.
func TestEmulatorCommandPrintsConnectionLine(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"emulator", "--listen", "127.0.0.1:0", "--key-dir", t.TempDir(), "--lock", "seats"}, pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	require.NoError(t, err)
	var info map[string]any
	require.NoError(t, json.Unmarshal([]byte(line), &info), line)
	assert.True(t, strings.HasPrefix(info["api_url"].(string), "http://127.0.0.1:"))
	keyPath := info["private_key_path"].(string)
	st, err := os.Stat(keyPath)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	assert.NotContains(t, line, "PRIVATE KEY")
	cancel()
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	select {
	case code := <-done:
		assert.Equal(t, 0, code)
	case <-time.After(10 * time.Second):
		require.Fail(t, "emulator did not stop on cancellation")
	}
}
