package lockstate

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const testLock = "wallstop-organization-builds"

var t0 = time.Date(2024, 10, 1, 12, 0, 0, 0, time.UTC)

// ident builds a canonical identity for run n on runner.
func ident(n int, runner string) Identity {
	repo := "Ambiguous-Interactive/repo"
	return Identity{
		HolderID:   fmt.Sprintf("%s:%d:job:default", repo, n),
		Repository: repo,
		Workflow:   "CI",
		Job:        "job",
		RunID:      fmt.Sprint(n),
		RunAttempt: "1",
		RunURL:     fmt.Sprintf("https://github.com/%s/actions/runs/%d", repo, n),
		RunnerID:   runner,
		QueuedAt:   t0,
	}
}

func entryFor(id Identity, schema int) Entry { return id.entry(schema, t0) }

func holderFor(id Identity, schema int) Holder {
	return Holder{Entry: id.entry(schema, t0), AcquiredAt: FormatTime(t0), ExpiresAt: FormatTime(t0.Add(time.Hour))}
}

// holderTok is holderFor with a schema-6 fencing token.
func holderTok(id Identity, schema int, token int64) Holder {
	h := holderFor(id, schema)
	h.FencingToken = token
	return h
}

func quarantineOn(id, runner string) Reservation {
	return Reservation{
		ReservationID: id, HolderID: "Ambiguous-Interactive/repo:9:job:default", Repository: "Ambiguous-Interactive/repo",
		Workflow: "CI", Job: "job", RunID: "9", RunAttempt: "1", RunURL: "https://github.com/Ambiguous-Interactive/repo/actions/runs/9",
		RunnerID: runner, Reason: "cleanup-evidence-unknown", State: ReservationQuarantine, CreatedAt: FormatTime(t0.Add(-time.Hour)),
	}
}

func cooldownOn(id, runner string, until time.Time) Reservation {
	r := quarantineOn(id, runner)
	r.State = ReservationCooldown
	r.Reason = ReasonCleanupConfirmed
	r.AvailableAt = FormatTime(until)
	return r
}

// stateAt returns a valid empty state at schema.
func stateAt(schema int) *State {
	s := Empty(testLock)
	s.SchemaVersion = schema
	s.UpdatedAt = FormatTime(t0)
	s.canonicalize()
	return s
}

// mustEncodeDecode asserts Encode succeeds and Decode(Encode(s)) equals s.
func mustEncodeDecode(t testing.TB, s *State) {
	t.Helper()
	data, err := Encode(s)
	require.NoError(t, err)
	back, err := Decode(data, DecodeOptions{Lock: s.Lock})
	require.NoError(t, err, "%s", data)
	require.Equal(t, s, back)
}

// rawJSON marshals v for a test document.
func rawJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func requireCode(t testing.TB, err error, code Code) {
	t.Helper()
	require.Error(t, err)
	var e *Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, code, e.Code, "message: %s", e.Message)
	require.NotEmpty(t, e.Error())
}
