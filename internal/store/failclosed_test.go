package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

type doc = map[string]any

func entryDoc(id, runner string) doc {
	d := doc{
		"holderId": "acme/game:" + id + ":build:default", "repository": "acme/game", "workflow": "CI", "job": "build",
		"runId": id, "runAttempt": "1", "runUrl": "https://github.com/acme/game/actions/runs/" + id,
		"queuedAt": "2026-12-02T11:00:00.000Z",
	}
	if runner != "" {
		d["runnerId"] = runner
	}
	return d
}

func holderDoc(id, runner string) doc {
	d := entryDoc(id, runner)
	d["acquiredAt"] = "2026-12-02T11:01:00.000Z"
	d["expiresAt"] = "2026-12-02T15:01:00.000Z"
	return d
}

func reservationDoc(rid, id, runner string) doc {
	d := entryDoc(id, runner)
	delete(d, "queuedAt")
	d["reservationId"] = rid
	d["state"] = "quarantine"
	d["reason"] = "release cleanup was not proven resource-safe"
	d["createdAt"] = "2026-12-02T11:30:00.000Z"
	return d
}

func stateDoc(schema any, holders []any, queue []any, extra doc) doc {
	d := doc{"schemaVersion": schema, "lock": lockName, "holder": nil, "holders": holders, "queue": queue}
	if len(holders) > 0 {
		d["holder"] = holders[0]
	}
	for k, v := range extra {
		if v == nil {
			delete(d, k)
			continue
		}
		d[k] = v
	}
	return d
}

// TestEveryFailClosedRuleRefusesAndWritesNothing feeds one violating document
// per rule of spec §2.3 through the store: Load and Update must return the
// typed lockstate error with the rule's stable code, never call the mutation,
// and leave the file's history untouched.
func TestEveryFailClosedRuleRefusesAndWritesNothing(t *testing.T) {
	t.Parallel()
	h1 := holderDoc("1", "r1")
	h2 := holderDoc("2", "r2")
	mismatched := holderDoc("1", "r1")
	mismatched["workflow"] = "Other"
	noRunner := holderDoc("1", "")
	badJob := holderDoc("1", "r1")
	badJob["jobId"] = "12x"
	badIncident := doc{"incidentId": "incident-xyz", "repository": "acme/game"}
	cases := []struct {
		rule string
		doc  any
		want lockstate.Code
	}{
		{"1 not an object", []any{}, lockstate.CodeNotObject},
		{"2 lock mismatch", stateDoc(2, []any{}, []any{}, doc{"lock": "other"}), lockstate.CodeLockMismatch},
		{"2 empty object", doc{}, lockstate.CodeLockMismatch},
		{"3 unsupported schema", stateDoc(0, []any{}, []any{}, nil), lockstate.CodeUnsupportedSchema},
		{"3 non-integer schema", stateDoc(2.5, []any{}, []any{}, nil), lockstate.CodeUnsupportedSchema},
		{"3 newer schema", stateDoc(lockstate.MaxSchemaVersion+1, []any{}, []any{}, nil), lockstate.CodeNewerSchema},
		{"4 queue not an array", stateDoc(2, []any{}, nil, doc{"queue": doc{}}), lockstate.CodeInvalidQueue},
		{"5 holders not an array", stateDoc(2, nil, []any{}, doc{"holders": "x"}), lockstate.CodeInvalidHolders},
		{"6 no legacy holder mirror", stateDoc(2, []any{}, []any{}, doc{"holder": nil}), lockstate.CodeMissingHolderMirror},
		{"7 reservations not an array", stateDoc(4, []any{}, []any{}, doc{"reservations": doc{}}), lockstate.CodeInvalidReservations},
		{"8 schema 5 without activeIncident", stateDoc(5, []any{}, []any{}, doc{"reservations": []any{}}), lockstate.CodeMissingActiveIncident},
		{"9 reservation without id", stateDoc(4, []any{}, []any{}, doc{"reservations": []any{doc{"state": "quarantine"}}}), lockstate.CodeInvalidReservation},
		{"10 schema 1 without holder", doc{"lock": lockName, "queue": []any{}}, lockstate.CodeMissingHolderMirror},
		{"11 entry without holderId", stateDoc(2, []any{}, []any{doc{"repository": "acme/game"}}, nil), lockstate.CodeInvalidEntry},
		{"12 holder mirror not an object", stateDoc(2, []any{}, []any{}, doc{"holder": 5}), lockstate.CodeInvalidHolderMirror},
		{"13 mirror mismatch", stateDoc(2, []any{h1}, []any{}, doc{"holder": mismatched}), lockstate.CodeHolderMirrorMismatch},
		{"14 duplicate holder", stateDoc(2, []any{h1, h1}, []any{}, nil), lockstate.CodeDuplicateHolder},
		{"15 schema 3 without runnerId", stateDoc(3, []any{noRunner}, []any{}, nil), lockstate.CodeMissingRunnerID},
		{"16 invalid jobId", stateDoc(3, []any{badJob}, []any{}, nil), lockstate.CodeInvalidJobID},
		{"17 invalid incident", stateDoc(5, []any{}, []any{}, doc{"reservations": []any{}, "activeIncident": badIncident}), lockstate.CodeInvalidIncident},
		{"18 two holders on one runner", stateDoc(3, []any{h1, holderDoc("2", "r1")}, []any{}, nil), lockstate.CodeRunnerConflict},
		{"18 duplicate queue entry", stateDoc(3, []any{}, []any{entryDoc("3", "r3"), entryDoc("3", "r3")}, nil), lockstate.CodeDuplicateQueueEntry},
		{"19 duplicate reservation id", stateDoc(4, []any{}, []any{}, doc{"reservations": []any{reservationDoc("a", "5", "r5"), reservationDoc("a", "6", "r6")}}), lockstate.CodeDuplicateReservation},
		{"19 two reservations on one runner", stateDoc(4, []any{}, []any{}, doc{"reservations": []any{reservationDoc("a", "5", "r5"), reservationDoc("b", "6", "r5")}}), lockstate.CodeRunnerConflict},
		{"19 runner both holder and reservation", stateDoc(4, []any{h2}, []any{}, doc{"reservations": []any{reservationDoc("a", "5", "r2")}}), lockstate.CodeRunnerConflict},
	}
	for _, tc := range cases {
		t.Run(tc.rule, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			require.NoError(t, f.em.CreateBranch(owner, repo, branch, "main"))
			raw, err := json.MarshalIndent(tc.doc, "", "  ")
			require.NoError(t, err)
			_, err = f.em.PutFile(owner, repo, branch, statePath, raw)
			require.NoError(t, err)
			s := f.store(t)

			_, err = s.Load(context.Background())
			assert.Equal(t, tc.want, errCode(err), "Load: %v", err)
			_, err = s.Update(context.Background(), "Release seats", func(*lockstate.State) error {
				t.Error("the mutation ran on a state that failed validation")
				return nil
			})
			assert.Equal(t, tc.want, errCode(err), "Update: %v", err)
			assert.Len(t, f.history(), 1, "nothing written on top of an invalid state")
			assert.Zero(t, f.em.Metrics().Writes)
		})
	}
}
