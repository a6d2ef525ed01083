package lockstate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seatDoc is a schema-6 document with one holder and one queue entry;
// holderExtra, queueExtra and topExtra are spliced in as extra members.
func seatDoc(holderExtra, queueExtra, topExtra string) []byte {
	h := `{"holderId":"h","repository":"Ambiguous-Interactive/repo","runId":"1","runAttempt":"1","queuedAt":"2024-10-01T12:00:00.000Z","acquiredAt":"2024-10-01T12:00:00.000Z","expiresAt":"2024-10-01T13:00:00.000Z","runnerId":"r1","fencingToken":1` + holderExtra + `}`
	q := `{"holderId":"q","repository":"Ambiguous-Interactive/repo","runId":"2","runAttempt":"1","queuedAt":"2024-10-01T12:00:00.000Z","runnerId":"r2","overtakes":0` + queueExtra + `}`
	return []byte(`{"schemaVersion":6,"lock":"` + testLock + `","holder":` + h + `,"holders":[` + h + `],"queue":[` + q + `],"reservations":[],"activeIncident":null,"fencingToken":1` + topExtra + `,"updatedAt":""}`)
}

func TestDecodeSeatFields(t *testing.T) {
	t.Parallel()
	good := []struct{ name, h, q, top string }{
		{"seat labels priority", `,"seat":"pro-a-1","labels":["pro"],"priority":3`, `,"labels":["plus","pro"],"priority":9`, ``},
		{"seats record", `,"seat":"pro-a-1"`, ``, `,"seats":[{"name":"pro-a-1","lastRunner":"r1","lastUsedAt":"2024-10-01T12:00:00.000Z"}]`},
		{"explicit priority 0", ``, `,"priority":0`, ``},
	}
	for _, c := range good {
		s, err := Decode(seatDoc(c.h, c.q, c.top), DecodeOptions{Lock: testLock})
		require.NoError(t, err, c.name)
		mustEncodeDecode(t, s)
	}
	bad := []struct {
		name, h, q, top string
		code            Code
	}{
		{"seat on a queue entry", ``, `,"seat":"a"`, ``, CodeInvalidSeat},
		{"upper-case seat", `,"seat":"A"`, ``, ``, CodeInvalidSeat},
		{"numeric seat", `,"seat":1`, ``, ``, CodeInvalidSeat},
		{"labels unsorted", ``, `,"labels":["pro","plus"]`, ``, CodeInvalidSeat},
		{"labels repeated", ``, `,"labels":["pro","pro"]`, ``, CodeInvalidSeat},
		{"labels empty", ``, `,"labels":[]`, ``, CodeInvalidSeat},
		{"label not a string", ``, `,"labels":[1]`, ``, CodeInvalidSeat},
		{"priority 10", ``, `,"priority":10`, ``, CodeInvalidSeat},
		{"priority string", ``, `,"priority":"1"`, ``, CodeInvalidSeat},
		{"priority fraction", ``, `,"priority":1.5`, ``, CodeInvalidSeat},
		{"seats not an array", ``, ``, `,"seats":{}`, CodeInvalidSeat},
		{"seats record without time", ``, ``, `,"seats":[{"name":"a","lastRunner":"r","lastUsedAt":"x"}]`, CodeInvalidSeat},
		{"seats record repeated", ``, ``, `,"seats":[{"name":"a","lastRunner":"r","lastUsedAt":"2024-10-01T12:00:00.000Z"},{"name":"a","lastRunner":"r","lastUsedAt":"2024-10-01T12:00:00.000Z"}]`, CodeInvalidSeat},
	}
	for _, c := range bad {
		_, err := Decode(seatDoc(c.h, c.q, c.top), DecodeOptions{Lock: testLock})
		requireCode(t, err, c.code)
	}
}

// TestDecodeSeatGivenTwice: a state recording one seat on two holders, or
// on a holder and a reservation, is refused (fail closed).
func TestDecodeSeatGivenTwice(t *testing.T) {
	t.Parallel()
	s := fencedState([]Holder{seated(ident(1, "r1"), "a", "", 1), seated(ident(2, "r2"), "a", "", 2)}, nil)
	_, err := Encode(s)
	requireCode(t, err, CodeSeatConflict)
	r := quarantineOn("q", "r3")
	r.Seat = "a"
	s = fencedState([]Holder{seated(ident(1, "r1"), "a", "", 1)}, nil, r)
	_, err = Encode(s)
	requireCode(t, err, CodeSeatConflict)
}

// TestSeatFieldsBelowSchema6: the keys are unknown (dropped) below schema
// 6, and an in-memory state below 6 cannot carry them.
func TestSeatFieldsBelowSchema6(t *testing.T) {
	t.Parallel()
	doc := strings.Replace(string(seatDoc(`,"seat":"a","labels":["x"],"priority":2`, `,"priority":3`, ``)), `"schemaVersion":6`, `"schemaVersion":5`, 1)
	s, err := Decode([]byte(doc), DecodeOptions{Lock: testLock})
	require.NoError(t, err)
	assert.Empty(t, s.Holders[0].Seat)
	assert.Zero(t, s.Queue[0].Priority)
	s.Queue[0].Priority = 1
	_, err = Encode(s)
	requireCode(t, err, CodeInvalidSeat)
}

func FuzzDecodeSeatState(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("testdata", "schema6-seats.json"))
	require.NoError(f, err)
	f.Add(data)
	f.Add(seatDoc(`,"seat":"pro-a-1","labels":["pro"],"priority":3`, `,"labels":["plus","pro"],"priority":9`, `,"seats":[]`))
	f.Add(seatDoc(`,"seat":"a"`, `,"labels":["b","a"]`, `,"seats":[{"name":"a","lastRunner":"r","lastUsedAt":"2024-10-01T12:00:00.000Z"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Decode(data, DecodeOptions{Lock: testLock})
		if err != nil {
			require.NotEmpty(t, CodeOf(err))
			return
		}
		out, err := Encode(s)
		require.NoError(t, err)
		back, err := Decode(out, DecodeOptions{Lock: testLock})
		require.NoError(t, err)
		again, err := Encode(back)
		require.NoError(t, err)
		require.Equal(t, string(out), string(again))
	})
}
