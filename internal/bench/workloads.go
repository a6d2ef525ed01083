package bench

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/checker"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// Workload is one named scenario of the benchmark. It runs in virtual time
// (inside a testing/synctest bubble) against the in-process emulator,
// through the real acquire, release and reap actions.
type Workload struct {
	Name        string
	Description string
	Seats       int
	// Config is the lock config JSON; "" means schema 3 (runner
	// serialization, no cooldown) with Seats seats.
	Config string
	// Latency is the emulated per-request latency.
	Latency Latency
	// ReapEvery, when positive, runs the scheduled reaper that often.
	ReapEvery time.Duration
	// Jobs returns the initial jobs (arrival, hold, death).
	Jobs func(rng *mrand.Rand) []*simJob
	// RefillUntil, when positive, starts a new job each time one is
	// admitted before this time, so the queue length stays constant.
	RefillUntil time.Duration
	// RefillHold is the hold time of refill jobs, centred in a spread of
	// RefillHoldSpread.
	RefillHold, RefillHoldSpread time.Duration
	// StopAt, when positive, cancels every job at that time (jobs still
	// waiting run their cancellation cleanup).
	StopAt time.Duration
	// Window bounds the measurement (zero To: until the end).
	WindowFrom, WindowTo time.Duration
	// Waiter names the job whose first hour of waiting is measured.
	Waiter string
	// Idle marks the workload whose admissions find a free seat.
	Idle bool
	// Queued is the steady queue length the rate targets apply to.
	Queued int
	// Burst marks a burst workload: the secondary-limit, write-rate,
	// points, conflict, charged-per-job and displacement targets apply.
	Burst bool
	// Informative marks a workload whose burst targets are reported but
	// not judged (docs/performance.md explains why).
	Informative bool
	// Seeds, when > 1, runs the workload for that many consecutive seeds
	// and reports them together (handoff gaps pooled).
	Seeds int
	// StateRate is the org-wide state-endpoint request target (per
	// minute, 304s included); 0 = none.
	StateRate int
	// Handoff marks the workload the handoff-gap targets are judged on
	// even when it is not the default set.
	Handoff bool
	// LimitScale, when positive, scales GitHub's secondary limits (a
	// quarter: 0.25), as if the writer App's budget were shared.
	LimitScale float64
	// NoticedP95, when positive, marks a latency-tail workload (latency.go)
	// and is its handoff-noticed p95 target.
	NoticedP95 time.Duration
	// ConfigSteps are config changes while the workload runs (upgrade.go):
	// the upgrade targets apply, the handoff targets do not (a drain keeps
	// freed seats idle on purpose, and every release at schema >= 4 starts
	// a cooldown).
	ConfigSteps []ConfigStep
}

// safetyLimit ends a workload that has not finished after this much
// virtual time (a hang is reported as a failure, not waited out).
const safetyLimit = 24 * time.Hour

func schema3(seats int) string {
	return fmt.Sprintf(`{"maxHolders":%d,"runnerSerialization":true,"releaseCooldownSeconds":0}`+"\n", seats)
}

func jitter(rng *mrand.Rand, d, spread time.Duration) time.Duration {
	if spread <= 0 {
		return d
	}
	return d + time.Duration(rng.Int64N(int64(spread)))
}

