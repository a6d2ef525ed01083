//go:build linux

package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/acquire"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/cleanupevidence"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/cleanupgate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/release"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/returnlicense"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/fakeeditor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/signature"
)

const (
	version     = "6000.5.2f1"
	password    = "Unity-Pa55word!"
	lifecycle60 = `{"maxHolders":2,"runnerSerialization":true,"resourceLifecycle":true,"releaseCooldownSeconds":60}`
	lifecycle0  = `{"maxHolders":2,"runnerSerialization":true,"resourceLifecycle":true,"releaseCooldownSeconds":0}`
	health      = `{"maxHolders":2,"runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true,"releaseCooldownSeconds":60}`
)

// accept stands in for the Windows verifier: the fake editor is an ELF
// binary (the Authenticode rules are tested on signed PEs in
// internal/unity/signature).
type accept struct{}

func (accept) Verify(context.Context, string) (*signature.Verified, error) {
	return &signature.Verified{Thumbprint: signature.UnityThumbprints[0]}, nil
}

// licensedJob is one licensed matrix job on a self-hosted Windows runner.
type licensedJob struct {
	t      *testing.T
	w      *actiontest.World
	j      *actiontest.Job
	temp   string
	timers *fakeeditor.Timers
}

func newLicensedJob(t *testing.T, config string, schema int) *licensedJob {
	t.Helper()
	w := actiontest.NewWorld(t, config)
	s := lockstate.Empty(actiontest.Lock)
	s.SchemaVersion = schema
	w.SeedState(s)
	j := w.NewJob("unity-tests", "unity-runner-1")
	base := t.TempDir()
	temp, tools := filepath.Join(base, "_temp"), filepath.Join(base, "_tool")
	require.NoError(t, os.Mkdir(temp, 0o755))
	fakeeditor.Install(t, filepath.Join(tools, "u6-v3", version, "Editor", "Unity.exe"))
	j.Env["RUNNER_TEMP"], j.Env["RUNNER_TOOL_CACHE"] = temp, tools
	return &licensedJob{t: t, w: w, j: j, temp: temp, timers: fakeeditor.NewTimers()}
}

// step sets the inputs of the next step (clearing the previous step's,
// keeping the lock's identity inputs) and fresh output files.
func (l *licensedJob) step(inputs map[string]string) {
	for k := range l.j.Env {
		if strings.HasPrefix(k, "INPUT_") && k != "INPUT_LOCK-NAME" && k != "INPUT_RUNNER-ID" {
			delete(l.j.Env, k)
		}
	}
	l.j.ResetFiles()
	for k, v := range inputs {
		l.j.Input(k, v)
	}
}

func (l *licensedJob) acquire() map[string]string {
	l.step(map[string]string{"require-resource-lifecycle": "true"})
	require.NoError(l.t, acquire.Run(context.Background(), l.j.Deps()))
	out := l.j.Outputs()
	require.Equal(l.t, "true", out["acquired"])
	return out
}

func (l *licensedJob) returnLicense(mode string) (map[string]string, error) {
	l.step(map[string]string{"unity-version": version, "tool-cache": l.j.Env["RUNNER_TOOL_CACHE"],
		"unity-email": mode + "@studio.test", "unity-password": password, "evidence-suffix": "unity-tests"})
	d := l.j.Deps()
	err := returnlicense.Run(context.Background(), returnlicense.Deps{Getenv: d.Getenv, Stdout: d.Stdout, GOOS: "windows", Verifier: accept{}, After: l.timers.After})
	return l.j.Outputs(), err
}

func (l *licensedJob) classify(ret map[string]string) map[string]string {
	in := map[string]string{}
	for _, k := range []string{"return-log-path", "return-command-completed", "return-exit-code", "evidence-capture-complete", "return-log-digest"} {
		in[k] = ret[k]
	}
	l.step(in)
	require.NoError(l.t, cleanupevidence.Run(context.Background(), l.j.Deps()))
	return l.j.Outputs()
}

