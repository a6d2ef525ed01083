package history

import (
	"fmt"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// Verify checks every version of the state file in in.Versions (see the
// package doc for the rules) and returns the findings, the per-commit steps
// and the prefix a checkpoint may advance over. It never reads a clock or
// the network.
func Verify(in Input) *Result {
	v := &verifier{in: &in, res: &Result{Lock: in.Lock, Transitions: map[string]int{}, Results: map[string]int{}}, ack: map[string]bool{}, consumed: map[string]lockstate.Reservation{}}
	for _, s := range in.Acknowledged {
		v.ack[s] = true
	}
	if in.Checkpoint != nil && in.Base != nil && in.Listed == nil {
		// Resuming after the checkpoint: its tokens were issued before,
		// and its holders' reclaims were verified.
		v.maxToken = in.Checkpoint.MaxFencingToken
		for k, r := range in.Checkpoint.Reclaimed {
			v.consumed[k] = r
		}
	}
	v.run()
	return v.res
}

type verifier struct {
	in       *Input
	res      *Result
	ack      map[string]bool
	maxToken int64
	consumed map[string]lockstate.Reservation
	// commit-local findings
	local []Finding
	// notes
	gaps, defaultsOnly, skewed int
	maxSkew                    time.Duration
	rebaselined                int
	rewriteBlocks              bool
}

func (v *verifier) run() {
	in, res := v.in, v.res
	if in.Checkpoint != nil && in.Listed != nil {
		v.checkRewrite()
	}
	var prev *lockstate.State
	var prevContent string
	prevSHA := ""
	genesis := in.Base == nil
	if in.Base != nil {
		prevSHA = in.Base.SHA
		if in.Base.Deleted() {
			prev = lockstate.Empty(in.Lock)
		} else {
			st, err := lockstate.Decode(in.Base.Content, lockstate.DecodeOptions{Lock: in.Lock, ServerURL: in.serverURL()})
			if err != nil {
				res.Status, res.Incomplete = StatusIncomplete, fmt.Sprintf("the checkpoint's version at %s does not decode (%v); delete the checkpoint to verify the whole history again", short(in.Base.SHA), err)
				return
			}
			prev, prevContent = st, string(in.Base.Content)
		}
		inForce := window(in.Configs, in.Base.Time, in.staleness()).inForce
		res.Base = &Step{Commit: in.Base.Commit, State: prev, Seats: inForce.MaxHolders, Config: inForce}
		v.track(prev)
	} else if !in.StartProven && len(in.Versions) > 0 {
		res.Status, res.Incomplete = StatusIncomplete,
			fmt.Sprintf("the oldest listed commit %s is not where the state file was created: the history is truncated", short(in.Versions[0].SHA))
		return
	}
	cleanPrefix := !v.rewriteBlocks
	for i := range in.Versions {
		ver := &in.Versions[i]
		v.local = v.local[:0]
		step := Step{Commit: ver.Commit}
		var next *lockstate.State
		content := string(ver.Content)
		win := window(in.Configs, ver.Time, in.staleness())
		step.MaxHolders = max(win.maxHolders, lockstate.DefaultMaxHolders)
		step.Seats = win.inForce.MaxHolders

		// Per commit: the chain.
		switch {
		case len(ver.Parents) > 1:
			v.find(ver, RuleBrokenChain, prevContent, content, fmt.Sprintf("merge commit with %d parents: every state write is a compare-and-swap on one parent", len(ver.Parents)))
		case len(ver.Parents) == 0 && prevSHA != "":
			v.find(ver, RuleBrokenChain, prevContent, content, "a commit without a parent after the start of the history")
		case prevSHA != "" && ver.Parents[0] != prevSHA:
			v.gaps++
		}

		switch {
		case ver.Deleted():
			v.find(ver, RuleStateDeleted, prevContent, "", "the commit deleted the state file; the next write re-creates it from an empty lock and forgets every holder")
			next = nil
		default:
			st, err := lockstate.Decode(ver.Content, lockstate.DecodeOptions{Lock: in.Lock, ServerURL: in.serverURL()})
			switch {
			case err != nil && lockstate.CodeOf(err) == lockstate.CodeSeatConflict:
				v.find(ver, RuleSeatConflict, prevContent, content, fmt.Sprintf("two holders or reservations record one seat (%s): %v", lockstate.CodeOf(err), err))
			case err != nil:
				v.find(ver, RuleInvalidDocument, prevContent, content, fmt.Sprintf("the version fails validation (%s): %v", lockstate.CodeOf(err), err))
			default:
				next = st
			}
		}

		if next != nil {
			v.perVersion(ver, prev, next, win, prevContent, content)
			base := prev
			if base == nil && genesis && i == 0 {
				base = lockstate.Empty(in.Lock)
			}
			switch {
			case base == nil:
				// After an invalid version nothing can be replayed: this
				// version becomes the new baseline.
				v.rebaselined++
			default:
				v.transition(ver, base, next, win, &step, prevContent, content, genesis && i == 0)
			}
			v.track(next)
		}
		v.author(ver, step.Kind, prevContent, content)
		if !step.Now.IsZero() {
			if d := absDur(step.Now.Sub(ver.Time)); d > ClockSkewNote {
				v.skewed++
				v.maxSkew = max(v.maxSkew, d)
			}
		}
		step.Prev, step.State = prev, next
		step.Findings = len(v.local)
		kind := string(step.Kind)
		if kind == "" {
			kind = string(KindUnexplained)
		}
		res.Transitions[kind]++
		if step.Result != "" {
			res.Results[step.Result]++
		}
		res.Steps = append(res.Steps, step)
		res.Commits++
		unacked := false
		for _, f := range v.local {
			f.Acknowledged = v.ack[f.Commit]
			unacked = unacked || !f.Acknowledged
			res.Findings = append(res.Findings, f)
		}
		if unacked {
			cleanPrefix = false
		}
		if cleanPrefix {
			res.Verified = append(res.Verified, *ver)
			res.MaxFencingToken = v.maxToken
		}
		c := ver.Commit
		if res.First == nil {
			res.First = &c
		}
		res.Last = &c

		prevSHA, prevContent = ver.SHA, content
		switch {
		case ver.Deleted():
			prev = lockstate.Empty(in.Lock)
		default:
			prev = next
		}
	}
	if len(res.Verified) == 0 {
		res.MaxFencingToken = 0
	}
	if n := len(res.Verified); n > 0 {
		if last := res.Steps[n-1].State; last != nil {
			for _, h := range last.Holders {
				if r, ok := v.consumed[h.HolderID]; ok {
					if res.Reclaimed == nil {
						res.Reclaimed = map[string]lockstate.Reservation{}
					}
					res.Reclaimed[h.HolderID] = r
				}
			}
		}
	}
	v.finish()
}

func (v *verifier) finish() {
	res := v.res
	for i := range res.Findings {
		if !res.Findings[i].Acknowledged {
			f := res.Findings[i]
			res.FirstViolation = &f
			break
		}
	}
	switch {
	case v.in.Incomplete != "":
		res.Status, res.Incomplete = StatusIncomplete, v.in.Incomplete
	case res.FirstViolation != nil:
		res.Status = StatusViolations
	default:
		res.Status = StatusClean
	}
	if res.Status == StatusIncomplete && res.FirstViolation != nil {
		res.Incomplete += fmt.Sprintf("; %d violation(s) in what was read", res.Violations())
	}
	if v.gaps > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d version(s) follow commits to other paths of the branch (other locks); their chain is GitHub's listing of this path", v.gaps))
	}
	if v.defaultsOnly > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d transition(s) are explained only by the safe default config (the writer could not read the config file)", v.defaultsOnly))
	}
	if v.skewed > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d write(s) carry a writer clock more than %s away from GitHub's commit time (largest %s)", v.skewed, ClockSkewNote, v.maxSkew.Round(time.Second)))
	}
	if v.rebaselined > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d version(s) after an invalid one could not be replayed and were taken as a new baseline", v.rebaselined))
	}
	if len(v.in.Writers) == 0 {
		res.Notes = append(res.Notes, "no writer login was given: the author rule was not checked")
	}
}

