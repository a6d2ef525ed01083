package reap

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// MaxJobPages caps the pagination of one attempt's job list (spec §2.5: the
// reference stops at page 1000).
const MaxJobPages = 1000

var (
	repositoryRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)
	canonicalRE  = regexp.MustCompile(`^[1-9][0-9]*$`)
)

// EvidenceError is a status read that neither proved nor disproved anything
// and must not be treated as "unknown" (spec §4.2): the reader App cannot
// read the repository's Actions (403), the repository itself is not
// visible (a 404 run in a 403/404 repository), a malformed response, or
// any other failure. The entry it was about is kept unchanged.
type EvidenceError struct {
	// Op names the read, e.g. "GET acme/game run 12".
	Op string
	// Rule is a stable code: actions-read-forbidden, repository-unverifiable,
	// malformed-response or status-read-failed.
	Rule string
	// Err is the underlying (scrubbed) client error, if any.
	Err error
}

// Evidence error rules.
const (
	RuleActionsReadForbidden   = "actions-read-forbidden"
	RuleRepositoryUnverifiable = "repository-unverifiable"
	RuleMalformedResponse      = "malformed-response"
	RuleStatusReadFailed       = "status-read-failed"
)

// Error names the read, the failure, what the reader App needs and the rule.
func (e *EvidenceError) Error() string {
	var hint string
	switch e.Rule {
	case RuleActionsReadForbidden:
		hint = "; the reaper reader App needs actions: read on this repository"
	case RuleRepositoryUnverifiable:
		hint = "; unable to verify repository access: the reaper reader App must be installed on it with actions: read"
	}
	if e.Err != nil {
		return fmt.Sprintf("%s: %v%s (rule %s)", e.Op, e.Err, hint, e.Rule)
	}
	return fmt.Sprintf("%s failed%s (rule %s)", e.Op, hint, e.Rule)
}

// Unwrap returns the client error.
func (e *EvidenceError) Unwrap() error { return e.Err }

// Observation is the evidence about one entry plus what was read, for the
// job summary.
type Observation struct {
	Evidence lockstate.Evidence
	// RunNote and JobNote say what was read or why it is unknown, e.g.
	// "completed (failure), run_attempt 1" or "HTTP 401 after retries".
	RunNote, JobNote string
}

// ClientFor returns the reader client for a repository owner.
type ClientFor func(ctx context.Context, owner string) (*ghclient.Client, error)

// Evidencer reads the run and job evidence of §4.2 through the Actions API
// with the reader App (E13 run, E14 repository probe after a 404, E12 jobs
// of the exact attempt).
//
// Every answer is memoized for the duration of one reaper run, failures
// included, at the scope the answer is about, so a document with thousands
// of entries costs one request per distinct fact, not one per entry:
//
//   - per owner: a reader client that could not be built or a credential
//     failure (no installation of the reader App on that owner);
//   - per repository: the E14 probe (visible, or unverifiable after a
//     403/404, which is also what every later run of that repository would
//     answer) and an actions: read 403;
//   - per run: the E13 answer or its failure;
//   - per run attempt: the E12 job list or its failure.
//
// Only a cancelled or expired context (the scan deadline, the run's request
// budget, the runner) is never memoized. A memoized failure keeps its
// entry unchanged like the first one did (fail closed), and permissions do
// not change within one ten-minute run in a way the reaper may rely on.
//
// A cached read can predate an entry written meanwhile (a rerun's: the run
// was terminal at attempt 1 when read, and attempt 2 has queued since), so
// every Observation carries the time of the read it uses, and lockstate
// treats evidence of an attempt before the entry's as unknown. Safe for
// concurrent use.
type Evidencer struct {
	clients ClientFor
	clock   clock.Clock
	warn    func(string)

	mu     sync.Mutex
	runs   map[string]runRead
	jobs   map[string]jobsRead
	repos  map[string]error // E14 verdicts and actions: read 403s; nil = visible
	owners map[string]error // reader clients or credentials unavailable
}

