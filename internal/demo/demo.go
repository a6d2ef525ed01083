// Package demo runs the main job of this project on the embedded GitHub
// emulator: many concurrent jobs from several repositories and runners share
// a lock with a few seats, through the real store, GitHub client and
// lock-state transitions over real HTTP. It is what `buildlock demo` and
// `make demo` run, and the workload `make bench` measures.
package demo

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/checker"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// Defaults for Options, sized so the demo finishes in well under a minute.
const (
	DefaultJobs          = 12
	DefaultRepositories  = 3
	DefaultRunners       = 4
	DefaultMaxHolders    = 2
	DefaultPoll          = 250 * time.Millisecond
	DefaultHoldMin       = 400 * time.Millisecond
	DefaultHoldMax       = 1200 * time.Millisecond
	DefaultArrivalSpread = 2 * time.Second
	DefaultDeadJobs      = 1
	DefaultTimeout       = 90 * time.Second
	DefaultReapEvery     = time.Second
)

// Options scale the demo.
type Options struct {
	Jobs, Repositories, Runners, MaxHolders int
	// Poll is the acquire poll interval (the production default is 15 s; the
	// demo compresses time).
	Poll time.Duration
	// HoldMin and HoldMax bound each job's random hold time.
	HoldMin, HoldMax time.Duration
	// ArrivalSpread spreads job arrivals uniformly over this window.
	ArrivalSpread time.Duration
	// Latency is added by the emulator to every API request.
	Latency time.Duration
	// DeadJobs is how many jobs die while holding their seat (never release).
	DeadJobs int
	// Seed makes arrivals, hold times and jitter reproducible (0 = random).
	Seed uint64
	// Timeout bounds the whole run.
	Timeout time.Duration
	// ReapEvery is how often the scheduled reaper runs (GitHub's cron asks
	// for every 5 minutes; the demo compresses it).
	ReapEvery time.Duration
	// Quiet suppresses the live progress lines.
	Quiet bool
}

