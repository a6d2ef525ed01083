package lockstate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	confirmed = Report{StatusConfirmed, HealthHealthy, ReasonCleanupConfirmed}
	unproven  = Report{StatusUnknown, HealthHealthy, "return-timeout"}
	blocked   = Report{StatusUnknown, HealthBlocked, ReasonAccountLimit}
)

func cleanupReq(id Identity, report Report) CleanupRequest {
	return CleanupRequest{HolderID: id.HolderID, RunAttempt: id.RunAttempt, RunnerID: id.RunnerID, Report: report, ReservationID: "res-new", Identity: id}
}

func TestCleanup(t *testing.T) {
	t.Parallel()
	a, b := ident(1, "r1"), ident(2, "r2")
	now := t0.Add(time.Hour)
	otherIncident, err := IncidentFor(ident(50, "r9"), t0, "")
	require.NoError(t, err)

	held := func(schema int, ids ...Identity) func() *State {
		return func() *State {
			s := stateAt(schema)
			for _, id := range ids {
				s.Holders = append(s.Holders, holderFor(id, schema))
			}
			return s
		}
	}
	type tc struct {
		name    string
		state   func() *State
		cfg     Config
		req     CleanupRequest
		want    CleanupResult
		changed bool
		code    Code
		check   func(t *testing.T, out *State, d CleanupDecision)
	}
	cases := []tc{
		{name: "noop reports the holder", state: held(2, b), cfg: DefaultConfig(), req: cleanupReq(a, confirmed), want: ResultNoop,
			check: func(t *testing.T, _ *State, d CleanupDecision) {
				assert.Equal(t, b.HolderID, d.HeldBy)
				assert.Equal(t, b.RunURL, d.HeldByRunURL)
			}},
		{name: "queue cleaned", state: func() *State {
			s := held(3, b)()
			s.Queue = []Entry{entryFor(a, 3)}
			return s
		}, cfg: cfgSerial(1), req: cleanupReq(a, unproven), want: ResultQueueCleaned, changed: true,
			check: func(t *testing.T, out *State, d CleanupDecision) {
				assert.True(t, d.QueueCleaned)
				assert.False(t, d.Released)
				assert.Empty(t, out.Queue)
			}},
		{name: "released schema 2 any attempt", state: held(2, a), cfg: DefaultConfig(), req: func() CleanupRequest {
			r := cleanupReq(a, unproven)
			r.RunAttempt = "0"
			return r
		}(), want: ResultReleased, changed: true},
		{name: "released schema 3", state: held(3, a, b), cfg: cfgSerial(2), req: cleanupReq(a, unproven), want: ResultReleased, changed: true,
			check: func(t *testing.T, out *State, d CleanupDecision) {
				assert.Equal(t, b.HolderID, d.HeldBy)
				assert.Len(t, out.Holders, 1)
			}},
		{name: "cooldown started", state: held(4, a), cfg: cfgLifecycle(1), req: cleanupReq(a, confirmed), want: ResultCooldownStarted, changed: true,
			check: func(t *testing.T, out *State, d CleanupDecision) {
				require.Len(t, out.Reservations, 1)
				r := out.Reservations[0]
				assert.Equal(t, ReservationCooldown, r.State)
				assert.Equal(t, "res-new", r.ReservationID)
				assert.Equal(t, "r1", r.RunnerID)
				assert.Equal(t, ReasonCleanupConfirmed, r.Reason)
				assert.Equal(t, FormatTime(now.Add(360*time.Second)), r.AvailableAt)
				assert.Equal(t, &r, d.Reservation)
			}},
		{name: "cooldown zero frees without reservation", state: held(4, a), cfg: func() Config { c := cfgLifecycle(1); c.ReleaseCooldownSeconds = 0; return c }(),
			req: cleanupReq(a, confirmed), want: ResultReleased, changed: true,
			check: func(t *testing.T, out *State, d CleanupDecision) {
				assert.Empty(t, out.Reservations)
				assert.Nil(t, d.Reservation)
			}},
		{name: "unproven cleanup quarantines", state: held(4, a), cfg: cfgLifecycle(1), req: cleanupReq(a, unproven), want: ResultQuarantined, changed: true,
			check: func(t *testing.T, out *State, _ CleanupDecision) {
				require.Len(t, out.Reservations, 1)
				assert.Equal(t, ReservationQuarantine, out.Reservations[0].State)
				assert.Equal(t, "return-timeout", out.Reservations[0].Reason)
				assert.Empty(t, out.Reservations[0].AvailableAt)
			}},
		{name: "zero report quarantines with default reason", state: held(4, a), cfg: cfgLifecycle(1), req: cleanupReq(a, Report{}), want: ResultQuarantined, changed: true,
			check: func(t *testing.T, out *State, _ CleanupDecision) {
				assert.Equal(t, ReasonDefaultUnproven, out.Reservations[0].Reason)
			}},
		{name: "reservation id required", state: held(4, a), cfg: cfgLifecycle(1), req: func() CleanupRequest {
			r := cleanupReq(a, unproven)
			r.ReservationID = " "
			return r
		}(), code: CodeReservationIDRequired},
		{name: "reservation id collision", state: func() *State {
			s := held(4, a)()
			s.Reservations = []Reservation{quarantineOn("res-new", "r5")}
			return s
		}, cfg: cfgLifecycle(2), req: cleanupReq(a, unproven), code: CodeDuplicateReservation},
		{name: "blocked report raises incident without reservation", state: held(5, a), cfg: cfgHealth(1), req: cleanupReq(a, blocked), want: ResultGlobalQuarantined, changed: true,
			check: func(t *testing.T, out *State, d CleanupDecision) {
				require.NotNil(t, out.ActiveIncident)
				assert.Empty(t, out.Reservations)
				assert.Equal(t, out.ActiveIncident.IncidentID, d.IncidentID)
				assert.Equal(t, "r1", out.ActiveIncident.RunnerID)
				assert.True(t, d.Released)
			}},
		{name: "blocked report keeps the existing incident", state: func() *State {
			s := held(5, a)()
			s.ActiveIncident = otherIncident
			return s
		}, cfg: cfgHealth(1), req: cleanupReq(a, blocked), want: ResultGlobalQuarantined, changed: true,
			check: func(t *testing.T, out *State, _ CleanupDecision) {
				assert.Equal(t, otherIncident, out.ActiveIncident)
			}},
		{name: "release during incident still cools down", state: func() *State {
			s := held(5, a)()
			s.ActiveIncident = otherIncident
			return s
		}, cfg: cfgHealth(1), req: cleanupReq(a, confirmed), want: ResultGlobalQuarantined, changed: true,
			check: func(t *testing.T, out *State, d CleanupDecision) {
				require.Len(t, out.Reservations, 1)
				assert.Equal(t, ReservationCooldown, out.Reservations[0].State)
				assert.NotNil(t, d.Reservation)
			}},
		{name: "noop during incident is global-quarantined", state: func() *State {
			s := stateAt(5)
			s.ActiveIncident = otherIncident
			return s
		}, cfg: cfgHealth(1), req: cleanupReq(a, confirmed), want: ResultGlobalQuarantined},
		{name: "blocked report with invalid identity", state: held(5, a), cfg: cfgHealth(1), req: func() CleanupRequest {
			r := cleanupReq(a, blocked)
			r.Identity.RunAttempt = "x"
			return r
		}(), code: CodeInvalidIncident},
		{name: "blocked report below schema 5 quarantines", state: held(4, a), cfg: cfgLifecycle(1), req: cleanupReq(a, blocked), want: ResultQuarantined, changed: true},
		{name: "queue only keeps the holder", state: func() *State {
			s := held(3, a)()
			s.Queue = []Entry{entryFor(a, 3)}
			return s
		}, cfg: cfgSerial(1), req: func() CleanupRequest { r := cleanupReq(a, Report{}); r.QueueOnly = true; return r }(), want: ResultQueueCleaned, changed: true,
			check: func(t *testing.T, out *State, _ CleanupDecision) {
				assert.Len(t, out.Holders, 1)
			}},
		{name: "pre-activation writes no reservation", state: held(4, a), cfg: cfgLifecycle(1), req: func() CleanupRequest {
			r := cleanupReq(a, Report{})
			r.PreActivation = true
			return r
		}(), want: ResultReleased, changed: true, check: func(t *testing.T, out *State, _ CleanupDecision) {
			assert.Empty(t, out.Reservations)
		}},
		{name: "pre-activation restores the consumed quarantine", state: held(4, a), cfg: cfgLifecycle(1), req: func() CleanupRequest {
			r := cleanupReq(a, Report{})
			r.PreActivation = true
			q := quarantineOn("q-old", "r1")
			r.RestoreQuarantine = &q
			return r
		}(), want: ResultReleased, changed: true, check: func(t *testing.T, out *State, d CleanupDecision) {
			assert.Equal(t, []Reservation{quarantineOn("q-old", "r1")}, out.Reservations)
			require.NotNil(t, d.Reservation)
		}},
		{name: "restore refuses another runner", state: held(4, a), cfg: cfgLifecycle(1), req: func() CleanupRequest {
			r := cleanupReq(a, Report{})
			r.PreActivation = true
			q := quarantineOn("q-old", "r2")
			r.RestoreQuarantine = &q
			return r
		}(), code: CodeInvalidQuarantineRestore},
		{name: "restore refuses a cooldown", state: held(4, a), cfg: cfgLifecycle(1), req: func() CleanupRequest {
			r := cleanupReq(a, Report{})
			r.PreActivation = true
			q := cooldownOn("q-old", "r1", now.Add(time.Hour))
			r.RestoreQuarantine = &q
			return r
		}(), code: CodeInvalidQuarantineRestore},
		{name: "restore refuses an existing id", state: func() *State {
			s := held(4, a)()
			s.Reservations = []Reservation{quarantineOn("q-old", "r7")}
			return s
		}, cfg: cfgLifecycle(2), req: func() CleanupRequest {
			r := cleanupReq(a, Report{})
			r.PreActivation = true
			q := quarantineOn("q-old", "r1")
			r.RestoreQuarantine = &q
			return r
		}(), code: CodeInvalidQuarantineRestore},
		{name: "stale attempt owns nothing", state: held(3, withAttempt(a, "2")), cfg: cfgSerial(1), req: cleanupReq(a, confirmed), want: ResultNoop,
			check: func(t *testing.T, _ *State, d CleanupDecision) {
				assert.Equal(t, a.HolderID, d.HeldBy)
			}},
		{name: "newer attempt on another runner owns", state: held(3, a), cfg: cfgSerial(1), req: func() CleanupRequest {
			r := cleanupReq(withAttempt(a, "2"), confirmed)
			r.RunnerID = "fallback"
			return r
		}(), want: ResultReleased, changed: true},
		{name: "non canonical attempt", state: held(3, a), cfg: cfgSerial(1), req: func() CleanupRequest {
			r := cleanupReq(a, confirmed)
			r.RunAttempt = ""
			return r
		}(), code: CodeInvalidRunAttempt},
		{name: "runner id required from schema 3", state: held(3, a), cfg: cfgSerial(1), req: func() CleanupRequest {
			r := cleanupReq(a, confirmed)
			r.RunnerID = ""
			return r
		}(), code: CodeRunnerIDRequired},
		{name: "invalid report", state: held(2, a), cfg: DefaultConfig(), req: cleanupReq(a, Report{StatusConfirmed, HealthHealthy, "return-timeout"}), code: CodeInvalidReport},
		{name: "empty holder id", state: held(2, a), cfg: DefaultConfig(), req: CleanupRequest{}, code: CodeInvalidIdentity},
		{name: "prune alone is written", state: func() *State {
			s := stateAt(4)
			s.Reservations = []Reservation{cooldownOn("cd", "r5", now.Add(-time.Second))}
			return s
		}, cfg: cfgLifecycle(1), req: cleanupReq(a, confirmed), want: ResultNoop, changed: true,
			check: func(t *testing.T, out *State, _ CleanupDecision) {
				assert.Empty(t, out.Reservations)
			}},
		{name: "only the first removed holder is reserved", state: func() *State {
			s := held(2, a)()
			s.Queue = []Entry{entryFor(a, 2), entryFor(a, 2)}
			return s
		}, cfg: DefaultConfig(), req: cleanupReq(a, unproven), want: ResultReleased, changed: true,
			check: func(t *testing.T, out *State, d CleanupDecision) {
				assert.Empty(t, out.Queue, "all owned duplicates are removed")
				assert.True(t, d.QueueCleaned)
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			in := c.state()
			before := in.Clone()
			out, d, err := Cleanup(in, c.cfg, c.req, now)
			require.Equal(t, before, in, "input mutated")
			if c.code != "" {
				requireCode(t, err, c.code)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, d.Result)
			assert.Equal(t, c.changed, d.Changed)
			if !d.Changed {
				assert.Equal(t, in, out)
			} else {
				assert.Equal(t, FormatTime(now), out.UpdatedAt)
			}
			mustEncodeDecode(t, out)
			if c.check != nil {
				c.check(t, out, d)
			}
		})
	}
	assert.Equal(t, CleanupResult("lock-release-unreachable"), ResultLockReleaseUnreachable)
}
