package linearizability

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/store"
)

// File names one tracked state file: a key of the history (porcupine
// partitions the check by it). Branch is the branch a write names; ""
// tracks writes that name none (the repository's default branch).
type File struct {
	Owner, Repo, Branch, Path string
}

// Key is the file's partition key.
func (f File) Key() string { return f.Owner + "/" + f.Repo + "@" + f.Branch + ":" + f.Path }

// Outcome is what a write's client learned.
type Outcome int

// Write outcomes.
const (
	// Unknown: the answer was lost or was an error that does not say
	// whether GitHub applied the write (5xx, a reset, a stall, a secondary
	// limit, a kill). The write may or may not have applied.
	Unknown Outcome = iota
	// Applied: 200 or 201.
	Applied
	// Refused: 409 "<path> does not match <sha>" (the sha is not the
	// file's), or 422 for a write without a sha to an existing file.
	// Nothing applied, and the file was not at the write's base.
	Refused
	// NotApplied: any other 409 or 422, a refusal that says nothing about
	// the file's version: a commit to the same branch overlapped the
	// write (409 "is at <head> but expected <base>", whichever file it
	// touched), or a branch rule refused it. Nothing applied.
	NotApplied
)

func (o Outcome) String() string {
	switch o {
	case Applied:
		return "applied"
	case Refused:
		return "refused"
	case NotApplied:
		return "not-applied"
	}
	return "unknown"
}

// ClaimKind names a reported outcome.
type ClaimKind string

// Reported outcomes the model checks.
const (
	// ClaimAcquired: acquired=true with fencing-token and state-sha.
	ClaimAcquired ClaimKind = "acquired"
	// ClaimReleased: the release removed the job's entries (released=true
	// or queue-cleaned=true).
	ClaimReleased ClaimKind = "released"
	// ClaimRecovered: recovery reported reaped=true for its target.
	ClaimRecovered ClaimKind = "recovered"
)

// Claim is one outcome an action reported.
type Claim struct {
	Kind  ClaimKind
	Actor Actor
	// Token and StateSHA are acquire's fencing-token and state-sha outputs.
	Token, StateSHA string
}

type opKind int

const (
	opWrite opKind = iota
	opClaim
	opRead
)

// op is one recorded operation; its pointer is the porcupine input.
type op struct {
	kind   opKind
	key    string
	client int
	call   int64
	ret    int64 // when the client learned the outcome (or the check began)
	done   bool
	actor  Actor

	// write
	base     string // the sha sent ("" = none)
	content  []byte
	sha      string
	message  string
	outcome  Outcome
	at       time.Time // wall time of ret
	evidence Evidence

	// claim
	claim Claim

	// read
	readSHA     string
	readPresent bool

	// memo, filled by the model (each op belongs to one partition, which
	// porcupine checks on one goroutine)
	next     *lockstate.State
	nextErr  error
	decoded  bool
	verdicts map[string][]Violation // by base sha ("" = absent file)
}

// fact is one thing GitHub Actions made true at a logical time.
type fact struct {
	at      int64
	kind    int // factTerminal, factAttempt, factJob
	runID   string
	attempt uint64
	jobID   string
}

const (
	factTerminal = iota
	factAttempt
	factJob
)

type tracked struct {
	file    File
	rules   *LockRules
	initial []byte
	present bool
}

// Recorder records the history of one run (a simulation seed, a crash case,
// a concurrent test). It is safe for concurrent use. Timestamps are a
// logical clock shared by every recorded event, so "returned before invoked"
// is exact even when many events share one virtual instant.
type Recorder struct {
	clk     clock.Clock
	seq     atomic.Int64
	mu      sync.Mutex
	files   map[string]*tracked
	byPath  map[string]*tracked // "/repos/o/r/contents/path" -> file
	ops     []*op
	facts   []fact
	clients map[string]int
	firstAc map[string]int64 // key + holderId -> first acquire invocation
}

// NewRecorder returns an empty recorder; clk gives the wall time of each
// answer (lease and grace rules), nil is clock.Real.
func NewRecorder(clk clock.Clock) *Recorder {
	if clk == nil {
		clk = clock.Real{}
	}
	return &Recorder{clk: clk, files: map[string]*tracked{}, byPath: map[string]*tracked{}, clients: map[string]int{}, firstAc: map[string]int64{}}
}

// Track starts recording writes to f. rules nil checks f as a plain
// compare-and-swap register (any content); otherwise every applied write
// must be a legal step of the semaphore. initial is the file's content when
// recording starts (present=false: the file does not exist).
func (r *Recorder) Track(f File, rules *LockRules, initial []byte, present bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := &tracked{file: f, rules: rules, initial: append([]byte(nil), initial...), present: present}
	r.files[f.Key()] = t
	r.byPath["/repos/"+f.Owner+"/"+f.Repo+"/contents/"+f.Path] = t
}

// Now ticks the logical clock: the invocation time of an outcome, or any
// instant a caller wants to order against the history.
func (r *Recorder) Now() int64 { return r.seq.Add(1) }

