package reap_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap/reaptest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// canned answers matching requests with a fixed status and body instead of
// forwarding them: the statuses the emulator has no fault for (a plain 403,
// a persistent 401 on one path, a malformed body).
type canned struct {
	next   http.RoundTripper
	mu     sync.Mutex
	rules  map[string]cannedReply // path suffix → reply
	counts map[string]int
}

type cannedReply struct {
	status int
	body   string
}

func (c *canned) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	for suffix, rep := range c.rules {
		if strings.HasSuffix(r.URL.Path, suffix) {
			c.counts[suffix]++
			c.mu.Unlock()
			return &http.Response{StatusCode: rep.status, Status: fmt.Sprintf("%d", rep.status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
				Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(bytes.NewBufferString(rep.body)), Request: r}, nil
		}
	}
	c.mu.Unlock()
	return c.next.RoundTrip(r)
}

type evidenceWorld struct {
	w        *reaptest.World
	tr       *canned
	ev       *reap.Evidencer
	warnings *[]string
}

// newEvidence builds an Evidencer whose reader client uses a plain token
// with actions: read on the consumer repositories, over the emulator.
func newEvidence(t *testing.T) evidenceWorld {
	w := reaptest.New(t, "")
	w.AddConsumer("hidden", false)
	w.Em.AddToken("reader-secret", emulator.TokenScope{Label: "reader", Repos: []string{owner + "/" + game},
		Permissions: map[string]string{"actions": "read", "metadata": "read"}})
	tr := &canned{next: w.API, rules: map[string]cannedReply{}, counts: map[string]int{}}
	var warnings []string
	var mu sync.Mutex
	c, err := ghclient.New(context.Background(), ghclient.Config{APIURL: reaptest.APIURL, Token: "reader-secret", Transport: tr,
		Knobs: ghclient.Knobs{MaxAttempts: 2}, Jitter: func() float64 { return 0 }})
	require.NoError(t, err)
	ev := reap.NewEvidencer(func(context.Context, string) (*ghclient.Client, error) { return c, nil }, nil, func(s string) {
		mu.Lock()
		defer mu.Unlock()
		warnings = append(warnings, s)
	})
	return evidenceWorld{w: w, tr: tr, ev: ev, warnings: &warnings}
}

// TestEvidenceRunRules is spec §4.2 getRunStatus, one row per rule.
func TestEvidenceRunRules(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		setup   func(ew evidenceWorld) (repo, runID string)
		known   bool
		status  string
		attempt string
		note    string
		rule    string // EvidenceError rule, "" = no error
		warned  bool
	}{
		{name: "200 known completed", setup: func(ew evidenceWorld) (string, string) {
			return owner + "/" + game, fmt.Sprint(run(ew.w, game, "completed", "success"))
		}, known: true, status: "completed", attempt: "1", note: "run completed (success), run_attempt 1"},
		{name: "200 known with an advanced attempt", setup: func(ew evidenceWorld) (string, string) {
			id := run(ew.w, game, "in_progress", "")
			ew.w.Em.NewRunAttempt(owner, game, id)
			return owner + "/" + game, fmt.Sprint(id)
		}, known: true, status: "queued", attempt: "2", note: "run queued, run_attempt 2"},
		{name: "404 in a visible repository is unknown", setup: func(evidenceWorld) (string, string) {
			return owner + "/" + game, "424242"
		}, note: "run not found (HTTP 404) in a repository the reader can see: status unknown"},
		{name: "404 in an invisible repository fails (probe 404)", setup: func(ew evidenceWorld) (string, string) {
			return owner + "/hidden", fmt.Sprint(run(ew.w, "hidden", "completed", "success"))
		}, rule: reap.RuleRepositoryUnverifiable},
		{name: "404 then probe 403 fails", setup: func(ew evidenceWorld) (string, string) {
			ew.tr.rules["/actions/runs/31337"] = cannedReply{404, `{"message":"Not Found"}`}
			ew.tr.rules["/repos/acme/game"] = cannedReply{403, `{"message":"Resource not accessible by integration"}`}
			return owner + "/" + game, "31337"
		}, rule: reap.RuleRepositoryUnverifiable},
		{name: "403 fails naming actions: read", setup: func(ew evidenceWorld) (string, string) {
			ew.tr.rules["/actions/runs/777"] = cannedReply{403, `{"message":"Resource not accessible by integration"}`}
			return owner + "/" + game, "777"
		}, rule: reap.RuleActionsReadForbidden},
		{name: "401 after the retries is unknown", setup: func(ew evidenceWorld) (string, string) {
			ew.tr.rules["/actions/runs/778"] = cannedReply{401, `{"message":"Bad credentials"}`}
			return owner + "/" + game, "778"
		}, note: "HTTP 401 after the retry budget: status unknown", warned: true},
		{name: "other failure (422) fails", setup: func(ew evidenceWorld) (string, string) {
			ew.tr.rules["/actions/runs/779"] = cannedReply{422, `{"message":"Unprocessable"}`}
			return owner + "/" + game, "779"
		}, rule: reap.RuleStatusReadFailed},
		{name: "malformed body fails", setup: func(ew evidenceWorld) (string, string) {
			ew.tr.rules["/actions/runs/780"] = cannedReply{200, `{"id":780}`}
			return owner + "/" + game, "780"
		}, rule: reap.RuleMalformedResponse},
		{name: "non-canonical run id is unknown without a request", setup: func(evidenceWorld) (string, string) {
			return owner + "/" + game, "0"
		}, note: `run id "0" is not a canonical decimal: status unknown`},
		{name: "malformed repository fails", setup: func(evidenceWorld) (string, string) {
			return "unknown", "5"
		}, rule: reap.RuleRepositoryUnverifiable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				ew := newEvidence(t)
				repo, runID := tc.setup(ew)
				ev, note, err := ew.ev.Run(context.Background(), repo, runID)
				if tc.rule != "" {
					var ee *reap.EvidenceError
					require.ErrorAs(t, err, &ee)
					assert.Equal(t, tc.rule, ee.Rule)
					assert.NotContains(t, err.Error(), "reader-secret")
					return
				}
				require.NoError(t, err)
				assert.Equal(t, lockstate.RunEvidence{Known: tc.known, Status: tc.status, Conclusion: ev.Conclusion, RunAttempt: tc.attempt}, ev)
				assert.Equal(t, tc.note, note)
				assert.Equal(t, tc.warned, len(*ew.warnings) > 0, "%v", *ew.warnings)
			})
		})
	}
}

