package lockstate

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mapEntry(id, runner string, holder bool) map[string]any {
	m := map[string]any{
		"holderId": id, "repository": "o/r", "workflow": "w", "job": "j", "runId": "1", "runAttempt": "1",
		"runUrl": "https://github.com/o/r/actions/runs/1", "queuedAt": "2024-01-01T00:00:00.000Z",
	}
	if holder {
		m["acquiredAt"] = "2024-01-01T00:00:01.000Z"
		m["expiresAt"] = "2024-01-01T04:00:01.000Z"
	}
	if runner != "" {
		m["runnerId"] = runner
	}
	return m
}

func mapReservation(id, runner, state string) map[string]any {
	m := map[string]any{
		"reservationId": id, "holderId": "o/r:1:j:x", "repository": "o/r", "workflow": "w", "job": "j", "runId": "1",
		"runAttempt": "1", "runUrl": "https://github.com/o/r/actions/runs/1", "runnerId": runner, "state": state,
		"reason": "cleanup-confirmed", "createdAt": "2024-01-01T00:00:00.000Z",
	}
	if state == ReservationCooldown {
		m["availableAt"] = "2024-01-01T00:06:00.000Z"
	}
	return m
}

func mapIncident() map[string]any {
	digest := EvidenceDigest("o/r", "w", "j", "7", "1", "r9", ReasonAccountLimit)
	return map[string]any{
		"incidentId": "incident-" + digest[:24], "repository": "o/r", "workflow": "w", "job": "j", "runId": "7",
		"runAttempt": "1", "runUrl": "https://github.com/o/r/actions/runs/7", "runnerId": "r9",
		"reportedAt": "2024-01-01T00:00:00.000Z", "reason": ReasonAccountLimit, "evidenceDigest": digest,
	}
}

// baseDoc is a valid document at schema with one holder (runner r1), one
// queue entry (runner r2), a quarantine (runner r3) and an incident as the
// schema allows.
func baseDoc(schema int) map[string]any {
	runner := func(r string) string {
		if schema >= 3 {
			return r
		}
		return ""
	}
	h := mapEntry("h1", runner("r1"), true)
	doc := map[string]any{
		"schemaVersion": schema, "lock": testLock, "holders": []any{h}, "holder": mapEntry("h1", runner("r1"), true),
		"queue": []any{mapEntry("q1", runner("r2"), false)}, "updatedAt": "2024-01-01T00:00:02.000Z",
	}
	if schema == 1 {
		delete(doc, "holders")
	}
	if schema >= 4 {
		doc["reservations"] = []any{mapReservation("res1", "r3", ReservationQuarantine)}
	}
	if schema >= 5 {
		doc["activeIncident"] = mapIncident()
	}
	if schema >= 6 {
		h["fencingToken"] = 7
		doc["holder"].(map[string]any)["fencingToken"] = 7
		doc["queue"].([]any)[0].(map[string]any)["overtakes"] = 1
		doc["fencingToken"] = 9
	}
	return doc
}

func TestDecodeBaseDocsAreValid(t *testing.T) {
	t.Parallel()
	for schema := 1; schema <= MaxSchemaVersion; schema++ {
		s, err := Decode(rawJSON(t, baseDoc(schema)), DecodeOptions{Lock: testLock})
		require.NoError(t, err, "schema %d", schema)
		assert.Equal(t, max(schema, 2), s.SchemaVersion)
		mustEncodeDecode(t, s)
	}
}

