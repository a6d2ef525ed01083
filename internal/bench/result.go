package bench

// The measurement of one workload: request counts, distributions, recoveries,
// waiter and admission costs, the Result itself and Merge, which pools seeds.

import (
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/checker"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
)

// Counts are request totals of one slice of traffic.
type Counts struct {
	Requests    int `json:"requests"`
	Charged     int `json:"charged"`
	NotModified int `json:"not_modified"`
	// Writes are accepted content writes (contents PUT/DELETE, 2xx).
	Writes int `json:"content_writes"`
	// WriteAttempts are content-creating requests: every contents PUT or
	// DELETE, accepted or not (GitHub's secondary limit counts attempts).
	WriteAttempts int `json:"content_write_attempts"`
	Conflicts     int `json:"cas_conflicts"`
	// Throttled counts 403/429 rate-limit answers.
	Throttled int `json:"throttled"`
	// Secondary counts secondary-rate-limit answers (the emulator's
	// limits and injected secondary-limit faults).
	Secondary int `json:"secondary_limit_responses"`
}

func (c *Counts) add(r emulator.RequestRecord) {
	c.Requests++
	if r.Charged {
		c.Charged++
	}
	if r.Status == 304 {
		c.NotModified++
	}
	if isContentWrite(r) {
		c.WriteAttempts++
		switch {
		case r.Status >= 200 && r.Status < 300:
			c.Writes++
		case r.Status == 409 || r.Status == 422:
			c.Conflicts++
		}
	}
	if r.Status == 429 || (r.Status == 403 && (r.RateLimitRemaining == 0 || !r.RetryAfterUntil.IsZero())) {
		c.Throttled++
	}
	if isSecondary(r) {
		c.Secondary++
	}
}

// isSecondary reports a secondary-rate-limit answer.
func isSecondary(r emulator.RequestRecord) bool {
	if r.Secondary != "" {
		return true
	}
	for _, k := range r.Faults {
		switch k {
		case emulator.SecondaryRateLimit403, emulator.TooManyRequests429, emulator.ContentCreationLimit403:
			return true
		}
	}
	return false
}

// isStateRead is a GET of the lock's state file (200 or 304).
func isStateRead(r emulator.RequestRecord) bool {
	return r.Method == "GET" && strings.HasSuffix(r.Path, "/contents/"+simStatePath)
}

func isContentWrite(r emulator.RequestRecord) bool {
	return (r.Method == "PUT" || r.Method == "DELETE") && strings.Contains(r.Route, "/contents/")
}

// Dist is a median, 95th percentile and maximum in seconds, and the same
// in poll intervals (poll-seconds 15).
type Dist struct {
	N         int     `json:"n"`
	MedianS   float64 `json:"median_s"`
	P95S      float64 `json:"p95_s"`
	MaxS      float64 `json:"max_s"`
	MedianPol float64 `json:"median_polls"`
	P95Pol    float64 `json:"p95_polls"`
}

func dist(ds []time.Duration) Dist {
	d := Dist{N: len(ds)}
	if len(ds) == 0 {
		return d
	}
	var m time.Duration
	for _, x := range ds {
		m = max(m, x)
	}
	poll := float64(PollSeconds)
	d.MedianS = round2(checker.Percentile(ds, 50).Seconds())
	d.P95S = round2(checker.Percentile(ds, 95).Seconds())
	d.MaxS = round2(m.Seconds())
	d.MedianPol = round2(d.MedianS / poll)
	d.P95Pol = round2(d.P95S / poll)
	return d
}

// Recovery is one holder's death and its seat's return.
type Recovery struct {
	Job string `json:"job"`
	// DiedAtS is virtual seconds from the workload start.
	DiedAtS float64 `json:"died_at_s"`
	// FreedAfterS: death → the state version without the holder (the
	// reaper's write). -1 when never freed.
	FreedAfterS float64 `json:"freed_after_s"`
	// InServiceAfterS: death → the next admission into the freed seat.
	InServiceAfterS float64 `json:"in_service_after_s"`
}

// WaiterHour is the cost of one job's first hour of waiting.
type WaiterHour struct {
	Job string `json:"job"`
	// From is when its queue entry was written (virtual seconds).
	FromS    float64 `json:"from_s"`
	Counts   Counts  `json:"counts"`
	Installs int     `json:"installation_requests"`
	// PollsPerHour is state reads per hour (200 or 304).
	PollsPerHour int `json:"state_reads"`
}

