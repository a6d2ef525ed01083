package histgen

import (
	"container/heap"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/store"
)

// The generated organization.
const (
	Owner          = "example-org"
	Repo           = "build-lock"
	Branch         = store.DefaultBranch
	Lock           = "unity-seats"
	StatePath      = "locks/" + Lock + ".json"
	ConfigPath     = "locks/" + Lock + ".config.json"
	ServerURL      = "https://github.com"
	WriterSlug     = "build-lock-writer"
	WriterLogin    = WriterSlug + "[bot]"
	OperatorLogin  = "octo-operator"
	writerAppID    = 5150
	readerToken    = "ghs_" + "history_reader_000000000000000000000"
	operatorToken  = "ghp_" + "history_operator_00000000000000000000"
	intruderToken  = "ghp_" + "history_intruder_00000000000000000000"
	IntruderLogin  = "mallory"
	leaseDuration  = 240 * time.Minute
	runTerminalLag = time.Minute
)

// Options shape one generated history. Zero values take the defaults noted.
type Options struct {
	Seed uint64
	// Jobs is the number of jobs (default 40).
	Jobs int
	// Seats is maxHolders (default 2).
	Seats int
	// Runners (default 6) and Repositories (default 3) the jobs spread over.
	Runners, Repositories int
	// Start is the first moment (default 2026-11-02T08:00:00Z), whole seconds.
	Start time.Time
	// Interarrival is the mean time between job arrivals (exponential,
	// whole seconds, default 4 minutes).
	Interarrival time.Duration
	// HoldMin and HoldMax bound the hold times (default 3 to 15 minutes).
	HoldMin, HoldMax time.Duration
	// CooldownSeconds is releaseCooldownSeconds (default 0).
	CooldownSeconds int
	// UnsafeEvery makes every k-th release unproven: a quarantine the
	// operator recovers after RecoverAfter (0: never).
	UnsafeEvery int
	// DeadEvery makes every k-th job die holding its seat: the reaper
	// quarantines it once its run ended (0: never).
	DeadEvery int
	// GiveUpAfter makes a waiter leave the queue (an acquire timeout) after
	// this long (0: never).
	GiveUpAfter time.Duration
	// IncidentJob is the 1-based job whose release reports the account limit
	// (raising the incident the operator recovers after RecoverAfter); 0:
	// none. It never gives up or dies.
	IncidentJob int
	// RecoverAfter is how long the operator takes to recover (default 20m).
	RecoverAfter time.Duration
	// ReapEvery is the reaper's schedule (default 5 minutes).
	ReapEvery time.Duration
	// SeatsChangeAt raises maxHolders by one when that many jobs have
	// arrived (a config commit on the default branch); 0: never.
	SeatsChangeAt int
	// NamedSeats (issue 25), when set, names the lock's seats (their count
	// replaces Seats; not with SeatsChangeAt). Job i asks for the label
	// set JobLabels[i % len] ("" or none: any seat).
	NamedSeats []lockstate.SeatConfig
	JobLabels  []string
}

func (o *Options) defaults() {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.Jobs, 40)
	if len(o.NamedSeats) > 0 {
		o.Seats = len(o.NamedSeats)
	}
	def(&o.Seats, 2)
	def(&o.Runners, 6)
	def(&o.Repositories, 3)
	if o.Start.IsZero() {
		o.Start = time.Date(2026, 11, 2, 8, 0, 0, 0, time.UTC)
	}
	o.Start = o.Start.Truncate(time.Second)
	if o.Interarrival <= 0 {
		o.Interarrival = 4 * time.Minute
	}
	if o.HoldMin <= 0 {
		o.HoldMin = 3 * time.Minute
	}
	if o.HoldMax < o.HoldMin {
		o.HoldMax = max(o.HoldMin, 15*time.Minute)
	}
	if o.RecoverAfter <= 0 {
		o.RecoverAfter = 20 * time.Minute
	}
	if o.ReapEvery <= 0 {
		o.ReapEvery = 5 * time.Minute
	}
}

