package lockstate

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNoteArrivalPrunesTheLastWindowAndBounds(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	s := Empty(testLock)
	s.NoteArrival(now.Add(-ArrivalLogWindow), 1700000000, 1)
	s.NoteArrival(now.Add(-ArrivalLogWindow+time.Millisecond), 1700000000, 3)
	s.NoteArrival(now, 1700000000, 5)
	require.Len(t, s.RecentArrivals, 2, "the entry a whole window old left")
	assert.Equal(t, []int64{3, 5}, []int64{s.RecentArrivals[0].Count, s.RecentArrivals[1].Count})
	assert.Equal(t, FormatTime(now), s.RecentArrivals[1].At)

	s.NoteArrival(now.Add(2*ArrivalLogWindow), 0, 0)
	assert.Nil(t, s.RecentArrivals, "a write without a ticket only prunes")

	for i := range MaxRecentArrivals + 5 {
		s.NoteArrival(now, 1700000000, int64(i))
	}
	require.Len(t, s.RecentArrivals, MaxRecentArrivals)
	assert.Equal(t, int64(5), s.RecentArrivals[0].Count, "the oldest beyond the bound go first")
}

// TestLiveArrivalsLeaveLowestTicketFirst: an entry leaves once it is a
// whole log window old and no lower ticket of its window is left, so a
// written ticket never leaves while a lower one stays (a reader would count
// it as an arrival ahead); each rate window is its own order, and an entry
// stamped more than a window in the future leaves at once.
func TestLiveArrivalsLeaveLowestTicketFirst(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	const w, v = 1700003600, 1700000000
	entry := func(ago time.Duration, window, count int64) RecentArrival {
		return RecentArrival{At: FormatTime(now.Add(-ago)), Window: window, Count: count}
	}
	s := Empty(testLock)
	s.RecentArrivals = []RecentArrival{
		entry(80*time.Second, w, 6), entry(30*time.Second, w, 2), entry(75*time.Second, w, 4), entry(90*time.Second, w, 1),
		entry(100*time.Second, v, 9), entry(-2*ArrivalLogWindow-time.Second, w, 8),
	}
	counts := func(log []RecentArrival) []int64 {
		var cs []int64
		for _, a := range log {
			cs = append(cs, a.Count)
		}
		return cs
	}
	assert.Equal(t, []int64{6, 2, 4}, counts(s.LiveArrivals(now)), "1 left (old, lowest); 6 and 4 stay above the young 2; window v has nothing young; 8 is from the future")
	s.NoteArrival(now, w, 10)
	assert.Equal(t, []int64{6, 2, 4, 10}, counts(s.RecentArrivals))
	assert.Nil(t, s.LiveArrivals(now.Add(2*ArrivalLogWindow)), "everything old: the log empties")
}

// emptyAtSchema is an empty lock state of the given schema, updated at now.
func emptyAtSchema(schema int, now time.Time) *State {
	s := Empty(testLock)
	s.SchemaVersion = schema
	if schema >= 4 {
		s.Reservations = []Reservation{}
	}
	s.UpdatedAt = FormatTime(now)
	return s
}

// roundTripLog encodes an empty s (which must omit key), lets note fill
// the log, and checks the encoding lists key as an array before
// updatedAt, decodes back and re-encodes byte for byte. It returns the
// encoding and the decoded state.
func roundTripLog(t *testing.T, s *State, key string, note func(*State)) (string, *State) {
	t.Helper()
	data, err := Encode(s)
	require.NoError(t, err)
	assert.NotContains(t, string(data), key, "schema %d: omitted when empty", s.SchemaVersion)
	note(s)
	data, err = Encode(s)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"`+key+`": [`, "schema %d", s.SchemaVersion)
	assert.Less(t, strings.Index(string(data), key), strings.Index(string(data), "updatedAt"), "written before updatedAt")
	back, err := Decode(data, DecodeOptions{Lock: testLock})
	require.NoError(t, err, "schema %d", s.SchemaVersion)
	again, err := Encode(back)
	require.NoError(t, err)
	assert.Equal(t, string(data), string(again), "schema %d: byte-stable", s.SchemaVersion)
	return string(data), back
}

func TestRecentArrivalsRoundTripAtEverySchema(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	for schema := 2; schema <= MaxSchemaVersion; schema++ {
		s := emptyAtSchema(schema, now)
		_, back := roundTripLog(t, s, "recentArrivals", func(s *State) {
			s.NoteArrival(now, 1700003600, 41)
			s.NoteMintedArrival(now, now.Add(-1500*time.Millisecond), 1700003600, 43)
		})
		assert.Equal(t, s.RecentArrivals, back.RecentArrivals, "schema %d", schema)
		require.Len(t, back.RecentArrivals, 2)
		assert.Empty(t, back.RecentArrivals[0].Minted, "logged without a mint time")
		assert.Equal(t, "2026-12-06T11:59:58.500Z", back.RecentArrivals[1].Minted)
	}
}

func TestMalformedRecentArrivalsAreRefused(t *testing.T) {
	t.Parallel()
	doc := func(v string) []byte {
		return []byte(`{"schemaVersion":3,"lock":"` + testLock + `","holder":null,"holders":[],"queue":[],"recentArrivals":` + v + `,"updatedAt":"2026-12-06T12:00:00.000Z"}`)
	}
	_, err := Decode(doc(`[{"at":"2026-12-06T12:00:00.000Z","window":1700003600,"count":0}]`), DecodeOptions{Lock: testLock})
	require.NoError(t, err, "a well-formed log (count 0 allowed)")
	_, err = Decode(doc(`[{"at":"2026-12-06T12:00:00.000Z","window":1700003600,"count":3,"minted":"2026-12-06T11:59:59.000Z"}]`), DecodeOptions{Lock: testLock})
	require.NoError(t, err, "with a mint time")
	long := "[" + strings.Repeat(`{"at":"2026-12-06T12:00:00.000Z","window":1,"count":1},`, MaxRecentArrivals) + `{"at":"2026-12-06T12:00:00.000Z","window":1,"count":1}]`
	for name, v := range map[string]string{
		"not an array":     `{}`,
		"not an object":    `[1]`,
		"timestamp shape":  `[{"at":"2026-12-06T12:00:00Z","window":1,"count":1}]`,
		"missing at":       `[{"window":1,"count":1}]`,
		"window zero":      `[{"at":"2026-12-06T12:00:00.000Z","window":0,"count":1}]`,
		"window a string":  `[{"at":"2026-12-06T12:00:00.000Z","window":"1","count":1}]`,
		"negative count":   `[{"at":"2026-12-06T12:00:00.000Z","window":1,"count":-1}]`,
		"fractional count": `[{"at":"2026-12-06T12:00:00.000Z","window":1,"count":1.5}]`,
		"too long":         long,
		"minted shape":     `[{"at":"2026-12-06T12:00:00.000Z","window":1,"count":1,"minted":"2026-12-06T12:00:00Z"}]`,
		"minted a number":  `[{"at":"2026-12-06T12:00:00.000Z","window":1,"count":1,"minted":1}]`,
	} {
		_, err := Decode(doc(v), DecodeOptions{Lock: testLock})
		require.Error(t, err, name)
		assert.Equal(t, CodeInvalidRecentArrivals, CodeOf(err), name)
	}
	s := Empty(testLock)
	s.UpdatedAt = "2026-12-06T12:00:00.000Z"
	s.RecentArrivals = []RecentArrival{{At: "yesterday", Window: 1, Count: 1}}
	_, err = Encode(s)
	assert.Equal(t, CodeInvalidRecentArrivals, CodeOf(err), "Encode refuses what Decode would")
}
