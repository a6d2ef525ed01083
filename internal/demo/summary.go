package demo

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/checker"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
)

// Summary is the demo's result. Its JSON form (`buildlock demo --json`) is a
// stable interface: field names only ever get added. Durations are in
// milliseconds; "polls" express a duration in poll intervals.
type Summary struct {
	Seed          uint64         `json:"seed"`
	Jobs          int            `json:"jobs"`
	Repositories  int            `json:"repositories"`
	Runners       int            `json:"runners"`
	MaxHolders    int            `json:"max_holders"`
	PollMS        int64          `json:"poll_ms"`
	DurationMS    int64          `json:"duration_ms"`
	AdmittedJobs  int            `json:"admitted_jobs"`
	ReleasedJobs  int            `json:"released_jobs"`
	DiedHolding   []string       `json:"died_holding"`
	FailedJobs    []string       `json:"failed_jobs"`
	Admissions    []AdmissionRow `json:"admissions"`
	StateVersions int            `json:"state_versions"`

	MaxConcurrentHolders int      `json:"max_concurrent_holders"`
	OverAdmissions       int      `json:"over_admissions"`
	FIFOViolations       int      `json:"fifo_violations"`
	LostEntries          int      `json:"lost_entries"`
	Violations           []string `json:"violations"`

	API APISummary `json:"api"`

	SeatUtilizationWhileWaiting float64 `json:"seat_utilization_while_waiting"`
	HandoffGapMS                Stat    `json:"handoff_gap_ms"`
	HandoffGapPolls             StatF   `json:"handoff_gap_polls"`
	// HandoffNoticedMS is what a user waits for (issue 23): from the
	// version that freed a seat while someone waited to the moment the job
	// admitted next had its acquire return, the state-level gap plus the
	// admitted job's own notice (noticedGaps).
	HandoffNoticedMS    Stat  `json:"handoff_noticed_ms"`
	HandoffNoticedPolls StatF `json:"handoff_noticed_polls"`
	WaitMS              Stat  `json:"wait_ms"`
	// StaleRecovery tells, for every job that died holding its seat, when
	// the reaper quarantined the seat and when and how it returned to
	// service.
	StaleRecovery []StaleRecovery `json:"stale_recovery"`
	// History is `buildlock history verify` run on the demo's own state
	// history at its end, with the report's headline.
	History *HistorySummary `json:"history,omitempty"`
}

// AdmissionRow is one admission in commit order.
type AdmissionRow struct {
	Order    int    `json:"order"`
	Job      string `json:"job"`
	HolderID string `json:"holder_id"`
	Runner   string `json:"runner"`
	AtMS     int64  `json:"at_ms"`
	WaitMS   int64  `json:"wait_ms"`
	Overtook int    `json:"overtook"`
	// reclaim: a same-runner quarantine reclaim (human summary only; the
	// JSON keys stay as they are).
	reclaim bool
}

// APISummary counts the API traffic the emulator saw.
type APISummary struct {
	Requests    int `json:"requests"`
	Charged     int `json:"charged"`
	NotModified int `json:"not_modified"`
	Writes      int `json:"writes"`
	Conflicts   int `json:"cas_conflicts"`
	// SecondaryLimited counts requests a GitHub secondary rate limit
	// refused (the emulator enforces GitHub's documented limits in the
	// demo); a healthy run has none.
	SecondaryLimited int `json:"secondary_limit_responses"`
	// StateReads counts reads of the state file; NotModifiedShare is the share
	// of them answered 304 (free against the hourly limit).
	StateReads            int     `json:"state_reads"`
	NotModifiedShare      float64 `json:"not_modified_share_of_state_reads"`
	RequestsPerAdmission  float64 `json:"requests_per_admitted_job"`
	ChargedPerAdmission   float64 `json:"charged_requests_per_admitted_job"`
	WritesPerAdmission    float64 `json:"content_writes_per_admitted_job"`
	ConflictsPerAdmission float64 `json:"cas_conflicts_per_admitted_job"`
}