type runRead struct {
	ev   lockstate.RunEvidence
	note string
	at   time.Time // when it was read
	err  error     // the memoized failure, if any
}

type jobsRead struct {
	jobs []*github.WorkflowJob
	note string // non-empty: the list is unavailable (401/404) and every job in it unknown
	err  error  // the memoized failure, if any
}

// NewEvidencer returns an Evidencer using clients for each owner. warn
// receives one line per status that was downgraded to unknown.
func NewEvidencer(clients ClientFor, clk clock.Clock, warn func(string)) *Evidencer {
	if clk == nil {
		clk = clock.Real{}
	}
	if warn == nil {
		warn = func(string) {}
	}
	return &Evidencer{clients: clients, clock: clk, warn: warn, runs: map[string]runRead{}, jobs: map[string]jobsRead{},
		repos: map[string]error{}, owners: map[string]error{}}
}

// ForHolder gathers the evidence EvaluateHolder needs: the run, and the
// exact job only when the run is active on the holder's own attempt and the
// holder recorded a numeric job id.
func (e *Evidencer) ForHolder(ctx context.Context, h lockstate.Holder) (Observation, error) {
	return e.ForEntry(ctx, h.Entry)
}

// ForEntry gathers the evidence for a holder or queue entry (see ForHolder).
func (e *Evidencer) ForEntry(ctx context.Context, en lockstate.Entry) (Observation, error) {
	var o Observation
	rr, err := e.run(ctx, en.Repository, en.RunID)
	if err != nil {
		return o, err
	}
	run := rr.ev
	o.Evidence.Run, o.RunNote, o.Evidence.ObservedAt = rr.ev, rr.note, rr.at
	if !run.Known || !lockstate.IsActiveStatus(run.Status) || advanced(run.RunAttempt, en.RunAttempt) {
		o.JobNote = "not needed"
		return o, nil
	}
	job, jnote, err := e.Job(ctx, en)
	if err != nil {
		return o, err
	}
	o.Evidence.Job, o.JobNote = job, jnote
	return o, nil
}

// ForReservation gathers the run evidence for the run that owned a
// quarantine (reservations carry no job id).
func (e *Evidencer) ForReservation(ctx context.Context, r lockstate.Reservation) (Observation, error) {
	rr, err := e.run(ctx, r.Repository, r.RunID)
	if err != nil {
		return Observation{}, err
	}
	return Observation{Evidence: lockstate.Evidence{Run: rr.ev, ObservedAt: rr.at}, RunNote: rr.note, JobNote: "reservations carry no job id"}, nil
}

func advanced(run, stored string) bool {
	if !canonicalRE.MatchString(run) || !canonicalRE.MatchString(stored) {
		return false
	}
	if len(run) != len(stored) {
		return len(run) > len(stored)
	}
	return run > stored
}

// Run reads GET /repos/{owner}/{repo}/actions/runs/{runID} (E13) with the
// rules of spec §4.2:
//
//	200                    → known: status, conclusion, run_attempt
//	404                    → probe GET /repos/{owner}/{repo} (E14): 200 → unknown;
//	                         403/404 (or any failure) → EvidenceError repository-unverifiable
//	403                    → EvidenceError actions-read-forbidden
//	401 after the retries  → unknown, with a warning
//	anything else          → EvidenceError status-read-failed
//
// A run id that is not a canonical decimal cannot exist and is unknown.
func (e *Evidencer) Run(ctx context.Context, repository, runID string) (lockstate.RunEvidence, string, error) {
	rr, err := e.run(ctx, repository, runID)
	return rr.ev, rr.note, err
}

