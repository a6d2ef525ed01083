package historycli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history/histgen"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/historycli"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

type fixture struct {
	t   *testing.T
	w   *histgen.World
	env map[string]string
}

func newFixture(t *testing.T, o histgen.Options) *fixture {
	t.Helper()
	w, err := histgen.New(o)
	require.NoError(t, err)
	_, err = w.Run(context.Background())
	require.NoError(t, err)
	return &fixture{t: t, w: w, env: map[string]string{
		"GITHUB_API_URL": "https://api.github.com", "GITHUB_SERVER_URL": histgen.ServerURL, "GITHUB_TOKEN": w.ReaderToken(),
		"GITHUB_REPOSITORY": histgen.Owner + "/" + histgen.Repo, "BUILD_LOCK_NAME": histgen.Lock,
		"BUILD_LOCK_WRITER_LOGIN": histgen.WriterLogin, "BUILD_LOCK_OPERATORS": histgen.OperatorLogin,
	}}
}

func (f *fixture) run(args ...string) (string, string, error) {
	var out, errOut bytes.Buffer
	err := historycli.Main(context.Background(), args, func(k string) string { return f.env[k] }, &out, &errOut,
		historycli.Deps{Transport: f.w.Emulator.Transport(), Clock: f.w.Clock})
	return out.String(), errOut.String(), err
}

// intrude commits one correct acquire with an account that is not the
// writer.
func (f *fixture) intrude() string {
	f.t.Helper()
	st, err := f.w.Store(context.Background(), f.w.IntruderToken())
	require.NoError(f.t, err)
	f.w.Clock.Advance(time.Minute)
	_, err = st.Update(context.Background(), "Acquire "+histgen.Lock, func(s *lockstate.State) error {
		id := lockstate.Identity{HolderID: "example-org/x:1:build:default", Repository: "example-org/x", Workflow: "w", Job: "build", RunID: "1",
			RunAttempt: "1", RunURL: histgen.ServerURL + "/example-org/x/actions/runs/1", RunnerID: "intruder-runner", QueuedAt: f.w.Clock.Now()}
		next, _, err := lockstate.Acquire(s, f.w.Config(2), lockstate.AcquireRequest{Identity: id, Lease: time.Hour}, f.w.Clock.Now())
		if err != nil {
			return err
		}
		*s = *next
		return nil
	})
	require.NoError(f.t, err)
	head, _ := f.w.Emulator.BranchHead(histgen.Owner, histgen.Repo, histgen.Branch)
	return head
}

