package sim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/checker"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/prhead"
)

// secretRE matches credential-looking strings (R-T5).
var secretRE = regexp.MustCompile(`ghs_[A-Za-z0-9]{8,}|ghp_[A-Za-z0-9]{8,}|github_pat_[A-Za-z0-9_]{8,}|-----BEGIN [A-Z ]*PRIVATE KEY|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}`)

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// audit runs every check on the finished simulation.
func (s *sim) audit(healed, jobsDone time.Time, liveWaiting []*job) Report {
	hist := s.em.History(owner, lockRepo, stateBranch, statePath)
	m := s.em.Metrics()
	rep := Report{
		MaxHolders: s.cfg.MaxHolders, Schema: s.schema, Cooldown: s.cfg.ReleaseCooldownSeconds, MaxOvertakes: s.cfg.MaxOvertakes,
		Jobs: len(s.jobs), Versions: len(hist), Requests: m.Requests, Faults: map[string]int64{},
		Schedule: strings.Join(s.sched, "; "),
	}
	for k, v := range m.FaultsByKind {
		rep.Faults[string(k)] = v
	}
	violate := func(format string, args ...any) {
		rep.Violations = append(rep.Violations, fmt.Sprintf(format, args...))
	}

	// Attribute every version to the process whose PUT carried its bytes.
	versions := make([]checker.Version, len(hist))
	for i, v := range hist {
		versions[i] = checker.Version{Time: v.Time, Content: v.Content, Message: v.Message, Actor: s.attribute(v)}
		if versions[i].Actor == "" && i == 0 {
			versions[i].Actor = "seed"
		}
		if versions[i].Actor == "" {
			violate("version %d (%s): no process sent these bytes (unattributed write)", i, v.Message)
			versions[i].Actor = "unknown"
		}
	}
	seats, limit := s.checkerSeats()
	cr := checker.Check(versions, checker.Input{
		Lock: lockName, ServerURL: serverURL, MaxHolders: limit,
		MaxOvertakes: s.cfg.MaxOvertakes, CheckOvertakes: true, Authorize: s.authorize, Seats: seats,
	})
	rep.Violations = append(rep.Violations, cr.Violations...)
	rep.Admissions = len(cr.Admissions)
	rep.MaxOvertaken = cr.MaxOvertaken

	states := make([]*lockstate.State, len(hist))
	for i, v := range hist {
		if v.Content != nil {
			states[i], _ = lockstate.Decode(v.Content, lockstate.DecodeOptions{Lock: lockName, ServerURL: serverURL})
		}
		if states[i] != nil {
			rep.FinalSchema = states[i].SchemaVersion
		}
		if strings.HasPrefix(versions[i].Actor, "old:") && states[i] != nil && states[i].SchemaVersion > oldMaxSchema {
			violate("version %d (%s): old client %s wrote schema %d", i, v.Message, versions[i].Actor, states[i].SchemaVersion)
		}
		if i > 0 && states[i] != nil && states[i-1] != nil {
			rep.EarlyCooldowns += earlyCooldowns(states[i-1], states[i], v.Time)
		}
	}

	// R-S6: acquired=true only with a committed holder entry naming the
	// job (its attempt, and at schema 6 its fencing token) at or before the
	// moment the output was written.
	for _, j := range s.jobs {
		if j.acquiredAt.IsZero() {
			continue
		}
		ok := false
		for i, v := range hist {
			if v.Time.After(j.acquiredAt) || states[i] == nil {
				continue
			}
			hi := lockstate.HolderIndex(states[i], j.holderID())
			// Below schema 3 the holderId (without attempt) is the whole
			// identity: a rerun owns its earlier attempt's slot by design.
			if hi < 0 || (states[i].SchemaVersion >= 3 && states[i].Holders[hi].RunAttempt != strconv.Itoa(j.attempt)) {
				continue
			}
			if tok := states[i].Holders[hi].FencingToken; tok > 0 && strconv.FormatInt(tok, 10) != j.token {
				continue
			}
			ok = true
			break
		}
		if !ok {
			violate("job %s reported acquired=true (fencing-token %q) at %s but no committed version names it as holder", j.actor(), j.token, j.acquiredAt.Format(time.RFC3339Nano))
		}
	}

	s.auditSharedSeats(violate)
	times := make([]time.Time, len(hist))
	for i, v := range hist {
		times[i] = v.Time
	}
	s.auditSeats(states, times, violate)
	if s.seats != nil {
		s.seats.mu.Lock()
		if len(s.seats.log) > 0 {
			rep.Schedule += "; " + strings.Join(s.seats.log, "; ")
		}
		s.seats.mu.Unlock()
	}
	s.auditSilentFailures(hist, states, violate)
	s.auditNoopReleases(hist, states, violate)
	s.auditRetryAfter(m, violate)
	s.auditWriteSpacing(violate)
	s.auditSecrets(hist, violate)
	s.auditLiveness(&rep, states, hist, healed, liveWaiting, violate)
	s.auditUpgrades(&rep, hist, states, healed, violate)
	s.linAudit(&rep, violate)

	s.evMu.Lock()
	for k, v := range s.events {
		rep.Faults["sim:"+k] = v
	}
	s.evMu.Unlock()

	// Digest of the decisions: messages, actors and contents with the
	// random reservation UUIDs normalized.
	h := sha256.New()
	names := map[string]string{}
	for _, v := range versions {
		c := uuidRE.ReplaceAllStringFunc(string(v.Content), func(u string) string {
			if _, ok := names[u]; !ok {
				names[u] = fmt.Sprintf("res-%d", len(names))
			}
			return names[u]
		})
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00", v.Time.Format(time.RFC3339Nano), v.Message, v.Actor, c)
	}
	rep.Digest = hex.EncodeToString(h.Sum(nil))[:16]
	return rep
}