// Workloads are the named scenarios of `make bench`.
func Workloads() []Workload {
	return []Workload{
		{
			Name: "idle", Seats: 2, Latency: DefaultLatency, Idle: true,
			Description: "one job at a time on a free seat: 5 jobs 10 minutes apart, 5-minute holds",
			Jobs: func(rng *mrand.Rand) []*simJob {
				var js []*simJob
				for i := range 5 {
					js = append(js, &simJob{arrival: time.Duration(i) * 10 * time.Minute, hold: 5 * time.Minute})
				}
				return js
			},
		},
		{
			Name: "burst", Seats: 2, Latency: DefaultLatency, Burst: true,
			Description: "64 jobs arrive within one minute (uniformly) on 2 seats, 4-6 minute holds, run to completion",
			Jobs: func(rng *mrand.Rand) []*simJob {
				var js []*simJob
				for range 64 {
					js = append(js, &simJob{arrival: time.Duration(rng.Int64N(int64(time.Minute))), hold: jitter(rng, 4*time.Minute, 2*time.Minute)})
				}
				return js
			},
		},
		{
			Name: "burst-instant", Seats: 2, Latency: DefaultLatency, Burst: true, Informative: true,
			Description: "64 jobs arrive at the same instant on 2 seats, 4-6 minute holds, run to completion (the burst targets are reported, not judged: every first write leaves before any other can be seen)",
			Jobs: func(rng *mrand.Rand) []*simJob {
				var js []*simJob
				for range 64 {
					js = append(js, &simJob{hold: jitter(rng, 4*time.Minute, 2*time.Minute)})
				}
				return js
			},
		},
		{
			Name: "handoff", Seats: 2, Latency: DefaultLatency, Seeds: 30, Handoff: true,
			Description: "6 jobs arrive within 2 s on 2 seats, 10 s holds, so several seats free up within one poll interval and the next waiters joined at rank 2 or lower; 30 seeds pooled",
			Jobs: func(rng *mrand.Rand) []*simJob {
				var js []*simJob
				for range 6 {
					js = append(js, &simJob{arrival: time.Duration(rng.Int64N(int64(2 * time.Second))), hold: 10 * time.Second})
				}
				return js
			},
		},
		{
			Name: "wide", Seats: 16, Latency: DefaultLatency, StateRate: 600,
			// 150 waiters, not 200: with GitHub's replica lag and branch-head
			// conflicts on, 216 arrivals in 5 minutes spend one writer App's
			// 500 content-creating requests of the first hour (their joins'
			// conflicts), and releases then wait past their deadline
			// (docs/performance.md §2, "What moved").
			Description: "16 seats and 150 waiters: 166 jobs arrive within 5 minutes, 20-minute holds (±1 min), each admission brings a new arrival; measured from minute 15 to 45",
			Jobs: func(rng *mrand.Rand) []*simJob {
				var js []*simJob
				for range 166 {
					js = append(js, &simJob{arrival: time.Duration(rng.Int64N(int64(5 * time.Minute))), hold: jitter(rng, 19*time.Minute, 2*time.Minute)})
				}
				return js
			},
			RefillUntil: 45 * time.Minute, RefillHold: 20 * time.Minute, RefillHoldSpread: 2 * time.Minute,
			StopAt: 50 * time.Minute, WindowFrom: 15 * time.Minute, WindowTo: 45 * time.Minute,
		},
		{
			Name: "steady", Seats: 2, Latency: DefaultLatency, Queued: 50,
			Description: "50 jobs always queued on 2 seats, 10-minute holds (the queue fills over the first 10 minutes, the seats cycle 5 minutes apart); each admission brings a new arrival; measured from minute 15 to 135",
			Jobs: func(rng *mrand.Rand) []*simJob {
				var js []*simJob
				for i := range 52 {
					j := &simJob{arrival: jitter(rng, 5*time.Second, 10*time.Minute), hold: jitter(rng, 10*time.Minute-15*time.Second, 30*time.Second)}
					if i < 2 {
						j.arrival = time.Duration(i) * time.Second
					}
					if i == 1 {
						// The second seat's first hold is half as long, so the
						// two seats cycle 5 minutes apart as in any steady
						// state (not in lockstep, as a cold start would).
						j.hold = 5 * time.Minute
					}
					js = append(js, j)
				}
				return js
			},
			RefillUntil: 135 * time.Minute, RefillHold: 10 * time.Minute, RefillHoldSpread: 30 * time.Second,
			StopAt: 140 * time.Minute, WindowFrom: 15 * time.Minute, WindowTo: 135 * time.Minute,
		},
		{
			Name: "crash", Seats: 4, Latency: DefaultLatency, ReapEvery: 5 * time.Minute,
			Description: "16 jobs on 4 seats (schema 3), 10-minute holds; the first 3 holders die 2, 4.5 and 7 minutes into their hold; the reaper runs every 5 minutes",
			Jobs: func(rng *mrand.Rand) []*simJob {
				var js []*simJob
				deaths := []time.Duration{2 * time.Minute, 4*time.Minute + 30*time.Second, 7 * time.Minute}
				for i := range 16 {
					j := &simJob{arrival: time.Duration(i) * 2 * time.Second, hold: 10 * time.Minute}
					if i < len(deaths) {
						j.dieAfter = deaths[i]
					}
					js = append(js, j)
				}
				return js
			},
		},
		{
			Name: "wait-1h", Seats: 1, Latency: DefaultLatency, Waiter: "job-002",
			Description: "one job waits over an hour behind a 65-minute holder on 1 seat",
			Jobs: func(rng *mrand.Rand) []*simJob {
				return []*simJob{
					{hold: 65 * time.Minute},
					{arrival: time.Minute, hold: time.Minute},
				}
			},
		},
		upgradeWorkload(),
		latencyWorkloads()[0],
		latencyWorkloads()[1],
	}
}