// Stat is a median and 95th percentile in milliseconds.
type Stat struct {
	Median int64 `json:"median"`
	P95    int64 `json:"p95"`
	Max    int64 `json:"max"`
	N      int   `json:"n"`
}

// StatF is a median and 95th percentile in fractional units.
type StatF struct {
	Median float64 `json:"median"`
	P95    float64 `json:"p95"`
}

// OK reports whether every safety invariant held and every live job
// finished.
func (s *Summary) OK() bool {
	return len(s.Violations) == 0 && len(s.FailedJobs) == 0 && s.SeatsNotReturned() == 0 && (s.History == nil || s.History.OK())
}

// SeatsNotReturned counts dead holders whose seat never came back.
func (s *Summary) SeatsNotReturned() int {
	n := 0
	for _, r := range s.StaleRecovery {
		if r.BackInServiceAtMS == 0 {
			n++
		}
	}
	return n
}

func stat(ds []time.Duration) Stat {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return Stat{Median: checker.Percentile(ds, 50).Milliseconds(), P95: checker.Percentile(ds, 95).Milliseconds(), Max: m.Milliseconds(), N: len(ds)}
}

func summarize(opts Options, w *world, rep checker.Report, m emulator.Metrics, elapsed time.Duration) *Summary {
	s := &Summary{
		Seed: opts.Seed, Jobs: opts.Jobs, Repositories: opts.Repositories, Runners: opts.Runners,
		MaxHolders: opts.MaxHolders, PollMS: opts.Poll.Milliseconds(), DurationMS: elapsed.Milliseconds(),
		StateVersions: rep.Versions, MaxConcurrentHolders: rep.MaxOccupied, OverAdmissions: rep.OverAdmissions,
		FIFOViolations: rep.FIFOViolations, LostEntries: rep.LostEntries, Violations: rep.Violations,
		SeatUtilizationWhileWaiting: rep.Utilization,
		DiedHolding:                 []string{}, FailedJobs: []string{}, Admissions: []AdmissionRow{},
	}
	if s.Violations == nil {
		s.Violations = []string{}
	}
	byHolder := map[string]*job{}
	var waits []time.Duration
	w.mu.Lock()
	for _, j := range w.jobs {
		byHolder[j.holderID] = j
		switch j.state {
		case "dead":
			s.DiedHolding = append(s.DiedHolding, j.name)
		case "released":
			s.ReleasedJobs++
		default: // failed, or never finished (pending, running, holding)
			s.FailedJobs = append(s.FailedJobs, j.name)
		}
		if !j.admittedAt.IsZero() {
			s.AdmittedJobs++
			waits = append(waits, j.waitedFor)
		}
	}
	w.mu.Unlock()
	for i, a := range rep.Admissions {
		row := AdmissionRow{Order: i + 1, HolderID: a.HolderID, Runner: a.RunnerID, AtMS: a.Time.Sub(w.start).Milliseconds(), Overtook: a.Overtook}
		if j := byHolder[a.HolderID]; j != nil {
			row.Job = j.name
			row.WaitMS = j.waitedFor.Milliseconds()
			row.reclaim = j.reclaimed
		}
		s.Admissions = append(s.Admissions, row)
	}
	s.WaitMS = stat(waits)
	s.HandoffGapMS = stat(rep.HandoffGaps)
	poll := float64(opts.Poll)
	s.HandoffGapPolls = inPolls(rep.HandoffGaps, poll)
	noticed := noticedGaps(rep.Handoffs, func(id string) time.Time {
		if j := byHolder[id]; j != nil {
			return j.admittedAt
		}
		return time.Time{}
	})
	s.HandoffNoticedMS = stat(noticed)
	s.HandoffNoticedPolls = inPolls(noticed, poll)
	s.API = apiSummary(m, s.AdmittedJobs)
	return s
}

