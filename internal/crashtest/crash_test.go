package crashtest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/checker"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/stretchr/testify/assert"
)

// envFull selects the full cross product of competitor counts.
const envFull = "CRASH_FULL"

// maxCompetitors is the largest number of competing jobs.
const maxCompetitors = 3

// competitorCounts is the competitor scheme: in CI one count per boundary,
// (boundary index mod 4), so every count appears at every action and every
// phase; with CRASH_FULL=1 all of 0..3 for every boundary.
func competitorCounts(b boundary) []int {
	if os.Getenv(envFull) == "1" {
		return []int{0, 1, 2, 3}
	}
	return []int{b.Index % (maxCompetitors + 1)}
}

// caseID names one enumerated case.
type caseID struct {
	action string
	b      boundary
	f      fault
	comps  int
}

func (c caseID) path() string {
	return fmt.Sprintf("TestCrashAtEveryBoundary/%s/%s/%s/c%d", c.action, c.b.Name(), c.f, c.comps)
}

// replay is the one-line command that reruns exactly this case.
func (c caseID) replay() string {
	env := ""
	if c.comps != c.b.Index%(maxCompetitors+1) {
		env = envFull + "=1 "
	}
	return fmt.Sprintf("%sgo test ./internal/crashtest -run '%s' -count=1", env, c.path())
}

// TestCrashAtEveryBoundary cuts every action at every boundary of its
// fault-free reference request sequence with every fault, with 0–3
// competing jobs, and audits the whole history of the lock afterwards (see
// docs/crash-testing.md).
func TestCrashAtEveryBoundary(t *testing.T) {
	var ran, expected atomic.Int64
	filtered := false
	for _, sc := range scenarios {
		ref := reference(t, sc)
		bs := boundaries(ref)
		n := 0
		for _, b := range bs {
			n += len(competitorCounts(b)) * len(faults)
		}
		expected.Add(int64(n))
		t.Logf("%s: %d requests, %d boundaries, %d faults, %d cases", sc.name, len(ref), len(bs), len(faults), n)
		t.Run(sc.name, func(t *testing.T) {
			for _, b := range bs {
				t.Run(b.Name(), func(t *testing.T) {
					for _, f := range faults {
						t.Run(f.String(), func(t *testing.T) {
							for _, c := range competitorCounts(b) {
								id := caseID{action: sc.name, b: b, f: f, comps: c}
								t.Run(fmt.Sprintf("c%d", c), func(t *testing.T) {
									t.Parallel()
									ran.Add(1)
									runCase(t, sc, id)
								})
							}
						})
					}
				})
			}
		})
	}
	if f := testRunFilter(); f != "" && f != "TestCrashAtEveryBoundary" {
		filtered = true
	}
	variants := "1 competitor count per boundary (index mod 4)"
	if os.Getenv(envFull) == "1" {
		variants = "4 competitor counts per boundary (0..3)"
	}
	total := int(expected.Load())
	t.Logf("crash enumeration: %d actions, %d faults, %s: %d cases enumerated, %d run", len(scenarios), len(faults), variants, total, ran.Load())
	fmt.Printf("crashtest: enumerated %d cases = Σ_actions boundaries × %d faults × competitor variants (%s); ran %d\n", total, len(faults), variants, ran.Load())
	assert.False(t, !filtered && int(ran.Load()) != total, "ran %d cases, enumerated %d", ran.Load(), total)
}

// testRunFilter returns the -run flag.
func testRunFilter() string {
	for i, a := range os.Args {
		if strings.HasPrefix(a, "-test.run=") {
			return strings.TrimPrefix(a, "-test.run=")
		}
		if a == "-test.run" && i+1 < len(os.Args) {
			return os.Args[i+1]
		}
	}
	return ""
}

// outcome is what a case observed.
type outcome struct {
	id        caseID
	start     time.Time
	fireAt    time.Time
	retAt     time.Time
	err       error
	overrun   bool
	outputs   map[string]string
	stdout    string
	requests  []request
	afterKill []string
}

// caseT collects a case's violations and reports each with the replay line.
type caseT struct {
	t  *testing.T
	id caseID
	mu sync.Mutex
	n  int
}

func (c *caseT) violate(format string, args ...any) {
	c.t.Helper()
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	assert.Fail(c.t, fmt.Sprintf("%s: %s\n    case: action=%s boundary=%s (request %d %s) fault=%s competitors=%d\n    replay: %s",
		c.id.path(), fmt.Sprintf(format, args...), c.id.action, c.id.b.Name(), c.id.b.Req, c.id.b.Label, c.id.f, c.id.comps, c.id.replay()))
}