func (v *verifier) find(ver *Version, rule Rule, before, after, detail string) {
	v.local = append(v.local, Finding{Rule: rule, Commit: ver.SHA, Time: ver.Time, Author: ver.Author(),
		Message: ver.Message, Detail: detail, Before: before, After: after})
}

// perVersion: the document, capacity and identities.
func (v *verifier) perVersion(ver *Version, prev, next *lockstate.State, win configWindow, before, after string) {
	maxHolders := max(win.maxHolders, lockstate.DefaultMaxHolders)
	// A named seat the config no longer names drains: its holder and
	// reservation stay, outside the capacity of the new list.
	holders, occ := win.occupancy(next)
	prevOcc, prevHolders := 0, 0
	if prev != nil {
		prevHolders, prevOcc = win.occupancy(prev)
	}
	switch {
	case holders > maxHolders && holders > prevHolders:
		v.find(ver, RuleOverCapacity, before, after, fmt.Sprintf("%d holders after this write, above maxHolders %d (the largest in force)", holders, maxHolders))
	case occ > maxHolders && occ > prevOcc && holders > prevHolders:
		// Only an admission over-admits: a recovery cooldown may push the
		// reservations past maxHolders (recover-incident), a reclaim swaps
		// a reservation for a holder.
		v.find(ver, RuleOverCapacity, before, after, fmt.Sprintf("%d seats in use after this write (%d holders, %d reservations), above maxHolders %d (the largest in force)",
			occ, holders, occ-holders, maxHolders))
	}
	holding := map[string]bool{}
	for _, h := range next.Holders {
		holding[h.HolderID] = true
	}
	for _, e := range next.Queue {
		if holding[e.HolderID] {
			v.find(ver, RuleDuplicateIdentity, before, after, fmt.Sprintf("%s holds a seat and waits in the queue at once", e.HolderID))
			break
		}
	}
	if a, b, ok := twoSeatsOnOneMachine(next); ok && (prev == nil || !sameMachinePair(prev, a, b)) {
		v.find(ver, RuleMachineSerialization, before, after, fmt.Sprintf("%s and %s record one machine: the machine holds two seats", a, b))
	}
}

