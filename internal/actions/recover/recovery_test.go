package recover_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap/reaptest"
	recoveraction "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/recover"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/recovery"
)

const (
	seedM      = "Seed locks/" + reaptest.Lock + ".json"
	cfgHealth  = `{"maxHolders":3,"runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true,"releaseCooldownSeconds":90}`
	cfgHealth0 = `{"maxHolders":3,"runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true,"releaseCooldownSeconds":0}`
	// cfgHealthFull: the seeded quarantine and cooldown take both seats.
	cfgHealthFull = `{"maxHolders":2,"runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true,"releaseCooldownSeconds":90}`
)

func deps(w *reaptest.World) recovery.Deps {
	return recovery.Deps{Getenv: w.Getenv, Stdout: w.Stdout, Transport: w.Em.Transport(), NewID: w.NewID, Jitter: func() float64 { return 0.5 }}
}

func reservation(id, runner, state string, created time.Time) lockstate.Reservation {
	r := lockstate.Reservation{ReservationID: id, HolderID: "acme/game:11:build:default", Repository: "acme/game", Workflow: "CI", Job: "build",
		RunID: "11", RunAttempt: "1", RunURL: "https://github.com/acme/game/actions/runs/11", RunnerID: runner,
		Reason: "cleanup-evidence-unknown", State: state, CreatedAt: lockstate.FormatTime(created)}
	if state == lockstate.ReservationCooldown {
		r.AvailableAt = lockstate.FormatTime(created.Add(time.Hour))
	}
	return r
}

func incident(t *testing.T, runner string) *lockstate.Incident {
	inc, err := lockstate.IncidentFor(lockstate.Identity{Repository: "acme/game", Workflow: "CI", Job: "build", RunID: "12", RunAttempt: "1", RunnerID: runner},
		time.Now(), reaptest.ServerURL)
	require.NoError(t, err)
	return inc
}

// seeded returns a world whose state (schema 5) has a quarantine q1 on r1,
// a cooldown c1 on r2 and, when withIncident, an incident on runner r3.
func seeded(t *testing.T, cfg string, schema int, withIncident bool) (*reaptest.World, *lockstate.State) {
	w := reaptest.New(t, cfg)
	now := time.Now()
	s := lockstate.Empty(reaptest.Lock)
	s.SchemaVersion = schema
	s.UpdatedAt = lockstate.FormatTime(now)
	if schema >= 4 {
		s.Reservations = []lockstate.Reservation{
			reservation("q1", "r1", lockstate.ReservationQuarantine, now.Add(-time.Hour)),
			reservation("c1", "r2", lockstate.ReservationCooldown, now.Add(-time.Minute)),
		}
	}
	if withIncident {
		s.ActiveIncident = incident(t, "r3")
	}
	w.SeedState(s)
	return w, s
}

func set(w *reaptest.World, kv ...string) {
	for i := 0; i+1 < len(kv); i += 2 {
		w.Env[kv[i]] = kv[i+1]
	}
}