func (l *licensedJob) release(cls map[string]string) (map[string]string, string) {
	l.step(map[string]string{"resource-cleanup-status": cls["resource-cleanup-status"],
		"resource-health": cls["resource-health"], "resource-reason": cls["resource-reason"]})
	outcome := "success"
	if err := release.Run(context.Background(), l.j.Deps()); err != nil {
		outcome = "failure"
	}
	return l.j.Outputs(), outcome
}

func (l *licensedJob) gate(acq, cls, rel map[string]string, outcome string) (map[string]string, error) {
	l.step(map[string]string{
		"acquired": acq["acquired"], "classification-complete": cls["classification-complete"],
		"cleanup-status": cls["resource-cleanup-status"], "cleanup-health": cls["resource-health"], "cleanup-reason": cls["resource-reason"],
		"release-outcome": outcome, "cleanup-result": rel["cleanup-result"], "released": rel["released"],
		"release-health": rel["resource-health"], "release-reason": rel["resource-reason"],
		"reservation-state": rel["reservation-state"], "reservation-id": rel["reservation-id"], "incident-id": rel["incident-id"],
	})
	err := cleanupgate.Run(context.Background(), actionkit.Deps{Getenv: l.j.Deps().Getenv, Stdout: l.j.Out})
	return l.j.Outputs(), err
}

