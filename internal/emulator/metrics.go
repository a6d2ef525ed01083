package emulator

import (
	"net/http"
	"strings"
	"time"
)

// Counters are request totals for one slice of traffic.
type Counters struct {
	// Requests counts every REST request (admin calls excluded).
	Requests int64 `json:"requests"`
	// NotModified counts 304 answers to conditional requests.
	NotModified int64 `json:"not_modified"`
	// Charged counts requests that consumed primary rate limit.
	Charged int64 `json:"charged"`
	// Writes counts successful (2xx) POST/PUT/PATCH/DELETE requests,
	// excluding installation-token minting.
	Writes int64 `json:"writes"`
	// Conflicts counts 409/422 answers to contents PUT/DELETE.
	Conflicts int64 `json:"conflicts"`
	// Faults counts requests on which at least one fault fired.
	Faults int64 `json:"faults"`
	// BranchHeadConflicts counts contents writes refused with 409 "is at X
	// but expected Y" because another commit moved the branch head while
	// they were being committed (Options.CommitLatency); they are also in
	// Conflicts.
	BranchHeadConflicts int64 `json:"branch_head_conflicts"`
	// RuleRefusals counts writes refused by a branch rule (or the
	// ruleset_violation fault).
	RuleRefusals int64 `json:"rule_refusals"`
	// LaggedReads counts contents reads a lagging replica served with an
	// older version than the branch head (Options.ReplicaLag).
	LaggedReads int64 `json:"lagged_reads"`
	// Redirects counts 301/307 answers for a renamed repository.
	Redirects int64 `json:"redirects"`
}

// RequestRecord is one entry of the request log. It holds no secrets.
type RequestRecord struct {
	ID         string    `json:"id"` // x-github-request-id
	Time       time.Time `json:"time"`
	Method     string    `json:"method"`
	Route      string    `json:"route"` // e.g. "PUT /repos/{owner}/{repo}/contents/{path}"
	Path       string    `json:"path"`
	Status     int       `json:"status"` // 0 when no response was delivered
	Credential string    `json:"credential,omitempty"`
	APIVersion string    `json:"api_version,omitempty"` // X-GitHub-Api-Version sent by the client
	Charged    bool      `json:"charged"`
	// RateLimitRemaining is x-ratelimit-remaining after the request.
	RateLimitRemaining int `json:"rate_limit_remaining"`
	// Faults lists the fault kinds that fired on this request.
	Faults []FaultKind `json:"faults,omitempty"`
	// Outcome is "ok", "response_lost", "connection_reset" or "stalled".
	Outcome string `json:"outcome"`
	// RetryAfterUntil is when the client may retry, from Retry-After or, for a
	// primary limit, x-ratelimit-reset. Zero when not throttled.
	RetryAfterUntil time.Time `json:"retry_after_until,omitempty"`
	// Secondary names the secondary rate limit that refused the request
	// (SecondaryConcurrency, SecondaryPoints, SecondaryContentMinute,
	// SecondaryContentHour); empty otherwise. Injected secondary-limit
	// faults are in Faults instead.
	Secondary string `json:"secondary,omitempty"`
	// BranchHeadConflict marks a contents write that lost the branch-head
	// race: another write moved the branch while this one committed (409
	// "is at X but expected Y"; Counters.BranchHeadConflicts).
	BranchHeadConflict bool `json:"branch_head_conflict,omitempty"`
	// LaggedRead marks a contents read a lagging replica served with an
	// older version (Options.ReplicaLag; Counters.LaggedReads).
	LaggedRead bool `json:"lagged_read,omitempty"`
}

// Metrics is a snapshot of request accounting since the last ResetMetrics.
type Metrics struct {
	Counters
	// FaultsByKind counts fired faults by kind.
	FaultsByKind map[FaultKind]int64 `json:"faults_by_kind"`
	// Routes is keyed by method and route template, e.g.
	// "PUT /repos/{owner}/{repo}/contents/{path}".
	Routes map[string]Counters `json:"routes"`
	// Paths is keyed by method and concrete API path (no query), e.g.
	// "GET /repos/o/r/contents/locks/x.config.json".
	Paths map[string]Counters `json:"paths"`
	// ByCredential is keyed by credential label ("installation:12",
	// "token:ci", "app:7", "" for anonymous).
	ByCredential map[string]Counters `json:"by_credential"`
	// Log is the request log, oldest first (bounded by Options.LogLimit).
	Log []RequestRecord `json:"log"`
}

