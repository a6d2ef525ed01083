package lockstate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const updateGoldenCommand = "UPDATE_GOLDEN=1 go test ./internal/lockstate/ -run TestGolden"

// goldenCases map a document written by the JS reference to the bytes this
// package must write back. Canonical documents (schema >= 2) round-trip
// byte for byte; schema 1 is rewritten as schema 2.
var goldenCases = []struct{ in, want string }{
	{"empty.json", "empty.json"},
	{"schema1.json", "schema1.normalized.json"},
	{"schema1.normalized.json", "schema1.normalized.json"},
	{"schema2.json", "schema2.json"},
	{"schema3.json", "schema3.json"},
	{"schema4.json", "schema4.json"},
	{"schema5.json", "schema5.json"},
	{"schema6.json", "schema6.json"},
	{"schema6-seats.json", "schema6-seats.json"},
}

// TestGolden is not parallel at the top level only so that UPDATE_GOLDEN
// writes happen before reads of the same file in later cases.
func TestGolden(t *testing.T) {
	update := os.Getenv("UPDATE_GOLDEN") == "1"
	for _, c := range goldenCases {
		t.Run(c.in, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", c.in))
			require.NoError(t, err)
			s, err := Decode(in, DecodeOptions{Lock: testLock})
			require.NoError(t, err)
			got, err := Encode(s)
			require.NoError(t, err)
			wantPath := filepath.Join("testdata", c.want)
			if update && c.in != c.want {
				require.NoError(t, os.WriteFile(wantPath, got, 0o644))
			}
			want, err := os.ReadFile(wantPath)
			require.NoError(t, err)
			require.Equal(t, string(want), string(got), "golden %s differs; regenerate with: %s", c.want, updateGoldenCommand)
			mustEncodeDecode(t, s)
		})
	}
}

func TestGoldenSchemaShapes(t *testing.T) {
	t.Parallel()
	read := func(name string) *State {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(t, err)
		s, err := Decode(data, DecodeOptions{Lock: testLock})
		require.NoError(t, err)
		return s
	}
	s1 := read("schema1.json")
	assert.Equal(t, 2, s1.SchemaVersion)
	assert.Equal(t, "111", s1.Holders[0].RunID)
	s2 := read("schema2.json")
	assert.Len(t, s2.Holders, 2)
	assert.Len(t, s2.Queue, 3, "schema 2 keeps duplicate queue entries as read")
	s4 := read("schema4.json")
	assert.Equal(t, 0, FreeSlots(s4, Config{MaxHolders: 3}), "3 seats: 1 holder + 2 reservations")
	next, ok := NextCooldownExpiry(s4, mustParse(t, "2024-08-04T10:05:00.000Z"))
	assert.True(t, ok)
	assert.Equal(t, "2024-08-04T10:08:00.000Z", FormatTime(next))
	s5 := read("schema5.json")
	require.NotNil(t, s5.ActiveIncident)
	assert.Equal(t, "incident-8cb194c5fd817c144b8c5f25", s5.ActiveIncident.IncidentID)
	assert.Zero(t, s5.FencingToken)

	// schema6.json: tokens 41 and 43 held, 42 and 44 issued to admissions
	// that have since left; the windows waiter is blocked by the windows
	// holder and was passed twice (by the linux admission among others).
	s6 := read("schema6.json")
	assert.Equal(t, int64(44), s6.FencingToken)
	assert.Equal(t, int64(41), FencingToken(s6, s6.Holders[0].HolderID))
	assert.Equal(t, int64(43), FencingToken(s6, s6.Holders[1].HolderID))
	win, mac := s6.Queue[0].HolderID, s6.Queue[1].HolderID
	assert.Equal(t, 2, Overtakes(s6, win))
	assert.Equal(t, 0, Overtakes(s6, mac))
	fenced := Config{MaxHolders: 4, RunnerSerialization: true, ResourceLifecycle: true, AccountHealth: true, FencedAdmission: true, MaxOvertakes: 2}
	assert.Equal(t, 1, FreeSlots(s6, fenced), "4 seats: 2 holders + 1 quarantine")
	assert.Equal(t, -1, AdmissibleRank(s6, fenced, win), "blocked by the windows holder")
	assert.Equal(t, -1, AdmissibleRank(s6, fenced, mac), "behind a waiter overtaken maxOvertakes times")
	fenced.MaxOvertakes = 3
	assert.Equal(t, 0, AdmissibleRank(s6, fenced, mac), "with budget left the mac waiter may pass")
}