func (r *Recorder) client(a Actor) int {
	name := a.String()
	r.mu.Lock()
	defer r.mu.Unlock()
	if id, ok := r.clients[name]; ok {
		return id
	}
	id := len(r.clients)
	r.clients[name] = id
	return id
}

// Transport wraps base so that every contents PUT to a tracked file is
// recorded as a write by actor: invoked when the request leaves, returned
// when the answer arrives, with the sha it carried and the bytes it wrote.
// Everything else passes through untouched.
func (r *Recorder) Transport(base http.RoundTripper, actor Actor) http.RoundTripper {
	return &recordingTransport{r: r, base: base, actor: actor}
}

type recordingTransport struct {
	r     *Recorder
	base  http.RoundTripper
	actor Actor
}

// putBody is the Contents API write request.
type putBody struct {
	Message string `json:"message"`
	Content string `json:"content"`
	SHA     string `json:"sha"`
	Branch  string `json:"branch"`
}

// ParsePut decodes a Contents API PUT body: the commit message, the decoded
// content, the sha it is based on ("" = none) and the branch ("" = the
// default branch). A body that is not such a request is an error.
func ParsePut(body []byte) (message string, content []byte, sha, branch string, err error) {
	var p putBody
	if err := json.Unmarshal(body, &p); err != nil {
		return "", nil, "", "", err
	}
	data, err := base64.StdEncoding.DecodeString(strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, p.Content))
	if err != nil {
		return "", nil, "", "", err
	}
	return p.Message, data, p.SHA, p.Branch, nil
}