type metricsState struct {
	total   Counters
	kinds   map[FaultKind]int64
	byRoute map[string]*Counters
	byPath  map[string]*Counters
	byCred  map[string]*Counters
	log     []RequestRecord
}

func (m *metricsState) reset() {
	*m = metricsState{kinds: map[FaultKind]int64{}, byRoute: map[string]*Counters{}, byPath: map[string]*Counters{}, byCred: map[string]*Counters{}}
}

// ResetMetrics zeroes all counters and clears the request log.
func (e *Emulator) ResetMetrics() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.metrics.reset()
}

// Metrics returns a snapshot of the counters and the request log.
func (e *Emulator) Metrics() Metrics {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := Metrics{Counters: e.metrics.total, FaultsByKind: map[FaultKind]int64{}, Routes: map[string]Counters{}, Paths: map[string]Counters{}, ByCredential: map[string]Counters{},
		Log: append([]RequestRecord(nil), e.metrics.log...)}
	for k, v := range e.metrics.kinds {
		m.FaultsByKind[k] = v
	}
	for k, v := range e.metrics.byRoute {
		m.Routes[k] = *v
	}
	for k, v := range e.metrics.byPath {
		m.Paths[k] = *v
	}
	for k, v := range e.metrics.byCred {
		m.ByCredential[k] = *v
	}
	return m
}

func (e *Emulator) recordLocked(rec *RequestRecord, resp *response, plan faultPlan, oc outcome) {
	rec.Time = e.now()
	rec.Outcome = oc.String()
	rec.Faults = plan.kinds
	var d Counters
	d.Requests = 1
	if resp != nil {
		rec.Status = resp.status
		if resp.status == http.StatusNotModified {
			d.NotModified = 1
		}
		if resp.conflict {
			d.Conflicts = 1
		}
		if resp.headConflict {
			d.BranchHeadConflicts = 1
		}
		if resp.ruleRefusal {
			d.RuleRefusals = 1
		}
		if resp.lagged {
			d.LaggedReads = 1
		}
		rec.BranchHeadConflict, rec.LaggedRead = resp.headConflict, resp.lagged
		if resp.status == http.StatusMovedPermanently || resp.status == http.StatusTemporaryRedirect {
			d.Redirects = 1
		}
		// Minting tokens (POST /app/...) is authentication, not content.
		if rec.Method != http.MethodGet && rec.Method != http.MethodHead && resp.status >= 200 && resp.status < 300 &&
			!strings.HasPrefix(rec.Route, "POST /app/") {
			d.Writes = 1
		}
	}
	if rec.Charged {
		d.Charged = 1
	}
	if len(plan.kinds) > 0 {
		d.Faults = 1
		for _, k := range plan.kinds {
			e.metrics.kinds[k]++
		}
	}
	add := func(c *Counters) {
		c.Requests += d.Requests
		c.NotModified += d.NotModified
		c.Charged += d.Charged
		c.Writes += d.Writes
		c.Conflicts += d.Conflicts
		c.Faults += d.Faults
		c.BranchHeadConflicts += d.BranchHeadConflicts
		c.RuleRefusals += d.RuleRefusals
		c.LaggedReads += d.LaggedReads
		c.Redirects += d.Redirects
	}
	add(&e.metrics.total)
	rc, ok := e.metrics.byRoute[rec.Route]
	if !ok {
		rc = &Counters{}
		e.metrics.byRoute[rec.Route] = rc
	}
	add(rc)
	pk := rec.Method + " " + rec.Path
	pc, ok := e.metrics.byPath[pk]
	if !ok {
		pc = &Counters{}
		e.metrics.byPath[pk] = pc
	}
	add(pc)
	cc, ok := e.metrics.byCred[rec.Credential]
	if !ok {
		cc = &Counters{}
		e.metrics.byCred[rec.Credential] = cc
	}
	add(cc)
	e.metrics.log = append(e.metrics.log, *rec)
	if over := len(e.metrics.log) - e.opts.LogLimit; over > 0 {
		e.metrics.log = append(e.metrics.log[:0:0], e.metrics.log[over:]...)
	}
}