// TestRecoverRefusals: every missing proof, wrong ID or wrong state fails
// closed, names its rule, and writes nothing.
func TestRecoverRefusals(t *testing.T) {
	t.Parallel()
	type want struct {
		rule  string         // lockaction.RefusalError rule
		code  lockstate.Code // lockstate.Error code
		input string         // actionio.InputError code
	}
	cases := []struct {
		name   string
		schema int
		inc    bool
		env    []string
		want   want
	}{
		{"recover without resource-safe", 5, false, []string{"INPUT_OPERATION", "recover", "INPUT_RESERVATION_ID", "q1"}, want{rule: recovery.RuleResourceSafeRequired}},
		{"recover with resource-safe=false", 5, false, []string{"INPUT_OPERATION", "recover", "INPUT_RESERVATION_ID", "q1", "INPUT_RESOURCE_SAFE", "false"}, want{rule: recovery.RuleResourceSafeRequired}},
		{"recover with a non-boolean resource-safe", 5, false, []string{"INPUT_OPERATION", "recover", "INPUT_RESERVATION_ID", "q1", "INPUT_RESOURCE_SAFE", "yes"}, want{input: actionio.CodeInvalidBoolean}},
		{"recover without reservation-id", 5, false, []string{"INPUT_OPERATION", "recover", "INPUT_RESOURCE_SAFE", "true"}, want{rule: recovery.RuleReservationIDRequired}},
		{"recover with a wrong reservation-id", 5, false, []string{"INPUT_OPERATION", "recover", "INPUT_RESERVATION_ID", "nope", "INPUT_RESOURCE_SAFE", "true"}, want{code: lockstate.CodeReservationNotFound}},
		{"recover a cooldown", 5, false, []string{"INPUT_OPERATION", "recover", "INPUT_RESERVATION_ID", "c1", "INPUT_RESOURCE_SAFE", "true"}, want{code: lockstate.CodeReservationNotFound}},
		{"recover below schema 4", 3, false, []string{"INPUT_OPERATION", "recover", "INPUT_RESERVATION_ID", "q1", "INPUT_RESOURCE_SAFE", "true"}, want{code: lockstate.CodeSchemaTooOld}},
		{"recover-incident without proof", 5, true, []string{"INPUT_OPERATION", "recover-incident"}, want{rule: recovery.RulePortalCleanupConfirmed}},
		{"recover-incident with proof=false", 5, true, []string{"INPUT_OPERATION", "recover-incident", "INPUT_PORTAL_CLEANUP_CONFIRMED", "false"}, want{rule: recovery.RulePortalCleanupConfirmed}},
		{"recover-incident with a malformed id", 5, true, []string{"INPUT_OPERATION", "recover-incident", "INPUT_PORTAL_CLEANUP_CONFIRMED", "true", "INPUT_INCIDENT_ID", "incident-XYZ"}, want{rule: recovery.RuleIncidentIDPattern}},
		{"recover-incident with a wrong id", 5, true, []string{"INPUT_OPERATION", "recover-incident", "INPUT_PORTAL_CLEANUP_CONFIRMED", "true", "INPUT_INCIDENT_ID", "incident-000000000000000000000000"}, want{code: lockstate.CodeIncidentNotFound}},
		{"recover-incident with no incident to bind", 5, false, []string{"INPUT_OPERATION", "recover-incident", "INPUT_PORTAL_CLEANUP_CONFIRMED", "true"}, want{rule: recovery.RuleNoActiveIncident}},
		{"recover-incident with an exact id but no incident", 5, false, []string{"INPUT_OPERATION", "recover-incident", "INPUT_PORTAL_CLEANUP_CONFIRMED", "true", "INPUT_INCIDENT_ID", "incident-000000000000000000000000"}, want{code: lockstate.CodeIncidentNotFound}},
		{"recover-incident below schema 5", 4, false, []string{"INPUT_OPERATION", "recover-incident", "INPUT_PORTAL_CLEANUP_CONFIRMED", "true"}, want{code: lockstate.CodeSchemaTooOld}},
		{"missing operation", 5, false, []string{"INPUT_OPERATION", ""}, want{input: actionio.CodeRequired}},
		{"reap is not a recovery", 5, false, []string{"INPUT_OPERATION", "reap"}, want{rule: recovery.RuleOperation}},
		{"not in the lock repository", 5, false, []string{"INPUT_OPERATION", "recover", "INPUT_RESERVATION_ID", "q1", "INPUT_RESOURCE_SAFE", "true", "GITHUB_REPOSITORY", "acme/game"}, want{rule: recovery.RuleLockRepositoryOnly}},
		{"writer credentials missing", 5, false, []string{"INPUT_OPERATION", "recover", "INPUT_RESERVATION_ID", "q1", "INPUT_RESOURCE_SAFE", "true", "BUILD_LOCK_APP_PRIVATE_KEY", ""}, want{rule: "app-credentials"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				w, _ := seeded(t, cfgHealth, tc.schema, tc.inc)
				set(w, tc.env...)
				err := recoveraction.Run(context.Background(), deps(w))
				require.Error(t, err)
				switch {
				case tc.want.rule != "":
					var re *lockaction.RefusalError
					require.ErrorAs(t, err, &re, "%v", err)
					assert.Equal(t, tc.want.rule, re.Rule)
				case tc.want.code != "":
					assert.Equal(t, tc.want.code, lockstate.CodeOf(err), "%v", err)
				default:
					var ie *actionio.InputError
					require.ErrorAs(t, err, &ie, "%v", err)
					assert.Equal(t, tc.want.input, ie.Code)
				}
				assert.Equal(t, []string{seedM}, w.Messages(), "nothing written")
				assert.Empty(t, w.Outputs(), "no outputs on a refusal")
				for _, r := range w.Em.Metrics().Log {
					assert.NotEqual(t, "PUT", r.Method, "no write attempted")
				}
				assert.NotContains(t, err.Error(), "PRIVATE KEY")
			})
		})
	}
}