func (o *Options) defaults() error {
	set := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	set(&o.Jobs, DefaultJobs)
	set(&o.Repositories, DefaultRepositories)
	set(&o.Runners, DefaultRunners)
	set(&o.MaxHolders, DefaultMaxHolders)
	if o.Poll == 0 {
		o.Poll = DefaultPoll
	}
	if o.HoldMin == 0 {
		o.HoldMin = DefaultHoldMin
	}
	if o.HoldMax == 0 {
		o.HoldMax = DefaultHoldMax
	}
	if o.ArrivalSpread == 0 {
		o.ArrivalSpread = DefaultArrivalSpread
	}
	if o.DeadJobs < 0 {
		o.DeadJobs = 0
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.ReapEvery == 0 {
		o.ReapEvery = DefaultReapEvery
	}
	if o.Seed == 0 {
		o.Seed = mrand.Uint64()
	}
	switch {
	case o.Jobs < 1 || o.Repositories < 1 || o.Runners < 1:
		return errors.New("demo: jobs, repositories and runners must be at least 1")
	case o.MaxHolders < 1 || o.MaxHolders > 64:
		return errors.New("demo: max holders must be between 1 and 64")
	case o.HoldMax < o.HoldMin:
		return errors.New("demo: hold-max must not be less than hold-min")
	case o.DeadJobs >= o.Runners || o.DeadJobs >= o.Jobs:
		return errors.New("demo: dead jobs must leave at least one runner and one job alive")
	case o.Poll <= 0:
		return errors.New("demo: poll interval must be positive")
	}
	return nil
}

const (
	owner   = "example-org"
	ownerID = 90001
	lockRep = "build-lock"
	lockID  = 90002
	appID   = 4242
	lock    = "demo-seats"
)

// Run executes the demo and writes progress to out (unless Quiet). It
// returns the summary, whose OK method tells whether every invariant held.
func Run(ctx context.Context, opts Options, out io.Writer) (*Summary, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()

	// GitHub's secondary rate limits are enforced, as in make bench and
	// the simulation: the demo shows the suite inside them (the summary's
	// secondary-limit answers must be 0).
	// GitHub's replica lag and branch-head conflicts are on too, compressed
	// like the demo's time (fidelity.go).
	em := emulator.New(fidelity(emulator.Options{Clock: clock.Real{}, Seed: int64(opts.Seed), SecondaryLimits: emulator.GitHubSecondaryLimits()}, opts))
	em.AddOwner(owner, ownerID, true)
	em.AddRepo(owner, lockRep, lockID, "main")
	if err := seedLock(em, opts.MaxHolders); err != nil {
		return nil, err
	}
	repos := make([]string, opts.Repositories)
	repoIDs := map[string]int64{}
	repoTokens := map[string]string{}
	for i := range repos {
		repos[i] = fmt.Sprintf("game-%c", 'a'+i%26)
		if i >= 26 {
			repos[i] = fmt.Sprintf("game-%d", i)
		}
		repoIDs[repos[i]] = int64(lockID + 1 + i)
		em.AddRepo(owner, repos[i], repoIDs[repos[i]], "main")
		// Each repository's workflow token (GITHUB_TOKEN), which acquire
		// uses to resolve its exact numeric job id.
		repoTokens[repos[i]] = randomSecret("ghs_demo")
		em.AddToken(repoTokens[repos[i]], emulator.TokenScope{Label: repos[i] + "-workflow", Repos: []string{owner + "/" + repos[i]},
			Permissions: map[string]string{"actions": "read", "contents": "read"}})
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("generate app key: %w", err)
	}
	em.AddApp(appID, &key.PublicKey)
	em.InstallApp(appID, owner, nil)
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if opts.Latency > 0 {
		em.AddFault(emulator.Fault{Kind: emulator.FaultLatency, Latency: opts.Latency})
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	srvCtx, stopServer := context.WithCancel(context.Background())
	srvDone := make(chan error, 1)
	go func() { srvDone <- em.Serve(srvCtx, l) }()
	defer func() {
		stopServer()
		<-srvDone
	}()
	apiURL := "http://" + l.Addr().String() + "/"

	dir, err := os.MkdirTemp("", "buildlock-demo-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	w := newWorld(opts, em, apiURL, keyPEM, repos, out)
	w.dir, w.repoIDs, w.repoTokens = dir, repoIDs, repoTokens
	for _, j := range w.jobs {
		j.repoID = repoIDs[j.repo]
	}
	settle(opts)
	start := time.Now()
	w.start = start
	if !opts.Quiet {
		fmt.Fprintf(out, "build-lock demo: %d jobs from %d repositories on %d runners share lock %q with %d seats (seed %d)\n",
			opts.Jobs, opts.Repositories, opts.Runners, lock, opts.MaxHolders, opts.Seed)
		fmt.Fprintf(out, "emulated GitHub API at %s; poll %v; hold %v-%v; %d job(s) will die holding a seat\n\n",
			apiURL, opts.Poll, opts.HoldMin, opts.HoldMax, opts.DeadJobs)
	}
	runErr := w.run(ctx)
	elapsed := time.Since(start)

	var versions []checker.Version
	for _, v := range em.History(owner, lockRep, "lock-state", "locks/"+lock+".json") {
		versions = append(versions, checker.Version{Time: v.Time, Content: v.Content, Message: v.Message})
	}
	rep := checker.Check(versions, checker.Input{Lock: lock, MaxHolders: opts.MaxHolders, Removals: w.removals()})
	sum := summarize(opts, w, rep, em.Metrics(), elapsed)
	sum.StaleRecovery = w.staleRecoveries(versions)
	// The demo ends by verifying its own lock-state history.
	sum.History = verifyHistory(ctx, em, apiURL)
	if !opts.Quiet {
		fmt.Fprintln(out)
	}
	return sum, runErr
}

// world is the shared bookkeeping of one demo run.
type world struct {
	opts   Options
	em     *emulator.Emulator
	apiURL string
	keyPEM []byte
	repos  []string
	out    io.Writer
	start  time.Time

	runners    chan string // free runners; a runner runs one job at a time
	dir        string      // step files (GITHUB_OUTPUT, GITHUB_STATE, ...)
	repoIDs    map[string]int64
	repoTokens map[string]string
	transport  http.RoundTripper

	mu      sync.Mutex
	rng     *mrand.Rand
	jobs    []*job
	removed []checker.Removal
	// daggerShown: the † legend was printed (once, on its first use).
	daggerShown bool
}

func newWorld(opts Options, em *emulator.Emulator, apiURL string, keyPEM []byte, repos []string, out io.Writer) *world {
	w := &world{opts: opts, em: em, apiURL: apiURL, keyPEM: keyPEM, repos: repos, out: out,
		runners: make(chan string, opts.Runners), rng: mrand.New(mrand.NewPCG(opts.Seed, 0x9e3779b97f4a7c15)),
		transport: &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second}}
	for i := range opts.Runners {
		w.runners <- fmt.Sprintf("runner-%d", i+1)
	}
	dead := map[int]bool{}
	for len(dead) < opts.DeadJobs {
		// Never the first job, so the demo always shows a clean handoff first,
		// and within the first half, so later jobs run with the seat lost.
		dead[1+w.rng.IntN(max(opts.Jobs/2, 1))] = true
	}
	for i := range opts.Jobs {
		hold := opts.HoldMin
		if span := opts.HoldMax - opts.HoldMin; span > 0 {
			hold += time.Duration(w.rng.Int64N(int64(span)))
		}
		w.jobs = append(w.jobs, &job{
			name:    fmt.Sprintf("job-%02d", i+1),
			repo:    repos[i%len(repos)],
			arrival: time.Duration(w.rng.Int64N(int64(opts.ArrivalSpread) + 1)),
			hold:    hold,
			dies:    dead[i],
			seed:    w.rng.Uint64(),
			state:   "pending",
			log:     &actionio.SyncBuffer{},
		})
	}
	return w
}

func (w *world) run(ctx context.Context) error {
	reapCtx, stopReaper := context.WithCancel(ctx)
	reaperDone := make(chan struct{})
	go func() {
		defer close(reaperDone)
		w.reaperLoop(reapCtx)
	}()
	var wg sync.WaitGroup
	errs := make([]error, len(w.jobs))
	for i, j := range w.jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = w.runJob(ctx, j)
		}()
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
		case <-tick.C:
			w.status()
		}
	}
	stopReaper()
	<-reaperDone
	if w.deadHolderRemains() {
		// The last jobs finished before the next scheduled run: run the
		// reaper once more, as its schedule would, before the operator
		// looks at what is left.
		if err := w.reapOnce(ctx, 0); err != nil {
			errs = append(errs, err)
		}
	}
	if err := w.recoverLeftovers(ctx); err != nil {
		errs = append(errs, err)
	}
	w.status()
	return errors.Join(errs...)
}