func runCase(t *testing.T, sc scenario, id caseID) {
	synctest.Test(t, func(t *testing.T) {
		ct := &caseT{t: t, id: id}
		ctx := context.Background()
		w := newWorldAt(t, sc.config, sc.stateSchema())
		v := sc.setup(ctx, t, w)
		rivals := make([]*actiontest.Job, id.comps)
		for i := range rivals {
			rivals[i] = w.job(fmt.Sprintf("rival-%d", i+1), fmt.Sprintf("runner-c%d", i+1))
		}
		o := &outcome{id: id}
		vctx, vcancel := context.WithCancel(ctx)
		defer vcancel()
		var wg sync.WaitGroup
		var tr *cutTransport
		fire := func(f fault) {
			o.fireAt = time.Now()
			switch f {
			case faultSIGKILL:
				o.outputs = readOutputs(v.outPath) // the process vanishes: later writes do not exist
				vcancel()
			case faultSIGINT:
				if v.signals != nil {
					v.signals.Simulate(os.Interrupt)
				}
				if sc.act() == "acquire" {
					w.intent(v.holderID, o.fireAt) // cancellation cleanup of its own state
				}
				vcancel()
			}
			for _, j := range rivals {
				wg.Add(1)
				go func() {
					defer wg.Done()
					w.rival(ctx, j)
				}()
			}
		}
		tr = newCut(w.Em.Transport(), &cutPlan{Req: id.b.Req, Phase: id.b.Phase, Label: id.b.Label, Fault: id.f}, fire)
		o.start = time.Now()
		call := w.linStep(sc, v)
		done := make(chan error, 1)
		go func() { done <- v.run(vctx, tr) }()
		watchdog := time.NewTimer(sc.budget + time.Second)
		select {
		case o.err = <-done:
		case <-watchdog.C:
			o.overrun = true
			tr.kill()
			vcancel()
			o.err = <-done
		}
		watchdog.Stop()
		o.retAt = time.Now()
		if id.f != faultSIGKILL {
			o.outputs = readOutputs(v.outPath)
			if sc.act() == "acquire" && o.outputs["admission-result"] == "timeout" {
				// The timeout cleanup of its own entry starts at the deadline.
				w.intent(v.holderID, o.start.Add(victimTimeout))
			}
		}
		w.linVictim(sc, v, call, o.outputs)
		o.stdout = v.stdout.String()
		o.requests = tr.Requests()
		o.afterKill = tr.AfterKill()
		wg.Wait()

		if m := tr.Mismatch(); m != "" {
			ct.violate("the request prefix diverged from the reference: %s", m)
		}
		if !tr.Fired() {
			ct.violate("the boundary was never reached; requests:\n%s", describe(o.requests))
			return
		}
		checkTiming(ct, sc, o)
		checkStep(ct, w, sc, v, o)
		audit(ct, w, sc, "after the step")
		recoverAndCheckLiveness(ct, w, sc, v, o, rivals)
		w.background.Wait()
		audit(ct, w, sc, "after recovery")
		if ct.n > 0 {
			t.Logf("victim stdout (masks omitted):\n%s\nvictim requests:\n%s\nerr: %v", unmasked(o.stdout), describe(o.requests), o.err)
		}
	})
}