// attribute finds the actor whose latest PUT at or before the commit sent
// exactly these bytes.
func (s *sim) attribute(v emulator.Version) string {
	if v.Content == nil {
		return ""
	}
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	for i := len(s.rec.puts) - 1; i >= 0; i-- {
		p := s.rec.puts[i]
		if !p.at.After(v.Time) && bytes.Equal(p.content, v.Content) {
			return p.actor
		}
	}
	return ""
}

// authorize is the ground-truth judge of every removal (R-S3, R-S4).
func (s *sim) authorize(ev checker.RemovalEvent) string {
	switch {
	case strings.HasPrefix(ev.Actor, "job:") || strings.HasPrefix(ev.Actor, "old:"):
		id, rest, _ := strings.Cut(ev.Actor[4:], "@")
		att, runner, _ := strings.Cut(rest, "#")
		if ev.Kind == "quarantine" {
			return "a job removed a quarantine that no admission of its runner reclaimed"
		}
		if id != ev.Entry.HolderID {
			return "removed by another job " + ev.Actor
		}
		if ev.Schema >= 3 && !attemptAtLeast(att, ev.Entry.RunAttempt) {
			return fmt.Sprintf("stale attempt %s removed attempt %s (run-attempt fence)", att, ev.Entry.RunAttempt)
		}
		if ev.Entry.RunnerName != "" && runner != ev.Entry.RunnerName && att == ev.Entry.RunAttempt {
			return fmt.Sprintf("a job on runner %s removed the entry of another job sharing its holder id, on runner %s", runner, ev.Entry.RunnerName)
		}
		return ""
	case ev.Actor == "reaper":
		switch ev.Kind {
		case "holder":
			if ev.Reservation != nil && !strings.HasPrefix(ev.Reservation.Reason, lockstate.ReasonReapPrefix) {
				return "reaped holder's quarantine lacks the reaper evidence reason"
			}
			if ev.Schema >= 4 && ev.Reservation == nil {
				return "reaper freed a holder without quarantining it"
			}
			if s.entryFinished(ev.Entry, ev.Time) {
				return ""
			}
			if exp, ok := lockstate.ParseTime(ev.Holder.ExpiresAt); ok && exp.Before(ev.Time) && ev.Reservation != nil {
				return "" // lease expired with unknown evidence: quarantined, never freed
			}
			return "reaper removed a holder whose run and job were still active"
		case "queue":
			if s.entryFinished(ev.Entry, ev.Time) {
				return ""
			}
			return "reaper dropped a queue entry whose run and job were still active"
		case "quarantine":
			r := ev.Reservation
			runID, _ := strconv.ParseInt(r.RunID, 10, 64)
			att, _ := strconv.Atoi(r.RunAttempt)
			if !strings.HasPrefix(ev.Message, "Auto-recover") {
				return "quarantine removed by a reaper write that is not an auto-recovery"
			}
			created, ok := lockstate.ParseTime(r.CreatedAt)
			if !ok || created.Add(240*time.Minute).After(ev.Time) {
				return "quarantine auto-recovered before the 240-minute grace"
			}
			if !s.runFinished(runID, att, ev.Time) {
				return "quarantine freed while its owning run was still active (time alone is no proof)"
			}
			return ""
		}
	case ev.Actor == "recover":
		if ev.Kind == "quarantine" {
			s.jobsMu.Lock()
			_, ok := s.recovered[ev.Reservation.ReservationID]
			s.jobsMu.Unlock()
			if ok {
				return ""
			}
			return "recover removed a quarantine the operator did not name"
		}
		return "recover removed a " + ev.Kind
	}
	return "removal by an unknown writer"
}