// Run executes wl. It must be called inside a testing/synctest bubble
// (virtual time). It returns an error when a job failed or a safety
// invariant broke; the result is filled either way.
func Run(t testing.TB, wl Workload, seed uint64) (*Result, error) {
	cfg := wl.Config
	if cfg == "" {
		cfg = schema3(wl.Seats)
	}
	w, err := newWorld(t, seed, cfg, wl.Latency)
	if err != nil {
		return nil, err
	}
	if wl.LimitScale > 0 {
		w.em.SetSecondaryLimits(scaledLimits(wl.LimitScale))
	}
	ctx, cancel := context.WithTimeout(context.Background(), safetyLimit)
	defer cancel()
	rng := mrand.New(mrand.NewPCG(seed, 7))

	var jobsWG sync.WaitGroup
	var spawn func(j *simJob)
	spawn = func(j *simJob) {
		w.addJob(j)
		jobsWG.Add(1)
		var onAdmit func()
		if wl.RefillUntil > 0 {
			onAdmit = func() {
				if w.since(time.Now()) >= wl.RefillUntil {
					return
				}
				w.mu.Lock()
				arrival := w.since(time.Now()) + time.Duration(rng.Int64N(int64(30*time.Second)))
				hold := wl.RefillHold - wl.RefillHoldSpread/2 + time.Duration(rng.Int64N(int64(wl.RefillHoldSpread)+1))
				w.mu.Unlock()
				spawn(&simJob{arrival: arrival, hold: hold})
			}
		}
		go func() {
			defer jobsWG.Done()
			w.runJob(ctx, j, onAdmit)
		}()
	}
	for _, j := range wl.Jobs(rng) {
		spawn(j)
	}
	reapCtx, stopReaper := context.WithCancel(ctx)
	var reaperWG sync.WaitGroup
	if wl.ReapEvery > 0 {
		reaperWG.Add(1)
		go func() {
			defer reaperWG.Done()
			w.reaperLoop(reapCtx, wl.ReapEvery)
		}()
	}
	stopped := make(chan struct{})
	if len(wl.ConfigSteps) > 0 {
		go w.applyConfigSteps(wl.ConfigSteps, stopped)
	}
	if wl.StopAt > 0 {
		go func() {
			select {
			case <-time.After(wl.StopAt):
				cancel()
			case <-stopped:
			}
		}()
	}
	jobsWG.Wait()
	close(stopped)
	end := time.Now()
	stopReaper()
	reaperWG.Wait()
	timedOut := ctx.Err() != nil && wl.StopAt == 0
	cancel()
	res := measure(w, wl, cfg, end)
	var errs []error
	if timedOut {
		errs = append(errs, fmt.Errorf("%s: did not finish within %s of virtual time", wl.Name, safetyLimit))
	}
	w.mu.Lock()
	for _, j := range w.jobs {
		if j.err != nil {
			errs = append(errs, j.err)
		}
	}
	w.mu.Unlock()
	for _, v := range res.Violations {
		errs = append(errs, fmt.Errorf("%s: safety: %s", wl.Name, v))
	}
	return res, errors.Join(errs...)
}

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

	// HandoffGap runs from the version that freed a seat to the moment the
	// job admitted to it noticed (its acquire returned): the handoff a user
	// feels ("handoff noticed").
	HandoffGap Dist `json:"handoff_noticed"`
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

	gaps []time.Duration
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
	r.ChargedPerAdmission = ratio(r.Total.Charged, r.Admitted)
	r.NotModifiedPerAdmission = ratio(r.Total.NotModified, r.Admitted)
	r.WritesPerAdmission = ratio(r.Total.Writes, r.Admitted)
	r.AttemptsPerAdmission = ratio(r.Total.WriteAttempts, r.Admitted)
	r.ConflictsPerAdmission = ratio(r.Total.Conflicts, r.Admitted)
	for _, j := range jobs {
		r.MaxCASRounds = max(r.MaxCASRounds, j.tap.maxRounds())
	}
	// A handoff gap runs from the version that freed a seat to the moment
	// the admitted job knew it held it (its acquire returned): a direct
	// handoff is committed by the release and noticed on the waiter's next
	// poll.
	noticed := map[string]time.Time{}
	for _, j := range jobs {
		if !j.admitted.IsZero() {
			noticed[j.holderID] = j.admitted
		}
	}
	for _, h := range rep.Handoffs {
		if h.Admitted.Before(from) || h.Admitted.After(to) {
			continue
		}
		at := h.Admitted
		if n, ok := noticed[h.HolderID]; ok && n.After(at) {
			at = n
		}
		r.gaps = append(r.gaps, at.Sub(h.FreedAt))
	}
	r.HandoffGap = dist(r.gaps)
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
		for _, v := range versions {
			if v.Time.Before(died) || v.Content == nil {
				continue
			}
			st, err := lockstate.Decode(v.Content, lockstate.DecodeOptions{Lock: simLock, ServerURL: simServerURL})
			if err != nil {
				continue
			}
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

// Target is one issue target evaluated on one workload.
type Target struct {
	ID    string  `json:"id"`
	Name  string  `json:"name"`
	Bar   string  `json:"bar"`
	Value float64 `json:"value"`
	Pass  bool    `json:"pass"`
}

// Target IDs, in table order.
const (
	TargetHandoffMedian   = "handoff-median"
	TargetHandoffP95      = "handoff-p95"
	TargetWaitWrites      = "waiting-writes"
	TargetWaitCharged     = "waiting-charged-per-hour"
	TargetIdleRequests    = "idle-admission-installation-requests"
	TargetWritesPerAdmit  = "writes-per-admitted-job"
	TargetQueuedPeak      = "queued-peak-requests-per-minute"
	TargetQueuedPeakInst  = "queued-peak-installation-charged-per-minute"
	TargetQueuedPeakCharg = "queued-peak-charged-per-minute"
	TargetBurstSecondary  = "burst-secondary-limit-responses"
	TargetBurstWrites     = "burst-peak-content-writes-per-minute"
	TargetBurstPoints     = "burst-peak-points-per-endpoint-per-minute"
	TargetBurstConflicts  = "burst-cas-conflicts-per-admission"
	TargetBurstCharged    = "burst-installation-charged-per-job"
	TargetBurstDisplaced  = "burst-max-arrival-displacement"
	TargetStateRate       = "state-endpoint-requests-per-minute"
	TargetSteadyWrites    = "steady-writes-per-admitted-job"
)

// minHandoffs is the fewest handoff gaps a workload needs to be judged on
// the handoff targets.
const minHandoffs = 10

func targets(wl Workload, r *Result) []Target {
	var ts []Target
	le := func(id, name, bar string, v, limit float64) {
		ts = append(ts, Target{ID: id, Name: name, Bar: bar, Value: v, Pass: v <= limit})
	}
	// A median of fewer than minHandoffs gaps says nothing; such a
	// workload still reports its gaps, but is not judged on them.
	if r.HandoffGap.N >= minHandoffs && len(wl.ConfigSteps) == 0 {
		le(TargetHandoffMedian, "handoff noticed median (s)", "≤ 2 s", r.HandoffGap.MedianS, 2)
		le(TargetHandoffP95, "handoff noticed p95 (s)", "≤ 4 s", r.HandoffGap.P95S, 4)
	}
	if r.Waiter != nil {
		le(TargetWaitWrites, "waiting job: content writes in its first hour", "0", float64(r.Waiter.Counts.WriteAttempts), 0)
		le(TargetWaitCharged, "waiting job: charged requests in its first hour", "≤ 40/h", float64(r.Waiter.Counts.Charged), 40)
	}
	if r.IdleAdmit != nil {
		le(TargetIdleRequests, "idle admission: installation-token requests (plus App auth)", "≤ 3", r.IdleAdmit.Installation, 3)
	}
	if r.Admitted > 0 {
		limit := 3.0
		if wl.Idle {
			limit = 2
		}
		le(TargetWritesPerAdmit, "content writes per admitted job", "≤ 3 (≤ 2 idle)", r.WritesPerAdmission, limit)
	}
	if wl.Burst && !wl.Informative {
		le(TargetBurstSecondary, "burst: secondary-limit responses received", "0", float64(r.Total.Secondary), 0)
		le(TargetBurstWrites, "burst: peak content-creating requests/min", "≤ 70/min", float64(r.PeakWrites), 70)
		le(TargetBurstPoints, "burst: peak points per endpoint/min (one identity)", "≤ 800/min", float64(r.PeakPoints), 800)
		le(TargetBurstConflicts, "burst: CAS conflicts per admission", "≤ 1.0", r.ConflictsPerAdmission, 1)
		le(TargetBurstCharged, "burst: charged requests per job (writer installation)", "≤ 20", r.InstallChargedPerJob, 20)
		le(TargetBurstDisplaced, "burst: max arrival-order displacement", fmt.Sprintf("≤ %d (seats)", r.Seats), float64(r.MaxDisplacement), float64(r.Seats))
	}
	if wl.StateRate > 0 {
		le(TargetStateRate, fmt.Sprintf("%d seats: peak state-endpoint requests/min (304s included)", r.Seats), fmt.Sprintf("≤ %d/min", wl.StateRate), float64(r.PeakStateReads), float64(wl.StateRate))
	}
	if wl.Queued > 0 && r.Admitted > 0 {
		le(TargetSteadyWrites, fmt.Sprintf("%d queued: content writes per admitted job", wl.Queued), "≤ 2.0", r.WritesPerAdmission, 2)
	}
	if len(wl.ConfigSteps) > 0 {
		upgradeTargets(r, le)
	}
	latencyTargets(wl, r, le)
	if wl.Queued > 0 {
		le(TargetQueuedPeak, fmt.Sprintf("%d queued: peak requests/min (org-wide)", wl.Queued), "≤ 300/min", float64(r.PeakPerMin), 300)
		le(TargetQueuedPeakInst, fmt.Sprintf("%d queued: peak charged/min, writer installation", wl.Queued), "≤ 60/min", float64(r.PeakInstallCharged), 60)
		le(TargetQueuedPeakCharg, fmt.Sprintf("%d queued: peak charged/min, all credentials", wl.Queued), "≤ 60/min", float64(r.PeakCharged), 60)
	}
	return ts
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
	m.Targets = targets(wl, &m)
	return &m
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
	for i, v := range versions {
		if v.Content == nil {
			continue
		}
		st, err := lockstate.Decode(v.Content, lockstate.DecodeOptions{Lock: simLock, ServerURL: simServerURL})
		if err != nil || len(st.Queue) == 0 {
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