// run is Run with the time of the (possibly cached) read.
func (e *Evidencer) run(ctx context.Context, repository, runID string) (runRead, error) {
	owner, name, ok := splitRepo(repository)
	if !ok {
		return runRead{}, &EvidenceError{Op: fmt.Sprintf("read run %s of %q", runID, repository), Rule: RuleRepositoryUnverifiable,
			Err: fmt.Errorf("recorded repository is not OWNER/NAME")}
	}
	if !canonicalRE.MatchString(runID) {
		return runRead{note: fmt.Sprintf("run id %q is not a canonical decimal: status unknown", runID), at: e.clock.Now()}, nil
	}
	key := strings.ToLower(repository) + "#" + runID
	if cached, hit := e.cachedRun(key); hit {
		return cached, cached.err
	}
	if err := e.knownFailure(owner, repository); err != nil {
		return runRead{}, err
	}
	c, err := e.client(ctx, owner)
	if err != nil {
		return runRead{}, err
	}
	id, _ := strconv.ParseInt(runID, 10, 64)
	op := fmt.Sprintf("GET /repos/%s/%s/actions/runs/%s", owner, name, runID)
	var run *github.WorkflowRun
	err = c.Do(ctx, ghclient.Op{Name: op}, func(ctx context.Context) (*github.Response, error) {
		var resp *github.Response
		var err error
		run, resp, err = c.GitHub().Actions.GetWorkflowRunByID(ctx, owner, name, id)
		return resp, err
	})
	rr := runRead{at: e.clock.Now()}
	switch st := ghclient.StatusOf(err); {
	case err == nil:
		if run == nil || run.Status == nil {
			rr.err = &EvidenceError{Op: op, Rule: RuleMalformedResponse, Err: fmt.Errorf("the run has no status")}
			break
		}
		rr.ev = lockstate.RunEvidence{Known: true, Status: run.GetStatus(), Conclusion: run.GetConclusion()}
		if n := run.GetRunAttempt(); n > 0 {
			rr.ev.RunAttempt = strconv.Itoa(n)
		}
		rr.note = fmt.Sprintf("run %s", describe(rr.ev.Status, rr.ev.Conclusion))
		if rr.ev.RunAttempt != "" {
			rr.note += ", run_attempt " + rr.ev.RunAttempt
		}
	case ctx.Err() != nil:
		return runRead{}, err
	case ghclient.IsNotFound(err):
		if perr := e.probe(ctx, c, owner, name); perr != nil {
			if ctx.Err() != nil {
				return runRead{}, perr
			}
			rr.err = perr
			break
		}
		rr.note = "run not found (HTTP 404) in a repository the reader can see: status unknown"
	case st == http.StatusForbidden && !ghclient.IsCredentialFailure(err):
		rr.err = &EvidenceError{Op: op, Rule: RuleActionsReadForbidden, Err: err}
		e.remember(e.repos, strings.ToLower(repository), rr.err)
	case st == http.StatusUnauthorized && !ghclient.IsCredentialFailure(err):
		rr.note = "HTTP 401 after the retry budget: status unknown"
		e.warn(fmt.Sprintf("%s still returned HTTP 401 after retries; treating the run status as unknown", op))
	default:
		rr.err = &EvidenceError{Op: op, Rule: RuleStatusReadFailed, Err: err}
		if ghclient.IsCredentialFailure(err) {
			e.remember(e.owners, strings.ToLower(owner), rr.err)
		}
	}
	e.mu.Lock()
	e.runs[key] = rr
	e.mu.Unlock()
	if rr.err != nil {
		return runRead{}, rr.err
	}
	return rr, nil
}

func (e *Evidencer) cachedRun(key string) (runRead, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	rr, ok := e.runs[key]
	return rr, ok
}

// knownFailure returns the memoized failure that makes every read about
// repository (of owner) fail: its owner's reader credentials, or the
// repository itself (unverifiable, or actions: read forbidden).
func (e *Evidencer) knownFailure(owner, repository string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.owners[strings.ToLower(owner)]; err != nil {
		return err
	}
	return e.repos[strings.ToLower(repository)]
}

