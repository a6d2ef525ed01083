package lockstate

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// doc2 is a schema-2 document with one queue entry carrying extra members.
func doc2(entryMembers string) []byte {
	return []byte(`{"schemaVersion":2,"lock":"` + testLock + `","holder":null,"holders":[],"queue":[{"holderId":"q",` +
		`"queuedAt":"2026-01-02T03:04:05.678Z"` + entryMembers + `}],"updatedAt":""}`)
}

func TestDecodeRefusesWhatEncodingJSONWouldSilentlyRewrite(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		data []byte
		code Code
		path string
	}{
		{"duplicate top-level key", []byte(`{"schemaVersion":2,"lock":"` + testLock + `","lock":"` + testLock + `","holder":null,"holders":[],"queue":[]}`), CodeDuplicateKey, "$.lock"},
		{"duplicate entry key", doc2(`,"repository":"a/b","repository":"c/d"`), CodeDuplicateKey, "$.queue[0].repository"},
		{"duplicate key spelled with an escape", doc2(`,"job":"a","j\u006fb":"b"`), CodeDuplicateKey, "$.queue[0].job"},
		{"invalid UTF-8 in another holder's id", []byte("{\"schemaVersion\":2,\"lock\":\"" + testLock + "\",\"holder\":null,\"holders\":[],\"queue\":[{\"holderId\":\"q\xff\"}]}"), CodeInvalidUTF8, ""},
		{"lone high surrogate", doc2(`,"workflow":"a\ud800b"`), CodeLoneSurrogate, "$.queue[0].workflow"},
		{"lone low surrogate", doc2(`,"workflow":"\udc00"`), CodeLoneSurrogate, "$.queue[0].workflow"},
		{"high surrogate before a non-surrogate", doc2(`,"workflow":"\ud800\u0041"`), CodeLoneSurrogate, "$.queue[0].workflow"},
		{"surrogate in a key", []byte(`{"\ud800":1}`), CodeLoneSurrogate, "$"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Decode(tc.data, DecodeOptions{Lock: testLock})
			requireCode(t, err, tc.code)
			assert.Contains(t, err.Error(), tc.path)
			assert.Contains(t, err.Error(), "refusing the document before any write")
		})
	}
}

func TestDecodeKeepsValidEscapesByteForByte(t *testing.T) {
	t.Parallel()
	// A surrogate pair, a literal U+FFFD, line separators and an escaped
	// solidus are all valid: they decode to what they say and encode back
	// to the reference's bytes.
	s, err := Decode(doc2(`,"workflow":"\ud83d\ude00 \ufffd \u2028 \/ é"`), DecodeOptions{Lock: testLock})
	require.NoError(t, err)
	assert.Equal(t, "😀 \uFFFD \u2028 / é", s.Queue[0].Workflow)
	out, err := Encode(s)
	require.NoError(t, err)
	assert.Contains(t, string(out), `"workflow": "😀 `+"\uFFFD \u2028"+` / é"`)
}

func TestCheckStrictJSONLeavesSyntaxErrorsToTheDecoder(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{`{`, `{"a"`, `{"a":}`, `[1,`, `"abc`, `{"a":"\u12"}`, `{"a" 1}`, `{,}`} {
		assert.Nil(t, CheckStrictJSON([]byte(bad)), bad)
		_, err := Decode([]byte(bad), DecodeOptions{Lock: testLock})
		requireCode(t, err, CodeInvalidJSON)
	}
	assert.Nil(t, CheckStrictJSON([]byte(`{"a":[{"a":1},{"a":2}],"b":{"a":{"a":null}}}`)), "the same key in sibling and nested objects is fine")
}

func TestStateTimestampsMustBeCanonical(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"9999-12-31", "yesterday", "2026-13-45T99:99:99Z", "2026-02-30T00:00:00.000Z",
		"2026-01-02T03:04:05Z", "2026-01-02T03:04:05.678+00:00", "2026-01-02 03:04:05.678Z", "2026-01-02T03:04:05.6789Z", " 2026-01-02T03:04:05.678Z"} {
		t.Run(bad, func(t *testing.T) {
			t.Parallel()
			for _, field := range []string{"queuedAt", "acquiredAt", "expiresAt"} {
				h := map[string]any{"holderId": "h", "queuedAt": "2026-01-02T03:04:05.678Z", "acquiredAt": "2026-01-02T03:04:05.678Z", "expiresAt": "2026-01-02T07:04:05.678Z"}
				h[field] = bad
				doc := rawJSON(t, map[string]any{"schemaVersion": 2, "lock": testLock, "holder": h, "holders": []any{h}, "queue": []any{}})
				_, err := Decode(doc, DecodeOptions{Lock: testLock})
				requireCode(t, err, CodeInvalidTimestamp)
			}
			r := quarantineOn("q-1", "r1")
			r.CreatedAt = bad
			s := stateAt(4)
			s.Reservations = []Reservation{r}
			_, err := Encode(s)
			requireCode(t, err, CodeInvalidReservation)
		})
	}
	// Legacy defaults stay readable: an empty expiresAt (no lease) and a
	// missing queuedAt (filled from acquiredAt).
	h := map[string]any{"holderId": "h", "acquiredAt": "2026-01-02T03:04:05.678Z", "expiresAt": ""}
	s, err := Decode(rawJSON(t, map[string]any{"schemaVersion": 2, "lock": testLock, "holder": h, "holders": []any{h}, "queue": []any{}}), DecodeOptions{Lock: testLock})
	require.NoError(t, err)
	assert.Equal(t, "2026-01-02T03:04:05.678Z", s.Holders[0].QueuedAt)
	far, ok := ParseStateTime("9999-12-31T23:59:59.999Z")
	assert.True(t, ok, "a far-future canonical lease parses in both clients")
	assert.Equal(t, 9999, far.Year())
}

// stringLeaves maps every string value of a JSON document to its path.
func stringLeaves(t testing.TB, data []byte) map[string]string {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(data, &v))
	out := map[string]string{}
	var walk func(string, any)
	walk = func(p string, v any) {
		switch x := v.(type) {
		case string:
			out[p] = x
		case []any:
			for i, e := range x {
				walk(p+"["+strconv.Itoa(i)+"]", e)
			}
		case map[string]any:
			for k, e := range x {
				walk(p+"."+k, e)
			}
		}
	}
	walk("$", v)
	return out
}