// transition: schema, fencing, overtaking and the table.
func (v *verifier) transition(ver *Version, prev, next *lockstate.State, win configWindow, step *Step, before, after string, first bool) {
	specific := len(v.local)
	if next.SchemaVersion < prev.SchemaVersion {
		v.find(ver, RuleSchemaDowngrade, before, after, fmt.Sprintf("schema went down from %d to %d", prev.SchemaVersion, next.SchemaVersion))
	}
	d := diffStates(prev, next)
	cfgs := win.variants(prev)
	if next.SchemaVersion >= lockstate.FencedSchemaVersion {
		v.fencing(ver, prev, next, d, before, after)
		v.overtaking(ver, prev, next, win, before, after)
		v.seatRules(ver, prev, next, d, cfgs, before, after)
	}
	t, ok := newTrial(prev, next, cfgs, v.in, ver.Message)
	if ok {
		t.consumed = v.consumed
	}
	if !ok {
		v.find(ver, RuleUnexplainedTransition, before, after, "the version does not re-encode")
		return
	}
	kind, result, ok := t.explain(v.operatorOnly(ver))
	if !ok && first && drained(next) {
		kind, result, ok = KindBootstrap, "bootstrap", true
	}
	if ok {
		step.Kind, step.Result, step.Now, step.Config = kind, result, t.now, t.cfg
		if result == "reclaimed" && len(d.addedHolders) == 1 {
			for _, r := range d.removedRes {
				if quarantineOf(r, d.addedHolders[0].Entry) {
					v.consumed[d.addedHolders[0].HolderID] = r
				}
			}
		}
		if kind != KindBootstrap && win.isDefaultsOnly(t.cfg) {
			v.defaultsOnly++
		}
		return
	}
	step.Kind = KindUnexplained
	if len(v.local) > specific {
		return // a specific rule already names what is wrong
	}
	if first {
		v.find(ver, RuleGenesis, before, after, "the file's first version is neither an empty lock nor what a first write produces from the missing file")
		return
	}
	if rule, detail := classify(prev, d, cfgs); rule != "" {
		v.find(ver, rule, before, after, detail)
		return
	}
	v.find(ver, RuleUnexplainedTransition, before, after, "no acquire, release, reap or recovery of the pure core produces this version from its parent under any config in force")
}