func (t *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPut || req.Body == nil {
		return t.base.RoundTrip(req)
	}
	path := req.URL.Path
	if p, err := url.PathUnescape(req.URL.EscapedPath()); err == nil {
		path = p
	}
	if i := strings.Index(path, "/repos/"); i > 0 {
		path = path[i:] // a GHES /api/v3 prefix
	}
	t.r.mu.Lock()
	tf := t.r.byPath[path]
	t.r.mu.Unlock()
	if tf == nil {
		return t.base.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	req = req.Clone(req.Context())
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	msg, content, base, branch, perr := ParsePut(body)
	if perr != nil || branch != tf.file.Branch {
		return t.base.RoundTrip(req)
	}
	o := &op{kind: opWrite, key: tf.file.Key(), client: t.r.client(t.actor), actor: t.actor,
		base: base, content: content, sha: store.BlobSHA(content), message: msg}
	t.r.begin(o)
	resp, err := t.base.RoundTrip(req)
	out := Unknown
	switch {
	case err != nil:
	case resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusCreated:
		out = Applied
	case resp.StatusCode == http.StatusConflict, resp.StatusCode == http.StatusUnprocessableEntity:
		out = refusal(resp, base)
	}
	t.r.end(o, out)
	return resp, err
}

// refusal classifies a 409 or 422 answer to a write by GitHub's message
// (ghclient.ClassifyWriteRefusal decides the same way): only a sha
// mismatch, or a write without a sha to an existing file, says the file
// was not at the write's base. The body is read and put back.
func refusal(resp *http.Response, base string) Outcome {
	var msg string
	if resp.Body != nil {
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		_ = resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		var e struct {
			Message string `json:"message"`
		}
		if err == nil && json.Unmarshal(body, &e) == nil {
			msg = e.Message
		}
	}
	if ghclient.ClassifyWriteRefusal(resp.StatusCode, msg) == ghclient.RefusalRules {
		return NotApplied
	}
	switch resp.StatusCode {
	case http.StatusConflict:
		if strings.Contains(msg, " does not match ") {
			return Refused
		}
	case http.StatusUnprocessableEntity:
		if base == "" {
			return Refused
		}
	}
	return NotApplied
}

func (r *Recorder) begin(o *op) {
	o.call = r.Now()
	r.mu.Lock()
	r.ops = append(r.ops, o)
	r.mu.Unlock()
}

func (r *Recorder) end(o *op, out Outcome) {
	ret := r.Now()
	at := r.clk.Now()
	r.mu.Lock()
	o.ret, o.at, o.outcome, o.done = ret, at, out, true
	r.mu.Unlock()
}

// BeginAcquire is the invocation of an acquire step of actor on f: it
// returns the logical time to pass to Acquired. Below schema 3 a holder id
// is the whole identity (a rerun owns its earlier attempt's seat), so an
// acquired claim may be satisfied from the first acquire of that holder id
// on: the recorder keeps the earliest.
func (r *Recorder) BeginAcquire(f File, actor Actor) int64 {
	at := r.Now()
	k := f.Key() + "\x00" + actor.HolderID
	r.mu.Lock()
	if _, ok := r.firstAc[k]; !ok {
		r.firstAc[k] = at
	}
	r.mu.Unlock()
	return at
}

// Acquired records that actor's acquire step, invoked at call, reported
// acquired=true with fencing-token token at state-sha stateSHA.
func (r *Recorder) Acquired(f File, actor Actor, call int64, token, stateSHA string) {
	r.mu.Lock()
	if first, ok := r.firstAc[f.Key()+"\x00"+actor.HolderID]; ok && first < call {
		call = first
	}
	r.mu.Unlock()
	r.claim(f, Claim{Kind: ClaimAcquired, Actor: actor, Token: token, StateSHA: stateSHA}, call)
}

// Released records that actor's release (or post) step, invoked at call,
// reported that it removed the job's entries.
func (r *Recorder) Released(f File, actor Actor, call int64) {
	r.claim(f, Claim{Kind: ClaimReleased, Actor: actor}, call)
}

// Recovered records that a recovery step (ActorRecover or
// ActorRecoverIncident), invoked at call, reported reaped=true.
func (r *Recorder) Recovered(f File, actor Actor, call int64) {
	r.claim(f, Claim{Kind: ClaimRecovered, Actor: actor}, call)
}

func (r *Recorder) claim(f File, c Claim, call int64) {
	o := &op{kind: opClaim, key: f.Key(), client: r.client(c.Actor), actor: c.Actor, claim: c, call: call, done: true}
	o.ret = r.Now()
	r.mu.Lock()
	r.ops = append(r.ops, o)
	r.mu.Unlock()
}

// Observe records a read of f made by read, a linearizable read such as the
// emulator's own history after the run (the clients' reads may be served by
// a lagging replica and are not recorded).
func (r *Recorder) Observe(f File, read func() (content []byte, present bool)) {
	o := &op{kind: opRead, key: f.Key(), client: r.client(Actor{Kind: "observer"}), actor: Actor{Kind: "observer"}, done: true}
	o.call = r.Now()
	content, present := read()
	o.ret = r.Now()
	o.readPresent = present
	if present {
		o.readSHA = store.BlobSHA(content)
	}
	r.mu.Lock()
	r.ops = append(r.ops, o)
	r.mu.Unlock()
}

// RunTerminal records that attempt attempt of run runID became terminal.
// Call it just before the change becomes visible through the API.
func (r *Recorder) RunTerminal(runID string, attempt int) {
	r.fact(fact{kind: factTerminal, runID: runID, attempt: uint64(max(attempt, 0))})
}

// RunAttemptStarted records that run runID started attempt attempt (a
// rerun), which supersedes every earlier attempt. Call it just before the
// change becomes visible.
func (r *Recorder) RunAttemptStarted(runID string, attempt int) {
	r.fact(fact{kind: factAttempt, runID: runID, attempt: uint64(max(attempt, 0))})
}

// JobCompleted records that job jobID completed. Call it just before the
// change becomes visible.
func (r *Recorder) JobCompleted(jobID string) {
	r.fact(fact{kind: factJob, jobID: jobID})
}

func (r *Recorder) fact(f fact) {
	f.at = r.Now()
	r.mu.Lock()
	r.facts = append(r.facts, f)
	r.mu.Unlock()
}

// evidence is the facts recorded before a logical time.
type evidence struct {
	facts []fact
	until int64
}

func (e evidence) RunFinished(runID, attempt string) bool {
	a, err := parseAttempt(attempt)
	if err != nil {
		return false
	}
	for _, f := range e.facts {
		if f.at >= e.until {
			break
		}
		if f.runID != runID {
			continue
		}
		if (f.kind == factTerminal && f.attempt == a) || (f.kind == factAttempt && f.attempt > a) {
			return true
		}
	}
	return false
}

func (e evidence) JobCompleted(jobID string) bool {
	for _, f := range e.facts {
		if f.at >= e.until {
			break
		}
		if f.kind == factJob && f.jobID == jobID {
			return true
		}
	}
	return false
}

var errAttempt = errors.New("not a run attempt")

func parseAttempt(s string) (uint64, error) {
	if s == "" || s[0] == '0' {
		return 0, errAttempt
	}
	var n uint64
	for _, c := range s {
		if c < '0' || c > '9' || n > math.MaxUint64/10-9 {
			return 0, errAttempt
		}
		n = n*10 + uint64(c-'0')
	}
	return n, nil
}

// snapshot freezes the history for a check: writes still in flight become
// unknown, answered at the check's logical time.
func (r *Recorder) snapshot() ([]*op, map[string]*tracked, int64) {
	now := r.Now()
	wall := r.clk.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	facts := append([]fact(nil), r.facts...)
	sort.Slice(facts, func(a, b int) bool { return facts[a].at < facts[b].at })
	ops := make([]*op, 0, len(r.ops))
	for _, o := range r.ops {
		c := *o
		if !c.done {
			c.ret, c.at, c.outcome = now, wall, Unknown
		}
		c.evidence = evidence{facts: facts, until: c.ret}
		ops = append(ops, &c)
	}
	files := make(map[string]*tracked, len(r.files))
	for k, v := range r.files {
		files[k] = v
	}
	return ops, files, now
}