// JobTruth is what happened to one job.
type JobTruth struct {
	HolderID   string
	Repository string
	Runner     string
	Arrival    time.Time
	Admitted   time.Time // zero: never admitted
	Released   time.Time // zero: still holding at the end
	Dead       bool
	GaveUp     bool
	// Left is when a job that gave up removed its queue entry.
	Left time.Time
}

// Truth is the generator's own account of the history.
type Truth struct {
	// Commits counts the state file's commits (the bootstrap included).
	Commits int
	Jobs    []JobTruth
	// Admissions, Joins, GaveUp, ReaperQuarantines, Recoveries, Reclaims,
	// Incidents and IncidentRecoveries count what the generator wrote.
	Admissions, Joins, GaveUp, ReaperQuarantines, Recoveries, Reclaims, Incidents, IncidentRecoveries int
	// Seats is maxHolders at the end; SeatChanges the times maxHolders
	// changed (with the new value), for utilization.
	Seats       int
	SeatChanges []SeatChange
	// End is the last event.
	End time.Time
}

// SeatChange is a config commit that changed maxHolders.
type SeatChange struct {
	At    time.Time
	Seats int
}

// Waits returns admitted − arrival of every admitted job.
func (t *Truth) Waits() []time.Duration {
	var out []time.Duration
	for _, j := range t.Jobs {
		if !j.Admitted.IsZero() {
			out = append(out, j.Admitted.Sub(j.Arrival))
		}
	}
	return out
}

// GaveUpWaits are the waits of the jobs that gave up: from their arrival
// until they removed their queue entry.
func (t *Truth) GaveUpWaits() []time.Duration {
	var out []time.Duration
	for _, j := range t.Jobs {
		if j.GaveUp && !j.Left.IsZero() && j.Left.After(j.Arrival) {
			out = append(out, j.Left.Sub(j.Arrival))
		}
	}
	return out
}

// Utilization is the holders' seat-time over capacity-time in [from, to],
// from the jobs' own admission and release times and the seat schedule
// (independently of any state document).
func (t *Truth) Utilization(from, to time.Time, startSeats int) float64 {
	var busy float64
	for _, j := range t.Jobs {
		if j.Admitted.IsZero() {
			continue
		}
		a, b := j.Admitted, j.Released
		if b.IsZero() || b.After(to) {
			b = to
		}
		if a.Before(from) {
			a = from
		}
		if b.After(a) {
			busy += b.Sub(a).Seconds()
		}
	}
	var capacity float64
	seats, at := startSeats, from
	for _, c := range t.SeatChanges {
		if c.At.After(at) && c.At.Before(to) {
			capacity += float64(seats) * c.At.Sub(at).Seconds()
			at = c.At
		}
		seats = c.Seats
	}
	capacity += float64(seats) * to.Sub(at).Seconds()
	if capacity == 0 {
		return 0
	}
	return busy / capacity
}

// World is the emulated organization a history is generated in.
type World struct {
	Emulator *emulator.Emulator
	Clock    *clock.Fake
	opts     Options
	key      *rsa.PrivateKey
}

var (
	keyOnce sync.Once
	genKey  *rsa.PrivateKey
	keyErr  error
)

// New builds the organization: the lock repository with the writer App
// installed on it, a reader token (contents: read, a high rate limit so a
// benchmark is not throttled), an operator and an intruder account.
func New(o Options) (*World, error) {
	o.defaults()
	if len(o.NamedSeats) > 0 && o.SeatsChangeAt > 0 {
		return nil, errors.New("histgen: NamedSeats and SeatsChangeAt cannot be combined")
	}
	keyOnce.Do(func() { genKey, keyErr = rsa.GenerateKey(rand.Reader, 2048) })
	if keyErr != nil {
		return nil, keyErr
	}
	clk := clock.NewFake(o.Start)
	em := emulator.New(emulator.Options{Clock: clk, Seed: int64(o.Seed), ServerURL: ServerURL,
		InstallationRateLimit: 1 << 30, LogLimit: 1 << 20})
	em.AddOwner(Owner, 7001, true)
	em.AddRepo(Owner, Repo, 7002, "main")
	em.AddApp(writerAppID, &genKey.PublicKey)
	if err := em.SetAppSlug(writerAppID, WriterSlug); err != nil {
		return nil, err
	}
	em.InstallApp(writerAppID, Owner, []string{Repo})
	em.AddToken(readerToken, emulator.TokenScope{Label: "history-reader", Repos: []string{Owner + "/" + Repo},
		Permissions: map[string]string{"contents": "read", "issues": "write"}, RateLimit: 1 << 30})
	em.AddToken(operatorToken, emulator.TokenScope{Label: "operator", Repos: []string{Owner + "/" + Repo},
		Permissions: map[string]string{"contents": "write"}, BotLogin: OperatorLogin, BotID: 7101, RateLimit: 1 << 30})
	em.AddToken(intruderToken, emulator.TokenScope{Label: "intruder", Repos: []string{Owner + "/" + Repo},
		Permissions: map[string]string{"contents": "write"}, BotLogin: IntruderLogin, BotID: 7102, RateLimit: 1 << 30})
	return &World{Emulator: em, Clock: clk, opts: o, key: genKey}, nil
}