func TestDecodeFailClosedRules(t *testing.T) {
	t.Parallel()
	type tc struct {
		name   string
		schema int
		mutate func(d map[string]any)
		raw    string
		opts   DecodeOptions
		want   Code
	}
	holders := func(d map[string]any) []any { return d["holders"].([]any) }
	cases := []tc{
		{name: "invalid json", raw: `{"lock":`, want: CodeInvalidJSON},
		{name: "trailing data", raw: `{} {}`, want: CodeInvalidJSON},
		{name: "rule 1 array", raw: `[]`, want: CodeNotObject},
		{name: "rule 1 null", raw: `null`, want: CodeNotObject},
		{name: "rule 2 empty object", raw: `{}`, want: CodeLockMismatch},
		{name: "rule 2 other lock", schema: 2, mutate: func(d map[string]any) { d["lock"] = "other" }, want: CodeLockMismatch},
		{name: "rule 2 empty expected lock", raw: `{"lock":""}`, opts: DecodeOptions{Lock: ""}, want: CodeInvalidLockName},
		{name: "rule 3 string schema", schema: 2, mutate: func(d map[string]any) { d["schemaVersion"] = "2" }, want: CodeUnsupportedSchema},
		{name: "rule 3 zero schema", schema: 2, mutate: func(d map[string]any) { d["schemaVersion"] = 0 }, want: CodeUnsupportedSchema},
		{name: "rule 3 fractional schema", schema: 2, mutate: func(d map[string]any) { d["schemaVersion"] = 2.5 }, want: CodeUnsupportedSchema},
		{name: "rule 3 null schema", schema: 2, mutate: func(d map[string]any) { d["schemaVersion"] = nil }, want: CodeUnsupportedSchema},
		{name: "rule 3 newer schema", schema: 6, mutate: func(d map[string]any) { d["schemaVersion"] = 7 }, want: CodeNewerSchema},
		{name: "rule 3 far newer schema", schema: 5, mutate: func(d map[string]any) { d["schemaVersion"] = 1e20 }, want: CodeNewerSchema},
		{name: "rule 4 queue object", schema: 2, mutate: func(d map[string]any) { d["queue"] = map[string]any{} }, want: CodeInvalidQueue},
		{name: "rule 4 queue null", schema: 1, mutate: func(d map[string]any) { d["queue"] = nil }, want: CodeInvalidQueue},
		{name: "rule 5 holders missing", schema: 2, mutate: func(d map[string]any) { delete(d, "holders") }, want: CodeInvalidHolders},
		{name: "rule 6 no holder mirror", schema: 3, mutate: func(d map[string]any) { delete(d, "holder") }, want: CodeMissingHolderMirror},
		{name: "rule 7 reservations missing", schema: 4, mutate: func(d map[string]any) { delete(d, "reservations") }, want: CodeInvalidReservations},
		{name: "rule 8 no activeIncident", schema: 5, mutate: func(d map[string]any) { delete(d, "activeIncident") }, want: CodeMissingActiveIncident},
		{name: "rule 9 reservation without id", schema: 4, mutate: func(d map[string]any) {
			d["reservations"] = []any{map[string]any{"reservationId": "  "}}
		}, want: CodeInvalidReservation},
		{name: "rule 9 reservation not object", schema: 4, mutate: func(d map[string]any) { d["reservations"] = []any{"x"} }, want: CodeInvalidReservation},
		{name: "rule 10 schema 1 without holder", schema: 1, mutate: func(d map[string]any) { delete(d, "holder") }, want: CodeMissingHolderMirror},
		{name: "rule 11 holder without holderId", schema: 2, mutate: func(d map[string]any) { d["holders"] = []any{map[string]any{"holderId": ""}} }, want: CodeInvalidEntry},
		{name: "rule 11 queue entry not object", schema: 2, mutate: func(d map[string]any) { d["queue"] = []any{"x"} }, want: CodeInvalidEntry},
		{name: "rule 11 queue holderId zero", schema: 2, mutate: func(d map[string]any) { d["queue"] = []any{map[string]any{"holderId": 0}} }, want: CodeInvalidEntry},
		{name: "rule 12 holder mirror string", schema: 2, mutate: func(d map[string]any) { d["holder"] = "h1" }, want: CodeInvalidHolderMirror},
		{name: "rule 12 schema 1 holder without id", schema: 1, mutate: func(d map[string]any) { d["holder"] = map[string]any{} }, want: CodeInvalidHolderMirror},
		{name: "rule 13 field differs", schema: 2, mutate: func(d map[string]any) { d["holder"].(map[string]any)["runId"] = "2" }, want: CodeHolderMirrorMismatch},
		{name: "rule 13 null mirror with holders", schema: 2, mutate: func(d map[string]any) { d["holder"] = nil }, want: CodeHolderMirrorMismatch},
		{name: "rule 13 mirror without holders", schema: 2, mutate: func(d map[string]any) { d["holders"] = []any{} }, want: CodeHolderMirrorMismatch},
		{name: "rule 13 runnerId differs", schema: 3, mutate: func(d map[string]any) { d["holder"].(map[string]any)["runnerId"] = "rX" }, want: CodeHolderMirrorMismatch},
		{name: "rule 13 jobId only on mirror", schema: 2, mutate: func(d map[string]any) { d["holder"].(map[string]any)["jobId"] = "5" }, want: CodeHolderMirrorMismatch},
		{name: "rule 14 duplicate holder", schema: 2, mutate: func(d map[string]any) {
			d["holders"] = append(holders(d), mapEntry("h1", "", true))
		}, want: CodeDuplicateHolder},
		{name: "rule 15 missing runnerId on holder", schema: 3, mutate: func(d map[string]any) {
			delete(holders(d)[0].(map[string]any), "runnerId")
			delete(d["holder"].(map[string]any), "runnerId")
		}, want: CodeMissingRunnerID},
		{name: "rule 15 blank runnerId on queue", schema: 4, mutate: func(d map[string]any) {
			d["queue"].([]any)[0].(map[string]any)["runnerId"] = "  "
		}, want: CodeMissingRunnerID},
		{name: "rule 16 empty jobId", schema: 2, mutate: func(d map[string]any) { d["queue"].([]any)[0].(map[string]any)["jobId"] = "" }, want: CodeInvalidJobID},
		{name: "rule 16 null jobId", schema: 2, mutate: func(d map[string]any) { d["queue"].([]any)[0].(map[string]any)["jobId"] = nil }, want: CodeInvalidJobID},
		{name: "rule 16 leading zero jobId", schema: 3, mutate: func(d map[string]any) { d["queue"].([]any)[0].(map[string]any)["jobId"] = "012" }, want: CodeInvalidJobID},
		{name: "rule 17 reservation bad state", schema: 4, mutate: func(d map[string]any) {
			d["reservations"] = []any{mapReservation("x", "r3", "held")}
		}, want: CodeInvalidReservation},
		{name: "rule 17 cooldown not after createdAt", schema: 4, mutate: func(d map[string]any) {
			r := mapReservation("x", "r3", ReservationCooldown)
			r["availableAt"] = r["createdAt"]
			d["reservations"] = []any{r}
		}, want: CodeInvalidReservation},
		{name: "rule 17 cooldown without availableAt", schema: 4, mutate: func(d map[string]any) {
			r := mapReservation("x", "r3", ReservationCooldown)
			delete(r, "availableAt")
			d["reservations"] = []any{r}
		}, want: CodeInvalidReservation},
		{name: "rule 17 quarantine with availableAt key", schema: 4, mutate: func(d map[string]any) {
			r := mapReservation("x", "r3", ReservationQuarantine)
			r["availableAt"] = nil
			d["reservations"] = []any{r}
		}, want: CodeInvalidReservation},
		{name: "rule 17 reservation bad createdAt", schema: 4, mutate: func(d map[string]any) {
			r := mapReservation("x", "r3", ReservationQuarantine)
			r["createdAt"] = "yesterday"
			d["reservations"] = []any{r}
		}, want: CodeInvalidReservation},
		{name: "rule 17 reservation empty reason", schema: 4, mutate: func(d map[string]any) {
			r := mapReservation("x", "r3", ReservationQuarantine)
			r["reason"] = ""
			d["reservations"] = []any{r}
		}, want: CodeInvalidReservation},
		{name: "rule 17 incident bad digest", schema: 5, mutate: func(d map[string]any) {
			d["activeIncident"].(map[string]any)["runnerId"] = "r8"
		}, want: CodeInvalidIncident},
		{name: "rule 17 incident wrong reason", schema: 5, mutate: func(d map[string]any) {
			d["activeIncident"].(map[string]any)["reason"] = "return-timeout"
		}, want: CodeInvalidIncident},
		{name: "rule 17 incident not object", schema: 5, mutate: func(d map[string]any) { d["activeIncident"] = "x" }, want: CodeInvalidIncident},
		{name: "rule 17 incident numeric field", schema: 5, mutate: func(d map[string]any) { d["activeIncident"].(map[string]any)["runId"] = 7 }, want: CodeInvalidIncident},
		{name: "rule 17 incident other server", schema: 5, opts: DecodeOptions{Lock: testLock, ServerURL: "https://ghe.example.com"}, want: CodeInvalidIncident},
		{name: "rule 17 invalid server url", schema: 5, opts: DecodeOptions{Lock: testLock, ServerURL: "https://user:pw@github.com"}, want: CodeInvalidServerURL},
		{name: "rule 18 two holders on one runner", schema: 3, mutate: func(d map[string]any) {
			d["holders"] = append(holders(d), mapEntry("h2", "r1", true))
		}, want: CodeRunnerConflict},
		{name: "rule 18 duplicate queue holderId", schema: 3, mutate: func(d map[string]any) {
			d["queue"] = append(d["queue"].([]any), mapEntry("q1", "r2", false))
		}, want: CodeDuplicateQueueEntry},
		{name: "rule 19 duplicate reservationId", schema: 4, mutate: func(d map[string]any) {
			d["reservations"] = append(d["reservations"].([]any), mapReservation("res1", "r4", ReservationQuarantine))
		}, want: CodeDuplicateReservation},
		{name: "rule 19 two reservations on one runner", schema: 4, mutate: func(d map[string]any) {
			d["reservations"] = append(d["reservations"].([]any), mapReservation("res2", "r3", ReservationCooldown))
		}, want: CodeRunnerConflict},
		{name: "rule 19 holder and reservation on one runner", schema: 5, mutate: func(d map[string]any) {
			d["reservations"] = []any{mapReservation("res1", "r1", ReservationQuarantine)}
		}, want: CodeRunnerConflict},
		{name: "rule 20 counter missing", schema: 6, mutate: func(d map[string]any) { delete(d, "fencingToken") }, want: CodeInvalidFencingToken},
		{name: "rule 20 counter null", schema: 6, mutate: func(d map[string]any) { d["fencingToken"] = nil }, want: CodeInvalidFencingToken},
		{name: "rule 20 counter string", schema: 6, mutate: func(d map[string]any) { d["fencingToken"] = "9" }, want: CodeInvalidFencingToken},
		{name: "rule 20 counter negative", schema: 6, mutate: func(d map[string]any) { d["fencingToken"] = -1 }, want: CodeInvalidFencingToken},
		{name: "rule 20 counter fraction", schema: 6, mutate: func(d map[string]any) { d["fencingToken"] = 9.5 }, want: CodeInvalidFencingToken},
		{name: "rule 20 counter beyond safe integer", schema: 6, mutate: func(d map[string]any) { d["fencingToken"] = float64(1 << 53) }, want: CodeInvalidFencingToken},
		{name: "rule 21 holder token missing", schema: 6, mutate: func(d map[string]any) {
			delete(holders(d)[0].(map[string]any), "fencingToken")
			delete(d["holder"].(map[string]any), "fencingToken")
		}, want: CodeInvalidFencingToken},
		{name: "rule 21 holder token zero", schema: 6, mutate: func(d map[string]any) {
			holders(d)[0].(map[string]any)["fencingToken"] = 0
			d["holder"].(map[string]any)["fencingToken"] = 0
		}, want: CodeInvalidFencingToken},
		{name: "rule 21 holder token string", schema: 6, mutate: func(d map[string]any) {
			holders(d)[0].(map[string]any)["fencingToken"] = "7"
			d["holder"].(map[string]any)["fencingToken"] = "7"
		}, want: CodeInvalidFencingToken},
		{name: "rule 13 mirror token differs", schema: 6, mutate: func(d map[string]any) { d["holder"].(map[string]any)["fencingToken"] = 8 }, want: CodeHolderMirrorMismatch},
		{name: "rule 13 mirror token missing", schema: 6, mutate: func(d map[string]any) { delete(d["holder"].(map[string]any), "fencingToken") }, want: CodeHolderMirrorMismatch},
		{name: "rule 22 token ahead of counter", schema: 6, mutate: func(d map[string]any) { d["fencingToken"] = 6 }, want: CodeFencingTokenAhead},
		{name: "rule 22 duplicate token", schema: 6, mutate: func(d map[string]any) {
			h := mapEntry("h2", "r4", true)
			h["fencingToken"] = 7
			d["holders"] = append(holders(d), h)
		}, want: CodeDuplicateFencingToken},
		{name: "rule 23 overtakes missing", schema: 6, mutate: func(d map[string]any) { delete(d["queue"].([]any)[0].(map[string]any), "overtakes") }, want: CodeInvalidOvertakes},
		{name: "rule 23 overtakes negative", schema: 6, mutate: func(d map[string]any) { d["queue"].([]any)[0].(map[string]any)["overtakes"] = -1 }, want: CodeInvalidOvertakes},
		{name: "rule 23 overtakes string", schema: 6, mutate: func(d map[string]any) { d["queue"].([]any)[0].(map[string]any)["overtakes"] = "1" }, want: CodeInvalidOvertakes},
		{name: "rule 23 overtakes null", schema: 6, mutate: func(d map[string]any) { d["queue"].([]any)[0].(map[string]any)["overtakes"] = nil }, want: CodeInvalidOvertakes},
		{name: "rule 23 overtakes fraction", schema: 6, mutate: func(d map[string]any) { d["queue"].([]any)[0].(map[string]any)["overtakes"] = 0.5 }, want: CodeInvalidOvertakes},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			data := []byte(c.raw)
			if c.raw == "" {
				d := baseDoc(c.schema)
				if c.mutate != nil {
					c.mutate(d)
				}
				data = rawJSON(t, d)
			}
			opts := c.opts
			if opts == (DecodeOptions{}) && c.name != "rule 2 empty expected lock" {
				opts.Lock = testLock
			}
			_, err := Decode(data, opts)
			requireCode(t, err, c.want)
		})
	}
}