func TestVerifyCleanWritesACheckpointAndResumes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, histgen.Options{Seed: 41, Jobs: 30, UnsafeEvery: 5})
	dir := t.TempDir()
	summary := filepath.Join(dir, "summary.md")
	out, _, err := f.run("verify", "--checkpoint-dir", dir, "--summary", summary)
	require.NoError(t, err)
	assert.Regexp(t, `^lock unity-seats on example-org/build-lock@lock-state: \d+ commits verified, 0 violations\n`, out)
	cp, err := history.DecodeCheckpoint(must(os.ReadFile(filepath.Join(dir, histgen.Lock+".json"))))
	require.NoError(t, err)
	head, _ := f.w.Emulator.BranchHead(histgen.Owner, histgen.Repo, histgen.Branch)
	assert.Equal(t, head, cp.Head.SHA)
	md := string(must(os.ReadFile(summary)))
	assert.Contains(t, md, "Verification: **clean**")

	f.w.Emulator.ResetMetrics()
	out, _, err = f.run("verify", "--checkpoint-dir", dir, "--format", "json")
	require.NoError(t, err)
	var rep struct {
		Locks []struct {
			Verify struct {
				Status  string
				Commits int
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, "clean", rep.Locks[0].Verify.Status)
	assert.Zero(t, rep.Locks[0].Verify.Commits)
	m := f.w.Emulator.Metrics()
	assert.Equal(t, int64(1), m.Routes["GET /repos/{owner}/{repo}/contents/{path}"].Requests, "only the one config version is read; no state version")
	assert.Equal(t, int64(2), m.Routes["GET /repos/{owner}/{repo}/commits"].Requests, "one page of the state file's commits, one of the config's")
}

// TestVerifyViolationOpensOneIssue: a violation fails the run, prints the
// first violation, and opens one alert issue; an unchanged re-run writes
// nothing; acknowledging the commit passes and moves the checkpoint past it.
func TestVerifyViolationOpensOneIssue(t *testing.T) {
	t.Parallel()
	f := newFixture(t, histgen.Options{Seed: 42, Jobs: 12})
	bad := f.intrude()
	dir := t.TempDir()
	out, stderr, err := f.run("verify", "--checkpoint-dir", dir, "--issue")
	require.ErrorIs(t, err, historycli.ErrFailed)
	assert.Contains(t, out, "FIRST VIOLATION  rule foreign-author")
	assert.Contains(t, out, "commit  "+bad)
	assert.Contains(t, stderr, "alert issue #1: created")
	f.w.Emulator.ResetMetrics()
	_, stderr, err = f.run("verify", "--checkpoint-dir", dir, "--issue")
	require.ErrorIs(t, err, historycli.ErrFailed)
	assert.Contains(t, stderr, "alert issue #1: none")
	assert.Zero(t, f.w.Emulator.Metrics().Writes, "an unchanged violation makes no write")

	out, _, err = f.run("verify", "--checkpoint-dir", dir, "--acknowledge", bad)
	require.NoError(t, err, out)
	assert.Contains(t, out, "(acknowledged)")
	cp, err := history.DecodeCheckpoint(must(os.ReadFile(filepath.Join(dir, histgen.Lock+".json"))))
	require.NoError(t, err)
	assert.Equal(t, bad, cp.Head.SHA)
}

func TestVerifyWithTheReaderApp(t *testing.T) {
	t.Parallel()
	f := newFixture(t, histgen.Options{Seed: 43, Jobs: 8})
	delete(f.env, "GITHUB_TOKEN")
	f.env["BUILD_LOCK_READER_APP_ID"] = fmt.Sprint(f.w.WriterAppID())
	f.env["BUILD_LOCK_READER_APP_PRIVATE_KEY"] = string(f.w.WriterPEM())
	_, _, err := f.run("verify")
	require.NoError(t, err)
	delete(f.env, "BUILD_LOCK_READER_APP_ID")
	_, _, err = f.run("verify")
	require.ErrorIs(t, err, historycli.ErrUsage)
	assert.Contains(t, err.Error(), "no credentials")
}

func TestPartialRunNeedsAllowPartial(t *testing.T) {
	t.Parallel()
	f := newFixture(t, histgen.Options{Seed: 44, Jobs: 20})
	dir := t.TempDir()
	_, stderr, err := f.run("verify", "--checkpoint-dir", dir, "--max-commits", "10")
	require.ErrorIs(t, err, historycli.ErrFailed)
	assert.Contains(t, stderr, "left for the next run")
	_, _, err = f.run("verify", "--checkpoint-dir", dir, "--max-commits", "10", "--allow-partial")
	require.NoError(t, err)
	cp, err := history.DecodeCheckpoint(must(os.ReadFile(filepath.Join(dir, histgen.Lock+".json"))))
	require.NoError(t, err)
	assert.Equal(t, 20, cp.Commits, "two runs of ten")
}

func TestUsageAndHelp(t *testing.T) {
	t.Parallel()
	f := newFixture(t, histgen.Options{Seed: 45, Jobs: 2})
	for _, args := range [][]string{{"verify", "-h"}, {"report", "--help"}, {"--help"}} {
		out, stderr, err := f.run(args...)
		assert.True(t, errors.Is(err, flag.ErrHelp), "%v", args)
		assert.Contains(t, out+stderr, "usage: buildlock history", "%v", args)
	}
	cases := map[string][]string{
		"no command":        {},
		"unknown command":   {"frobnicate"},
		"bad acknowledge":   {"verify", "--acknowledge", "main"},
		"bad format":        {"verify", "--format", "yaml"},
		"bad report format": {"report", "--format", "pdf"},
		"bad since":         {"report", "--since", "yesterday"},
		"bad lock":          {"verify", "--lock", "../x"},
		"bad repo":          {"verify", "--repo", "nope"},
		"bad writer":        {"verify", "--writer", "a b"},
		"extra argument":    {"verify", "extra"},
	}
	for name, args := range cases {
		_, _, err := f.run(args...)
		assert.ErrorIs(t, err, historycli.ErrUsage, name)
	}
	delete(f.env, "BUILD_LOCK_WRITER_LOGIN")
	_, _, err := f.run("verify")
	require.ErrorIs(t, err, historycli.ErrUsage)
	assert.Contains(t, err.Error(), "--writer is required")
}

func TestReportFormats(t *testing.T) {
	t.Parallel()
	f := newFixture(t, histgen.Options{Seed: 46, Jobs: 60, DeadEvery: 9, UnsafeEvery: 7})
	dir := t.TempDir()
	for _, format := range []string{"html", "markdown", "json", "openmetrics"} {
		path := filepath.Join(dir, "report."+format)
		_, stderr, err := f.run("report", "--since", "all", "--format", format, "--output", path)
		require.NoError(t, err, stderr)
		body := string(must(os.ReadFile(path)))
		assert.Contains(t, stderr, "lock unity-seats: ")
		switch format {
		case "html":
			assert.True(t, strings.HasPrefix(body, "<!DOCTYPE html>"))
			assert.Equal(t, 6, strings.Count(body, "<svg "))
		case "markdown":
			assert.Equal(t, 6, strings.Count(body, "```mermaid"))
		case "json":
			assert.True(t, json.Valid([]byte(body)))
		case "openmetrics":
			assert.True(t, strings.HasSuffix(body, "# EOF\n"))
		}
	}
	// A window: the last two hours of the run.
	out, _, err := f.run("report", "--since", "2h", "--format", "json", "--summary", filepath.Join(dir, "s.md"))
	require.NoError(t, err)
	var rep struct {
		Locks []struct {
			Stats struct {
				From       time.Time
				Admissions int
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, f.w.Clock.Now().Add(-2*time.Hour).UTC().Truncate(time.Second), rep.Locks[0].Stats.From.Truncate(time.Second))
	assert.FileExists(t, filepath.Join(dir, "s.md"))
}

func TestUnreadableLockFails(t *testing.T) {
	t.Parallel()
	f := newFixture(t, histgen.Options{Seed: 47, Jobs: 4})
	out, stderr, err := f.run("verify", "--lock", histgen.Lock+",missing-lock")
	require.ErrorIs(t, err, historycli.ErrFailed)
	assert.Contains(t, out, "lock missing-lock on example-org/build-lock@lock-state: INCOMPLETE (HISTORY_NO_STATE")
	assert.Contains(t, stderr, "error: lock missing-lock")
	_, _, err = f.run("report", "--lock", "missing-lock")
	require.ErrorIs(t, err, historycli.ErrFailed)
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestReportWithNamedSeats: a lock whose config names pro and plus seats,
// its jobs asking for labels: verify is clean (the seat rules replayed)
// and the report's what-if has one scenario per label, in JSON and in
// the Markdown summary.
func TestReportWithNamedSeats(t *testing.T) {
	t.Parallel()
	f := newFixture(t, histgen.Options{Seed: 47, Jobs: 40, Interarrival: 2 * time.Minute,
		NamedSeats: []lockstate.SeatConfig{{Name: "pro-1", Labels: []string{"pro"}}, {Name: "pro-2", Labels: []string{"pro"}}, {Name: "plus-1", Labels: []string{"plus"}}},
		JobLabels:  []string{"pro", "pro", "plus", ""}})
	_, stderr, err := f.run("verify", "--checkpoint-dir", t.TempDir())
	require.NoError(t, err, stderr)
	dir := t.TempDir()
	out, stderr, err := f.run("report", "--since", "all", "--format", "json", "--summary", filepath.Join(dir, "s.md"))
	require.NoError(t, err, stderr)
	var rep struct {
		Locks []struct {
			Stats struct {
				LabelSets []struct{ Key string }  `json:"label_sets"`
				SeatUse   []struct{ Seat string } `json:"seat_use"`
			}
			WhatIf struct {
				Scenarios      []struct{ Observed bool }
				LabelScenarios []struct {
					Label          string
					SeatsWithLabel int `json:"seats_with_label"`
					Admitted       int
				} `json:"label_scenarios"`
			} `json:"what_if"`
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	l := rep.Locks[0]
	assert.Len(t, l.Stats.SeatUse, 3)
	require.Len(t, l.WhatIf.Scenarios, 1, "the observed seat list only")
	assert.True(t, l.WhatIf.Scenarios[0].Observed)
	require.Len(t, l.WhatIf.LabelScenarios, 2)
	assert.Equal(t, "plus", l.WhatIf.LabelScenarios[0].Label)
	assert.Equal(t, 2, l.WhatIf.LabelScenarios[0].SeatsWithLabel)
	assert.Equal(t, "pro", l.WhatIf.LabelScenarios[1].Label)
	assert.Equal(t, 3, l.WhatIf.LabelScenarios[1].SeatsWithLabel)
	assert.Positive(t, l.WhatIf.LabelScenarios[1].Admitted)
	summary := string(must(os.ReadFile(filepath.Join(dir, "s.md"))))
	assert.Contains(t, summary, "| `pro` | 2 → 3 |")
}