// inPolls is the median and p95 of ds in poll intervals of poll
// nanoseconds.
func inPolls(ds []time.Duration, poll float64) StatF {
	return StatF{
		Median: round2(float64(checker.Percentile(ds, 50)) / poll),
		P95:    round2(float64(checker.Percentile(ds, 95)) / poll),
	}
}

// noticedGaps is, for each handoff the checker found (a seat freed while
// someone waited, and the admission that took it), the time from the
// freeing version to the moment the admitted job's acquire returned
// (noticedAt; zero when the job never returned, which counts no gap). The
// state-level gap ends at the admitting version; a user waits until the
// job notices.
func noticedGaps(handoffs []checker.Handoff, noticedAt func(holderID string) time.Time) []time.Duration {
	var out []time.Duration
	for _, h := range handoffs {
		if t := noticedAt(h.HolderID); !t.IsZero() && !t.Before(h.FreedAt) {
			out = append(out, t.Sub(h.FreedAt))
		}
	}
	return out
}

func apiSummary(m emulator.Metrics, admitted int) APISummary {
	a := APISummary{
		Requests:    int(m.Requests),
		Charged:     int(m.Charged),
		NotModified: int(m.NotModified),
		Writes:      int(m.Writes),
		Conflicts:   int(m.Conflicts),
	}
	for _, r := range m.Log {
		if r.Secondary != "" {
			a.SecondaryLimited++
		}
	}
	statePath := "/contents/locks/" + lock + ".json"
	for path, r := range m.Paths {
		if strings.HasPrefix(path, "GET ") && strings.HasSuffix(path, statePath) {
			a.StateReads += int(r.Requests)
		}
	}
	if a.StateReads > 0 {
		a.NotModifiedShare = round2(float64(a.NotModified) / float64(a.StateReads))
	}
	if admitted > 0 {
		n := float64(admitted)
		a.RequestsPerAdmission = round2(float64(a.Requests) / n)
		a.ChargedPerAdmission = round2(float64(a.Charged) / n)
		a.WritesPerAdmission = round2(float64(a.Writes) / n)
		a.ConflictsPerAdmission = round2(float64(a.Conflicts) / n)
	}
	return a
}

// notes explains, in the human summary, what in this run could look like a
// broken rule but is not: the † marker, a same-runner quarantine reclaim
// admitted ahead of earlier waiters, and waiters passed on busy runners.
// Each appears only when the run shows it.
func (s *Summary) notes() []string {
	var out []string
	if len(s.DiedHolding) > 0 {
		out = append(out, "† after a holder in a seats line marks a job that died holding that seat; "+
			"the seat stays consumed until the reaper proves the run over and quarantines it, "+
			"and a job on the same runner or an operator returns it to service (stale recovery below).")
	}
	reclaims, passed := 0, 0
	for _, a := range s.Admissions {
		if a.reclaim {
			reclaims++
		}
		passed += a.Overtook
	}
	if reclaims > 0 {
		out = append(out, "a same-runner quarantine reclaim may be admitted before earlier waiters: "+
			"it swaps its runner's quarantined seat for a holder and takes no free seat, "+
			"so it displaces nobody and the FIFO check does not count it (spec §2.6).")
	}
	if passed > 0 {
		out = append(out, "a waiter whose runner already holds a seat or a quarantine cannot be admitted "+
			"(one seat per runner), so the admission scan passes it; passing it is not a FIFO violation, "+
			"passing a waiter on a free runner or on the admitted job's own runner would be.")
	}
	return out
}

func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }

// Render writes the human summary.
func (s *Summary) Render(out io.Writer) {
	fmt.Fprintf(out, "Summary (seed %d, %.1fs)\n", s.Seed, float64(s.DurationMS)/1000)
	fmt.Fprintf(out, "  admissions in order:\n")
	for _, a := range s.Admissions {
		extra := ""
		if a.reclaim {
			extra = ", reclaimed its runner's quarantined seat (took no free seat)"
		}
		if a.Overtook > 0 {
			extra += fmt.Sprintf(", passed %d waiter(s) on busy runners", a.Overtook)
		}
		fmt.Fprintf(out, "    %2d. %-7s %-9s at +%5.2fs after waiting %5.2fs%s\n", a.Order, a.Job, a.Runner,
			float64(a.AtMS)/1000, float64(a.WaitMS)/1000, extra)
	}
	fmt.Fprintf(out, "  jobs: %d admitted, %d released, %d died holding %v, %d failed %v\n",
		s.AdmittedJobs, s.ReleasedJobs, len(s.DiedHolding), s.DiedHolding, len(s.FailedJobs), s.FailedJobs)
	fmt.Fprintf(out, "  safety over %d state versions: max concurrent holders %d (limit %d), over-admissions %d, FIFO violations %d, lost entries %d\n",
		s.StateVersions, s.MaxConcurrentHolders, s.MaxHolders, s.OverAdmissions, s.FIFOViolations, s.LostEntries)
	for _, v := range s.Violations {
		fmt.Fprintf(out, "    VIOLATION: %s\n", v)
	}
	for _, n := range s.notes() {
		fmt.Fprintf(out, "    note: %s\n", n)
	}
	a := s.API
	fmt.Fprintf(out, "  API: %d requests (%d charged, %d answered 304), %d writes, %d CAS conflicts, %d secondary-limit answers (GitHub's limits enforced)\n",
		a.Requests, a.Charged, a.NotModified, a.Writes, a.Conflicts, a.SecondaryLimited)
	fmt.Fprintf(out, "       per admitted job: %.2f requests, %.2f charged, %.2f writes, %.2f conflicts; 304 share of state reads %.0f%%\n",
		a.RequestsPerAdmission, a.ChargedPerAdmission, a.WritesPerAdmission, a.ConflictsPerAdmission, a.NotModifiedShare*100)
	fmt.Fprintf(out, "  seat utilization while jobs waited: %.1f%%\n", s.SeatUtilizationWhileWaiting*100)
	fmt.Fprintf(out, "  handoff gap (seat freed -> next admission): median %dms (%.2f polls), p95 %dms (%.2f polls), n=%d\n",
		s.HandoffGapMS.Median, s.HandoffGapPolls.Median, s.HandoffGapMS.P95, s.HandoffGapPolls.P95, s.HandoffGapMS.N)
	fmt.Fprintf(out, "  handoff noticed (seat freed -> the admitted job's acquire returns): median %dms (%.2f polls), p95 %dms (%.2f polls), max %dms, n=%d\n",
		s.HandoffNoticedMS.Median, s.HandoffNoticedPolls.Median, s.HandoffNoticedMS.P95, s.HandoffNoticedPolls.P95, s.HandoffNoticedMS.Max, s.HandoffNoticedMS.N)
	fmt.Fprintf(out, "  wait for a seat: median %dms, p95 %dms, max %dms\n", s.WaitMS.Median, s.WaitMS.P95, s.WaitMS.Max)
	for _, r := range s.StaleRecovery {
		if r.BackInServiceAtMS == 0 {
			fmt.Fprintf(out, "  stale recovery: %s on %s died at +%.2fs; its seat was NOT returned to service\n", r.Job, r.Runner, float64(r.DiedAtMS)/1000)
			continue
		}
		fmt.Fprintf(out, "  stale recovery: %s on %s died at +%.2fs, quarantined by the reaper at +%.2fs, back in service at +%.2fs by %s (%.2fs after death)\n",
			r.Job, r.Runner, float64(r.DiedAtMS)/1000, float64(r.QuarantinedAtMS)/1000, float64(r.BackInServiceAtMS)/1000, r.How, float64(r.RecoveryMS)/1000)
	}
	if s.History != nil {
		s.History.render(out)
	}
	if s.OK() {
		fmt.Fprintln(out, "  result: OK")
	} else {
		fmt.Fprintln(out, "  result: FAILED")
	}
}