// TestLicensedJobEndToEnd runs the whole runner half for each editor
// behavior and checks where the seat ends up.
func TestLicensedJobEndToEnd(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, mode, config string
		schema             int
		// drive fires the return command's timers once the fake is up.
		drive         func(l *licensedJob, wait func() (int, int)) []int
		reason        string
		cleanupResult string
		reservation   string
		incident      bool
		safe          bool
	}{
		{name: "clean return starts a cooldown", mode: "clean", config: lifecycle60, schema: 4,
			reason: "cleanup-confirmed", cleanupResult: "cooldown-started", reservation: "cooldown", safe: true},
		{name: "clean return with cooldown 0 releases", mode: "clean-crlf", config: lifecycle0, schema: 4,
			reason: "cleanup-confirmed", cleanupResult: "released", safe: true},
		{name: "printed secrets are redacted and still confirm", mode: "secret", config: lifecycle60, schema: 4,
			reason: "cleanup-confirmed", cleanupResult: "cooldown-started", reservation: "cooldown", safe: true},
		{name: "a ULF line the licensing client writes after the editor exited still confirms", mode: "late-child", config: lifecycle60, schema: 4,
			reason: "cleanup-confirmed", cleanupResult: "cooldown-started", reservation: "cooldown", safe: true},
		{name: "a leading byte order mark is dropped and still confirms", mode: "bom", config: lifecycle60, schema: 4,
			reason: "cleanup-confirmed", cleanupResult: "cooldown-started", reservation: "cooldown", safe: true},
		{name: "a 30 MiB flood is truncated evidence", mode: "flood", config: lifecycle60, schema: 4,
			reason: "return-log-truncated", cleanupResult: "quarantined", reservation: "quarantine"},
		{name: "a hang is killed at the timeout", mode: "hang", config: lifecycle60, schema: 4,
			drive: func(l *licensedJob, wait func() (int, int)) []int {
				pid, child := wait()
				l.timers.Next(l.t).Fire()
				return []int{pid, child}
			}, reason: "return-timeout", cleanupResult: "quarantined", reservation: "quarantine"},
		{name: "a hang that ignores SIGTERM is killed after the grace", mode: "hang-hard", config: lifecycle60, schema: 4,
			drive: func(l *licensedJob, wait func() (int, int)) []int {
				pid, child := wait()
				l.timers.Next(l.t).Fire()
				l.timers.Next(l.t).Fire()
				return []int{pid, child}
			}, reason: "return-log-truncated", cleanupResult: "quarantined", reservation: "quarantine"},
		{name: "20111 raises the global incident", mode: "blocked", config: health, schema: 5,
			reason: "unity-account-limit-20111", cleanupResult: "global-quarantined", incident: true},
		{name: "400006 is not proof", mode: "handoff", config: lifecycle60, schema: 4,
			reason: "unity-return-400006", cleanupResult: "quarantined", reservation: "quarantine"},
		{name: "exit 137 is a terminated return", mode: "exit-137", config: lifecycle60, schema: 4,
			reason: "return-terminated", cleanupResult: "quarantined", reservation: "quarantine"},
		{name: "exit 143 is a terminated return", mode: "exit-143", config: lifecycle60, schema: 4,
			reason: "return-terminated", cleanupResult: "quarantined", reservation: "quarantine"},
		{name: "a skipped ULF return is not proof", mode: "ulf-skipped", config: lifecycle60, schema: 4,
			reason: "return-ulf-skipped", cleanupResult: "quarantined", reservation: "quarantine"},
		{name: "silence is missing positive evidence", mode: "silent", config: lifecycle60, schema: 4,
			reason: "return-missing-positive-evidence", cleanupResult: "quarantined", reservation: "quarantine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := newLicensedJob(t, tt.config, tt.schema)
			acq := l.acquire()

			var wait func() (int, int)
			if tt.drive != nil {
				wait = fakeeditor.ReadyPipe(t, l.temp)
			}
			type result struct {
				out map[string]string
				err error
			}
			done := make(chan result, 1)
			go func() {
				out, err := l.returnLicense(tt.mode)
				done <- result{out, err}
			}()
			var pids []int
			if tt.drive != nil {
				pids = tt.drive(l, wait)
			}
			ret := <-done
			// The return step fails unless completed, captured and exit 0; what
			// the evidence proves is the classifier's call.
			returnOK := map[string]bool{"clean": true, "clean-crlf": true, "secret": true, "handoff": true, "ulf-skipped": true, "silent": true,
				"late-child": true, "bom": true}[tt.mode]
			assert.Equal(t, returnOK, ret.err == nil, "return step: %v", ret.err)
			for _, pid := range pids {
				assert.True(t, fakeeditor.Gone(pid), "process %d of the return command's tree survived", pid)
			}

			cls := l.classify(ret.out)
			assert.Equal(t, "true", cls["classification-complete"])
			assert.Equal(t, tt.reason, cls["resource-reason"])
			assert.Equal(t, map[bool]string{true: "true", false: "false"}[tt.safe], cls["resource-safe"])

			rel, outcome := l.release(cls)
			assert.Equal(t, "success", outcome)
			assert.Equal(t, tt.cleanupResult, rel["cleanup-result"])
			assert.Equal(t, "true", rel["released"])
			assert.Equal(t, tt.reservation, rel["reservation-state"])

			s := l.w.State()
			assert.Empty(t, s.Holders, "the holder is gone in every case")
			var states []string
			for _, r := range s.Reservations {
				states = append(states, r.State)
			}
			if tt.reservation == "" {
				assert.Empty(t, states)
			} else {
				assert.Equal(t, []string{tt.reservation}, states, "the seat is held by exactly one %s", tt.reservation)
			}
			assert.Equal(t, tt.incident, s.ActiveIncident != nil)

			g, err := l.gate(acq, cls, rel, outcome)
			assert.Equal(t, tt.safe, err == nil, "gate: %v", err)
			assert.Equal(t, map[bool]string{true: "true", false: "false"}[tt.safe], g["cleanup-safe"])

			assert.NotContains(t, l.j.Unmasked(), password, "the password reaches no log line")
			entries, err := os.ReadDir(l.temp)
			require.NoError(t, err)
			for _, e := range entries {
				assert.False(t, strings.HasPrefix(e.Name(), "unity-return-"), "evidence %s was not deleted", e.Name())
			}
		})
	}
}