// entryFinished: the entry's run attempt is terminal or superseded, or its
// exact job completed (ground truth at t).
func (s *sim) entryFinished(e lockstate.Entry, t time.Time) bool {
	runID, _ := strconv.ParseInt(e.RunID, 10, 64)
	att, _ := strconv.Atoi(e.RunAttempt)
	return s.runFinished(runID, att, t) || (e.JobID != "" && s.jobFinished(e.JobID, t))
}

// entryProvablyFinished is entryFinished restricted to the evidence the
// reaper is allowed to use (spec §4.2): the run attempt is terminal or
// superseded, or the exact job completed, where the exact job is known only
// when the entry recorded both a jobId and a runnerId ("unknown when ...
// there is no runnerId ... there is no canonical jobId"; the code "never
// infers a job from timestamps or names"). An entry written without them
// (schema < 3 has no runnerId; a job whose id could not be resolved has no
// jobId) stays, fail closed, while its run is active (a sibling job keeps
// the run going): spec §4.1 "An expired lease alone never frees a slot while
// the owning run is still active". The liveness check (R-L2) expects only
// what the reaper can prove; removals are still judged by entryFinished.
func (s *sim) entryProvablyFinished(e lockstate.Entry, t time.Time) bool {
	runID, _ := strconv.ParseInt(e.RunID, 10, 64)
	att, _ := strconv.Atoi(e.RunAttempt)
	return s.runFinished(runID, att, t) || (e.JobID != "" && e.RunnerID != "" && s.jobFinished(e.JobID, t))
}

func attemptAtLeast(a, b string) bool {
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(b)
	return err1 == nil && err2 == nil && x >= y
}

// earlyCooldowns counts cooldowns that vanished before their availableAt
// (by server time) without a reclaim: a skewed runner clock pruned them.
func earlyCooldowns(prev, cur *lockstate.State, at time.Time) int {
	n := 0
	keep := map[string]bool{}
	for _, r := range cur.Reservations {
		keep[r.ReservationID] = true
	}
	for _, r := range prev.Reservations {
		if r.State != lockstate.ReservationCooldown || keep[r.ReservationID] {
			continue
		}
		if t, ok := lockstate.ParseTime(r.AvailableAt); ok && at.Before(t) {
			n++
		}
	}
	return n
}