// fencing: the counter and each admission's token.
func (v *verifier) fencing(ver *Version, prev, next *lockstate.State, d diff, before, after string) {
	counter := int64(0)
	if prev.SchemaVersion >= lockstate.FencedSchemaVersion {
		counter = prev.FencingToken
	}
	if next.FencingToken < counter {
		v.find(ver, RuleFencingToken, before, after, fmt.Sprintf("the fencing counter went down from %d to %d", counter, next.FencingToken))
		return
	}
	for _, h := range d.addedHolders {
		if h.FencingToken <= counter || h.FencingToken <= v.maxToken {
			v.find(ver, RuleFencingToken, before, after, fmt.Sprintf("the admission of %s got fencing token %d, not above every token issued before (%d): a reused token",
				h.HolderID, h.FencingToken, max(counter, v.maxToken)))
			return
		}
	}
	if moved := next.FencingToken - counter; moved != int64(len(d.addedHolders)) {
		v.find(ver, RuleFencingToken, before, after, fmt.Sprintf("the fencing counter moved by %d for %d admission(s)", moved, len(d.addedHolders)))
	}
}

// overtaking: each waiter's overtakes grows by at most one per write, never
// from the bound, and starts at zero. A waiter already queued before the
// write that upgraded the lock to schema 6 is not new: it counts from 0
// (older schemas decode no overtakes), so the upgrade write itself may pass
// it once (an admission in the same write).
func (v *verifier) overtaking(ver *Version, prev, next *lockstate.State, win configWindow, before, after string) {
	old := map[string]lockstate.Entry{}
	for _, e := range prev.Queue {
		old[e.HolderID] = e
	}
	for _, e := range next.Queue {
		o, ok := old[e.HolderID]
		switch {
		case !ok && e.Overtakes != 0:
			v.find(ver, RuleOvertakingBound, before, after, fmt.Sprintf("%s joined the queue with overtakes %d (a new waiter starts at 0)", e.HolderID, e.Overtakes))
			return
		case ok && e.Overtakes > o.Overtakes+1:
			v.find(ver, RuleOvertakingBound, before, after, fmt.Sprintf("%s was passed %d times in one write", e.HolderID, e.Overtakes-o.Overtakes))
			return
		case ok && e.Overtakes > o.Overtakes && o.Overtakes >= win.maxOvertakes:
			v.find(ver, RuleOvertakingBound, before, after, fmt.Sprintf("%s was passed with overtakes %d already at maxOvertakes %d", e.HolderID, o.Overtakes, win.maxOvertakes))
			return
		case ok && e.Overtakes < o.Overtakes:
			v.find(ver, RuleOvertakingBound, before, after, fmt.Sprintf("%s's overtakes went down from %d to %d", e.HolderID, o.Overtakes, e.Overtakes))
			return
		}
	}
}

// classify names why a version no transition reproduces is wrong, when a
// more specific rule than "unexplained" fits: an admission of a waiter
// while the admissible waiters ahead of it filled every free seat, or a
// reaper quarantine whose reason proves nothing.
func classify(prev *lockstate.State, d diff, cfgs []lockstate.Config) (Rule, string) {
	for _, h := range d.addedHolders {
		if lockstate.QueuePosition(prev, h.HolderID) <= 0 {
			continue
		}
		now, ok := lockstate.ParseTime(h.AcquiredAt)
		if !ok {
			continue
		}
		p, _ := lockstate.PruneExpiredCooldowns(prev, now)
		// Skipped: under some config a seat was free, and under every config
		// with a free seat the admissible waiters ahead filled them all.
		skipped := false
		rank, free := 0, 0
		for _, cfg := range cfgs {
			f, r := lockstate.FreeSlots(p, cfg), lockstate.AdmissibleRank(p, cfg, h.HolderID)
			if f <= 0 {
				continue
			}
			if r < f {
				skipped = false
				break
			}
			skipped, rank, free = true, r, f
		}
		if skipped {
			return RuleFIFOSkipped, fmt.Sprintf("%s was admitted from queue position %d while %d admissible waiter(s) ahead of it filled the %d free seat(s)",
				h.HolderID, lockstate.QueuePosition(prev, h.HolderID), rank, free)
		}
	}
	for _, h := range d.removedHolders {
		if r, ok := d.reservationFor(h.HolderID); ok && len(r.Reason) > len(lockstate.ReasonReapPrefix) && r.Reason[:len(lockstate.ReasonReapPrefix)] == lockstate.ReasonReapPrefix {
			return RuleReapWithoutProof, fmt.Sprintf("%s was quarantined by the reaper with the reason %q, which proves nothing stale", h.HolderID, r.Reason)
		}
	}
	return "", ""
}