// ReaderToken is a token with contents: read on the lock repository.
func (w *World) ReaderToken() string { return readerToken }

// OperatorToken is the operator's token (contents: write).
func (w *World) OperatorToken() string { return operatorToken }

// IntruderToken is a token of an account that is neither writer nor
// operator (contents: write), for planted faults.
func (w *World) IntruderToken() string { return intruderToken }

// WriterPEM is the writer App's private key.
func (w *World) WriterPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(w.key)})
}

// WriterAppID is the writer App's id.
func (w *World) WriterAppID() int64 { return writerAppID }

// Store returns a store of the lock that writes with the writer App
// (writer) or with token.
func (w *World) Store(ctx context.Context, token string) (*store.Store, error) {
	cfg := ghclient.Config{APIURL: "https://api.github.com/", Transport: w.Emulator.Transport(), Clock: w.Clock, Jitter: func() float64 { return 0.5 }}
	if token == "" {
		cfg.AppID, cfg.PrivateKey, cfg.InstallationRepository = writerAppID, w.WriterPEM(), Owner+"/"+Repo
		cfg.TokenRepositories = []string{Repo}
	} else {
		cfg.Token = token
	}
	c, err := ghclient.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return store.New(store.Options{Client: c, Owner: Owner, Repo: Repo, Branch: Branch, Lock: Lock, ServerURL: ServerURL, Clock: w.Clock})
}

// Config returns the lock config with seats seats.
func (w *World) Config(seats int) lockstate.Config {
	c := lockstate.Config{MaxHolders: seats, RunnerSerialization: true, ResourceLifecycle: true, AccountHealth: true,
		FencedAdmission: true, MaxOvertakes: 2, ReleaseCooldownSeconds: w.opts.CooldownSeconds}
	if len(w.opts.NamedSeats) > 0 {
		c.Seats, c.MaxHolders = lockstate.NewSeatList(w.opts.NamedSeats), len(w.opts.NamedSeats)
	}
	return c
}

func configJSON(c lockstate.Config) []byte {
	seats := ""
	if list := c.Seats.List(); len(list) > 0 {
		parts := make([]string, len(list))
		for i, sc := range list {
			parts[i] = fmt.Sprintf(`{"name":%q,"labels":["%s"]}`, sc.Name, strings.Join(sc.Labels, `","`))
		}
		seats = `,"seats":[` + strings.Join(parts, ",") + `]`
	}
	return fmt.Appendf(nil, `{"maxHolders":%d,"runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true,"fencedAdmission":true,"maxOvertakes":%d,"releaseCooldownSeconds":%d%s}`+"\n",
		c.MaxHolders, c.MaxOvertakes, c.ReleaseCooldownSeconds, seats)
}

// labels returns job i's seat-label request.
func (g *gen) labels(i int) []string {
	if len(g.o.JobLabels) == 0 || g.o.JobLabels[i%len(g.o.JobLabels)] == "" {
		return nil
	}
	return strings.Split(g.o.JobLabels[i%len(g.o.JobLabels)], ",")
}

type event struct {
	at   time.Time
	seq  int
	kind int
	job  int
}

