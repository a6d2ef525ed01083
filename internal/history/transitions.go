package history

import (
	"bytes"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// Kind names a family of writes the pure core produces.
type Kind string

// Transition kinds.
const (
	// KindAcquire: lockstate.Acquire (queue join, appended or inserted by
	// arrival, admission, rerun refresh, jobId backfill, same-runner
	// quarantine reclaim, schema migration).
	KindAcquire Kind = "acquire"
	// KindRelease: lockstate.Cleanup (release with its typed result, post
	// and timeout cleanup, pre-activation retraction, a blocked release
	// raising the incident, a prune-only write), and at schema <= 3 a
	// release followed by lockstate.Handoff in the same write (result
	// "released+handoff").
	KindRelease Kind = "release"
	// KindReap: lockstate.Reap (stale holder quarantined or freed, aged
	// quarantine auto-recovered, finished waiters dropped).
	KindReap Kind = "reap"
	// KindRecover: lockstate.RecoverQuarantine with the exact reservation id.
	KindRecover Kind = "recover"
	// KindRecoverIncident: lockstate.RecoverIncident with the exact incident
	// id.
	KindRecoverIncident Kind = "recover-incident"
	// KindBootstrap: the file's first version is an empty lock written by
	// an operator or the writer (a lock seeded at a schema).
	KindBootstrap Kind = "bootstrap"
	// KindUnexplained: no transition reproduced the version.
	KindUnexplained Kind = "unexplained"
)

// transition is one row of the recognized-transition table: a family of
// writes the pure core can produce, and how to propose the requests that
// could have produced a version. A write is accepted when some proposed
// request, run through the core, yields the version byte for byte (apart
// from updatedAt, which the store stamps). To recognize a new kind of write,
// add one row here that calls the core's new transition, or, when the write
// composes transitions (a release that hands its seat off), try the
// composition inside the row that owns the write (tryCleanup).
type transition struct {
	kind Kind
	// operator marks writes an operator account may author.
	operator bool
	try      func(t *trial) (result string, ok bool)
}

// transitions is the table, in the order rows are tried. A commit whose
// message starts with "Reap" tries the reaper first (a finished waiter
// dropped by the reaper and one removed by its owner are the same bytes).
var transitions = []transition{
	{kind: KindAcquire, try: tryAcquire},
	{kind: KindRelease, try: tryCleanup},
	{kind: KindReap, try: tryReap},
	{kind: KindRecover, operator: true, try: tryRecoverQuarantine},
	{kind: KindRecoverIncident, operator: true, try: tryRecoverIncident},
}

// operatorKinds are the kinds an operator may author.
func operatorKind(k Kind) bool {
	if k == KindBootstrap {
		return true
	}
	for _, t := range transitions {
		if t.kind == k {
			return t.operator
		}
	}
	return false
}

// trial is one version to explain.
type trial struct {
	prev, next *lockstate.State
	want       []byte // canonical encoding of next
	d          diff
	cfgs       []lockstate.Config
	nows       []time.Time
	in         *Input
	message    string
	// consumed are the quarantines verified reclaims consumed, by the
	// reclaiming holderId (what a retraction may restore).
	consumed map[string]lockstate.Reservation
	// matched: what reproduced the version.
	now time.Time
	cfg lockstate.Config
}

func newTrial(prev, next *lockstate.State, cfgs []lockstate.Config, in *Input, message string) (*trial, bool) {
	want, err := lockstate.Encode(next)
	if err != nil {
		return nil, false
	}
	d := diffStates(prev, next)
	return &trial{prev: prev, next: next, want: want, d: d, cfgs: cfgs, nows: nowCandidates(d, next), in: in, message: message}, true
}

// matches reports whether out is the version (updatedAt and the two pacing
// logs aside: recentArrivals only paces a burst's first writes and records
// a ticket no pure transition derives, recentHolds only paces far waiters
// and records a hold timed on the releasing runner, and writers that know
// neither drop both). A
// writer that does not know pendingRunnerId (the JavaScript reference,
// builds before upgrades drained) drops it from every schema-2 entry on its
// rewrite, so out is also accepted with those dropped.
func (t *trial) matches(out *lockstate.State) bool {
	if out == nil {
		return false
	}
	c := out.Clone()
	c.UpdatedAt = t.next.UpdatedAt
	c.RecentArrivals = slices.Clone(t.next.RecentArrivals)
	c.RecentHolds = slices.Clone(t.next.RecentHolds)
	b, err := lockstate.Encode(c)
	if err == nil && bytes.Equal(b, t.want) {
		return true
	}
	dropped := false
	for i := range c.Queue {
		if c.Queue[i].PendingRunnerID != "" {
			c.Queue[i].PendingRunnerID, dropped = "", true
		}
	}
	if !dropped {
		return false
	}
	b, err = lockstate.Encode(c)
	return err == nil && bytes.Equal(b, t.want)
}

// each runs fn for every config and now until it reproduces the version.
func (t *trial) each(fn func(cfg lockstate.Config, now time.Time) (*lockstate.State, string, bool)) (string, bool) {
	for _, cfg := range t.cfgs {
		for _, now := range t.nows {
			out, result, ok := fn(cfg, now)
			if ok && t.matches(out) {
				t.now, t.cfg = now, cfg
				return result, true
			}
		}
	}
	return "", false
}

// explain runs the table and returns the first row that reproduces the
// version. Some writes are the same bytes from two rows (a quarantine freed
// with a zero cooldown by the operator or by the reaper's auto-recovery; a
// finished waiter removed by its owner or by the reaper): rows the commit's
// author may write come first (an operator commit tries the operator rows
// first), then the row its message names ("Reap ...").
func (t *trial) explain(operatorOnly bool) (Kind, string, bool) {
	rows := append([]transition(nil), transitions...)
	rank := func(r transition) int {
		n := 0
		if operatorOnly && !r.operator {
			n += 2
		}
		if strings.HasPrefix(t.message, "Reap") && r.kind != KindReap {
			n++
		}
		return n
	}
	sort.SliceStable(rows, func(i, j int) bool { return rank(rows[i]) < rank(rows[j]) })
	for _, row := range rows {
		if result, ok := row.try(t); ok {
			return row.kind, result, true
		}
	}
	return KindUnexplained, "", false
}

// tryAcquire proposes one acquire per identity the write could belong to:
// a new holder (admission, possibly joining and admitted at once, a
// reclaim or a migration), a changed holder (jobId backfill), a new queue
// entry (join) or the caller's changed entry (rerun refresh, backfill).
func tryAcquire(t *trial) (string, bool) {
	type ask struct {
		id    lockstate.Identity
		lease time.Duration
		seat  lockstate.Entry // the entry whose labels and priority the request carried
	}
	var asks []ask
	for _, h := range t.d.addedHolders {
		lease := time.Hour
		if a, ok := lockstate.ParseTime(h.AcquiredAt); ok {
			if e, ok := lockstate.ParseTime(h.ExpiresAt); ok && e.After(a) {
				lease = e.Sub(a)
			}
		}
		asks = append(asks, ask{identityOf(h.Entry), lease, h.Entry})
	}
	if len(t.d.addedHolders) == 0 {
		for _, h := range t.d.changedHolders {
			asks = append(asks, ask{identityOf(h.Entry), time.Hour, h.Entry})
		}
		for _, e := range t.d.addedQueue {
			asks = append(asks, ask{identityOf(e), time.Hour, e})
		}
		for _, e := range t.d.changedQueue {
			if !t.d.onlyOvertakes(e, t.prev) {
				asks = append(asks, ask{identityOf(e), time.Hour, e})
			}
		}
		if len(asks) == 0 && t.next.SchemaVersion > t.prev.SchemaVersion {
			// An upgrade written by a waiting job's poll changes no entry
			// of its own: any job queued in both versions may have written
			// it (the core decides which of them it admits, if any). At the
			// step to schema 3 the writer supplies its own runner id, so
			// its entry is the one that may lack a recorded one: try those
			// first.
			var first, rest []ask
			for _, e := range t.next.Queue {
				i := lockstate.QueuePosition(t.prev, e.HolderID) - 1
				switch {
				case i < 0:
				case t.prev.SchemaVersion < 3 && t.prev.Queue[i].PendingRunnerID == "":
					first = append(first, ask{identityOf(e), time.Hour, e})
				default:
					rest = append(rest, ask{identityOf(e), time.Hour, e})
				}
			}
			asks = append(first, rest...)
		}
	}
	for _, a := range asks {
		for _, arrival := range t.arrivals(a.id.HolderID) {
			req := lockstate.AcquireRequest{Identity: a.id, Lease: a.lease, Arrival: arrival, Labels: a.seat.LabelList(), Priority: a.seat.Priority}
			result, ok := t.each(func(cfg lockstate.Config, now time.Time) (*lockstate.State, string, bool) {
				out, dec, err := lockstate.Acquire(t.prev, cfg, req, now)
				if err != nil || !dec.Changed {
					return nil, "", false
				}
				r := string(dec.Outcome)
				switch {
				case dec.QuarantineRecovered:
					r = "reclaimed"
				case dec.MigratedTo != 0 && dec.Outcome == lockstate.OutcomeQueued:
					r = "queued-migrated"
				case dec.MigratedTo != 0:
					r = "admitted-migrated"
				case dec.Outcome == lockstate.OutcomeQueued && len(t.d.addedQueue) == 0:
					r = "refreshed"
				case dec.Outcome == lockstate.OutcomeAlreadyHolder:
					r = "backfilled"
				}
				if dec.Inserted {
					r = "inserted"
				}
				return out, r, true
			})
			if ok {
				return result, true
			}
		}
	}
	return "", false
}

// arrivals are the arrival snapshots (lockstate.AcquireRequest.Arrival) a
// join of holderID may have carried: none (the entry is appended, as the
// reference does), and, when the version shows the new entry ahead of
// entries already queued, the snapshot of every entry it follows. That
// snapshot reproduces every legitimate arrival insertion: the core places
// a new entry after the last entry of its snapshot, then past the later
// joiners whose queuedAt is not after its own, so the entries it precedes
// must all have joined after it arrived (a later queuedAt); the core run
// on the snapshot checks exactly that.
func (t *trial) arrivals(holderID string) []*lockstate.Arrival {
	out := []*lockstate.Arrival{nil}
	if lockstate.QueuePosition(t.prev, holderID) > 0 {
		return out
	}
	at := lockstate.QueuePosition(t.next, holderID) - 1
	if at < 0 || at >= len(t.next.Queue)-1 {
		return out
	}
	a := &lockstate.Arrival{Queued: map[string]bool{}}
	for _, e := range t.next.Queue[:at] {
		a.Queued[e.HolderID] = true
	}
	return append(out, a)
}

// cleanupReports are the resource reports a release may have carried,
// most likely first, given the reservation it left (if any).
func cleanupReports(res *lockstate.Reservation, incident bool) []lockstate.Report {
	if incident {
		return []lockstate.Report{{Status: lockstate.StatusUnknown, Health: lockstate.HealthBlocked, Reason: lockstate.ReasonAccountLimit}}
	}
	confirmed := lockstate.Report{Status: lockstate.StatusConfirmed, Health: lockstate.HealthHealthy, Reason: lockstate.ReasonCleanupConfirmed}
	if res == nil {
		return []lockstate.Report{confirmed, {}}
	}
	if res.State == lockstate.ReservationCooldown {
		return []lockstate.Report{confirmed}
	}
	out := []lockstate.Report{{}}
	if res.Reason != lockstate.ReasonDefaultUnproven {
		out = append(out, lockstate.Report{Status: lockstate.StatusUnknown, Health: lockstate.HealthHealthy, Reason: res.Reason})
	}
	return out
}

// tryCleanup proposes the owner's cleanup for every holderId the write
// removed (or, with nothing removed, a cleanup that only prunes expired
// cooldowns or raises the incident).
func tryCleanup(t *trial) (string, bool) {
	owners := map[string]*cleanupOwner{}
	var order []string
	note := func(e lockstate.Entry, holder bool) {
		o, ok := owners[e.HolderID]
		if !ok {
			o = &cleanupOwner{id: e.HolderID}
			owners[e.HolderID] = o
			order = append(order, e.HolderID)
		}
		if o.attempt == "" || decimalLess(o.attempt, e.RunAttempt) {
			o.attempt = e.RunAttempt
		}
		if holder || o.runner == "" {
			o.runner = e.RunnerID
		}
		o.holder = o.holder || holder
	}
	for _, h := range t.d.removedHolders {
		note(h.Entry, true)
	}
	for _, e := range t.d.removedQueue {
		note(e, false)
	}
	if len(order) == 0 {
		order = append(order, "history-verify:no-owner")
		owners[order[0]] = &cleanupOwner{id: order[0], attempt: "1", runner: "history-verify"}
	}
	var ident lockstate.Identity
	if inc := t.d.incidentCreated; inc != nil {
		ident = lockstate.Identity{Repository: inc.Repository, Workflow: inc.Workflow, Job: inc.Job, RunID: inc.RunID,
			RunAttempt: inc.RunAttempt, RunURL: inc.RunURL, RunnerID: inc.RunnerID}
	}
	for _, id := range order {
		o := owners[id]
		var res *lockstate.Reservation
		if r, ok := t.d.reservationFor(id); ok {
			res = &r
		}
		resID := "history-verify"
		if res != nil {
			resID = res.ReservationID
		}
		type variant struct {
			pre, queueOnly bool
			restore        *lockstate.Reservation
		}
		variants := []variant{{}}
		if o.holder {
			// A retracted reclaim puts back exactly the quarantine its
			// admission consumed (recorded when the admission was
			// verified); any other retraction restores nothing.
			if r, ok := t.consumed[id]; ok {
				variants = append(variants, variant{pre: true, restore: &r})
			}
			variants = append(variants, variant{pre: true})
		} else {
			variants = append(variants, variant{queueOnly: true})
		}
		incidentID := ident
		incidentID.HolderID = id
		for _, v := range variants {
			for _, rep := range cleanupReports(res, t.d.incidentCreated != nil) {
				req := lockstate.CleanupRequest{
					HolderID: id, RunAttempt: o.attempt, RunnerID: o.runner, Report: rep,
					QueueOnly: v.queueOnly, PreActivation: v.pre, RestoreQuarantine: v.restore,
					ReservationID: resID, Identity: incidentID, ServerURL: t.in.serverURL(),
				}
				for _, handoff := range []bool{false, true} {
					if handoff && (v.pre || v.queueOnly || len(t.d.addedHolders) == 0) {
						continue
					}
					result, ok := t.each(func(cfg lockstate.Config, now time.Time) (*lockstate.State, string, bool) {
						out, dec, err := lockstate.Cleanup(t.prev, cfg, req, now)
						if err != nil || !dec.Changed {
							return nil, "", false
						}
						r := string(dec.Result)
						if v.pre {
							r = "retracted"
						} else if dec.Result == lockstate.ResultNoop {
							r = "pruned"
						}
						if handoff {
							// A release of this suite hands the freed seat to
							// the next waiters in the same write, exactly as
							// the release action does (lockstate.Handoff).
							if !dec.Released || !lockstate.HandoffAllowed(out) {
								return nil, "", false
							}
							after, h, err := lockstate.Handoff(out, cfg, now)
							if err != nil || !h.Changed {
								return nil, "", false
							}
							out, r = after, r+"+handoff"
						}
						return out, r, true
					})
					if ok {
						return result, true
					}
				}
			}
		}
	}
	return "", false
}

type cleanupOwner struct {
	id, attempt, runner string
	holder              bool
}

// decimalLess compares canonical positive decimals (run attempts); other
// strings compare as text.
func decimalLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

var (
	reasonRunEnded = regexp.MustCompile(`^holder run is (\S+)(?: \((.*)\))?$`)
	reasonAdvanced = regexp.MustCompile(`^workflow run advanced from attempt ([1-9][0-9]*) to ([1-9][0-9]*)$`)
	reasonJobDone  = regexp.MustCompile(`^holder job ([1-9][0-9]*) is completed$`)
)

// holderEvidence reconstructs the run evidence a reaper quarantine reason
// records ("scheduled stale reaping: <verdict>"): the reason is the proof
// the reaper wrote down, and the core must reach the same verdict from it.
// A reason that proves nothing yields unknown evidence, which only an
// expired lease makes stale.
func holderEvidence(h lockstate.Holder, reason string) lockstate.Evidence {
	v := strings.TrimPrefix(reason, lockstate.ReasonReapPrefix)
	if m := reasonRunEnded.FindStringSubmatch(v); m != nil {
		status := m[1]
		if v == "holder run is without a status" {
			status = ""
		}
		return lockstate.Evidence{Run: lockstate.RunEvidence{Known: true, Status: status, Conclusion: m[2], RunAttempt: h.RunAttempt}}
	}
	if m := reasonAdvanced.FindStringSubmatch(v); m != nil {
		return lockstate.Evidence{Run: lockstate.RunEvidence{Known: true, Status: "in_progress", RunAttempt: m[2]}}
	}
	if m := reasonJobDone.FindStringSubmatch(v); m != nil {
		return lockstate.Evidence{
			Run: lockstate.RunEvidence{Known: true, Status: "in_progress", RunAttempt: h.RunAttempt},
			Job: lockstate.JobEvidence{Known: true, JobID: m[1], Status: lockstate.JobStatusCompleted},
		}
	}
	return lockstate.Evidence{}
}

// finished is evidence that a run ended (what auto-recovery and queue
// reaping record no detail of).
func finished(attempt string) lockstate.Evidence {
	return lockstate.Evidence{Run: lockstate.RunEvidence{Known: true, Status: "completed", Conclusion: "failure", RunAttempt: attempt}}
}

// tryReap proposes one Reap carrying exactly the items the write changed:
// every removed holder with the evidence its quarantine reason records
// (below schema 4 a freed holder records no reason; a finished run is
// assumed), every quarantine that became an auto-recovered cooldown (or
// vanished with a zero cooldown), and every removed waiter.
func tryReap(t *trial) (string, bool) {
	var req lockstate.ReapRequest
	for _, h := range t.d.removedHolders {
		he := lockstate.HolderEvidence{Holder: h, Evidence: finished(h.RunAttempt)}
		if r, ok := t.d.reservationFor(h.HolderID); ok {
			he.ReservationID = r.ReservationID
			he.Evidence = holderEvidence(h, r.Reason)
		}
		req.Holders = append(req.Holders, he)
	}
	for _, r := range t.d.changedRes {
		if old := t.d.prevRes[r.ReservationID]; old.State == lockstate.ReservationQuarantine && strings.HasPrefix(r.Reason, lockstate.ReasonAutoRecoverPrefix) {
			req.Quarantines = append(req.Quarantines, lockstate.QuarantineEvidence{Reservation: old, Evidence: finished(old.RunAttempt)})
		}
	}
	for _, r := range t.d.removedRes {
		if r.State == lockstate.ReservationQuarantine {
			req.Quarantines = append(req.Quarantines, lockstate.QuarantineEvidence{Reservation: r, Evidence: finished(r.RunAttempt)})
		}
	}
	for _, e := range t.d.removedQueue {
		req.Queue = append(req.Queue, lockstate.QueueEvidence{Entry: e, Evidence: finished(e.RunAttempt)})
	}
	if len(req.Holders)+len(req.Quarantines)+len(req.Queue) == 0 {
		return "", false
	}
	if len(req.Quarantines) > 0 {
		req.LeaseGrace = t.in.leaseGrace()
	}
	return t.each(func(cfg lockstate.Config, now time.Time) (*lockstate.State, string, bool) {
		out, dec, err := lockstate.Reap(t.prev, cfg, req, now)
		if err != nil || !dec.Changed {
			return nil, "", false
		}
		result := "reaped"
		for _, it := range dec.Applied() {
			switch it.Outcome {
			case lockstate.ReapQuarantined:
				result = "stale-holder-quarantined"
			case lockstate.ReapFreed:
				if it.Kind == lockstate.ReapHolder {
					result = "stale-holder-freed"
				} else if result == "reaped" {
					result = "quarantine-auto-recovered"
				}
			case lockstate.ReapAutoRecovered:
				if result == "reaped" {
					result = "quarantine-auto-recovered"
				}
			case lockstate.ReapDropped:
				if result == "reaped" {
					result = "finished-waiters-dropped"
				}
			}
		}
		return out, result, true
	})
}

// recoveryNows adds availableAt − cooldown (the recovery's own clock) for
// every reservation the write turned into or added as a cooldown.
func (t *trial) recoveryNows(rs []lockstate.Reservation) {
	for _, r := range rs {
		if r.State != lockstate.ReservationCooldown {
			continue
		}
		at, ok := lockstate.ParseTime(r.AvailableAt)
		if !ok {
			continue
		}
		for _, cfg := range t.cfgs {
			now := at.Add(-time.Duration(cfg.ReleaseCooldownSeconds) * time.Second)
			dup := false
			for _, o := range t.nows {
				dup = dup || o.Equal(now)
			}
			if !dup {
				t.nows = append(t.nows, now)
			}
		}
	}
}

// tryRecoverQuarantine proposes the operator's recovery of each quarantine
// the write turned into a cooldown or removed.
func tryRecoverQuarantine(t *trial) (string, bool) {
	var ids []string
	for _, r := range t.d.changedRes {
		if t.d.prevRes[r.ReservationID].State == lockstate.ReservationQuarantine {
			ids = append(ids, r.ReservationID)
		}
	}
	for _, r := range t.d.removedRes {
		if r.State == lockstate.ReservationQuarantine {
			ids = append(ids, r.ReservationID)
		}
	}
	if len(ids) == 0 {
		return "", false
	}
	t.recoveryNows(t.d.changedRes)
	for _, id := range ids {
		if result, ok := t.each(func(cfg lockstate.Config, now time.Time) (*lockstate.State, string, bool) {
			out, _, err := lockstate.RecoverQuarantine(t.prev, cfg, id, now)
			return out, "quarantine-recovered", err == nil
		}); ok {
			return result, true
		}
	}
	return "", false
}

// tryRecoverIncident proposes the operator's recovery of the incident the
// write cleared, with the recovery cooldown it added.
func tryRecoverIncident(t *trial) (string, bool) {
	inc := t.d.incidentCleared
	if inc == nil {
		return "", false
	}
	resID := "history-verify"
	for _, r := range t.d.addedRes {
		if strings.HasSuffix(r.HolderID, ":"+lockstate.IncidentRecoverySuffix) {
			resID = r.ReservationID
		}
	}
	t.recoveryNows(t.d.addedRes)
	return t.each(func(cfg lockstate.Config, now time.Time) (*lockstate.State, string, bool) {
		out, _, err := lockstate.RecoverIncident(t.prev, cfg, inc.IncidentID, now, resID)
		return out, "incident-recovered", err == nil
	})
}

// drained reports whether s is an empty lock: no holder, waiter,
// reservation, incident or issued fencing token.
func drained(s *lockstate.State) bool {
	return len(s.Holders) == 0 && len(s.Queue) == 0 && len(s.Reservations) == 0 && s.ActiveIncident == nil && s.FencingToken == 0
}