// client returns the reader client of owner; a client that cannot be built
// is memoized for the owner.
func (e *Evidencer) client(ctx context.Context, owner string) (*ghclient.Client, error) {
	c, err := e.clients(ctx, owner)
	if err != nil && ctx.Err() == nil {
		e.remember(e.owners, strings.ToLower(owner), err)
	}
	return c, err
}

// remember records a verdict in m under e.mu (the first one wins).
func (e *Evidencer) remember(m map[string]error, key string, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := m[key]; !ok {
		m[key] = err
	}
}

// probe is E14: after a run 404, a visible repository makes the run
// unknown; anything else means the reader cannot prove anything here. The
// verdict is memoized for the repository, a 404 included: a hostile
// document's thousands of runs in one missing repository cost one probe.
func (e *Evidencer) probe(ctx context.Context, c *ghclient.Client, owner, name string) error {
	key := strings.ToLower(owner + "/" + name)
	e.mu.Lock()
	verdict, hit := e.repos[key]
	e.mu.Unlock()
	if hit {
		return verdict
	}
	op := fmt.Sprintf("GET /repos/%s/%s", owner, name)
	err := c.Do(ctx, ghclient.Op{Name: op}, func(ctx context.Context) (*github.Response, error) {
		_, resp, err := c.GitHub().Repositories.Get(ctx, owner, name)
		return resp, err
	})
	if err != nil && ctx.Err() != nil {
		return err
	}
	if err != nil {
		err = &EvidenceError{Op: op, Rule: RuleRepositoryUnverifiable, Err: err}
	}
	e.remember(e.repos, key, err)
	return err
}

// Job reads the jobs of the entry's exact run attempt (E12, every page) and
// returns the one job with id == the recorded jobId and runner_name == the
// recorded runner (spec §4.2). The recorded runner is the entry's
// runnerName, the RUNNER_NAME its acquire really ran on, when the entry has
// one, else its runnerId as in the reference (which compared runnerId only,
// so a schema-2 entry, whose runnerId is not written, never had job
// evidence). It is unknown, never guessed, when the
// attempt is not canonical, the entry has no runner or no canonical jobId,
// the list is 401/404, not exactly one job matches, or the job's status is
// neither active nor completed. A 403 is an EvidenceError.
func (e *Evidencer) Job(ctx context.Context, en lockstate.Entry) (lockstate.JobEvidence, string, error) {
	switch {
	case !canonicalRE.MatchString(en.JobID):
		return lockstate.JobEvidence{}, "no recorded numeric job id: run-level evidence only", nil
	case !canonicalRE.MatchString(en.RunAttempt):
		return lockstate.JobEvidence{}, fmt.Sprintf("run attempt %q is not canonical: job unknown", en.RunAttempt), nil
	}
	runner := en.RunnerName
	if runner == "" {
		runner = en.RunnerID
	}
	if strings.TrimSpace(runner) == "" {
		return lockstate.JobEvidence{}, "no recorded runner: job unknown", nil
	}
	jobs, note, err := e.attemptJobs(ctx, en.Repository, en.RunID, en.RunAttempt)
	if err != nil {
		return lockstate.JobEvidence{}, "", err
	}
	if note != "" {
		return lockstate.JobEvidence{}, note, nil
	}
	var match []*github.WorkflowJob
	for _, j := range jobs {
		if strconv.FormatInt(j.GetID(), 10) == en.JobID && j.GetRunnerName() == runner {
			match = append(match, j)
		}
	}
	if len(match) != 1 {
		return lockstate.JobEvidence{}, fmt.Sprintf("%d jobs of attempt %s match job %s on runner %q: job unknown", len(match), en.RunAttempt, en.JobID, runner), nil
	}
	j := match[0]
	st := j.GetStatus()
	if st != lockstate.JobStatusCompleted && !lockstate.IsActiveStatus(st) {
		if st == "" {
			return lockstate.JobEvidence{}, fmt.Sprintf("job %s has no status: job unknown", en.JobID), nil
		}
		return lockstate.JobEvidence{}, fmt.Sprintf("job %s has unrecognized status %q: job unknown", en.JobID, st), nil
	}
	ev := lockstate.JobEvidence{Known: true, JobID: en.JobID, Status: st, Conclusion: j.GetConclusion()}
	return ev, fmt.Sprintf("job %s %s on %s", en.JobID, describe(ev.Status, ev.Conclusion), runner), nil
}