const (
	evArrive = iota
	evRelease
	evGiveUp
	evReap
	evRecover
	evRecoverIncident
	evWake
)

type events []event

func (h events) Len() int { return len(h) }
func (h events) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h events) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *events) Push(x any)   { *h = append(*h, x.(event)) }
func (h *events) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type gen struct {
	w        *World
	o        Options
	ctx      context.Context
	rng      *mrand.Rand
	writer   *store.Store
	operator *store.Store
	lastBy   *store.Store
	cfg      lockstate.Config
	ev       events
	seq      int
	truth    *Truth
	ids      []lockstate.Identity
	holds    []time.Duration
	byHolder map[string]int
	releases int
	resSeq   int
	// pending quarantines the operator will recover (reservation → due).
	quarantines map[string]bool
	wakes       map[time.Time]bool
	state       *lockstate.State
}

// Run generates the history and returns its ground truth.
func (w *World) Run(ctx context.Context) (*Truth, error) {
	o := w.opts
	g := &gen{w: w, o: o, ctx: ctx, rng: mrand.New(mrand.NewPCG(o.Seed, 0x4157)), truth: &Truth{Seats: o.Seats},
		byHolder: map[string]int{}, quarantines: map[string]bool{}, wakes: map[time.Time]bool{}}
	var err error
	if g.writer, err = w.Store(ctx, ""); err != nil {
		return nil, err
	}
	if g.operator, err = w.Store(ctx, operatorToken); err != nil {
		return nil, err
	}
	g.cfg = w.Config(o.Seats)
	if _, err := w.Emulator.PutFile(Owner, Repo, "main", ConfigPath, configJSON(g.cfg)); err != nil {
		return nil, err
	}
	if err := w.Emulator.CreateBranch(Owner, Repo, Branch, "main"); err != nil {
		return nil, err
	}
	// The operator bootstraps an empty schema-5 lock; the first acquire
	// migrates it to schema 6 (fencedAdmission).
	w.Clock.Advance(time.Second)
	if err := g.write(g.operator, "Bootstrap "+Lock, func(cur *lockstate.State) error {
		cur.SchemaVersion, cur.Reservations, cur.ActiveIncident = 5, []lockstate.Reservation{}, nil
		return nil
	}); err != nil {
		return nil, err
	}
	g.plan()
	for g.ev.Len() > 0 {
		e := heap.Pop(&g.ev).(event)
		if e.at.After(w.Clock.Now()) {
			w.Clock.Set(e.at)
		}
		if err := g.handle(e); err != nil {
			return nil, fmt.Errorf("histgen: %s at %s: %w", []string{"arrival", "release", "give-up", "reap", "recover", "recover-incident", "wake"}[e.kind], e.at.Format(time.RFC3339), err)
		}
		if err := g.pollAll(); err != nil {
			return nil, err
		}
		if st := g.current(); st != nil {
			if next, ok := lockstate.NextCooldownExpiry(st, w.Clock.Now()); ok && !g.wakes[next] {
				g.wakes[next] = true
				g.push(next, evWake, -1)
			}
		}
		g.truth.End = w.Clock.Now()
	}
	return g.truth, nil
}

func (g *gen) push(at time.Time, kind, job int) {
	g.seq++
	heap.Push(&g.ev, event{at: at, seq: g.seq, kind: kind, job: job})
}

func (g *gen) seconds(d time.Duration) time.Duration { return max(d.Round(time.Second), time.Second) }