// Admission is the traffic of one acquire on a free seat, by credential.
type Admission struct {
	// Installation counts writer-App installation-token requests.
	Installation float64 `json:"installation_requests"`
	// AppAuth counts App JWT calls (installation lookup, token mint).
	AppAuth float64 `json:"app_auth_requests"`
	// WorkflowToken counts GITHUB_TOKEN calls (exact job id lookup).
	WorkflowToken float64 `json:"workflow_token_requests"`
	// Writes counts accepted content writes of the acquire step.
	Writes float64 `json:"content_writes"`
}

// Result is the measurement of one workload. Per-admission figures divide
// the traffic in the measurement window by the admissions in it.
type Result struct {
	Name         string  `json:"workload"`
	Description  string  `json:"description"`
	Config       string  `json:"config"`
	Seats        int     `json:"seats"`
	Jobs         int     `json:"jobs"`
	Schema       int     `json:"schema"`
	LatencyRead  int64   `json:"latency_read_ms"`
	LatencyWrite int64   `json:"latency_write_ms"`
	PollSeconds  int     `json:"poll_seconds"`
	VirtualMin   float64 `json:"virtual_minutes"`
	WindowFromS  float64 `json:"window_from_s"`
	WindowToS    float64 `json:"window_to_s"`
	Admitted     int     `json:"admitted_in_window"`
	ReaperRuns   int     `json:"reaper_runs"`

	Total        Counts            `json:"total"`
	ByCredential map[string]Counts `json:"by_credential"`

	RequestsPerAdmission    float64 `json:"requests_per_admitted_job"`
	ChargedPerAdmission     float64 `json:"charged_per_admitted_job"`
	NotModifiedPerAdmission float64 `json:"not_modified_per_admitted_job"`
	WritesPerAdmission      float64 `json:"content_writes_per_admitted_job"`
	AttemptsPerAdmission    float64 `json:"content_write_attempts_per_admitted_job"`
	ConflictsPerAdmission   float64 `json:"cas_conflicts_per_admitted_job"`
	MaxCASRounds            int     `json:"max_cas_rounds"`

	// HandoffGap runs from the version that freed a seat while a job
	// waited, in the queue or outside it (a paced burst's job before its
	// first write, a join backing off), to the moment the job admitted
	// next noticed (its acquire returned): the handoff a user feels
	// ("handoff noticed", noticedHandoffs).
	HandoffGap Dist `json:"handoff_noticed"`
	// QueueHandoffGap counts only the seats freed while the queue held a
	// waiter (the checker's handoffs), to the admitted job's notice: the
	// state's view, blind to waiters outside the queue.
	QueueHandoffGap Dist `json:"queue_handoff_noticed"`
	// JobWait runs from a job's arrival to the moment its acquire returned
	// admitted, for the jobs admitted in the window: what a handoff figure
	// cannot show when seats are freed rather than handed (a join that
	// landed after its turn, a seat left free to stay under a limit).
	JobWait Dist `json:"job_wait"`
	// SeatIdleShare is the seat time handed to a job that had not noticed
	// it yet, over all seat time while someone waited (SeatTotalS).
	SeatIdleShare float64 `json:"seat_idle_share"`
	SeatIdleS     float64 `json:"seat_idle_s"`
	SeatTotalS    float64 `json:"seat_time_while_waiting_s"`
	Utilization   float64 `json:"seat_utilization_while_waiting"`
	// LiveUtilization counts a holder whose job died as idle from its
	// death until the reaper freed its seat (the checker counts every
	// holder as occupying its seat).
	LiveUtilization float64 `json:"live_seat_utilization_while_waiting"`
	PeakPerMin      int     `json:"peak_requests_per_minute"`
	PeakCharged     int     `json:"peak_charged_per_minute"`
	// PeakInstallCharged counts only the writer App installation's charged
	// requests: the hourly budget every waiter of the organization shares
	// (App JWT calls and GITHUB_TOKEN calls have budgets of their own).
	PeakInstallCharged int `json:"peak_installation_charged_per_minute"`
	// PeakWrites is the busiest minute's content-creating requests
	// (GitHub's secondary limit: 80 per minute).
	PeakWrites int `json:"peak_content_write_attempts_per_minute"`
	// PeakChargedBreakdown is what the charged requests of the busiest
	// charged minute were.
	PeakChargedBreakdown map[string]int `json:"peak_charged_breakdown"`
	// RequestsByKind is, per admitted job, how many requests of each kind
	// (requestKind; a state read answered 304 counted apart) the window
	// held: where the requests per admitted job go.
	RequestsByKind map[string]float64 `json:"requests_per_admitted_job_by_kind,omitempty"`
	// Attempts is where the jobs' state writes and secondary-limit answers
	// went, over the whole run (attempts.go).
	Attempts Attempts `json:"attempts"`
	// MeanPerMin is the window's average request rate per minute.
	MeanPerMin     float64 `json:"mean_requests_per_minute"`
	MeanChargedMin float64 `json:"mean_charged_per_minute"`

	Recoveries []Recovery  `json:"recoveries,omitempty"`
	Waiter     *WaiterHour `json:"waiter_hour,omitempty"`
	IdleAdmit  *Admission  `json:"idle_admission,omitempty"`

	// InstallChargedPerJob is the writer installation's charged requests
	// per admitted job (the budget every lock of the App shares).
	InstallChargedPerJob float64 `json:"installation_charged_per_admitted_job"`
	// PeakPoints is the busiest sliding minute of secondary-limit points
	// (GET 1, writes 5) of one identity on one endpoint (route template).
	PeakPoints int `json:"peak_points_per_endpoint_per_minute"`
	// PeakStateReads is the busiest minute of state-file reads, 304s
	// included, all jobs together.
	PeakStateReads int `json:"peak_state_reads_per_minute"`
	// MaxDisplacement is the most later arrivals admitted before any one
	// job (arrival order: when its job started; ties are not ordered).
	MaxDisplacement int `json:"max_arrival_displacement"`
	// SecondaryWaitS sums the waits the secondary-limit answers in the
	// window directed (Retry-After, or the client's 60 s minimum): an upper
	// bound of the wait the limits added.
	SecondaryWaitS float64 `json:"secondary_limit_wait_s"`
	// InstallChargedByKind is what the writer installation's charged
	// requests in the window were.
	InstallChargedByKind map[string]int `json:"installation_charged_by_kind"`
	Seeds                int            `json:"seeds"`

	// Upgrades are the config steps of an upgrade workload and when each
	// landed; FailedJobs counts jobs whose acquire or release failed.
	Upgrades   []UpgradeStat `json:"upgrades,omitempty"`
	FailedJobs int           `json:"failed_jobs"`

	MaxHolders int      `json:"max_concurrent_holders"`
	Violations []string `json:"violations"`
	Targets    []Target `json:"targets"`

	// HandoffRef and HandoffOurs split HandoffGap by the admitted job's
	// client in a mixed fleet (reference.go): the reference client's jobs
	// and ours. Nil when every job runs our actions.
	HandoffRef  *Dist `json:"handoff_noticed_reference_waiters,omitempty"`
	HandoffOurs *Dist `json:"handoff_noticed_our_waiters,omitempty"`

	gaps, gapsRef, gapsOurs, queueGaps []time.Duration
	waits                              []time.Duration
}