// unmasked drops the ::add-mask:: lines (the only place a secret appears).
func unmasked(stdout string) string {
	var b strings.Builder
	for _, l := range strings.Split(stdout, "\n") {
		if !strings.HasPrefix(l, "::add-mask::") {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// rival is one competing job: acquire, hold 10 s, release with confirmed
// cleanup. It checks its own acquired=true claim against the history.
func (w *world) rival(ctx context.Context, j *actiontest.Job) {
	if err := w.acquire(ctx, j); err != nil {
		return
	}
	out := j.Outputs()
	assert.Empty(w.t, checkAcquiredClaim(w, j.HolderID(), out), "rival %s", j.HolderID())
	time.Sleep(10 * time.Second)
	_ = w.release(ctx, j, nil, "resource-cleanup-status", "confirmed")
}

// checkTiming: SIGINT — the step ends within the runner's 7.5 s window;
// stall — within the declared budget + 1 s; never a watchdog kill.
func checkTiming(ct *caseT, sc scenario, o *outcome) {
	if o.overrun {
		why := "its own deadlines"
		if !sc.ownBudget {
			why = "the workflow job timeout (the action declares no deadline of its own)"
		}
		ct.violate("the step did not return within %s + 1 s (%s): killed by the watchdog", sc.budget, why)
		return
	}
	switch o.id.f {
	case faultSIGINT:
		if d := o.retAt.Sub(o.fireAt); d > sigintWindow {
			ct.violate("after SIGINT the step needed %s, more than the runner's %s window before SIGTERM", d, sigintWindow)
		}
	case faultStall:
		if d := o.retAt.Sub(o.start); d > sc.budget+time.Second {
			ct.violate("under a stall the step needed %s, more than its declared %s + 1 s", d, sc.budget)
		}
	}
}

// checkAcquiredClaim: acquired=true names a committed version (state-sha)
// in which holderID holds with the reported fencing token.
func checkAcquiredClaim(w *world, holderID string, out map[string]string) string {
	if out["acquired"] != "true" {
		return ""
	}
	for _, v := range w.versions() {
		if v.BlobSHA != out["state-sha"] {
			continue
		}
		s, err := decodeState(v.Content)
		if err != nil {
			return fmt.Sprintf("acquired=true at state-sha %s, which does not decode: %v", out["state-sha"], err)
		}
		for _, h := range s.Holders {
			if h.HolderID == holderID {
				want := fmt.Sprint(h.FencingToken)
				if s.SchemaVersion < lockstate.FencedSchemaVersion {
					want = "" // no fencing below schema 6: the output is empty
				}
				if want != out["fencing-token"] {
					return fmt.Sprintf("acquired=true with fencing-token %q, but state-sha %s stamps %d", out["fencing-token"], out["state-sha"], h.FencingToken)
				}
				return ""
			}
		}
		return fmt.Sprintf("acquired=true, but the version at state-sha %s does not name %s as a holder", out["state-sha"], holderID)
	}
	return fmt.Sprintf("acquired=true, but no committed version has state-sha %q", out["state-sha"])
}

// audit runs the history checker and the fencing check over every version.
func audit(ct *caseT, w *world, sc scenario, when string) {
	in := checker.Input{Lock: actiontest.Lock, ServerURL: actiontest.ServerURL, MaxHolders: sc.seats, Removals: w.intents()}
	if sc.seatRules {
		cfg, _ := lockstate.DecodeConfig([]byte(sc.config))
		in.Seats, in.MaxOvertakes, in.CheckOvertakes = cfg.Seats.List(), cfg.MaxOvertakes, true
	}
	rep := checker.Check(w.history(), in)
	for _, v := range rep.Violations {
		ct.violate("history %s: %s", when, v)
	}
	for _, v := range checkFencing(w) {
		ct.violate("fencing %s: %s", when, v)
	}
	if !sc.seatRules {
		checkLinearizable(ct, w, when)
	}
}

// checkFencing: at schema 6 the counter never decreases, every new
// admission's token is above the previous counter and at most the new one,
// tokens are unique among holders and never reissued to another identity.
func checkFencing(w *world) []string {
	var out []string
	var prevCounter int64
	prev := map[string]int64{}
	issued := map[int64]string{}
	for i, v := range w.versions() {
		if v.Content == nil {
			continue
		}
		s, err := decodeState(v.Content)
		if err != nil || s.SchemaVersion < lockstate.FencedSchemaVersion {
			continue
		}
		if s.FencingToken < prevCounter {
			out = append(out, fmt.Sprintf("version %d (%s): counter went back from %d to %d", i, v.Message, prevCounter, s.FencingToken))
		}
		cur := map[string]int64{}
		seen := map[int64]string{}
		for _, h := range s.Holders {
			tok := h.FencingToken
			cur[h.HolderID] = tok
			if tok <= 0 || tok > s.FencingToken {
				out = append(out, fmt.Sprintf("version %d (%s): %s has token %d outside 1..%d", i, v.Message, h.HolderID, tok, s.FencingToken))
			}
			if other, dup := seen[tok]; dup {
				out = append(out, fmt.Sprintf("version %d (%s): token %d held by %s and %s", i, v.Message, tok, other, h.HolderID))
			}
			seen[tok] = h.HolderID
			if owner, ok := issued[tok]; ok && owner != h.HolderID {
				out = append(out, fmt.Sprintf("version %d (%s): token %d reissued to %s (first %s)", i, v.Message, tok, h.HolderID, owner))
			}
			if old, was := prev[h.HolderID]; (!was || old != tok) && tok <= prevCounter && i > 0 {
				out = append(out, fmt.Sprintf("version %d (%s): new admission of %s reuses token %d (counter was %d)", i, v.Message, h.HolderID, tok, prevCounter))
			}
			issued[tok] = h.HolderID
		}
		prevCounter, prev = s.FencingToken, cur
	}
	return out
}
