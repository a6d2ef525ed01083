package incidentaudit_test

// Tests that pin deliberate divergences of the incident recovery audit from
// the reference's Go command cmd/lock-recovery-audit (reference-behavior.md
// §4.5; docs/divergences.md).

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor/incidentaudit"
)

// TestAuditReadsTheStateAsTheClientsDo: the reference audit decodes the
// incident with DisallowUnknownFields and accepts a document without a
// lock key, while every lock client (JavaScript and Go) drops unknown keys
// and refuses a missing or different lock. This audit classifies with the
// clients' own decoder (lockstate.Decode), so it alerts on exactly the
// incident that blocks admission: an incident with an extra key still
// blocks every acquire, and is reported; a document without its lock key
// stops every client, and is lock-state-invalid. The reference audit knows
// schemas 1 through 5; this one also reads schema 6, this port's own.
func TestAuditReadsTheStateAsTheClientsDo(t *testing.T) {
	t.Parallel()
	cfg := incidentaudit.Config{Lock: lock, StateRef: "lock-state", Owner: owner, Repo: repo, ServerURL: "https://github.com"}
	inc := incident(t, "99", "unity-win-03", epoch)
	data, err := lockstate.Encode(schema5(inc))
	require.NoError(t, err)
	doc := string(data)

	t.Run("unknown key in the incident", func(t *testing.T) {
		t.Parallel()
		extra := strings.Replace(doc, `"incidentId": "`+inc.IncidentID+`",`, `"incidentId": "`+inc.IncidentID+`", "note": "added by a newer writer",`, 1)
		require.NotEqual(t, doc, extra)
		ev, err := incidentaudit.Classify([]byte(extra), cfg)
		require.NoError(t, err)
		assert.Equal(t, incidentaudit.IncidentActive, ev.Classification)
		assert.Equal(t, inc.IncidentID, ev.Incident.IncidentID)
	})
	t.Run("unknown top-level key", func(t *testing.T) {
		t.Parallel()
		extra := strings.Replace(doc, `"schemaVersion": 5,`, `"schemaVersion": 5, "comment": "x",`, 1)
		ev, err := incidentaudit.Classify([]byte(extra), cfg)
		require.NoError(t, err)
		assert.Equal(t, incidentaudit.IncidentActive, ev.Classification)
	})
	t.Run("schema 6", func(t *testing.T) {
		t.Parallel()
		s6 := schema5(inc)
		s6.SchemaVersion = lockstate.FencedSchemaVersion
		data, err := lockstate.Encode(s6)
		require.NoError(t, err)
		ev, err := incidentaudit.Classify(data, cfg)
		require.NoError(t, err)
		assert.Equal(t, incidentaudit.IncidentActive, ev.Classification)
		assert.Equal(t, lockstate.FencedSchemaVersion, ev.SchemaVersion)
	})
	t.Run("no lock key", func(t *testing.T) {
		t.Parallel()
		missing := strings.Replace(doc, `"lock": "`+lock+`",`, "", 1)
		require.NotEqual(t, doc, missing)
		_, err := incidentaudit.Classify([]byte(missing), cfg)
		var inv *incidentaudit.InvalidError
		require.True(t, errors.As(err, &inv), "%v", err)
		assert.Equal(t, incidentaudit.ReasonWrongLock, inv.Reason)
	})
}
