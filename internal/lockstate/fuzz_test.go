package lockstate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func mustParse(t testing.TB, s string) time.Time {
	t.Helper()
	tm, ok := ParseTime(s)
	require.True(t, ok, s)
	return tm
}

func FuzzDecode(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(f, err)
	for _, name := range files {
		data, err := os.ReadFile(name)
		require.NoError(f, err)
		f.Add(data)
	}
	f.Add([]byte(`{"lock":"` + testLock + `","holder":null}`))
	f.Add([]byte(`{"schemaVersion":7,"lock":"` + testLock + `"}`))
	f.Add([]byte(`{"schemaVersion":6,"lock":"` + testLock + `","holder":null,"holders":[],"queue":[],"reservations":[],"activeIncident":null,"fencingToken":0,"updatedAt":""}`))
	f.Add([]byte(`{"schemaVersion":6,"lock":"` + testLock + `","holder":null,"holders":[],"queue":[{"holderId":"q","runnerId":"r","overtakes":1e0}],"reservations":[],"activeIncident":null,"fencingToken":9007199254740991}`))
	f.Add([]byte(`{"schemaVersion":3,"lock":"` + testLock + `","holder":null,"holders":[],"queue":[],"recentArrivals":[{"at":"2026-12-06T12:00:00.000Z","window":1700003600,"count":3}],"recentHolds":[{"at":"2026-12-06T12:00:05.000Z","heldMs":5123},{"at":"2026-12-06T12:00:11.000Z","heldMs":6000}],"updatedAt":"2026-12-06T12:00:11.000Z"}`))
	f.Add(doc2(`,"runnerName":"GitHub Actions 3","runnerOs":"Windows","runnerArch":"ARM64"`))
	f.Add(doc2(`,"workflow":"\ud83d\ude00\ufffd"`))
	f.Add(doc2(`,"workflow":"\ud800"`))
	f.Add(doc2(`,"job":"a","job":"b"`))
	f.Add([]byte("{\"schemaVersion\":2,\"lock\":\"" + testLock + "\",\"holder\":null,\"holders\":[],\"queue\":[{\"holderId\":\"\xc3\x28\"}]}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Decode(data, DecodeOptions{Lock: testLock})
		if err != nil {
			require.NotEmpty(t, CodeOf(err))
			return
		}
		out, err := Encode(s)
		require.NoError(t, err)
		// Identity is preserved: every string the output carries at a path
		// where the input had a string is byte-for-byte the input's (no
		// U+FFFD substitution, no duplicate-key guess). Paths that the
		// normalization rewrites (a schema-1 holder moving into holders,
		// defaults filling empty values, numbers coerced to strings) have
		// no string at the same input path, or an empty one.
		in := stringLeaves(t, data)
		// At schema 1 the holder mirror is rewritten: the normalized
		// holders are holders[] ++ [holder], and the mirror written back is
		// holders[0] (a schema-1 document that also carries a holders
		// array keeps both; schema 2+ refuses a mismatch, rule 13).
		var top map[string]any
		require.NoError(t, json.Unmarshal(data, &top))
		legacy := top["schemaVersion"] == nil || top["schemaVersion"] == float64(1)
		for p, v := range stringLeaves(t, out) {
			if legacy && strings.HasPrefix(p, "$.holder.") {
				continue
			}
			if was, ok := in[p]; ok && was != "" && p != "$.updatedAt" {
				require.Equal(t, was, v, "string at %s changed", p)
			}
		}
		back, err := Decode(out, DecodeOptions{Lock: testLock})
		require.NoError(t, err)
		require.Equal(t, s, back)
		again, err := Encode(back)
		require.NoError(t, err)
		require.Equal(t, string(out), string(again))
	})
}

func FuzzDecodeConfig(f *testing.F) {
	for _, seed := range []string{`{}`, `{"maxHolders":2}`, `{"maxHolders":"4","runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true,"releaseCooldownSeconds":0}`, `[]`, `nope`, `{"maxHolders":65,"releaseCooldownSeconds":-1}`,
		`{"runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true,"fencedAdmission":true,"maxOvertakes":0}`, `{"fencedAdmission":true,"maxOvertakes":"3"}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, _ := DecodeConfig(data)
		require.NoError(t, cfg.validate())
	})
}