// plan schedules every arrival (and the reaper's ticks while jobs run).
func (g *gen) plan() {
	at := g.w.Clock.Now()
	for i := range g.o.Jobs {
		at = at.Add(g.seconds(time.Duration(g.rng.ExpFloat64() * float64(g.o.Interarrival))))
		repo := fmt.Sprintf("%s/game-%c", Owner, 'a'+i%g.o.Repositories)
		runID := strconv.Itoa(900000 + i)
		id := lockstate.Identity{
			HolderID: repo + ":" + runID + ":build:default", Repository: repo, Workflow: "Unity build", Job: "build",
			RunID: runID, RunAttempt: "1", RunURL: ServerURL + "/" + repo + "/actions/runs/" + runID,
			RunnerID: fmt.Sprintf("unity-runner-%02d", g.rng.IntN(g.o.Runners)+1), JobID: strconv.Itoa(5000000 + i), QueuedAt: at,
		}
		hold := g.o.HoldMin
		if span := g.o.HoldMax - g.o.HoldMin; span > 0 {
			hold += time.Duration(g.rng.Int64N(int64(span)))
		}
		g.ids = append(g.ids, id)
		g.holds = append(g.holds, g.seconds(hold))
		g.byHolder[id.HolderID] = i
		g.truth.Jobs = append(g.truth.Jobs, JobTruth{HolderID: id.HolderID, Repository: repo, Runner: id.RunnerID, Arrival: at,
			Dead: g.o.DeadEvery > 0 && (i+1)%g.o.DeadEvery == 0 && i+1 != g.o.IncidentJob})
		g.push(at, evArrive, i)
	}
	if g.o.DeadEvery > 0 {
		for t := g.w.Clock.Now().Add(g.o.ReapEvery); !t.After(at.Add(48 * time.Hour)); t = t.Add(g.o.ReapEvery) {
			g.push(t, evReap, -1)
		}
	}
}

// current is the newest state the generator wrote.
func (g *gen) current() *lockstate.State { return g.state }

// write applies fn with st (reading first when the other account wrote
// last, so no compare-and-swap ever conflicts).
func (g *gen) write(st *store.Store, message string, fn func(*lockstate.State) error) error {
	if g.lastBy != nil && g.lastBy != st {
		if _, err := st.Load(g.ctx); err != nil {
			return err
		}
	}
	return g.writeMsg(st, func(cur *lockstate.State) (string, error) { return message, fn(cur) })
}

func (g *gen) now() time.Time { return g.w.Clock.Now() }

// acquire is one poll of job i; it reports an admission.
func (g *gen) acquire(i int) (bool, error) {
	var dec lockstate.AcquireDecision
	var at time.Time
	joined := false
	err := g.writeMsg(g.writer, func(cur *lockstate.State) (string, error) {
		wasQueued := lockstate.QueuePosition(cur, g.ids[i].HolderID) > 0
		// The admission happens at the transition's clock (its
		// acquiredAt), not when the write's answer arrives (the client
		// spaces writes, so the clock may have moved since).
		at = g.now()
		next, d, err := lockstate.Acquire(cur, g.cfg, lockstate.AcquireRequest{Identity: g.ids[i], Lease: leaseDuration, Labels: g.labels(i)}, at)
		if err != nil {
			return "", err
		}
		dec = d
		if !d.Changed {
			return "", store.ErrNoChange
		}
		joined = !wasQueued && d.Outcome == lockstate.OutcomeQueued
		*cur = *next
		if d.Outcome == lockstate.OutcomeAdmitted {
			return "Acquire " + Lock, nil
		}
		return "Queue for " + Lock, nil
	})
	if err != nil {
		return false, err
	}
	if joined {
		g.truth.Joins++
	}
	if dec.Outcome != lockstate.OutcomeAdmitted {
		return false, nil
	}
	j := &g.truth.Jobs[i]
	j.Admitted = at
	g.truth.Admissions++
	if dec.QuarantineRecovered {
		g.truth.Reclaims++
		delete(g.quarantines, dec.ConsumedQuarantine.ReservationID)
	}
	if j.Dead {
		g.truth.Jobs[i].Released = time.Time{}
	} else {
		g.push(g.now().Add(g.holds[i]), evRelease, i)
	}
	return true, nil
}

func (g *gen) writeMsg(st *store.Store, fn func(*lockstate.State) (string, error)) error {
	if g.lastBy != nil && g.lastBy != st {
		if _, err := st.Load(g.ctx); err != nil {
			return err
		}
	}
	res, err := st.UpdateMessage(g.ctx, fn)
	if err != nil {
		return err
	}
	if res.Written {
		g.lastBy = st
		g.truth.Commits++
	}
	g.state = res.State
	return nil
}

func (g *gen) queue() []lockstate.Entry {
	if g.state == nil {
		return nil
	}
	return g.state.Queue
}