func TestDecodeSchema6Values(t *testing.T) {
	t.Parallel()
	d := baseDoc(6)
	d["fencingToken"] = 9.0
	d["queue"].([]any)[0].(map[string]any)["overtakes"] = 2e0
	s, err := Decode(rawJSON(t, d), DecodeOptions{Lock: testLock})
	require.NoError(t, err)
	assert.Equal(t, int64(9), s.FencingToken)
	assert.Equal(t, int64(7), s.Holders[0].FencingToken)
	assert.Equal(t, 2, s.Queue[0].Overtakes)
	assert.Equal(t, int64(7), FencingToken(s, "h1"))
	assert.Equal(t, int64(0), FencingToken(s, "q1"))
	assert.Equal(t, 2, Overtakes(s, "q1"))
	assert.Equal(t, 0, Overtakes(s, "h1"))
	mustEncodeDecode(t, s)

	d = baseDoc(6)
	d["fencingToken"] = float64(MaxFencingToken)
	s, err = Decode(rawJSON(t, d), DecodeOptions{Lock: testLock})
	require.NoError(t, err)
	assert.Equal(t, MaxFencingToken, s.FencingToken)
	mustEncodeDecode(t, s)
}

// Below schema 6 the schema-6 keys are unknown fields: dropped on read and
// never written, exactly like every other unknown field.
func TestDecodeDropsFencingKeysBelowSchema6(t *testing.T) {
	t.Parallel()
	for schema := 2; schema < FencedSchemaVersion; schema++ {
		d := baseDoc(schema)
		d["fencingToken"] = "not even a number"
		d["holders"].([]any)[0].(map[string]any)["fencingToken"] = -3
		d["holder"].(map[string]any)["fencingToken"] = 99
		d["queue"].([]any)[0].(map[string]any)["overtakes"] = "x"
		s, err := Decode(rawJSON(t, d), DecodeOptions{Lock: testLock})
		require.NoError(t, err, "schema %d", schema)
		assert.Zero(t, s.FencingToken)
		assert.Zero(t, s.Holders[0].FencingToken)
		assert.Zero(t, s.Queue[0].Overtakes)
		data, err := Encode(s)
		require.NoError(t, err)
		assert.NotContains(t, string(data), "fencingToken")
		assert.NotContains(t, string(data), "overtakes")
	}
}