// TestEvidenceJobRules is spec §4.2 getIdentityJobStatus: the exact job of
// the exact attempt, never inferred.
func TestEvidenceJobRules(t *testing.T) {
	t.Parallel()
	base := func(ew evidenceWorld) (int64, lockstate.Entry) {
		id := run(ew.w, game, "in_progress", "")
		return id, entry(game, id, "r1", 0, time.Now())
	}
	cases := []struct {
		name   string
		setup  func(ew evidenceWorld) lockstate.Entry
		known  bool
		status string
		note   string
		rule   string
		calls  int // job list requests expected (-1: don't check)
	}{
		{name: "exact job completed", setup: func(ew evidenceWorld) lockstate.Entry {
			id, e := base(ew)
			e.JobID = fmt.Sprint(job(ew.w, game, id, "r1", "completed", "failure"))
			return e
		}, known: true, status: "completed", calls: 1},
		{name: "exact job in progress", setup: func(ew evidenceWorld) lockstate.Entry {
			id, e := base(ew)
			e.JobID = fmt.Sprint(job(ew.w, game, id, "r1", "in_progress", ""))
			return e
		}, known: true, status: "in_progress", calls: 1},
		{name: "sequential matrix legs on one runner: only the recorded id counts", setup: func(ew evidenceWorld) lockstate.Entry {
			id, e := base(ew)
			job(ew.w, game, id, "r1", "completed", "success") // an earlier leg on the same runner
			e.JobID = fmt.Sprint(job(ew.w, game, id, "r1", "in_progress", ""))
			return e
		}, known: true, status: "in_progress", calls: 1},
		{name: "recorded id on another runner is unknown", setup: func(ew evidenceWorld) lockstate.Entry {
			id, e := base(ew)
			e.JobID = fmt.Sprint(job(ew.w, game, id, "r2", "completed", "success"))
			return e
		}, note: "0 jobs of attempt 1 match job", calls: 1},
		{name: "job of another attempt is unknown", setup: func(ew evidenceWorld) lockstate.Entry {
			id, e := base(ew)
			jid := job(ew.w, game, id, "r1", "completed", "success")
			ew.w.Em.NewRunAttempt(owner, game, id)
			e.RunAttempt = "2"
			e.JobID = fmt.Sprint(jid)
			return e
		}, note: "0 jobs of attempt 2 match job", calls: 1},
		{name: "unrecognized status is unknown", setup: func(ew evidenceWorld) lockstate.Entry {
			id, e := base(ew)
			jid := job(ew.w, game, id, "r1", "in_progress", "")
			require.NoError(t, ew.w.Em.SetJobStatus(owner, game, jid, "mystery", ""))
			ew.w.API.Tolerate(`status: value is not one of the allowed values`, "a job status GitHub may add later, on purpose")
			e.JobID = fmt.Sprint(jid)
			return e
		}, note: `has unrecognized status "mystery"`, calls: 1},
		{name: "no recorded job id: no request", setup: func(ew evidenceWorld) lockstate.Entry {
			_, e := base(ew)
			return e
		}, note: "no recorded numeric job id", calls: 0},
		{name: "no runner: no request", setup: func(ew evidenceWorld) lockstate.Entry {
			_, e := base(ew)
			e.JobID, e.RunnerID = "5", ""
			return e
		}, note: "no recorded runner", calls: 0},
		{name: "non-canonical attempt: no request", setup: func(ew evidenceWorld) lockstate.Entry {
			_, e := base(ew)
			e.JobID, e.RunAttempt = "5", "0"
			return e
		}, note: "is not canonical", calls: 0},
		{name: "job list 404 is unknown", setup: func(ew evidenceWorld) lockstate.Entry {
			_, e := base(ew)
			e.JobID = "5"
			ew.tr.rules["/attempts/1/jobs"] = cannedReply{404, `{"message":"Not Found"}`}
			return e
		}, note: "job list returned HTTP 404", calls: -1},
		{name: "job list 401 is unknown", setup: func(ew evidenceWorld) lockstate.Entry {
			_, e := base(ew)
			e.JobID = "5"
			ew.tr.rules["/attempts/1/jobs"] = cannedReply{401, `{"message":"Bad credentials"}`}
			return e
		}, note: "job list returned HTTP 401", calls: -1},
		{name: "job list 403 fails", setup: func(ew evidenceWorld) lockstate.Entry {
			_, e := base(ew)
			e.JobID = "5"
			ew.tr.rules["/attempts/1/jobs"] = cannedReply{403, `{"message":"Resource not accessible by integration"}`}
			return e
		}, rule: reap.RuleActionsReadForbidden, calls: -1},
		{name: "job list without total_count fails", setup: func(ew evidenceWorld) lockstate.Entry {
			_, e := base(ew)
			e.JobID = "5"
			ew.tr.rules["/attempts/1/jobs"] = cannedReply{200, `{"jobs":[]}`}
			return e
		}, rule: reap.RuleMalformedResponse, calls: -1},
		{name: "every page is read", setup: func(ew evidenceWorld) lockstate.Entry {
			id, e := base(ew)
			for range 120 {
				job(ew.w, game, id, "other", "completed", "success")
			}
			e.JobID = fmt.Sprint(job(ew.w, game, id, "r1", "completed", "success"))
			return e
		}, known: true, status: "completed", calls: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				ew := newEvidence(t)
				e := tc.setup(ew)
				before := ew.w.Em.Metrics().Routes["GET /repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt}/jobs"].Requests
				ev, note, err := ew.ev.Job(context.Background(), e)
				if tc.rule != "" {
					var ee *reap.EvidenceError
					require.ErrorAs(t, err, &ee)
					assert.Equal(t, tc.rule, ee.Rule)
					return
				}
				require.NoError(t, err)
				assert.Equal(t, tc.known, ev.Known, note)
				assert.Equal(t, tc.status, ev.Status)
				if tc.known {
					assert.Equal(t, e.JobID, ev.JobID)
				} else {
					assert.Contains(t, note, tc.note)
				}
				if tc.calls >= 0 {
					after := ew.w.Em.Metrics().Routes["GET /repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt}/jobs"].Requests
					assert.EqualValues(t, tc.calls, after-before, "job list requests")
				}
			})
		})
	}
}