// pollAll lets every waiter poll in queue order until nobody more is
// admitted.
func (g *gen) pollAll() error {
	for {
		progress := false
		if g.state == nil {
			return nil
		}
		pruned, _ := lockstate.PruneExpiredCooldowns(g.state, g.now())
		free := lockstate.FreeSlots(pruned, g.cfg)
		for _, e := range g.queue() {
			i, ok := g.byHolder[e.HolderID]
			// Only a waiter the core ranks admissible polls (a reclaim
			// ranks 0 without a free seat); the others would write nothing.
			// With named seats, labels decide who a free seat fits: every
			// waiter polls.
			if rank := lockstate.AdmissibleRank(pruned, g.cfg, e.HolderID); !ok || (len(g.o.NamedSeats) == 0 && (rank < 0 || (rank > 0 && rank >= free))) {
				continue
			}
			admitted, err := g.acquire(i)
			if err != nil {
				return err
			}
			if admitted {
				progress = true
				break
			}
		}
		if !progress {
			return nil
		}
	}
}

func (g *gen) handle(e event) error {
	switch e.kind {
	case evArrive:
		if g.o.SeatsChangeAt > 0 && e.job+1 == g.o.SeatsChangeAt {
			g.cfg = g.w.Config(g.cfg.MaxHolders + 1)
			if _, err := g.w.Emulator.PutFile(Owner, Repo, "main", ConfigPath, configJSON(g.cfg)); err != nil {
				return err
			}
			g.truth.Seats = g.cfg.MaxHolders
			g.truth.SeatChanges = append(g.truth.SeatChanges, SeatChange{At: g.now(), Seats: g.cfg.MaxHolders})
		}
		if g.o.GiveUpAfter > 0 && e.job+1 != g.o.IncidentJob {
			// The incident job waits as long as it takes: its release
			// raises the incident.
			g.push(g.now().Add(g.o.GiveUpAfter), evGiveUp, e.job)
		}
		_, err := g.acquire(e.job)
		return err
	case evRelease:
		return g.release(e.job)
	case evGiveUp:
		if !g.truth.Jobs[e.job].Admitted.IsZero() || lockstate.QueuePosition(g.current(), g.ids[e.job].HolderID) == 0 {
			return nil
		}
		id := g.ids[e.job]
		before := g.truth.Commits
		if err := g.write(g.writer, "Release "+Lock, func(cur *lockstate.State) error {
			next, d, err := lockstate.Cleanup(cur, g.cfg, lockstate.CleanupRequest{HolderID: id.HolderID, RunAttempt: id.RunAttempt, RunnerID: id.RunnerID,
				ReservationID: g.nextRes()}, g.now())
			if err != nil {
				return err
			}
			if !d.Changed {
				return store.ErrNoChange
			}
			*cur = *next
			return nil
		}); err != nil {
			return err
		}
		if g.truth.Commits > before {
			g.truth.GaveUp++
			g.truth.Jobs[e.job].GaveUp = true
			g.truth.Jobs[e.job].Left = g.now()
		}
		return nil
	case evReap:
		return g.reap()
	case evRecover:
		return g.recoverQuarantines()
	case evRecoverIncident:
		st := g.current()
		if st == nil || st.ActiveIncident == nil {
			return nil
		}
		incID := st.ActiveIncident.IncidentID
		resID := g.nextRes()
		if err := g.write(g.operator, "Recover global incident "+incID, func(cur *lockstate.State) error {
			next, _, err := lockstate.RecoverIncident(cur, g.cfg, incID, g.now(), resID)
			if err != nil {
				return err
			}
			*cur = *next
			return nil
		}); err != nil {
			return err
		}
		g.truth.IncidentRecoveries++
		return nil
	}
	return nil
}

func (g *gen) nextRes() string {
	g.resSeq++
	return fmt.Sprintf("00000000-0000-4000-8000-%012d", g.resSeq)
}