// auditRetryAfter checks R-F4: per process (one step of a job, one reaper
// or recover run) and per token (an App JWT per App), no request was sent
// after an answer advertising Retry-After (or a primary reset) came back
// and before that window elapsed. A window opens when its answer reached
// the client, not when the request left: a request sent before the client
// could know is no violation.
func (s *sim) auditRetryAfter(m emulator.Metrics, violate func(string, ...any)) {
	until := map[string]time.Time{}
	primary := map[string]bool{}
	for _, r := range m.Log {
		if !r.RetryAfterUntil.IsZero() {
			until[r.ID] = r.RetryAfterUntil
			primary[r.ID] = r.Status == 403 && r.RateLimitRemaining == 0
		}
	}
	s.rec.mu.Lock()
	sends := append([]sendRecord(nil), s.rec.sends...)
	s.rec.mu.Unlock()
	// One timeline of sends and of answers that open a window, ordered by
	// time and, within one virtual instant, by the order they happened.
	type event struct {
		at     time.Time
		seq    int64
		opens  bool
		key    string
		sr     sendRecord
		until  time.Time
		isPrim bool
	}
	var evs []event
	for _, sr := range sends {
		if sr.cred == "" {
			continue
		}
		key := sr.actor + "|" + sr.proc + "|" + sr.cred
		evs = append(evs, event{at: sr.at, seq: sr.sendSeq, key: key, sr: sr})
		if u, ok := until[sr.reqID]; ok {
			if isPRHeadRoute(sr.route) {
				// The current-PR-head guard is the intentional exception
				// to the shared client's policy (build-lock-reference
				// "Server-Directed Retry Waits"; spec §1.6 "Delay"): an
				// instruction that fits its 30 s budget may still produce
				// a sleep capped at prhead.MaxSleep (10 s).
				u = clock.Earlier(u, sr.done.Add(prhead.MaxSleep))
			}
			evs = append(evs, event{at: sr.done, seq: sr.doneSeq, opens: true, key: key, until: u, isPrim: primary[sr.reqID]})
		}
	}
	sort.SliceStable(evs, func(a, b int) bool {
		if !evs[a].at.Equal(evs[b].at) {
			return evs[a].at.Before(evs[b].at)
		}
		return evs[a].seq < evs[b].seq
	})
	blocked := map[string]time.Time{}
	opened := map[string]time.Time{}
	isPrimary := map[string]bool{}
	n := 0
	for _, ev := range evs {
		if ev.opens {
			if ev.until.After(blocked[ev.key]) {
				blocked[ev.key] = ev.until
				opened[ev.key] = ev.at
				isPrimary[ev.key] = ev.isPrim
			}
			continue
		}
		sr := ev.sr
		if b := blocked[ev.key]; sr.at.Before(b) {
			// A process measures the window on its own clock; a clock
			// that runs fast by drift ends it early by drift × the window
			// (R-C1: a skewed runner clock may degrade etiquette and
			// liveness, reported, never safety). Real clocks measure
			// elapsed time monotonically; the simulated drift is a rate
			// error of up to 1%.
			if tol := time.Duration(math.Abs(sr.drift) * float64(b.Sub(opened[ev.key]))); b.Sub(sr.at) <= tol {
				s.event("early-request-within-clock-drift")
				continue
			}
			n++
			if n <= 5 {
				what := "Retry-After"
				if isPrimary[ev.key] {
					what = "primary rate-limit reset"
				}
				violate("%s (%s) sent %s at %s, %s before the advertised %s", sr.actor, sr.proc, sr.route, sr.at.Format(time.RFC3339Nano), b.Sub(sr.at), what)
			}
		}
	}
	if n > 5 {
		violate("... %d requests in total were sent inside a Retry-After or rate-limit window", n)
	}
}

// auditWriteSpacing checks the write etiquette of issue 14: one process
// never sends two content-creating requests (POST, PATCH, PUT, DELETE other
// than token mints) on one token within ghclient.MinWriteSpacing, measured
// on the process's own clock (a drifting clock may shorten it by drift × the
// spacing).
func (s *sim) auditWriteSpacing(violate func(string, ...any)) {
	s.rec.mu.Lock()
	sends := append([]sendRecord(nil), s.rec.sends...)
	s.rec.mu.Unlock()
	last := map[string]time.Time{}
	n := 0
	for _, sr := range sends {
		method, path, _ := strings.Cut(sr.route, " ")
		switch method {
		case "POST", "PATCH", "PUT", "DELETE":
		default:
			continue
		}
		if strings.HasPrefix(path, "/app/") || strings.Contains(path, "/api/v3/app/") || sr.cred == "" {
			continue
		}
		key := sr.actor + "|" + sr.proc + "|" + sr.cred
		if prev, ok := last[key]; ok {
			gap := sr.at.Sub(prev)
			if tol := time.Duration(math.Abs(sr.drift) * float64(ghclient.MinWriteSpacing)); gap < ghclient.MinWriteSpacing-tol {
				n++
				if n <= 5 {
					violate("%s (%s) sent %s %s after its previous write (writes of one process are at least %s apart)", sr.actor, sr.proc, sr.route, gap, ghclient.MinWriteSpacing)
				}
			}
		}
		last[key] = sr.at
	}
	if n > 5 {
		violate("... %d writes in total were sent less than %s after the previous write of their process", n, ghclient.MinWriteSpacing)
	}
}

