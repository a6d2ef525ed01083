package lockstate

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// onRunner is id as seen from a process on the named runner.
func onRunner(id Identity, name string) Identity {
	id.RunnerName, id.RunnerOS, id.RunnerArch = name, "Linux", "X64"
	return id
}

// configFor returns a config that puts a state of schema into effect.
func configFor(schema int) Config {
	switch {
	case schema >= FencedSchemaVersion:
		return cfgFenced(1, 2)
	case schema == 5:
		return cfgHealth(1)
	case schema == 4:
		return cfgLifecycle(1)
	case schema == 3:
		return cfgSerial(1)
	}
	return DefaultConfig()
}

// TestSharedHolderIDAcrossRunnersIsRefused is the two-matrix-legs case: both
// legs compute one holderId (the default holder-id-suffix); the second, on
// another runner, must not be taken for the first's retry on any schema.
func TestSharedHolderIDAcrossRunnersIsRefused(t *testing.T) {
	t.Parallel()
	now := t0.Add(time.Minute)
	for schema := 2; schema <= MaxSchemaVersion; schema++ {
		cfg := configFor(schema)
		// Under runner serialization the runner-id input is usually
		// runner.name, so both legs differ there too; the recorded
		// runnerName decides even when the input was left equal.
		legA := onRunner(ident(1, "shared-input"), "unity-win-01")
		legB := onRunner(ident(1, "shared-input"), "unity-win-02")
		t.Run(fmt.Sprintf("holder/schema %d", schema), func(t *testing.T) {
			t.Parallel()
			s, d, err := Acquire(stateAt(schema), cfg, AcquireRequest{Identity: legA, Lease: lease}, now)
			require.NoError(t, err)
			require.Equal(t, OutcomeAdmitted, d.Outcome)
			require.Equal(t, "unity-win-01", s.Holders[0].RunnerName, "the runner is recorded on the holder")
			_, _, err = Acquire(s, cfg, AcquireRequest{Identity: legB, Lease: lease}, now)
			requireCode(t, err, CodeHolderIDCollision)
			assert.Contains(t, err.Error(), "holder-id-suffix")

			// The first leg's own retry on its own runner is still its retry.
			_, d, err = Acquire(s, cfg, AcquireRequest{Identity: legA, Lease: lease}, now)
			require.NoError(t, err)
			assert.Equal(t, OutcomeAlreadyHolder, d.Outcome)
		})
		t.Run(fmt.Sprintf("queue/schema %d", schema), func(t *testing.T) {
			t.Parallel()
			busy := stateAt(schema)
			other := onRunner(ident(9, "other"), "unity-win-09")
			busy, _, err := Acquire(busy, cfg, AcquireRequest{Identity: other, Lease: lease}, now)
			require.NoError(t, err)
			s, d, err := Acquire(busy, cfg, AcquireRequest{Identity: legA, Lease: lease}, now)
			require.NoError(t, err)
			require.Equal(t, OutcomeQueued, d.Outcome)
			_, _, err = Acquire(s, cfg, AcquireRequest{Identity: legB, Lease: lease}, now)
			requireCode(t, err, CodeHolderIDCollision)
		})
	}
}

func TestSharedHolderIDWithoutRecordedRunnerKeepsTheReferenceRule(t *testing.T) {
	t.Parallel()
	now := t0.Add(time.Minute)
	// An entry written by an older client has no runnerName: nothing proves
	// it is another job, so the claim stays the reference's retry.
	s := stateAt(2)
	s.Holders = []Holder{holderFor(ident(1, ""), 2)}
	_, d, err := Acquire(s, DefaultConfig(), AcquireRequest{Identity: onRunner(ident(1, ""), "unity-win-02"), Lease: lease}, now)
	require.NoError(t, err)
	assert.Equal(t, OutcomeAlreadyHolder, d.Outcome)

	// A caller without RUNNER_NAME (a local run) proves nothing either.
	s.Holders = []Holder{holderFor(onRunner(ident(1, ""), "unity-win-01"), 2)}
	_, d, err = Acquire(s, DefaultConfig(), AcquireRequest{Identity: ident(1, ""), Lease: lease}, now)
	require.NoError(t, err)
	assert.Equal(t, OutcomeAlreadyHolder, d.Outcome)

	// A rerun (newer attempt) on schema 2 takes over its dead predecessor's
	// seat as the reference does; the runner does not matter across attempts.
	rerun := onRunner(withAttempt(ident(1, ""), "2"), "unity-win-02")
	_, d, err = Acquire(s, DefaultConfig(), AcquireRequest{Identity: rerun, Lease: lease}, now)
	require.NoError(t, err)
	assert.Equal(t, OutcomeAlreadyHolder, d.Outcome)
}

func TestCleanupKeepsAnotherRunnersEntryOfTheSameHolderID(t *testing.T) {
	t.Parallel()
	now := t0.Add(time.Minute)
	for schema := 2; schema <= MaxSchemaVersion; schema++ {
		cfg := configFor(schema)
		legA := onRunner(ident(1, "runner-a"), "unity-win-01")
		s, _, err := Acquire(stateAt(schema), cfg, AcquireRequest{Identity: legA, Lease: lease}, now)
		require.NoError(t, err)
		req := CleanupRequest{HolderID: legA.HolderID, RunAttempt: "1", RunnerID: "runner-b", RunnerName: "unity-win-02", ReservationID: "res-1"}
		out, d, err := Cleanup(s, cfg, req, now)
		require.NoError(t, err, "schema %d", schema)
		assert.Equal(t, ResultNoop, d.Result, "schema %d: the refused leg's always() release must not free the other leg's seat", schema)
		assert.Equal(t, 1, d.ForeignKept)
		assert.False(t, d.Changed)
		assert.Len(t, out.Holders, 1)

		// Its own runner (or a fallback by explicit holder-id, RunnerName "")
		// releases it.
		for _, name := range []string{"unity-win-01", ""} {
			req.RunnerName, req.RunnerID = name, "runner-a"
			out, d, err = Cleanup(s, cfg, req, now)
			require.NoError(t, err)
			assert.True(t, d.Released, "schema %d runner %q", schema, name)
			assert.Empty(t, out.Holders)
		}
	}
}