func TestEncodeRefusesInconsistentFencing(t *testing.T) {
	t.Parallel()
	a, b := ident(1, "r1"), ident(2, "r2")
	cases := []struct {
		name   string
		mutate func(s *State)
		want   Code
	}{
		{"counter below schema 6", func(s *State) { s.SchemaVersion = 5; s.Holders[0].FencingToken = 0; s.Holders[1].FencingToken = 0 }, CodeInvalidState},
		{"holder token below schema 6", func(s *State) { s.SchemaVersion = 5; s.FencingToken = 0; s.Holders[1].FencingToken = 0 }, CodeInvalidState},
		{"overtakes below schema 6", func(s *State) {
			s.SchemaVersion = 5
			s.FencingToken, s.Holders[0].FencingToken, s.Holders[1].FencingToken = 0, 0, 0
			s.Queue = []Entry{entryFor(ident(3, "r3"), 5)}
			s.Queue[0].Overtakes = 1
		}, CodeInvalidState},
		{"holder with overtakes", func(s *State) { s.Holders[0].Overtakes = 1 }, CodeInvalidState},
		{"negative counter", func(s *State) { s.FencingToken = -1 }, CodeInvalidFencingToken},
		{"counter beyond safe integer", func(s *State) { s.FencingToken = MaxFencingToken + 1 }, CodeInvalidFencingToken},
		{"zero holder token", func(s *State) { s.Holders[0].FencingToken = 0 }, CodeInvalidFencingToken},
		{"token ahead", func(s *State) { s.Holders[0].FencingToken = 6 }, CodeFencingTokenAhead},
		{"duplicate token", func(s *State) { s.Holders[1].FencingToken = 4 }, CodeDuplicateFencingToken},
		{"negative overtakes", func(s *State) {
			s.Queue = []Entry{entryFor(ident(3, "r3"), 6)}
			s.Queue[0].Overtakes = -1
		}, CodeInvalidOvertakes},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := stateAt(6)
			s.FencingToken = 5
			s.Holders = []Holder{holderTok(a, 6, 4), holderTok(b, 6, 5)}
			mustEncodeDecode(t, s)
			c.mutate(s)
			_, err := Encode(s)
			requireCode(t, err, c.want)
		})
	}
}

