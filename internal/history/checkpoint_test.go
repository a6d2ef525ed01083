package history

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func validCheckpoint() *Checkpoint {
	content := "{}\n"
	return &Checkpoint{Version: CheckpointVersion, Repository: "acme/build-lock", Branch: "lock-state", Lock: "seats",
		Head:   CheckpointHead{SHA: sha(2), Time: t0, BlobSHA: blobSHA([]byte(content)), Content: content},
		Recent: []string{sha(1), sha(2)}, Commits: 2, UpdatedAt: t0}
}

func TestCheckpointRoundTrip(t *testing.T) {
	t.Parallel()
	cp := validCheckpoint()
	data, err := cp.Encode()
	require.NoError(t, err)
	got, err := DecodeCheckpoint(data)
	require.NoError(t, err)
	assert.Equal(t, cp, got)
	assert.Equal(t, []byte("{}\n"), got.BaseVersion().Content)
}

func TestCheckpointRefusals(t *testing.T) {
	t.Parallel()
	mut := func(f func(*Checkpoint)) []byte {
		cp := validCheckpoint()
		f(cp)
		b, _ := json.Marshal(cp)
		return b
	}
	cases := map[string][]byte{
		"not json":        []byte("{"),
		"trailing data":   append(mut(func(*Checkpoint) {}), []byte("{}")...),
		"unknown field":   []byte(strings.Replace(string(mut(func(*Checkpoint) {})), `"version"`, `"extra":1,"version"`, 1)),
		"other version":   mut(func(c *Checkpoint) { c.Version = 2 }),
		"no lock":         mut(func(c *Checkpoint) { c.Lock = "" }),
		"bad head":        mut(func(c *Checkpoint) { c.Head.SHA = "main" }),
		"head not last":   mut(func(c *Checkpoint) { c.Recent = []string{sha(2), sha(1)} }),
		"repeated recent": mut(func(c *Checkpoint) { c.Recent = []string{sha(2), sha(2)} }),
		"count too small": mut(func(c *Checkpoint) { c.Commits = 1 }),
		"content forged":  mut(func(c *Checkpoint) { c.Head.Content = `{"x":1}` }),
		"too large":       append([]byte(`{"version":1,"lock":"`), []byte(strings.Repeat("x", MaxCheckpointBytes))...),
	}
	for name, data := range cases {
		_, err := DecodeCheckpoint(data)
		assert.Error(t, err, name)
	}
}

func TestNextCheckpointAdvancesOverVerifiedOnly(t *testing.T) {
	t.Parallel()
	prev := validCheckpoint()
	assert.Same(t, prev, NextCheckpoint(prev, &Result{}, "", "", t0), "nothing verified: unchanged")
	vs := make([]Version, MaxRecent+5)
	for i := range vs {
		vs[i] = Version{Commit: Commit{SHA: sha(100 + i), Time: t0.Add(time.Duration(i) * time.Second)}, BlobSHA: blobSHA([]byte("x")), Content: []byte("x")}
	}
	next := NextCheckpoint(prev, &Result{Lock: "seats", Verified: vs, MaxFencingToken: 7}, "acme/build-lock", "lock-state", t0.Add(time.Hour))
	assert.Len(t, next.Recent, MaxRecent)
	assert.Equal(t, vs[len(vs)-1].SHA, next.Head.SHA)
	assert.Equal(t, "x", next.Head.Content)
	assert.Equal(t, 2+len(vs), next.Commits)
	assert.Equal(t, int64(7), next.MaxFencingToken)
	assert.Equal(t, []string{sha(1), sha(2)}, prev.Recent, "the previous checkpoint is not modified")
	data, err := next.Encode()
	require.NoError(t, err)
	_, err = DecodeCheckpoint(data)
	require.NoError(t, err)

	rebased := NextCheckpoint(prev, &Result{Lock: "seats", Verified: vs[:3], Rebased: true}, "acme/build-lock", "lock-state", t0)
	assert.Equal(t, 3, rebased.Commits)
	assert.NotContains(t, rebased.Recent, sha(1))
}