func TestRunnerIdentityRoundTripsAndIsMirrored(t *testing.T) {
	t.Parallel()
	for schema := 2; schema <= MaxSchemaVersion; schema++ {
		s, _, err := Acquire(stateAt(schema), configFor(schema), AcquireRequest{Identity: onRunner(ident(1, "r1"), "GitHub Actions 7"), Lease: lease}, t0)
		require.NoError(t, err)
		data, err := Encode(s)
		require.NoError(t, err)
		text := string(data)
		assert.Equal(t, 2, strings.Count(text, `"runnerName": "GitHub Actions 7"`), "holder and its legacy mirror")
		assert.Equal(t, 2, strings.Count(text, `"runnerOs": "Linux"`))
		mustEncodeDecode(t, s)

		// The mirror must agree on the recorded runner like on every field.
		tampered := strings.Replace(text, `"runnerName": "GitHub Actions 7"`, `"runnerName": "GitHub Actions 8"`, 1)
		_, err = Decode([]byte(tampered), DecodeOptions{Lock: testLock})
		requireCode(t, err, CodeHolderMirrorMismatch)
	}
}

func TestRunnerIdentityFieldsAreValidated(t *testing.T) {
	t.Parallel()
	base := `{"schemaVersion":2,"lock":"` + testLock + `","holder":null,"holders":[],"queue":[{"holderId":"a","queuedAt":"2026-01-02T03:04:05.678Z",%s}]}`
	for name, field := range map[string]string{
		"number":         `"runnerName":7`,
		"empty":          `"runnerName":""`,
		"control":        `"runnerName":"a\nb"`,
		"padded":         `"runnerOs":" Linux"`,
		"long":           `"runnerArch":"` + strings.Repeat("x", MaxRunnerPlatformBytes+1) + `"`,
		"null":           `"runnerName":null`,
		"workflow cmd":   `"runnerName":"x\r\n::add-mask::y"`,
		"long name":      `"runnerName":"` + strings.Repeat("n", MaxRunnerNameBytes+1) + `"`,
		"delete control": `"runnerName":"a\u007fb"`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Decode([]byte(strings.Replace(base, "%s", field, 1)), DecodeOptions{Lock: testLock})
			requireCode(t, err, CodeInvalidRunnerIdentity)
		})
	}
	_, _, err := Acquire(stateAt(2), DefaultConfig(), AcquireRequest{Identity: onRunner(ident(1, ""), "bad\nname"), Lease: lease}, t0)
	requireCode(t, err, CodeInvalidRunnerIdentity)
}

// TestSchema2DuplicateQueueEntriesFollowTheReference pins the reference's
// rule for a schema-2 queue that repeats a holderId (which only an old or
// hand-edited writer produces; schema 3 refuses it): it is read, the next
// acquire write collapses it keeping the first entry (dedupeQueueEntries),
// so the earliest position wins and nobody is displaced, and a cleanup by
// its owner removes every copy. Refusing it instead would brick a lock the
// reference keeps working on; collapsing it keeps exactly one claim per
// holder, which is what admission counts.
func TestSchema2DuplicateQueueEntriesFollowTheReference(t *testing.T) {
	t.Parallel()
	now := t0.Add(time.Minute)
	dup := ident(7, "")
	first := entryFor(dup, 2)
	second := entryFor(dup, 2)
	second.QueuedAt = FormatTime(t0.Add(30 * time.Second))
	s := stateAt(2)
	s.Holders = []Holder{holderFor(ident(1, ""), 2)}
	s.Queue = []Entry{first, entryFor(ident(8, ""), 2), second}
	mustEncodeDecode(t, s)

	// Another job's acquire collapses the duplicate in its own write.
	out, d, err := Acquire(s, DefaultConfig(), AcquireRequest{Identity: ident(9, ""), Lease: lease}, now)
	require.NoError(t, err)
	require.True(t, d.Changed)
	ids := []string{}
	for _, e := range out.Queue {
		ids = append(ids, e.HolderID)
	}
	assert.Equal(t, []string{dup.HolderID, ident(8, "").HolderID, ident(9, "").HolderID}, ids, "the first copy keeps its place; the second is gone")
	assert.Equal(t, first.QueuedAt, out.Queue[0].QueuedAt)

	// A poll that would only collapse it writes nothing (Changed=false).
	_, d, err = Acquire(s, DefaultConfig(), AcquireRequest{Identity: ident(8, ""), Lease: lease}, now)
	require.NoError(t, err)
	assert.False(t, d.Changed)

	// Its owner's cleanup removes both copies.
	out, cd, err := Cleanup(s, DefaultConfig(), CleanupRequest{HolderID: dup.HolderID, RunAttempt: "1"}, now)
	require.NoError(t, err)
	assert.True(t, cd.QueueCleaned)
	require.Len(t, out.Queue, 1)
	assert.Equal(t, ident(8, "").HolderID, out.Queue[0].HolderID)

	// Schema 3 refuses the document outright.
	s3 := stateAt(3)
	a, b := entryFor(ident(7, "r1"), 3), entryFor(ident(7, "r1"), 3)
	s3.Queue = []Entry{a, b}
	_, err = Encode(s3)
	requireCode(t, err, CodeDuplicateQueueEntry)
}