// TestEvidenceForEntryReadsJobsOnlyWhenTheyMatter: the exact job is read
// only for an active run on the entry's own attempt, and run reads are
// cached within one reaper run.
func TestEvidenceForEntryReadsJobsOnlyWhenTheyMatter(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ew := newEvidence(t)
		jobsRoute := "GET /repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt}/jobs"
		runRoute := "GET /repos/{owner}/{repo}/actions/runs/{run_id}"

		done := run(ew.w, game, "completed", "success")
		e := entry(game, done, "r1", job(ew.w, game, done, "r1", "completed", "success"), time.Now())
		o, err := ew.ev.ForEntry(context.Background(), e)
		require.NoError(t, err)
		assert.Equal(t, "not needed", o.JobNote)
		assert.Zero(t, ew.w.Em.Metrics().Routes[jobsRoute].Requests)

		adv := run(ew.w, game, "in_progress", "")
		jid := job(ew.w, game, adv, "r1", "in_progress", "")
		ew.w.Em.NewRunAttempt(owner, game, adv)
		o, err = ew.ev.ForEntry(context.Background(), entry(game, adv, "r1", jid, time.Now()))
		require.NoError(t, err)
		assert.Equal(t, "2", o.Evidence.Run.RunAttempt)
		assert.Zero(t, ew.w.Em.Metrics().Routes[jobsRoute].Requests)

		act := run(ew.w, game, "in_progress", "")
		ae := entry(game, act, "r1", job(ew.w, game, act, "r1", "in_progress", ""), time.Now())
		for range 3 {
			o, err = ew.ev.ForEntry(context.Background(), ae)
			require.NoError(t, err)
			assert.True(t, o.Evidence.Job.Known)
		}
		assert.EqualValues(t, 1, ew.w.Em.Metrics().Routes[jobsRoute].Requests, "job list cached")
		assert.EqualValues(t, 3, ew.w.Em.Metrics().Routes[runRoute].Requests, "one read per distinct run")
		assert.False(t, o.Evidence.ObservedAt.IsZero())
	})
}