// seedLock commits the lock config on the default branch and an empty state
// at schema 6 on the state branch: runner serialization, resource lifecycle
// (cooldowns and quarantines), account health and fencing tokens on, so the
// demo shows every protection. Releases are confirmed clean and the cooldown
// is 0, so a clean release frees its seat at once.
func seedLock(em *emulator.Emulator, maxHolders int) error {
	cfg := fmt.Sprintf(`{"maxHolders":%d,"runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true,`+
		`"fencedAdmission":true,"maxOvertakes":2,"releaseCooldownSeconds":0}`+"\n", maxHolders)
	if _, err := em.PutFile(owner, lockRep, "main", "locks/"+lock+".config.json", []byte(cfg)); err != nil {
		return fmt.Errorf("seed lock config: %w", err)
	}
	st := lockstate.Empty(lock)
	st.SchemaVersion = lockstate.FencedSchemaVersion
	st.Reservations = []lockstate.Reservation{}
	st.UpdatedAt = lockstate.FormatTime(time.Now())
	data, err := lockstate.Encode(st)
	if err != nil {
		return fmt.Errorf("seed lock state: %w", err)
	}
	if err := em.CreateBranch(owner, lockRep, "lock-state", "main"); err != nil {
		return fmt.Errorf("seed lock-state branch: %w", err)
	}
	if _, err := em.PutFile(owner, lockRep, "lock-state", "locks/"+lock+".json", data); err != nil {
		return fmt.Errorf("seed lock state: %w", err)
	}
	return nil
}

func (w *world) since() time.Duration { return time.Since(w.start).Round(10 * time.Millisecond) }

func (w *world) logf(format string, args ...any) {
	if w.opts.Quiet {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	fmt.Fprintf(w.out, "[+%6.2fs] %s\n", w.since().Seconds(), fmt.Sprintf(format, args...))
}

// status prints one line with the seats and the queue as the committed lock
// state has them (read straight from the emulator, not from the jobs).
func (w *world) status() {
	if w.opts.Quiet {
		return
	}
	st := w.latestState()
	names := w.namesByHolder()
	var seats, queue []string
	dagger := false
	if st != nil {
		for _, h := range st.Holders {
			s := names[h.HolderID] + "(" + h.RunnerID + ")"
			if w.isDead(h.HolderID) {
				s += "†"
				dagger = true
			}
			seats = append(seats, s)
		}
		for i, q := range st.Queue {
			queue = append(queue, fmt.Sprintf("%s#%d", names[q.HolderID], i+1))
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	legend := ""
	if dagger && !w.daggerShown {
		w.daggerShown = true
		legend = "  († = died holding this seat)"
	}
	fmt.Fprintf(w.out, "[+%6.2fs] seats %d/%d %v  queue %v%s\n", w.since().Seconds(), len(seats), w.opts.MaxHolders, seats, queue, legend)
}

// latestState decodes the newest committed state, or nil.
func (w *world) latestState() *lockstate.State {
	h := w.em.History(owner, lockRep, "lock-state", "locks/"+lock+".json")
	if len(h) == 0 || h[len(h)-1].Content == nil {
		return nil
	}
	st, err := lockstate.Decode(h[len(h)-1].Content, lockstate.DecodeOptions{Lock: lock})
	if err != nil {
		return nil
	}
	return st
}

func (w *world) namesByHolder() map[string]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := map[string]string{}
	for _, j := range w.jobs {
		if j.holderID != "" {
			m[j.holderID] = j.name
		}
	}
	return m
}

func (w *world) isDead(holderID string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, j := range w.jobs {
		if j.holderID == holderID {
			return j.state == "dead"
		}
	}
	return false
}

func (w *world) setState(j *job, state string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	j.state = state
}

// randomSecret returns prefix + 32 random hex characters (a demo token).
func randomSecret(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s_%x", prefix, b)
}

func (w *world) addRemoval(holderID string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.removed = append(w.removed, checker.Removal{HolderID: holderID, At: time.Now()})
}

func (w *world) removals() []checker.Removal {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]checker.Removal(nil), w.removed...)
}