func TestDecodeSchema2DuplicateQueueAllowed(t *testing.T) {
	t.Parallel()
	d := baseDoc(2)
	d["queue"] = append(d["queue"].([]any), mapEntry("q1", "", false))
	s, err := Decode(rawJSON(t, d), DecodeOptions{Lock: testLock})
	require.NoError(t, err)
	assert.Len(t, s.Queue, 2)
}

func TestDecodeCoercesAndDefaults(t *testing.T) {
	t.Parallel()
	raw := `{"schemaVersion":2.0,"lock":"` + testLock + `","holder":null,"holders":[],"queue":[
		{"holderId":123,"runId":4567,"runAttempt":1e21,"runUrl":true,"job":0.000001,"workflow":[1,[2,3],null],"repository":{"a":1},"acquiredAt":"2024-01-01T00:00:00.000Z","jobId":99,"extra":1},
		{"holderId":"x","runnerId":"r","queuedAt":""}],"updatedAt":"u","unknown":{"dropped":true}}`
	s, err := Decode([]byte(raw), DecodeOptions{Lock: testLock, Now: t0})
	require.NoError(t, err)
	e := s.Queue[0]
	assert.Equal(t, "123", e.HolderID)
	assert.Equal(t, "4567", e.RunID)
	assert.Equal(t, "1e+21", e.RunAttempt)
	assert.Equal(t, "true", e.RunURL)
	assert.Equal(t, "0.000001", e.Job)
	assert.Equal(t, "1,2,3,", e.Workflow)
	assert.Equal(t, "[object Object]", e.Repository)
	assert.Equal(t, "2024-01-01T00:00:00.000Z", e.QueuedAt, "queuedAt falls back to acquiredAt")
	assert.Equal(t, "99", e.JobID)
	assert.Equal(t, FormatTime(t0), s.Queue[1].QueuedAt, "queuedAt falls back to now")
	assert.Empty(t, s.Queue[1].RunnerID, "schema 2 drops runnerId")
	mustEncodeDecode(t, s)
}