func (e *Evidencer) attemptJobs(ctx context.Context, repository, runID, attempt string) ([]*github.WorkflowJob, string, error) {
	owner, name, ok := splitRepo(repository)
	if !ok || !canonicalRE.MatchString(runID) {
		return nil, "run is not addressable: job unknown", nil
	}
	key := strings.ToLower(repository) + "#" + runID + "#" + attempt
	e.mu.Lock()
	cached, hit := e.jobs[key]
	e.mu.Unlock()
	if hit {
		return cached.jobs, cached.note, cached.err
	}
	if err := e.knownFailure(owner, repository); err != nil {
		return nil, "", err
	}
	c, err := e.client(ctx, owner)
	if err != nil {
		return nil, "", err
	}
	id, _ := strconv.ParseInt(runID, 10, 64)
	n, _ := strconv.ParseInt(attempt, 10, 64)
	op := fmt.Sprintf("GET /repos/%s/%s/actions/runs/%s/attempts/%s/jobs", owner, name, runID, attempt)
	var read jobsRead
	opts := &github.ListOptions{PerPage: 100, Page: 1}
	for page := 1; page <= MaxJobPages; page++ {
		opts.Page = page
		var list *github.Jobs
		err := c.Do(ctx, ghclient.Op{Name: op}, func(ctx context.Context) (*github.Response, error) {
			var resp *github.Response
			var err error
			list, resp, err = c.GitHub().Actions.ListWorkflowJobsAttempt(ctx, owner, name, id, n, opts)
			return resp, err
		})
		if err != nil {
			st := ghclient.StatusOf(err)
			switch {
			case ctx.Err() != nil:
				return nil, "", err
			case (st == http.StatusUnauthorized || st == http.StatusNotFound) && !ghclient.IsCredentialFailure(err):
				read = jobsRead{note: fmt.Sprintf("job list returned HTTP %d: job unknown", st)}
				e.warn(fmt.Sprintf("%s returned HTTP %d; treating the exact job status as unknown", op, st))
			case st == http.StatusForbidden && !ghclient.IsCredentialFailure(err):
				read = jobsRead{err: &EvidenceError{Op: op, Rule: RuleActionsReadForbidden, Err: err}}
			default:
				read = jobsRead{err: &EvidenceError{Op: op, Rule: RuleStatusReadFailed, Err: err}}
			}
			break
		}
		if list == nil || list.TotalCount == nil {
			read = jobsRead{err: &EvidenceError{Op: op, Rule: RuleMalformedResponse, Err: fmt.Errorf("the job list has no total_count")}}
			break
		}
		read.jobs = append(read.jobs, list.Jobs...)
		if len(list.Jobs) == 0 || len(read.jobs) >= list.GetTotalCount() {
			break
		}
	}
	e.mu.Lock()
	e.jobs[key] = read
	e.mu.Unlock()
	if read.err != nil {
		return nil, "", read.err
	}
	return read.jobs, read.note, nil
}

func splitRepo(repository string) (string, string, bool) {
	if !repositoryRE.MatchString(repository) {
		return "", "", false
	}
	owner, name, _ := strings.Cut(repository, "/")
	if owner == "." || owner == ".." || name == "." || name == ".." {
		return "", "", false
	}
	return owner, name, true
}

func describe(status, conclusion string) string {
	if conclusion != "" {
		return status + " (" + conclusion + ")"
	}
	return status
}