// FuzzDecodeCheckpoint: a checkpoint file is operator-controlled input
// (an Actions cache); any bytes either decode into a checkpoint that
// re-encodes and decodes to itself, or are refused.
func FuzzDecodeCheckpoint(f *testing.F) {
	b, _ := validCheckpoint().Encode()
	f.Add(b)
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`{"version":1,"repository":"a/b","branch":"x","lock":"l","head":{"sha":"` + sha(1) + `"},"recent":["` + sha(1) + `"],"commits":1,"reclaimed":{"h":{"ReservationID":"q"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cp, err := DecodeCheckpoint(data)
		if err != nil {
			return
		}
		again, err := cp.Encode()
		require.NoError(t, err)
		cp2, err := DecodeCheckpoint(again)
		require.NoError(t, err)
		assert.Equal(t, cp, cp2)
	})
}

func TestDistNearestRank(t *testing.T) {
	t.Parallel()
	var ds []time.Duration
	for i := 1; i <= 20; i++ {
		ds = append(ds, time.Duration(21-i)*time.Second)
	}
	d := NewDist(ds)
	assert.Equal(t, Dist{Count: 20, P50: 10, P95: 19, P99: 20, Mean: 10.5, Max: 20}, d)
	assert.Equal(t, Dist{}, NewDist(nil))
	assert.Equal(t, 5*time.Second, Percentile([]time.Duration{5 * time.Second}, 99))
}

// TestReplayByHand: three jobs ask at once for 10 minutes each, on three
// runners: one seat serves them one after another, two seats make the
// third wait, three seats make nobody wait. Two jobs on one runner wait for
// each other whatever the seats.
func TestReplayByHand(t *testing.T) {
	t.Parallel()
	jobs := []ReplayJob{
		{Arrival: t0, Hold: 10 * time.Minute, Runner: "a", Release: ReleaseConfirmed},
		{Arrival: t0, Hold: 10 * time.Minute, Runner: "b", Release: ReleaseConfirmed},
		{Arrival: t0, Hold: 10 * time.Minute, Runner: "c", Release: ReleaseConfirmed},
	}
	c := cfg(1)
	for seats, want := range map[int][]float64{1: {0, 600, 1200}, 2: {0, 0, 600}, 3: {0, 0, 0}} {
		sc := Replay(jobs, c, 6, seats)
		assert.Equal(t, 3, sc.Admitted, "seats %d", seats)
		assert.Equal(t, want[2], sc.Wait.Max, "seats %d", seats)
		assert.InDelta(t, (want[0]+want[1]+want[2])/3, sc.Wait.Mean, 1e-9, "seats %d", seats)
	}
	sameRunner := []ReplayJob{jobs[0], {Arrival: t0, Hold: 10 * time.Minute, Runner: "a", Release: ReleaseConfirmed}}
	assert.Equal(t, float64(600), Replay(sameRunner, c, 6, 4).Wait.Max)

	// A cooldown keeps the seat 30 s after each release.
	c.ReleaseCooldownSeconds = 30
	assert.Equal(t, float64(1260), Replay(jobs, c, 6, 1).Wait.Max)
	// A quarantine that lasts 5 minutes delays the next job by as much.
	q := append([]ReplayJob(nil), jobs...)
	q[0].Release, q[0].Quarantine = ReleaseQuarantined, 5*time.Minute
	c.ReleaseCooldownSeconds = 0
	assert.Equal(t, float64(1500), Replay(q, c, 6, 1).Wait.Max)
	// A quarantine never recovered blocks a one-seat lock for good.
	q[0].Quarantine = 0
	sc := Replay(q, c, 6, 1)
	assert.Equal(t, 2, sc.Unfinished)
	assert.Equal(t, []int{1, 2, 3}, WhatIfSeats(1))
	assert.Equal(t, []int{63, 64}, WhatIfSeats(64))
}