func TestJSNumberString(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"0": "0", "-0": "0", "1": "1", "1.5": "1.5", "100": "100", "1e21": "1e+21", "123456789012345678901": "123456789012345680000",
		"1e-7": "1e-7", "0.000001": "0.000001", "1.25e-7": "1.25e-7", "-2.5e30": "-2.5e+30", "1e400": "Infinity", "0.1": "0.1",
	}
	for in, want := range cases {
		assert.Equal(t, want, jsNumberString(in), in)
	}
}

func TestServerOrigin(t *testing.T) {
	t.Parallel()
	ok := map[string]string{"": "https://github.com", "https://GitHub.com/": "https://github.com", "http://ghe.local:80": "http://ghe.local", "https://ghe.local:8443": "https://ghe.local:8443"}
	for in, want := range ok {
		got, err := ServerOrigin(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got)
	}
	for _, bad := range []string{"ftp://x", "https://x/path", "https://x?q", "https://x#f", "https://u@x", "github.com", "/rel"} {
		_, err := ServerOrigin(bad)
		requireCode(t, err, CodeInvalidServerURL)
	}
}

func TestEncodeRefusesInvalidState(t *testing.T) {
	t.Parallel()
	s := stateAt(2)
	s.Reservations = []Reservation{quarantineOn("a", "r1")}
	_, err := Encode(s)
	requireCode(t, err, CodeInvalidState)

	s = stateAt(3)
	s.Queue = []Entry{{HolderID: "x"}}
	_, err = Encode(s)
	requireCode(t, err, CodeMissingRunnerID)

	s = stateAt(2)
	s.Queue = []Entry{{HolderID: "x\xff"}}
	_, err = Encode(s)
	requireCode(t, err, CodeInvalidState)

	_, err = Encode(nil)
	requireCode(t, err, CodeInvalidState)
}