func TestRecoverQuarantineToCooldown(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w, _ := seeded(t, cfgHealth, 5, true)
		set(w, "INPUT_OPERATION", "recover", "INPUT_RESERVATION_ID", "q1", "INPUT_RESOURCE_SAFE", "TRUE")
		require.NoError(t, recoveraction.Run(context.Background(), deps(w)))
		assert.Equal(t, []string{seedM, "Recover reservation q1"}, w.Messages())
		st := w.State()
		require.Len(t, st.Reservations, 2)
		q := st.Reservations[0]
		assert.Equal(t, lockstate.ReservationCooldown, q.State)
		assert.Equal(t, lockstate.ReasonOperatorRecovery, q.Reason)
		assert.Equal(t, lockstate.FormatTime(time.Now().Add(90*time.Second)), q.AvailableAt)
		assert.NotNil(t, st.ActiveIncident, "recover never touches the incident")
		assert.Equal(t, map[string]string{"reaped": "true", "state-sha": w.History()[1].BlobSHA}, w.Outputs())
		assert.Contains(t, w.Summary(), "Moved quarantine q1 to cooldown for seats")
		for _, r := range w.Em.Metrics().Log {
			assert.NotContains(t, r.Path, "/actions/", "recovery never reads workflow runs")
		}
	})
}

func TestRecoverQuarantineCooldownZeroFreesTheSlot(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w, _ := seeded(t, cfgHealth0, 5, false)
		set(w, "INPUT_OPERATION", "recover", "INPUT_RESERVATION_ID", "q1", "INPUT_RESOURCE_SAFE", "true")
		require.NoError(t, recoveraction.Run(context.Background(), deps(w)))
		st := w.State()
		require.Len(t, st.Reservations, 1)
		assert.Equal(t, "c1", st.Reservations[0].ReservationID)
		assert.Contains(t, w.Summary(), "Freed quarantine q1")
	})
}

// TestRecoverWorksWithoutReaderCredentials: recovery needs only the writer.
func TestRecoverWorksWithoutReaderCredentials(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w, _ := seeded(t, cfgHealth, 5, false)
		set(w, "INPUT_OPERATION", "recover", "INPUT_RESERVATION_ID", "q1", "INPUT_RESOURCE_SAFE", "true",
			"BUILD_LOCK_READER_APP_ID", "", "BUILD_LOCK_READER_APP_PRIVATE_KEY", "")
		require.NoError(t, recoveraction.Run(context.Background(), deps(w)))
	})
}

func TestRecoverIncident(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		exact bool
		cfg   string
	}{{"bound from the canonical read", false, cfgHealth}, {"exact incident-id", true, cfgHealth}, {"cooldown 0", false, cfgHealth0}, {"every seat taken", false, cfgHealthFull}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				w, s := seeded(t, tc.cfg, 5, true)
				id := s.ActiveIncident.IncidentID
				set(w, "INPUT_OPERATION", "recover-incident", "INPUT_PORTAL_CLEANUP_CONFIRMED", "true")
				if tc.exact {
					set(w, "INPUT_INCIDENT_ID", id)
				}
				require.NoError(t, recoveraction.Run(context.Background(), deps(w)))
				assert.Equal(t, []string{seedM, "Recover global incident " + id}, w.Messages())
				st := w.State()
				assert.Nil(t, st.ActiveIncident)
				switch tc.cfg {
				case cfgHealth0:
					assert.Len(t, st.Reservations, 2, "cooldown 0 writes no reservation (never an invalid one)")
					assert.Contains(t, w.Summary(), "admits again immediately")
				case cfgHealthFull:
					assert.Len(t, st.Reservations, 2, "no cooldown on top of full seats (divergence V5)")
					assert.Contains(t, w.Summary(), "without a recovery cooldown: every seat")
				default:
					require.Len(t, st.Reservations, 3)
					r := st.Reservations[2]
					assert.Equal(t, "r3", r.RunnerID)
					assert.Equal(t, "portal cleanup confirmed for "+id, r.Reason)
					assert.Equal(t, "acme/game:12:build:incident-recovery", r.HolderID)
					assert.Equal(t, lockstate.FormatTime(time.Now().Add(90*time.Second)), r.AvailableAt)
				}
				if !tc.exact {
					assert.Contains(t, w.Stdout.String(), "Bound recover-incident to the single active incident "+id)
				}
				assert.Equal(t, "true", w.Outputs()["reaped"])
			})
		})
	}
}

