package lockstate

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNoteHoldPrunesTheWindowAndBounds(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	s := Empty(testLock)
	s.NoteHold(now.Add(-HoldLogWindow), 4*time.Second)
	s.NoteHold(now.Add(-HoldLogWindow+time.Millisecond), 5*time.Second)
	s.NoteHold(now, 6500*time.Millisecond)
	require.Len(t, s.RecentHolds, 2, "the hold a whole window old left")
	assert.Equal(t, []int64{5000, 6500}, []int64{s.RecentHolds[0].HeldMs, s.RecentHolds[1].HeldMs})
	assert.Equal(t, FormatTime(now), s.RecentHolds[1].At)

	s.NoteHold(now, 0)
	s.NoteHold(now, -time.Second)
	s.NoteHold(now, 8*24*time.Hour)
	assert.Len(t, s.RecentHolds, 2, "a hold that is not positive or longer than a week is not logged")
	s.NoteHold(now.Add(2*HoldLogWindow), 0)
	assert.Nil(t, s.RecentHolds, "a hold not logged still prunes")

	for i := range MaxRecentHolds + 3 {
		s.NoteHold(now, time.Duration(i+1)*time.Second)
	}
	require.Len(t, s.RecentHolds, MaxRecentHolds)
	assert.Equal(t, int64(4000), s.RecentHolds[0].HeldMs, "the oldest beyond the bound go first")
}

func TestHoldRangeIsTheMedianAndTheShortestOfTheWindow(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	s := Empty(testLock)
	_, _, n := s.HoldRange(now)
	assert.Zero(t, n)
	s.NoteHold(now.Add(-HoldLogWindow), 2*time.Second) // out of the window at now
	s.NoteHold(now, 9*time.Second)
	typical, shortest, n := s.HoldRange(now)
	assert.Equal(t, 1, n, "the hold older than the window is not counted")
	assert.Equal(t, 9*time.Second, typical)
	assert.Equal(t, 9*time.Second, shortest)
	s.NoteHold(now, 5*time.Second)
	s.NoteHold(now, 6*time.Second)
	typical, shortest, n = s.HoldRange(now)
	assert.Equal(t, 3, n)
	assert.Equal(t, 6*time.Second, typical)
	assert.Equal(t, 5*time.Second, shortest)
}

func TestRecentHoldsRoundTripAtEverySchema(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	for schema := 2; schema <= MaxSchemaVersion; schema++ {
		s := emptyAtSchema(schema, now)
		data, back := roundTripLog(t, s, "recentHolds", func(s *State) {
			s.NoteArrival(now, 1700003600, 41)
			s.NoteHold(now, 5123*time.Millisecond)
			s.NoteHold(now, 6*time.Second)
		})
		assert.Less(t, strings.Index(data, "recentArrivals"), strings.Index(data, "recentHolds"), "written after recentArrivals")
		assert.Equal(t, s.RecentHolds, back.RecentHolds, "schema %d", schema)
		c := back.Clone()
		c.RecentHolds[0].HeldMs = 1
		assert.Equal(t, int64(5123), back.RecentHolds[0].HeldMs, "Clone copies the log")
	}
}

func TestMalformedRecentHoldsAreRefused(t *testing.T) {
	t.Parallel()
	doc := func(v string) []byte {
		return []byte(`{"schemaVersion":3,"lock":"` + testLock + `","holder":null,"holders":[],"queue":[],"recentHolds":` + v + `,"updatedAt":"2026-12-06T12:00:00.000Z"}`)
	}
	_, err := Decode(doc(`[{"at":"2026-12-06T12:00:00.000Z","heldMs":5000}]`), DecodeOptions{Lock: testLock})
	require.NoError(t, err, "a well-formed log")
	long := "[" + strings.Repeat(`{"at":"2026-12-06T12:00:00.000Z","heldMs":1},`, MaxRecentHolds) + `{"at":"2026-12-06T12:00:00.000Z","heldMs":1}]`
	for name, v := range map[string]string{
		"not an array":       `{}`,
		"not an object":      `[1]`,
		"timestamp shape":    `[{"at":"2026-12-06T12:00:00Z","heldMs":1}]`,
		"missing at":         `[{"heldMs":1}]`,
		"missing heldMs":     `[{"at":"2026-12-06T12:00:00.000Z"}]`,
		"zero hold":          `[{"at":"2026-12-06T12:00:00.000Z","heldMs":0}]`,
		"negative hold":      `[{"at":"2026-12-06T12:00:00.000Z","heldMs":-5}]`,
		"fractional hold":    `[{"at":"2026-12-06T12:00:00.000Z","heldMs":1.5}]`,
		"hold a string":      `[{"at":"2026-12-06T12:00:00.000Z","heldMs":"5"}]`,
		"longer than a week": `[{"at":"2026-12-06T12:00:00.000Z","heldMs":604800001}]`,
		"too long":           long,
	} {
		_, err := Decode(doc(v), DecodeOptions{Lock: testLock})
		require.Error(t, err, name)
		assert.Equal(t, CodeInvalidRecentHolds, CodeOf(err), name)
	}
	s := Empty(testLock)
	s.UpdatedAt = "2026-12-06T12:00:00.000Z"
	s.RecentHolds = []RecentHold{{At: "yesterday", HeldMs: 1}}
	_, err = Encode(s)
	assert.Equal(t, CodeInvalidRecentHolds, CodeOf(err), "Encode refuses what Decode would")
}