func TestEncodeEscapingMatchesJS(t *testing.T) {
	t.Parallel()
	s := stateAt(2)
	s.Queue = []Entry{{HolderID: "a<b>&c\u2028\u2029\"\\\x01\x1f\x7f\t\n\b\f\r/é😀", QueuedAt: "2026-01-02T03:04:05.678Z"}}
	data, err := Encode(s)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"holderId": "a<b>&c`+"\u2028\u2029"+`\"\\\u0001\u001f`+"\x7f"+`\t\n\b\f\r/é😀"`)
	var v any
	require.NoError(t, json.Unmarshal(data, &v))
	mustEncodeDecode(t, s)
}

func TestEmptyAndClone(t *testing.T) {
	t.Parallel()
	e := Empty(testLock)
	data, err := Encode(e)
	require.NoError(t, err)
	assert.Equal(t, "{\n  \"schemaVersion\": 2,\n  \"lock\": \""+testLock+"\",\n  \"holder\": null,\n  \"holders\": [],\n  \"queue\": [],\n  \"updatedAt\": \"\"\n}\n", string(data))

	s := stateAt(5)
	s.Holders = []Holder{holderFor(ident(1, "r1"), 5)}
	s.Reservations = []Reservation{quarantineOn("q", "r2")}
	inc, err := IncidentFor(ident(2, "r3"), t0, "")
	require.NoError(t, err)
	s.ActiveIncident = inc
	c := s.Clone()
	require.Equal(t, s, c)
	c.Holders[0].HolderID = "changed"
	c.Reservations[0].ReservationID = "changed"
	c.ActiveIncident.Job = "changed"
	assert.NotEqual(t, "changed", s.Holders[0].HolderID)
	assert.NotEqual(t, "changed", s.Reservations[0].ReservationID)
	assert.NotEqual(t, "changed", s.ActiveIncident.Job)
	assert.Nil(t, (*State)(nil).Clone())
}

func TestFormatAndParseTime(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "2024-10-01T12:00:00.123Z", FormatTime(time.Date(2024, 10, 1, 14, 0, 0, 123999999, time.FixedZone("x", 7200))))
	for _, s := range []string{"2024-10-01T12:00:00.123Z", "2024-10-01T12:00:00Z", "2024-10-01T14:00:00+02:00", "2024-10-01", "2024-10-01T12:00"} {
		_, ok := ParseTime(s)
		assert.True(t, ok, s)
	}
	for _, s := range []string{"", "yesterday", "2024-13-01", "2024-10-01 12:00:00"} {
		_, ok := ParseTime(s)
		assert.False(t, ok, s)
	}
}