// operatorOnly reports whether the commit's author is an operator and not
// a writer.
func (v *verifier) operatorOnly(ver *Version) bool {
	login := ver.AuthorLogin
	if login == "" {
		return false
	}
	for _, w := range v.in.Writers {
		if login == w {
			return false
		}
	}
	for _, o := range v.in.Operators {
		if login == o {
			return true
		}
	}
	return false
}

// operatorAlso reports whether login is also an operator and kind a write
// an operator may make by hand (an unsigned push is then theirs to make).
func (v *verifier) operatorAlso(login string, kind Kind) bool {
	if !operatorKind(kind) {
		return false
	}
	for _, o := range v.in.Operators {
		if login == o {
			return true
		}
	}
	return false
}

// author: the writer App with GitHub's verified signature, or an operator
// for recovery and bootstrap.
func (v *verifier) author(ver *Version, kind Kind, before, after string) {
	if len(v.in.Writers) == 0 {
		return
	}
	login := ver.AuthorLogin
	for _, w := range v.in.Writers {
		if login != "" && login == w {
			if !ver.Verified && !v.in.AllowUnsignedWriters && !v.operatorAlso(login, kind) {
				v.find(ver, RuleUnsignedWriter, before, after, fmt.Sprintf(
					"the commit is attributed to the writer %s but carries no GitHub-verified signature: GitHub signs every Contents API write of the writer App, so this is a git push that used the App's address (%s write)",
					login, kindName(kind)))
			}
			return
		}
	}
	if operatorKind(kind) {
		for _, o := range v.in.Operators {
			if login != "" && login == o {
				return
			}
		}
	}
	what := "a writer"
	if operatorKind(kind) {
		what = "a writer or an operator"
	}
	v.find(ver, RuleForeignAuthor, before, after, fmt.Sprintf("the commit is authored by %s, not %s (%s write)", ver.Author(), what, kindName(kind)))
}

func kindName(k Kind) string {
	if k == "" {
		return string(KindUnexplained)
	}
	return string(k)
}

// track records the largest fencing token seen.
func (v *verifier) track(s *lockstate.State) {
	v.maxToken = max(v.maxToken, s.FencingToken)
	for _, h := range s.Holders {
		v.maxToken = max(v.maxToken, h.FencingToken)
	}
}

// checkRewrite: the branch must still contain every commit the previous
// run verified.
func (v *verifier) checkRewrite() {
	cp := v.in.Checkpoint
	listed := make(map[string]bool, len(v.in.Listed))
	for _, s := range v.in.Listed {
		listed[s] = true
	}
	missing, fork, gone := "", "", 0
	for _, s := range cp.Recent {
		if listed[s] {
			fork = s
			continue
		}
		if missing == "" {
			missing = s
		}
		gone++
	}
	if missing == "" {
		return
	}
	f := Finding{Rule: RuleRewritten, Commit: missing, Before: cp.Head.Content, Author: "(unknown)"}
	if missing == cp.Head.SHA {
		f.Time = cp.Head.Time
	}
	f.Detail = fmt.Sprintf("the branch %s no longer contains commit %s, verified by an earlier run: %d of the %d most recent verified commits are gone (a force-push or rewrite)",
		cp.Branch, missing, gone, len(cp.Recent))
	if fork != "" {
		f.Detail += fmt.Sprintf("; the histories part after %s", fork)
		for i, ver := range v.in.Versions {
			if ver.SHA == fork && i+1 < len(v.in.Versions) {
				f.After = string(v.in.Versions[i+1].Content)
				f.Detail += fmt.Sprintf(", where %s now follows", v.in.Versions[i+1].SHA)
			}
		}
	}
	f.Acknowledged = v.ack[missing]
	v.res.Findings = append(v.res.Findings, f)
	if f.Acknowledged {
		v.res.Rebased = true
	} else {
		v.rewriteBlocks = true
	}
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