// Regression (simulation seed 106635): a run read cached from before a
// rerun carries the time of that read, and the rerun's queue entry (a later
// attempt) is not finished on it.
func TestEvidenceCachedRunReadPredatesARerunsEntry(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ew := newEvidence(t)
		r := run(ew.w, game, "completed", "failure")
		first := entry(game, r, "r1", job(ew.w, game, r, "r1", "completed", "failure"), time.Now())
		o, err := ew.ev.ForEntry(context.Background(), first)
		require.NoError(t, err)
		readAt := o.Evidence.ObservedAt
		assert.True(t, lockstate.QueueEntryFinished(first, o.Evidence).Stale, "attempt 1 is finished")

		time.Sleep(5 * time.Second)
		ew.w.Em.NewRunAttempt(owner, game, r)
		_ = ew.w.Em.SetRunStatus(owner, game, r, "in_progress", "")
		rerun := first
		rerun.RunAttempt = "2"
		o, err = ew.ev.ForEntry(context.Background(), rerun)
		require.NoError(t, err)
		assert.Equal(t, readAt, o.Evidence.ObservedAt, "the cached read keeps its own time")
		v := lockstate.QueueEntryFinished(rerun, o.Evidence)
		assert.False(t, v.Stale, "evidence of attempt 1 proves nothing about attempt 2")
		assert.Equal(t, "run evidence is of attempt 1, before the entry's attempt 2: status unknown", v.Reason)
	})
}

// TestEvidenceMemoizesFailuresButNotCancellations: a 403 on actions read
// is memoized for its repository (every other run there gets the same
// answer without a request), a repository probe's 404 for its repository,
// and a malformed run answer for its run; a read that was cancelled is not
// memoized, so a later read with a live context asks GitHub again.
func TestEvidenceMemoizesFailuresButNotCancellations(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ew := newEvidence(t)
		ew.w.AddConsumer("locked", true)
		ew.tr.rules["/repos/acme/locked/actions/runs/11"] = cannedReply{403, `{"message":"Resource not accessible by integration"}`}
		ew.tr.rules["/repos/acme/game/actions/runs/12"] = cannedReply{200, `{"id":12}`}
		ctx := context.Background()
		for range 3 {
			for _, runID := range []string{"11", "13", "14"} {
				_, _, err := ew.ev.Run(ctx, owner+"/locked", runID)
				var ee *reap.EvidenceError
				require.ErrorAs(t, err, &ee)
				assert.Equal(t, reap.RuleActionsReadForbidden, ee.Rule)
			}
			_, _, err := ew.ev.Run(ctx, owner+"/game", "12")
			var ee *reap.EvidenceError
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, reap.RuleMalformedResponse, ee.Rule)
			for _, runID := range []string{"21", "22"} {
				_, _, err = ew.ev.Run(ctx, owner+"/hidden", runID)
				require.ErrorAs(t, err, &ee)
				assert.Equal(t, reap.RuleRepositoryUnverifiable, ee.Rule)
			}
		}
		m := ew.w.Em.Metrics()
		assert.Equal(t, 1, ew.tr.counts["/repos/acme/locked/actions/runs/11"], "one 403 for the whole repository")
		assert.Zero(t, m.Paths["GET /repos/acme/locked/actions/runs/13"].Requests)
		assert.Equal(t, 1, ew.tr.counts["/repos/acme/game/actions/runs/12"], "one malformed answer per run")
		assert.Equal(t, int64(1), m.Paths["GET /repos/acme/hidden/actions/runs/21"].Requests)
		assert.Zero(t, m.Paths["GET /repos/acme/hidden/actions/runs/22"].Requests, "the repository's 404 is memoized")
		assert.Equal(t, int64(1), m.Paths["GET /repos/acme/hidden"].Requests)

		live := run(ew.w, game, "in_progress", "")
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, _, err := ew.ev.Run(cctx, owner+"/"+game, fmt.Sprint(live))
		require.Error(t, err)
		ev, _, err := ew.ev.Run(ctx, owner+"/"+game, fmt.Sprint(live))
		require.NoError(t, err)
		assert.True(t, ev.Known, "a cancelled read was not memoized")
	})
}