// isPRHeadRoute reports a request of the current-PR-head guard.
func isPRHeadRoute(route string) bool {
	return strings.HasPrefix(route, "GET ") && strings.Contains(route, "/pulls/")
}

// auditSecrets checks R-T5 on state, outputs, summaries and stdout.
func (s *sim) auditSecrets(hist []emulator.Version, violate func(string, ...any)) {
	check := func(where, text string) {
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "::add-mask::") {
				continue
			}
			if loc := secretRE.FindStringIndex(line); loc != nil {
				violate("credential-looking string in %s: %q...", where, line[loc[0]:min(loc[0]+8, len(line))])
				return
			}
		}
	}
	for i, v := range hist {
		check(fmt.Sprintf("state version %d", i), string(v.Content))
	}
	for _, j := range s.jobs {
		check("stdout of "+j.actor(), j.out.String())
		for _, o := range j.outputs {
			for k, v := range o {
				check("output "+k+" of "+j.actor(), v)
			}
		}
		for _, sm := range j.summaries {
			check("summary of "+j.actor(), sm)
		}
	}
	for _, o := range s.reaperOut {
		check("reaper/recover output", o)
	}
}

// livenessStart is when the liveness bound starts counting: when the faults
// healed, or, after a primary-limit exhaustion, when the installation's
// hour ends (it is locked out until its reset). Run keeps the world (jobs,
// reaper, operator) going until livenessStart + live, the bound the audit
// judges at.
func (s *sim) livenessStart(healed time.Time) time.Time {
	s.jobsMu.Lock()
	at := s.primaryAt
	s.jobsMu.Unlock()
	if !at.IsZero() && at.Add(time.Hour).After(healed) {
		return at.Add(time.Hour)
	}
	return healed
}

// auditLiveness checks R-L2 once the faults healed: every job that was
// still waiting got admitted or gave up (removing its entry) within the
// bound, no queue entry of a finished job remains at the end, and no
// holder of a finished job remains unquarantined.
func (s *sim) auditLiveness(rep *Report, states []*lockstate.State, hist []emulator.Version, healed time.Time, waiting []*job, violate func(string, ...any)) {
	healed = s.livenessStart(healed)
	bound := healed.Add(s.live)
	for _, h := range s.hung {
		violate("liveness: %s never finished (hung for hours after the faults stopped; killed)", h)
	}
	for _, j := range waiting {
		if j.dead.Load() {
			continue
		}
		rep.LiveWaiters++
		j.mu.Lock()
		ended := j.waitEnded
		j.mu.Unlock()
		if !ended.IsZero() && !ended.After(bound) {
			rep.LiveResolved++
		} else {
			violate("liveness: %s still waiting %s after the faults stopped", j.actor(), s.live)
		}
	}
	// The state at the bound.
	var st *lockstate.State
	for i, v := range hist {
		if !v.Time.After(bound) && states[i] != nil {
			st = states[i]
		}
	}
	if st == nil {
		return
	}
	for _, h := range st.Holders {
		if s.entryProvablyFinished(h.Entry, bound.Add(-15*time.Minute)) {
			violate("liveness: holder %s@%s of a finished run still holds a seat %s after the faults stopped", h.HolderID, h.RunAttempt, s.live)
		}
	}
	for _, q := range st.Queue {
		if s.entryProvablyFinished(q, bound.Add(-15*time.Minute)) {
			violate("liveness: queue entry %s@%s of a finished run still queued %s after the faults stopped", q.HolderID, q.RunAttempt, s.live)
		}
	}
}

