package machinequeue

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const goodDoc = `{
  "format": "buildlock-machine-queue",
  "version": 1,
  "holders": [
    {"holderId": "o/r:1:build:a", "slot": 2, "slots": 2, "owner": {"pid": 10, "start": "linux:b:4026531836:100"},
     "queuedAt": "2026-03-01T12:00:00.000Z", "admittedAt": "2026-03-01T12:00:01.500Z"}
  ],
  "queue": [
    {"holderId": "o/r:2:build:b", "slots": 2, "owner": {"pid": 11, "start": "linux:b:4026531836:200"},
     "waiter": {"pid": 12, "start": "linux:b:4026531836:201"}, "queuedAt": "2026-03-01T12:00:02.000Z"}
  ]
}
`

func TestDecode(t *testing.T) {
	t.Parallel()
	s, err := Decode([]byte(goodDoc))
	require.NoError(t, err)
	require.Len(t, s.Holders, 1)
	assert.Equal(t, 2, s.Holders[0].Slot)
	assert.Equal(t, Process{PID: 12, Start: "linux:b:4026531836:201"}, s.Queue[0].Waiter)
	out, err := Encode(s)
	require.NoError(t, err)
	back, err := Decode(out)
	require.NoError(t, err)
	assert.Equal(t, s, back)
	// New encodes as empty arrays, never null.
	empty, err := Encode(New())
	require.NoError(t, err)
	assert.Contains(t, string(empty), `"holders": []`)
	assert.Contains(t, string(empty), `"queue": []`)

	mutate := func(old, new string) []byte {
		require.Contains(t, goodDoc, old)
		return []byte(strings.Replace(goodDoc, old, new, 1))
	}
	refused := []struct {
		name string
		data []byte
		code Code
		msg  string
	}{
		{"not JSON", []byte("{"), CodeCorrupt, "not a JSON object"},
		{"empty file", []byte(""), CodeCorrupt, ""},
		{"not an object", []byte("[]"), CodeCorrupt, ""},
		{"another format", mutate(`"buildlock-machine-queue"`, `"lock"`), CodeCorrupt, "format"},
		{"newer version", mutate(`"version": 1`, `"version": 2, "future": true`), CodeNewerFormat, "newer build"},
		{"version 0", mutate(`"version": 1`, `"version": 0`), CodeCorrupt, "version"},
		{"unknown key", mutate(`"version": 1`, `"version": 1, "extra": 0`), CodeCorrupt, "extra"},
		{"repeated key", mutate(`"slot": 2,`, `"slot": 1, "slot": 2,`), CodeCorrupt, "slot"},
		{"invalid UTF-8", mutate(`o/r:1`, "o/r:\xff"), CodeCorrupt, "UTF-8"},
		{"trailing data", append([]byte(goodDoc), []byte("{}")...), CodeCorrupt, "after"},
		{"holders null", mutate(`"holders": [`, `"holders": null, "x": [`), CodeCorrupt, ""},
		{"holders missing", []byte(`{"format":"buildlock-machine-queue","version":1,"queue":[]}`), CodeCorrupt, "holders must be an array"},
		{"slot above K", mutate(`"slot": 2, "slots": 2`, `"slot": 3, "slots": 2`), CodeCorrupt, "slot 3 is outside 1..2"},
		{"K above 64", mutate(`"slot": 2, "slots": 2`, `"slot": 2, "slots": 65`), CodeCorrupt, "outside 1..64"},
		{"over capacity", []byte(twoHolders(1, 1, 2, 2)), CodeCorrupt, "allows at most 1"},
		{"slot held twice", []byte(twoHolders(1, 2, 1, 2)), CodeCorrupt, "held twice"},
		{"holder id both holding and waiting", mutate(`o/r:2:build:b`, `o/r:1:build:a`), CodeCorrupt, "appears twice"},
		{"empty holder id", mutate(`"o/r:1:build:a"`, `""`), CodeCorrupt, "is empty"},
		{"pid 0", mutate(`"pid": 10`, `"pid": 0`), CodeCorrupt, "pid 0"},
		{"start with a space", mutate(`"start": "linux:b:4026531836:100"`, `"start": "a b"`), CodeCorrupt, "printable"},
		{"timestamp not canonical", mutate(`"2026-03-01T12:00:01.500Z"`, `"2026-03-01T12:00:01.5Z"`), CodeCorrupt, "canonical"},
		{"admitted before queued", mutate(`"2026-03-01T12:00:01.500Z"`, `"2026-03-01T11:00:00.000Z"`), CodeCorrupt, "before queuedAt"},
		{"waiter without start", mutate(`"waiter": {"pid": 12, "start": "linux:b:4026531836:201"}`, `"waiter": {"pid": 12}`), CodeCorrupt, "start time is empty"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := Decode(tc.data)
			require.Error(t, err)
			assert.Nil(t, s)
			assert.Equal(t, tc.code, CodeOf(err))
			assert.Contains(t, err.Error(), tc.msg)
			var reasoned interface{ ReasonCode() string }
			require.ErrorAs(t, err, &reasoned)
			assert.Equal(t, string(tc.code), reasoned.ReasonCode())
		})
	}
}

func twoHolders(slotA, kA, slotB, kB int) string {
	h := `{"holderId": %q, "slot": %d, "slots": %d, "owner": {"pid": %d, "start": "s"}, "queuedAt": "2026-03-01T12:00:00.000Z", "admittedAt": "2026-03-01T12:00:00.000Z"}`
	return `{"format": "buildlock-machine-queue", "version": 1, "holders": [` +
		fmt.Sprintf(h, "a", slotA, kA, 1) + "," + fmt.Sprintf(h, "b", slotB, kB, 2) + `], "queue": []}`
}

func TestEncodeRefusesAnInvalidState(t *testing.T) {
	t.Parallel()
	s := New()
	s.Holders = append(s.Holders, holder("a", 1, 1, 1), holder("b", 2, 2, 2))
	_, err := Encode(s)
	assert.Equal(t, CodeCorrupt, CodeOf(err))
}

func TestClipKeepsUTF8(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 60)
	got := clip(long)
	assert.True(t, strings.HasSuffix(got, "..."))
	assert.NotContains(t, got, "\ufffd")
	assert.LessOrEqual(t, len(got), 83)
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(goodDoc))
	empty, _ := Encode(New())
	f.Add(empty)
	f.Add([]byte(`{"format":"buildlock-machine-queue","version":1,"holders":[],"queue":[{"holderId":"\ud800","slots":1,"owner":{"pid":1,"start":"a"},"waiter":{"pid":1,"start":"a"},"queuedAt":"2026-03-01T12:00:00.000Z"}]}`))
	f.Add([]byte(`{"format":"buildlock-machine-queue","version":1e0,"holders":[],"queue":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Decode(data)
		if err != nil {
			require.NotEmpty(t, CodeOf(err))
			require.Nil(t, s)
			return
		}
		out, err := Encode(s)
		require.NoError(t, err)
		back, err := Decode(out)
		require.NoError(t, err)
		require.Equal(t, s, back)
		again, err := Encode(back)
		require.NoError(t, err)
		require.Equal(t, out, again)
		for _, h := range s.Holders {
			require.LessOrEqual(t, len(s.Holders), h.Slots)
		}
	})
}