// mixedGaps fills HandoffRef and HandoffOurs from the split gaps.
func (r *Result) mixedGaps() {
	r.HandoffRef, r.HandoffOurs = nil, nil
	if len(r.gapsRef) > 0 || len(r.gapsOurs) > 0 {
		ref, ours := dist(r.gapsRef), dist(r.gapsOurs)
		r.HandoffRef, r.HandoffOurs = &ref, &ours
	}
}

func round2(f float64) float64 {
	if f < 0 {
		return -round2(-f)
	}
	return float64(int64(f*100+0.5)) / 100
}

func ratio(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return round2(float64(n) / float64(d))
}

// Merge pools the results of several seeds of one workload: counts and
// admissions summed, per-admission figures recomputed, handoff gaps pooled,
// peaks and displacement the maximum, violations joined.
func Merge(wl Workload, rs []*Result) *Result {
	if len(rs) == 0 {
		return nil
	}
	m := *rs[0]
	m.ByCredential = map[string]Counts{}
	m.Total, m.Admitted, m.gaps, m.Violations = Counts{}, 0, nil, []string{}
	m.gapsRef, m.gapsOurs, m.queueGaps, m.waits = nil, nil, nil, nil
	m.SecondaryWaitS = 0
	sum := func(a *Counts, b Counts) {
		a.Requests += b.Requests
		a.Charged += b.Charged
		a.NotModified += b.NotModified
		a.Writes += b.Writes
		a.WriteAttempts += b.WriteAttempts
		a.Conflicts += b.Conflicts
		a.Throttled += b.Throttled
		a.Secondary += b.Secondary
	}
	for _, r := range rs {
		sum(&m.Total, r.Total)
		for k, c := range r.ByCredential {
			mc := m.ByCredential[k]
			sum(&mc, c)
			m.ByCredential[k] = mc
		}
		m.Admitted += r.Admitted
		m.gaps = append(m.gaps, r.gaps...)
		m.gapsRef = append(m.gapsRef, r.gapsRef...)
		m.gapsOurs = append(m.gapsOurs, r.gapsOurs...)
		m.queueGaps = append(m.queueGaps, r.queueGaps...)
		m.waits = append(m.waits, r.waits...)
		m.Violations = append(m.Violations, r.Violations...)
		m.SecondaryWaitS += r.SecondaryWaitS
		m.PeakPerMin, m.PeakCharged, m.PeakInstallCharged = max(m.PeakPerMin, r.PeakPerMin), max(m.PeakCharged, r.PeakCharged), max(m.PeakInstallCharged, r.PeakInstallCharged)
		m.PeakWrites, m.PeakPoints, m.PeakStateReads = max(m.PeakWrites, r.PeakWrites), max(m.PeakPoints, r.PeakPoints), max(m.PeakStateReads, r.PeakStateReads)
		m.MaxDisplacement, m.MaxCASRounds, m.MaxHolders = max(m.MaxDisplacement, r.MaxDisplacement), max(m.MaxCASRounds, r.MaxCASRounds), max(m.MaxHolders, r.MaxHolders)
		m.Utilization = min(m.Utilization, r.Utilization)
		m.LiveUtilization = min(m.LiveUtilization, r.LiveUtilization)
	}
	m.Jobs = rs[0].Jobs * len(rs)
	m.Seeds = len(rs)
	m.RequestsPerAdmission = ratio(m.Total.Requests, m.Admitted)
	m.ChargedPerAdmission = ratio(m.Total.Charged, m.Admitted)
	m.NotModifiedPerAdmission = ratio(m.Total.NotModified, m.Admitted)
	m.WritesPerAdmission = ratio(m.Total.Writes, m.Admitted)
	m.AttemptsPerAdmission = ratio(m.Total.WriteAttempts, m.Admitted)
	m.ConflictsPerAdmission = ratio(m.Total.Conflicts, m.Admitted)
	m.InstallChargedPerJob = ratio(m.ByCredential["writer-installation"].Charged, m.Admitted)
	m.SecondaryWaitS = round2(m.SecondaryWaitS)
	m.Attempts = Attempts{}
	for _, r := range rs {
		m.Attempts.add(r.Attempts)
	}
	m.RequestsByKind = map[string]float64{}
	for _, r := range rs {
		for k, v := range r.RequestsByKind {
			m.RequestsByKind[k] += v * float64(r.Admitted)
		}
	}
	for k, v := range m.RequestsByKind {
		m.RequestsByKind[k] = round2(v / float64(max(m.Admitted, 1)))
	}
	m.SeatIdleS, m.SeatTotalS = 0, 0
	for _, r := range rs {
		m.SeatIdleS += r.SeatIdleS
		m.SeatTotalS += r.SeatTotalS
	}
	m.SeatIdleS, m.SeatTotalS = round2(m.SeatIdleS), round2(m.SeatTotalS)
	if m.SeatTotalS > 0 {
		m.SeatIdleShare = round4(m.SeatIdleS / m.SeatTotalS)
	}
	m.HandoffGap = dist(m.gaps)
	m.QueueHandoffGap = dist(m.queueGaps)
	m.JobWait = dist(m.waits)
	m.mixedGaps()
	m.Targets = targets(wl, &m)
	return &m
}
