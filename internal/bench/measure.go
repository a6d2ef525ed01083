package bench

// measure turns one run's request log and lock history into a Result: peaks per
// minute, displacement, recoveries, waiter and idle-admission costs, utilization.

import (
	"fmt"
	"maps"
	"sort"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/checker"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// credKind classifies a credential label of the request log.
func credKind(label string, writerInst, readerInst string) string {
	switch {
	case label == writerInst:
		return "writer-installation"
	case label == readerInst:
		return "reader-installation"
	case strings.HasPrefix(label, "app:"):
		return "app-jwt"
	case strings.HasPrefix(label, "token:"):
		return "workflow-token"
	case label == "":
		return "anonymous"
	}
	return label
}

func measure(w *world, wl Workload, cfg string, end time.Time) *Result {
	m := w.em.Metrics()
	versions := w.versions()
	w.mu.Lock()
	removals := append([]checker.Removal(nil), w.removals...)
	jobs := append([]*simJob(nil), w.jobs...)
	reaps := w.reaps
	w.mu.Unlock()
	rep := checker.Check(versions, checker.Input{Lock: simLock, ServerURL: simServerURL, MaxHolders: w.cfg.MaxHolders, Removals: removals})

	from := w.start.Add(wl.WindowFrom)
	to := end
	if wl.WindowTo > 0 {
		to = w.start.Add(wl.WindowTo)
	}
	r := &Result{
		Name: wl.Name, Description: wl.Description, Config: strings.TrimSpace(cfg), Seats: w.cfg.MaxHolders, Jobs: len(jobs),
		LatencyRead: wl.Latency.Read.Milliseconds(), LatencyWrite: wl.Latency.Write.Milliseconds(), PollSeconds: PollSeconds,
		VirtualMin: round2(end.Sub(w.start).Minutes()), WindowFromS: round2(from.Sub(w.start).Seconds()), WindowToS: round2(to.Sub(w.start).Seconds()),
		ReaperRuns: reaps, ByCredential: map[string]Counts{}, Utilization: round2(rep.Utilization), MaxHolders: rep.MaxOccupied,
		Violations: append([]string{}, rep.Violations...),
	}
	if n := len(versions); n > 0 && versions[n-1].Content != nil {
		if st, err := lockstate.Decode(versions[n-1].Content, lockstate.DecodeOptions{Lock: simLock, ServerURL: simServerURL}); err == nil {
			r.Schema = st.SchemaVersion
		}
	}
	for _, a := range rep.Admissions {
		if !a.Time.Before(from) && !a.Time.After(to) {
			r.Admitted++
		}
	}
	writerInst, readerInst := fmt.Sprintf("installation:%d", w.writerInst), fmt.Sprintf("installation:%d", w.readerInst)
	byID := make(map[string]emulator.RequestRecord, len(m.Log))
	var inWindow []emulator.RequestRecord
	for _, rec := range m.Log {
		byID[rec.ID] = rec
		if rec.Time.Before(from) || rec.Time.After(to) {
			continue
		}
		inWindow = append(inWindow, rec)
		r.Total.add(rec)
	}
	for _, rec := range inWindow {
		k := credKind(rec.Credential, writerInst, readerInst)
		c := r.ByCredential[k]
		c.add(rec)
		r.ByCredential[k] = c
	}
	r.RequestsPerAdmission = ratio(r.Total.Requests, r.Admitted)
	r.RequestsByKind = kindsPerAdmission(inWindow, phases(jobs), r.Admitted)
	r.Attempts = attempts(jobs, byID)
	r.ChargedPerAdmission = ratio(r.Total.Charged, r.Admitted)
	r.NotModifiedPerAdmission = ratio(r.Total.NotModified, r.Admitted)
	r.WritesPerAdmission = ratio(r.Total.Writes, r.Admitted)
	r.AttemptsPerAdmission = ratio(r.Total.WriteAttempts, r.Admitted)
	r.ConflictsPerAdmission = ratio(r.Total.Conflicts, r.Admitted)
	for _, j := range jobs {
		r.MaxCASRounds = max(r.MaxCASRounds, j.tap.maxRounds())
	}
	// A handoff gap runs from the version that freed a seat while a job
	// waited to the moment the job admitted next knew it held a seat (its
	// acquire returned): a direct handoff is committed by the release and
	// noticed on the waiter's next poll; a seat freed while the waiters
	// were outside the queue (a paced burst, a join backing off) is taken
	// by the next one's own write (noticedHandoffs). The checker's gaps
	// count only frees while the queue held someone (QueueHandoffGap).
	reference, mixed := map[string]bool{}, false
	for _, j := range jobs {
		reference[j.holderID] = j.reference
		mixed = mixed || j.reference
	}
	for _, h := range noticedHandoffs(w, jobs, versions, from, to) {
		r.gaps = append(r.gaps, h.gap)
		if mixed && reference[h.holderID] {
			r.gapsRef = append(r.gapsRef, h.gap)
		} else if mixed {
			r.gapsOurs = append(r.gapsOurs, h.gap)
		}
	}
	r.HandoffGap = dist(r.gaps)
	noticed := noticedAt(jobs)
	for _, h := range rep.Handoffs {
		if h.Admitted.Before(from) || h.Admitted.After(to) {
			continue
		}
		r.queueGaps = append(r.queueGaps, noticedBy(noticed, h.HolderID, h.Admitted).Sub(h.FreedAt))
	}
	r.QueueHandoffGap = dist(r.queueGaps)
	for _, j := range jobs {
		if !j.admitted.IsZero() && !j.admitted.Before(from) && !j.admitted.After(to) {
			r.waits = append(r.waits, j.admitted.Sub(j.arrived))
		}
	}
	r.JobWait = dist(r.waits)
	r.mixedGaps()
	idle, total := seatIdle(w, jobs, versions, rep.Admissions, from, to)
	r.SeatIdleS, r.SeatTotalS = round2(idle.Seconds()), round2(total.Seconds())
	r.SeatIdleShare = round4(ratioD(idle, total))
	r.InstallChargedPerJob = ratio(r.ByCredential["writer-installation"].Charged, r.Admitted)
	r.PeakPoints = peakPoints(inWindow)
	r.PeakStateReads, _ = peakOf(inWindow, isStateRead)
	r.MaxDisplacement = maxDisplacement(jobs, rep.Admissions)
	r.Seeds = 1
	r.InstallChargedByKind = map[string]int{}
	for _, rec := range inWindow {
		if rec.Charged && rec.Credential == writerInst {
			r.InstallChargedByKind[requestKind(rec)]++
		}
	}
	for _, rec := range inWindow {
		if isSecondary(rec) {
			w := time.Minute
			if !rec.RetryAfterUntil.IsZero() {
				w = rec.RetryAfterUntil.Sub(rec.Time)
			}
			r.SecondaryWaitS += w.Seconds()
		}
	}
	r.SecondaryWaitS = round2(r.SecondaryWaitS)
	r.PeakPerMin, r.PeakCharged, r.PeakInstallCharged, r.PeakWrites, r.PeakChargedBreakdown = peakPerMinute(inWindow, writerInst)
	if mins := to.Sub(from).Minutes(); mins > 0 {
		r.MeanPerMin = round2(float64(r.Total.Requests) / mins)
		r.MeanChargedMin = round2(float64(r.Total.Charged) / mins)
	}
	r.Recoveries = recoveries(w, jobs, versions, rep.Admissions)
	r.LiveUtilization = liveUtilization(w, jobs, versions, end)
	if wl.Waiter != "" {
		r.Waiter = waiterHour(w, jobs, wl.Waiter, byID, writerInst)
	}
	if wl.Idle {
		r.IdleAdmit = idleAdmission(jobs, byID, writerInst)
	}
	if len(wl.ConfigSteps) > 0 {
		r.Upgrades = upgradeStats(w, wl.ConfigSteps, versions, rep.Admissions)
	}
	for _, j := range jobs {
		if j.err != nil {
			r.FailedJobs++
		}
	}
	r.Targets = targets(wl, r)
	return r
}

// peakPerMinute is the largest number of requests (and of charged
// requests, and of content-creating requests) in any sliding 60-second
// window, and what the charged requests of the busiest window were.
func peakPerMinute(recs []emulator.RequestRecord, writerInst string) (total, charged, installCharged, writes int, breakdown map[string]int) {
	peak := func(keep func(emulator.RequestRecord) bool) (int, time.Time) {
		var ts []time.Time
		for _, r := range recs {
			if keep(r) {
				ts = append(ts, r.Time)
			}
		}
		sort.Slice(ts, func(a, b int) bool { return ts[a].Before(ts[b]) })
		best, lo := 0, 0
		var at time.Time
		for hi := range ts {
			for ts[hi].Sub(ts[lo]) >= time.Minute {
				lo++
			}
			if hi-lo+1 > best {
				best, at = hi-lo+1, ts[lo]
			}
		}
		return best, at
	}
	total, _ = peak(func(emulator.RequestRecord) bool { return true })
	installCharged, _ = peak(func(r emulator.RequestRecord) bool { return r.Charged && r.Credential == writerInst })
	charged, at := peak(func(r emulator.RequestRecord) bool { return r.Charged })
	writes, _ = peak(isContentWrite)
	breakdown = map[string]int{}
	for _, r := range recs {
		if r.Charged && !r.Time.Before(at) && r.Time.Sub(at) < time.Minute {
			breakdown[requestKind(r)]++
		}
	}
	return total, charged, installCharged, writes, breakdown
}

// peakOf is the largest number of records keep accepts in any sliding
// 60-second window.
func peakOf(recs []emulator.RequestRecord, keep func(emulator.RequestRecord) bool) (int, time.Time) {
	var ts []time.Time
	for _, r := range recs {
		if keep(r) {
			ts = append(ts, r.Time)
		}
	}
	sort.Slice(ts, func(a, b int) bool { return ts[a].Before(ts[b]) })
	best, lo := 0, 0
	var at time.Time
	for hi := range ts {
		for ts[hi].Sub(ts[lo]) >= time.Minute {
			lo++
		}
		if hi-lo+1 > best {
			best, at = hi-lo+1, ts[lo]
		}
	}
	return best, at
}

// peakPoints is the busiest sliding minute of secondary-limit points of one
// credential on one endpoint (route template, methods together), counting
// what GitHub counts: every answered request but those a secondary limit
// refused (emulator.SecondaryLimits).
func peakPoints(recs []emulator.RequestRecord) int {
	type pt struct {
		t time.Time
		w int
	}
	by := map[string][]pt{}
	for _, r := range recs {
		if r.Secondary != "" || r.Credential == "" || r.Status == 0 {
			continue
		}
		route := r.Route
		if i := strings.IndexByte(route, ' '); i >= 0 {
			route = route[i+1:]
		}
		w := emulator.WritePoints
		if r.Method == "GET" || r.Method == "HEAD" || r.Method == "OPTIONS" {
			w = emulator.ReadPoints
		}
		k := r.Credential + " " + route
		by[k] = append(by[k], pt{r.Time, w})
	}
	best := 0
	for _, ps := range by {
		sort.SliceStable(ps, func(a, b int) bool { return ps[a].t.Before(ps[b].t) })
		sum, lo := 0, 0
		for hi := range ps {
			sum += ps[hi].w
			for ps[hi].t.Sub(ps[lo].t) >= time.Minute {
				sum -= ps[lo].w
				lo++
			}
			best = max(best, sum)
		}
	}
	return best
}

// maxDisplacement is the most jobs that arrived strictly later than one job
// yet were admitted before it.
func maxDisplacement(jobs []*simJob, adm []checker.Admission) int {
	arrived := map[string]time.Time{}
	for _, j := range jobs {
		if !j.arrived.IsZero() {
			arrived[j.holderID] = j.arrived
		}
	}
	order := map[string]int{}
	for i, a := range adm {
		if _, ok := order[a.HolderID]; !ok {
			order[a.HolderID] = i
		}
	}
	best := 0
	for id, oi := range order {
		ta, ok := arrived[id]
		if !ok {
			continue
		}
		n := 0
		for other, oj := range order {
			if tb, ok := arrived[other]; ok && oj < oi && tb.After(ta) {
				n++
			}
		}
		best = max(best, n)
	}
	return best
}

// phases maps the request IDs of the jobs' traffic to the phase (acquire or
// release) that sent them.
func phases(jobs []*simJob) map[string]string {
	out := map[string]string{}
	for _, j := range jobs {
		j.tap.mu.Lock()
		maps.Copy(out, j.tap.ids)
		j.tap.mu.Unlock()
	}
	return out
}

// kindsPerAdmission counts recs by phase and requestKind (a 304 apart), per
// admitted job.
func kindsPerAdmission(recs []emulator.RequestRecord, phase map[string]string, admitted int) map[string]float64 {
	if admitted == 0 {
		return nil
	}
	n := map[string]int{}
	for _, rec := range recs {
		k := requestKind(rec)
		if rec.Status == 304 {
			k += " 304"
		}
		if p := phase[rec.ID]; p != "" {
			k = p + ": " + k
		}
		n[k]++
	}
	out := make(map[string]float64, len(n))
	for k, c := range n {
		out[k] = ratio(c, admitted)
	}
	return out
}

// requestKind names what a request is for, for the peak breakdown.
func requestKind(r emulator.RequestRecord) string {
	switch {
	case isContentWrite(r):
		return "state write (PUT)"
	case r.Method == "GET" && strings.HasSuffix(r.Path, "/contents/"+simStatePath):
		return "state read (200)"
	case r.Method == "GET" && strings.HasSuffix(r.Path, ".config.json"):
		return "config read"
	case strings.HasPrefix(r.Route, "POST /app/"):
		return "token mint (App JWT)"
	case strings.HasPrefix(r.Credential, "app:"):
		return "installation lookup (App JWT)"
	case strings.Contains(r.Route, "/jobs"):
		return "job lookup"
	case strings.Contains(r.Route, "/actions/runs"):
		return "run status (reaper)"
	}
	return r.Method + " " + r.Route
}

// recoveries pairs each holder's death with the state version that freed
// its seat and the next admission after that.
func recoveries(w *world, jobs []*simJob, versions []checker.Version, adm []checker.Admission) []Recovery {
	var out []Recovery
	used := map[int]bool{}
	for _, j := range jobs {
		w.mu.Lock()
		died := j.died
		w.mu.Unlock()
		if died.IsZero() {
			continue
		}
		rc := Recovery{Job: j.name, DiedAtS: round2(w.since(died).Seconds()), FreedAfterS: -1, InServiceAfterS: -1}
		var freed time.Time
		for _, v := range decodedStates(versions) {
			if v.Time.Before(died) {
				continue
			}
			st := v.State
			held := false
			for _, h := range st.Holders {
				held = held || h.HolderID == j.holderID
			}
			if !held {
				freed = v.Time
				break
			}
		}
		if !freed.IsZero() {
			rc.FreedAfterS = round2(freed.Sub(died).Seconds())
			for i, a := range adm {
				if !used[i] && !a.Time.Before(freed) {
					used[i] = true
					rc.InServiceAfterS = round2(a.Time.Sub(died).Seconds())
					break
				}
			}
		}
		out = append(out, rc)
	}
	return out
}

// jobRecords returns the request-log records of one job's phase, in time
// order.
func jobRecords(j *simJob, byID map[string]emulator.RequestRecord, phase string) []emulator.RequestRecord {
	j.tap.mu.Lock()
	var out []emulator.RequestRecord
	for id, p := range j.tap.ids {
		if rec, ok := byID[id]; ok && (phase == "" || p == phase) {
			out = append(out, rec)
		}
	}
	j.tap.mu.Unlock()
	sort.SliceStable(out, func(a, b int) bool { return out[a].Time.Before(out[b].Time) })
	return out
}

// waiterHour measures the first hour after the waiter's queue entry was
// written.
func waiterHour(w *world, jobs []*simJob, name string, byID map[string]emulator.RequestRecord, writerInst string) *WaiterHour {
	for _, j := range jobs {
		if j.name != name {
			continue
		}
		recs := jobRecords(j, byID, "acquire")
		var from time.Time
		for _, r := range recs {
			if isContentWrite(r) && r.Status >= 200 && r.Status < 300 {
				from = r.Time
				break
			}
		}
		if from.IsZero() {
			return nil
		}
		wh := &WaiterHour{Job: name, FromS: round2(w.since(from).Seconds())}
		for _, r := range recs {
			if !r.Time.After(from) || r.Time.After(from.Add(time.Hour)) {
				continue
			}
			wh.Counts.add(r)
			if r.Credential == writerInst {
				wh.Installs++
			}
			if r.Method == "GET" && strings.HasSuffix(r.Path, "/contents/"+simStatePath) {
				wh.PollsPerHour++
			}
		}
		return wh
	}
	return nil
}

// idleAdmission averages the acquire-step traffic of the admitted jobs.
func idleAdmission(jobs []*simJob, byID map[string]emulator.RequestRecord, writerInst string) *Admission {
	var a Admission
	n := 0
	for _, j := range jobs {
		if j.admitted.IsZero() {
			continue
		}
		n++
		for _, r := range jobRecords(j, byID, "acquire") {
			switch credKind(r.Credential, writerInst, "") {
			case "writer-installation":
				a.Installation++
			case "app-jwt":
				a.AppAuth++
			case "workflow-token":
				a.WorkflowToken++
			}
			if isContentWrite(r) && r.Status >= 200 && r.Status < 300 {
				a.Writes++
			}
		}
	}
	if n == 0 {
		return nil
	}
	f := float64(n)
	return &Admission{Installation: round2(a.Installation / f), AppAuth: round2(a.AppAuth / f), WorkflowToken: round2(a.WorkflowToken / f), Writes: round2(a.Writes / f)}
}

// liveUtilization is the share of seat-time held by a live job while at
// least one job waited.
func liveUtilization(w *world, jobs []*simJob, versions []checker.Version, end time.Time) float64 {
	died := map[string]time.Time{}
	for _, j := range jobs {
		if !j.died.IsZero() {
			died[j.holderID] = j.died
		}
	}
	var live, total float64
	seats := float64(w.cfg.MaxHolders)
	for i, v := range decodedStates(versions) {
		st := v.State
		if len(st.Queue) == 0 {
			continue
		}
		from, to := v.Time, end
		if i+1 < len(versions) {
			to = versions[i+1].Time
		}
		if !to.After(from) {
			continue
		}
		total += to.Sub(from).Seconds() * seats
		held := 0.0
		for _, h := range st.Holders {
			until := to
			if d, ok := died[h.HolderID]; ok && d.Before(until) {
				until = d
			}
			if until.After(from) {
				held += until.Sub(from).Seconds()
			}
		}
		live += min(held, to.Sub(from).Seconds()*seats)
	}
	if total == 0 {
		return 1
	}
	return round2(live / total)
}