// auditSharedSeats: two jobs of one run attempt that share a holder id on
// different runners (matrix legs at the default holder-id-suffix) are two
// physical jobs; they must never both be told acquired=true for overlapping
// times, because the state then holds one seat for both.
func (s *sim) auditSharedSeats(violate func(string, ...any)) {
	type key struct {
		id      string
		attempt int
	}
	by := map[key][]*job{}
	for _, j := range s.jobs {
		if !j.acquiredAt.IsZero() {
			k := key{j.holderID(), j.attempt}
			by[k] = append(by[k], j)
		}
	}
	for k, js := range by {
		for a := 0; a < len(js); a++ {
			for b := a + 1; b < len(js); b++ {
				x, y := js[a], js[b]
				if x.runner == y.runner {
					continue
				}
				xEnd, yEnd := endOr(x.ended), endOr(y.ended)
				if x.acquiredAt.Before(yEnd) && y.acquiredAt.Before(xEnd) {
					violate("two jobs on one seat: %s on %s and on %s were both acquired for holder id %s at once", k.id, x.runner, y.runner, k.id)
				}
			}
		}
	}
}

func endOr(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}

// auditSilentFailures: an acquire that ended by itself with an error that
// no typed refusal reported (acquired=false, its reason code as
// admission-result) must not have left its admission in the state (spec: after an
// ambiguous write the next read decides; if none can, outputs say
// admission-unknown). The committed version current when the step ended
// must not hold its holder id at its attempt.
func (s *sim) auditSilentFailures(hist []emulator.Version, states []*lockstate.State, violate func(string, ...any)) {
	for _, j := range s.jobs {
		if j.silentFailAt.IsZero() {
			continue
		}
		var cur *lockstate.State
		for i, v := range hist {
			if v.Time.After(j.silentFailAt) {
				break
			}
			cur = states[i]
		}
		if cur == nil {
			continue
		}
		if hi := lockstate.HolderIndex(cur, j.holderID()); hi >= 0 && cur.Holders[hi].RunAttempt == strconv.Itoa(j.attempt) &&
			(cur.Holders[hi].RunnerName == "" || cur.Holders[hi].RunnerName == j.runner) {
			violate("job %s: acquire exited 1 (%s, acquired=false) at %s while its admission was in the state", j.actor(), j.acquireReason, j.silentFailAt.Format(time.RFC3339Nano))
		}
	}
}

// auditNoopReleases: a release step that reported nothing to remove
// (cleanup-result noop) must have been right at some moment of its call:
// of the committed versions current during it (the one current at its
// start and every one committed before it returned), at least one holds
// no entry of its holder id at its attempt. A no-op decided on a lagging
// replica older than a version that showed the job breaks it, and leaves
// the seat held until the reaper.
func (s *sim) auditNoopReleases(hist []emulator.Version, states []*lockstate.State, violate func(string, ...any)) {
	for _, j := range s.jobs {
		for _, r := range j.noopReleases {
			owned, seen := true, false
			for i, v := range hist {
				if v.Time.After(r.end) {
					break
				}
				if i+1 < len(hist) && !hist[i+1].Time.After(r.start) {
					continue // superseded before the call began
				}
				seen = true
				if !j.ownsEntryIn(states[i]) {
					owned = false
					break
				}
			}
			if seen && owned {
				violate("job %s: release reported nothing to remove (cleanup-result noop, %s to %s) while every version committed during it held its entry",
					j.actor(), r.start.Format(time.RFC3339Nano), r.end.Format(time.RFC3339Nano))
			}
		}
	}
}

// ownsEntryIn reports whether st (nil: no state) holds a holder or queue
// entry of j's holder id at j's attempt, recorded on j's runner or on none
// (an entry of the same holder id on another runner is another job's: the
// shared-holder-id scenario).
func (j *job) ownsEntryIn(st *lockstate.State) bool {
	if st == nil {
		return false
	}
	attempt := strconv.Itoa(j.attempt)
	mine := func(e lockstate.Entry) bool {
		return e.RunAttempt == attempt && (e.RunnerName == "" || e.RunnerName == j.runner)
	}
	if hi := lockstate.HolderIndex(st, j.holderID()); hi >= 0 && mine(st.Holders[hi].Entry) {
		return true
	}
	if qi := lockstate.QueuePosition(st, j.holderID()); qi > 0 && mine(st.Queue[qi-1]) {
		return true
	}
	return false
}