func (g *gen) release(i int) error {
	g.releases++
	id := g.ids[i]
	report := lockstate.Report{Status: lockstate.StatusConfirmed, Health: lockstate.HealthHealthy, Reason: lockstate.ReasonCleanupConfirmed}
	unsafe := g.o.UnsafeEvery > 0 && g.releases%g.o.UnsafeEvery == 0
	blocked := g.o.IncidentJob == i+1
	switch {
	case blocked:
		report = lockstate.Report{Status: lockstate.StatusUnknown, Health: lockstate.HealthBlocked, Reason: lockstate.ReasonAccountLimit}
	case unsafe:
		report = lockstate.Report{Status: lockstate.StatusUnknown, Health: lockstate.HealthHealthy, Reason: "return-timeout"}
	}
	resID := g.nextRes()
	var dec lockstate.CleanupDecision
	if err := g.write(g.writer, "Release "+Lock, func(cur *lockstate.State) error {
		next, d, err := lockstate.Cleanup(cur, g.cfg, lockstate.CleanupRequest{HolderID: id.HolderID, RunAttempt: id.RunAttempt, RunnerID: id.RunnerID,
			Report: report, ReservationID: resID, Identity: id, ServerURL: ServerURL}, g.now())
		if err != nil {
			return err
		}
		dec = d
		if !d.Changed {
			return store.ErrNoChange
		}
		*cur = *next
		return nil
	}); err != nil {
		return err
	}
	g.truth.Jobs[i].Released = g.now()
	if blocked {
		g.truth.Incidents++
		g.push(g.now().Add(g.o.RecoverAfter), evRecoverIncident, -1)
	}
	if dec.Reservation != nil && dec.Reservation.State == lockstate.ReservationQuarantine {
		g.quarantines[dec.Reservation.ReservationID] = true
		g.push(g.now().Add(g.o.RecoverAfter), evRecover, -1)
	}
	return nil
}

// reap quarantines every dead holder whose run has ended.
func (g *gen) reap() error {
	st := g.current()
	if st == nil {
		return nil
	}
	var req lockstate.ReapRequest
	var reaped []int
	for _, h := range st.Holders {
		i, ok := g.byHolder[h.HolderID]
		if !ok || !g.truth.Jobs[i].Dead {
			continue
		}
		died := g.truth.Jobs[i].Admitted.Add(g.holds[i])
		if g.now().Before(died.Add(runTerminalLag)) {
			continue
		}
		req.Holders = append(req.Holders, lockstate.HolderEvidence{Holder: h, ReservationID: g.nextRes(), Evidence: lockstate.Evidence{
			Run: lockstate.RunEvidence{Known: true, Status: "completed", Conclusion: "failure", RunAttempt: h.RunAttempt}}})
		reaped = append(reaped, i)
	}
	if len(req.Holders) == 0 {
		return nil
	}
	var dec lockstate.ReapDecision
	if err := g.write(g.writer, "Reap capacity-critical stale state for "+Lock, func(cur *lockstate.State) error {
		next, d, err := lockstate.Reap(cur, g.cfg, req, g.now())
		if err != nil {
			return err
		}
		dec = d
		if !d.Changed {
			return store.ErrNoChange
		}
		*cur = *next
		return nil
	}); err != nil {
		return err
	}
	for _, it := range dec.Applied() {
		if it.Reservation != nil {
			g.quarantines[it.Reservation.ReservationID] = true
		}
	}
	for _, i := range reaped {
		g.truth.Jobs[i].Released = g.now()
		g.truth.ReaperQuarantines++
	}
	g.push(g.now().Add(g.o.RecoverAfter), evRecover, -1)
	return nil
}

// recoverQuarantines is the operator recovering every quarantine still in
// place (one write each).
func (g *gen) recoverQuarantines() error {
	st := g.current()
	if st == nil {
		return nil
	}
	var ids []string
	for _, r := range st.Reservations {
		if r.State == lockstate.ReservationQuarantine && g.quarantines[r.ReservationID] {
			ids = append(ids, r.ReservationID)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		if err := g.write(g.operator, "Recover reservation "+id, func(cur *lockstate.State) error {
			next, _, err := lockstate.RecoverQuarantine(cur, g.cfg, id, g.now())
			if err != nil {
				return err
			}
			*cur = *next
			return nil
		}); err != nil {
			return err
		}
		delete(g.quarantines, id)
		g.truth.Recoveries++
	}
	return nil
}