// TestRecoverIncidentBindingIsFrozen: the ID bound at the first read is
// compared again before every write. When the incident changes between the
// read and the write (recovered and a new one raised), the write is refused.
func TestRecoverIncidentBindingIsFrozen(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w, s := seeded(t, cfgHealth, 5, true)
		set(w, "INPUT_OPERATION", "recover-incident", "INPUT_PORTAL_CLEANUP_CONFIRMED", "true")
		d := deps(w)
		other := s.Clone()
		other.ActiveIncident = incident(t, "r9")
		d.Transport = &hook{next: w.Em.Transport(), before: func() { w.SeedState(other) }}
		err := recoveraction.Run(context.Background(), d)
		assert.Equal(t, lockstate.CodeIncidentNotFound, lockstate.CodeOf(err), "%v", err)
		assert.Equal(t, []string{seedM, seedM}, w.Messages())
		assert.Equal(t, other.ActiveIncident, w.State().ActiveIncident)
	})
}

func TestRecoverIncidentRunnerStillReserved(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w, s := seeded(t, cfgHealth, 5, true)
		c := s.Clone()
		c.Reservations = append(c.Reservations, reservation("q3", "r3", lockstate.ReservationQuarantine, time.Now()))
		w.SeedState(c)
		set(w, "INPUT_OPERATION", "recover-incident", "INPUT_PORTAL_CLEANUP_CONFIRMED", "true")
		err := recoveraction.Run(context.Background(), deps(w))
		assert.Equal(t, lockstate.CodeRunnerConflict, lockstate.CodeOf(err), "%v", err)
		assert.Len(t, w.History(), 2)
	})
}

// TestRecoverAmbiguousWriteIsIdempotent: the recovery write is applied but
// its response is lost; the retry conflicts, and the next read shows the
// quarantine already recovered, which is success (spec §4.3, §4.4).
func TestRecoverAmbiguousWriteIsIdempotent(t *testing.T) {
	t.Parallel()
	for _, op := range []string{"recover", "recover-incident"} {
		t.Run(op, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				w, s := seeded(t, cfgHealth, 5, true)
				set(w, "INPUT_OPERATION", op, "INPUT_RESERVATION_ID", "q1", "INPUT_RESOURCE_SAFE", "true", "INPUT_PORTAL_CLEANUP_CONFIRMED", "true")
				w.Em.AddFault(emulator.Fault{Method: "PUT", Kind: emulator.WriteAcceptedResponseLost, Count: 1})
				require.NoError(t, recoveraction.Run(context.Background(), deps(w)))
				want := "Recover reservation q1"
				if op == "recover-incident" {
					want = "Recover global incident " + s.ActiveIncident.IncidentID
				}
				assert.Equal(t, []string{seedM, want}, w.Messages(), "written exactly once")
				assert.Equal(t, "true", w.Outputs()["reaped"])
				assert.Equal(t, w.History()[1].BlobSHA, w.Outputs()["state-sha"])
				assert.Contains(t, w.Summary(), "after an ambiguous write")
			})
		})
	}
}

// TestReapBinaryDispatchesRecovery: the reap-stale-locks action (cmd/reap)
// serves operation=recover through the same code.
func TestReapBinaryDispatchesRecovery(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w, _ := seeded(t, cfgHealth, 5, false)
		set(w, "INPUT_OPERATION", "recover", "INPUT_RESERVATION_ID", "q1", "INPUT_RESOURCE_SAFE", "true",
			"BUILD_LOCK_READER_APP_ID", "", "BUILD_LOCK_READER_APP_PRIVATE_KEY", "")
		require.NoError(t, reap.Run(context.Background(), deps(w)))
		assert.Equal(t, []string{seedM, "Recover reservation q1"}, w.Messages())
	})
}

func TestRecoverMainExitCodes(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w, _ := seeded(t, cfgHealth, 5, false)
		set(w, "INPUT_OPERATION", "recover", "INPUT_RESERVATION_ID", "q1", "INPUT_RESOURCE_SAFE", "false")
		assert.Equal(t, lockaction.ExitFailure, recoveraction.Main(context.Background(), deps(w), nil))
		assert.Contains(t, w.Stdout.String(), "::error title=resource-safe-required::")
		assert.Contains(t, w.Stdout.String(), "rule resource-safe-required")
		set(w, "INPUT_RESOURCE_SAFE", "true")
		assert.Equal(t, lockaction.ExitOK, recoveraction.Main(context.Background(), deps(w), nil))
	})
}

// hook runs before once, just before the first state PUT: a concurrent
// writer between the recovery's read and its compare-and-swap write.
type hook struct {
	next   http.RoundTripper
	before func()
	once   sync.Once
}

func (h *hook) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/contents/"+reaptest.StatePath()) {
		h.once.Do(h.before)
	}
	return h.next.RoundTrip(r)
}
