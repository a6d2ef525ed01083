package store

import (
	"bytes"
	"context"
	"crypto/sha1" //nolint:gosec // git blob object names are SHA-1 by definition, not a security primitive here
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"sync"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/plant"
)

// Defaults for Options. Each is the reference's value unless said otherwise.
const (
	// DefaultBranch is the branch that carries lock state (spec §2.1).
	DefaultBranch = "lock-state"
	// DefaultMaxRounds bounds the compare-and-swap rounds of one Update, the
	// reference's cleanupIdentity ceiling (spec §3.7).
	DefaultMaxRounds = 10
	// DefaultConflictDelay is the base sleep after a CAS conflict; the actual
	// sleep adds up to a third more of jitter so colliding writers spread out
	// (spec Appendix A: jitter(1000) = 1000–1332 ms).
	DefaultConflictDelay = time.Second
)

// ErrNoChange is returned by an Update mutation to say the state is already
// as it should be: Update then writes nothing.
var ErrNoChange = errors.New("store: no change")

// ErrTooManyConflicts is returned when every round of an Update lost the
// compare-and-swap race.
var ErrTooManyConflicts = errors.New("store: compare-and-swap conflicts exhausted the round budget")

// Options configures a Store.
type Options struct {
	// Client is the GitHub client holding a token with contents: write on the
	// lock repository.
	Client *ghclient.Client
	// Owner and Repo name the lock repository.
	Owner, Repo string
	// Branch is the state branch; default DefaultBranch.
	Branch string
	// Lock is the lock name; the state lives at locks/<Lock>.json.
	Lock string
	// ServerURL is the GitHub web origin used to validate incident run URLs
	// (GITHUB_SERVER_URL); default https://github.com.
	ServerURL string
	// Clock and Jitter drive conflict sleeps; defaults clock.Real and
	// math/rand/v2.
	Clock  clock.Clock
	Jitter func() float64
	// MaxRounds bounds CAS rounds per Update; default DefaultMaxRounds.
	MaxRounds int
	// ConflictDelay is the base conflict sleep; default DefaultConflictDelay.
	ConflictDelay time.Duration
	// Budget is the retry budget of every API call the store makes.
	Budget ghclient.Budget
	// BeforeWrite, when set, runs right before every attempt to send a
	// state write (each compare-and-swap round and each retry of one), so
	// a caller can note when its last write left (acquire's pending-write
	// marker, lockaction.WritePendingMarker).
	BeforeWrite func()
}

// Snapshot is one observed version of the state file.
type Snapshot struct {
	// State is the decoded, validated state (lockstate.Empty when the file
	// does not exist). Callers may not modify it; Update hands mutations a
	// clone.
	State *lockstate.State
	// SHA is the blob SHA of the version, "" when the file does not exist.
	SHA string
}

// Exists reports whether the snapshot is of an existing file.
func (s Snapshot) Exists() bool { return s.SHA != "" }

// Result reports how an Update ended.
type Result struct {
	// Snapshot is the state as committed by this Update, or as read when the
	// mutation returned ErrNoChange.
	Snapshot
	// Written is true when this Update's write was acknowledged.
	Written bool
	// Rounds is the number of read-modify-write rounds used.
	Rounds int
	// Conflicts counts rounds lost to a concurrent writer (409/422).
	Conflicts int
	// Ambiguous is true when an earlier round's write may have been applied
	// without acknowledgement (a 5xx or lost response followed by a conflict).
	// The mutation was re-applied to the fresh state, so the caller's effect
	// is in Snapshot either way; callers that report what they removed must
	// reconcile from Snapshot rather than from their own bookkeeping.
	Ambiguous bool
}

// Store reads and writes one lock's state document by compare-and-swap on
// the blob SHA through the GitHub Contents API. It is safe for concurrent
// use; concurrent Updates from one Store simply race like separate clients.
type Store struct {
	opts Options

	mu        sync.Mutex
	last      *Snapshot           // newest version this Store has seen or written
	lastHead  bool                // last was read at the branch head (LoadFresh)
	reads     map[string]readMemo // last decoded Contents response per path and ref
	defBranch string              // the repository's default branch, once read
	repoID    int64               // and its numeric id

	// Versions known to be older than an own write (monotonic.go).
	seen         []string
	older        map[string]struct{}
	olderOrder   []string
	staleIgnored int
	wrote        bool
	own          *Snapshot // the newest own write (kept across forget)
	// undecided: an own write may have landed without an answer, and no
	// read at the branch head has decided it since (monotonic.go).
	undecided bool
	// floor: the caller saw a version stamped this updatedAt (SeenAt).
	floor time.Time
}

// readMemo is one decoded Contents API response: the exact body, the file's
// blob SHA and its decoded content. A poll that the ETag cache answered with
// a 304 hands back the same body; recognising it skips the JSON and base64
// decoding a waiter would otherwise repeat on every poll.
type readMemo struct {
	body    []byte
	sha     string
	raw     bool // encoding "none" (over 1 MB): the content comes from the raw endpoint
	content []byte
}

var lockNamePattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,80}$`)

// New validates opts and returns a Store. It makes no API call.
func New(opts Options) (*Store, error) {
	if opts.Client == nil {
		return nil, errors.New("store: a GitHub client is required")
	}
	if opts.Owner == "" || opts.Repo == "" {
		return nil, errors.New("store: the lock repository owner and name are required")
	}
	if !lockNamePattern.MatchString(opts.Lock) || opts.Lock == "." || opts.Lock == ".." {
		return nil, fmt.Errorf("store: invalid lock name %q: expected 1-80 of A-Z a-z 0-9 . _ -", opts.Lock)
	}
	if opts.Branch == "" {
		opts.Branch = DefaultBranch
	}
	if opts.ServerURL == "" {
		opts.ServerURL = "https://github.com"
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Jitter == nil {
		opts.Jitter = defaultJitter
	}
	if opts.MaxRounds <= 0 {
		opts.MaxRounds = DefaultMaxRounds
	}
	if opts.ConflictDelay <= 0 {
		opts.ConflictDelay = DefaultConflictDelay
	}
	return &Store{opts: opts}, nil
}

// StatePath is the repository path of the lock's state file.
func (s *Store) StatePath() string { return "locks/" + s.opts.Lock + ".json" }

// ConfigPath is the repository path of the lock's config file (default branch).
func (s *Store) ConfigPath() string { return "locks/" + s.opts.Lock + ".config.json" }

// Lock returns the lock name.
func (s *Store) Lock() string { return s.opts.Lock }

// Load reads and validates the current state. A missing file (or a missing
// state branch) is the empty state with SHA "". An unchanged file costs a 304
// through the client's ETag cache. A state that fails validation is returned
// as the *lockstate.Error from Decode: nothing is ever written on top of it.
func (s *Store) Load(ctx context.Context) (Snapshot, error) {
	if s.isUndecided() {
		return s.decideAtHead(ctx)
	}
	data, sha, keep, err := s.readState(ctx)
	if keep != nil {
		return *keep, nil
	}
	if err == nil && sha != "" && s.superseded(sha) {
		// Every read again served a version known to be superseded and
		// nothing newer is known: decide at the branch head.
		return s.loadAtHead(ctx)
	}
	if err != nil {
		if ghclient.IsNotFound(err) && s.hasFloor() {
			// The caller saw the file (SeenAt): a replica from before
			// it existed.
			return s.loadAtHead(ctx)
		}
		if ghclient.IsNotFound(err) {
			snap := Snapshot{State: lockstate.Empty(s.opts.Lock)}
			s.remember(snap)
			return snap, nil
		}
		return Snapshot{}, err
	}
	s.noteRead(sha)
	if prev := s.cached(); prev != nil && prev.SHA == sha {
		return *prev, nil
	}
	st, err := lockstate.Decode(data, lockstate.DecodeOptions{Lock: s.opts.Lock, ServerURL: s.opts.ServerURL})
	if err != nil {
		return Snapshot{}, fmt.Errorf("decode %s at %s: %w", s.StatePath(), shortSHA(sha), err)
	}
	if s.belowFloor(st) {
		// Older than a version the caller saw (SeenAt): read at the
		// branch head, whatever that version's stamp says.
		s.countStale()
		return s.loadAtHead(ctx)
	}
	snap := Snapshot{State: st, SHA: sha}
	s.remember(snap)
	return snap, nil
}

// Update applies fn to a clone of the newest known state and writes the
// result with the version's SHA as the compare-and-swap token. On 409/422 it
// re-reads, re-applies fn and tries again, up to MaxRounds with jittered
// sleeps. fn must be a pure function of the state it is given: it may run
// several times. Returning ErrNoChange ends the Update without a write;
// returning another error ends it with that error and nothing written.
//
// The first round uses the newest version this Store has seen (its own last
// write or read) instead of reading again: if that base is stale the CAS
// fails and the next round reads. A write whose response was lost is never
// blindly retried; the next round's read decides whether it landed (fn sees
// its own effect and returns ErrNoChange).
func (s *Store) Update(ctx context.Context, message string, fn func(*lockstate.State) error) (Result, error) {
	return s.UpdateMessage(ctx, func(st *lockstate.State) (string, error) { return message, fn(st) })
}

// UpdateMessage is Update for mutations whose commit message depends on what
// they decided (for example "Acquire <lock>" versus "Queue for <lock>"). The
// message of the round that wrote is the commit message.
func (s *Store) UpdateMessage(ctx context.Context, fn func(*lockstate.State) (string, error)) (Result, error) {
	return s.UpdateRounds(ctx, s.opts.MaxRounds, fn)
}

// UpdateRounds is UpdateMessage with its own round budget: a caller that
// spreads its retries itself (acquire joining the queue during a burst, where
// an immediate retry would collide again) passes 1 and gets
// ErrTooManyConflicts after the first lost round, with no conflict sleep.
func (s *Store) UpdateRounds(ctx context.Context, rounds int, fn func(*lockstate.State) (string, error)) (Result, error) {
	var res Result
	// atHead: base was read at the branch head, so a lost race is decided
	// at the head again (monotonic.go, headFloor).
	base, atHead := s.cachedBase()
	atHead = atHead && !plant.Enabled(plant.CleanupBehindHead) // planted bug (tests only)
	branchCreated := false
	if rounds <= 0 {
		rounds = s.opts.MaxRounds
	}
	for res.Rounds < rounds {
		res.Rounds++
		if base == nil {
			var snap Snapshot
			var err error
			if atHead {
				snap, err = s.decideAtHead(ctx)
			} else {
				snap, err = s.Load(ctx)
			}
			if err != nil {
				return res, err
			}
			base = &snap
		}
		next := base.State.Clone()
		message, err := fn(next)
		if err != nil {
			if errors.Is(err, ErrNoChange) {
				res.Snapshot = *base
				return res, nil
			}
			return res, err
		}
		next.UpdatedAt = lockstate.FormatTime(s.opts.Clock.Now())
		data, err := lockstate.Encode(next)
		if err != nil {
			return res, fmt.Errorf("encode %s: %w", s.StatePath(), err)
		}
		sha, err := s.writeFile(ctx, message, data, base.SHA)
		switch {
		case err == nil:
			snap := Snapshot{State: next, SHA: sha}
			s.setUndecided(false)
			s.noteWrite(base.SHA, sha)
			s.remember(snap)
			s.rememberOwn(snap)
			res.Snapshot, res.Written = snap, true
			return res, nil
		case ghclient.IsNotFound(err) && !branchCreated:
			// The branch does not exist yet: create it from the default
			// branch's head and retry this round (spec §3.2 E5–E8). This is
			// the only place the branch is checked, so steady-state
			// operations never pay for it.
			if err := s.EnsureBranch(ctx); err != nil {
				return res, err
			}
			branchCreated = true
			res.Rounds--
			continue
		case ghclient.IsAmbiguous(err) && plant.Enabled(plant.SkipAmbiguousReconcile): // planted bug (tests only)
			res.Snapshot, res.Written = Snapshot{State: next, SHA: BlobSHA(data)}, true
			return res, nil
		case ghclient.IsAmbiguous(err):
			res.Ambiguous = true
			s.setUndecided(true)
			res.Conflicts++
		case ghclient.IsConflict(err):
			res.Conflicts++
			if atHead {
				s.headFloor(base.SHA)
			} else if ghclient.IsFileMoved(err) {
				s.supersede(base.SHA)
			}
		case ghclient.IsSecondaryLimit(err) && !mayHaveApplied(err) && res.Rounds < rounds:
			// Refused by a secondary rate limit: the next round re-reads
			// once the client's wait ends (the client sends nothing
			// before), so the write is decided on a fresh state. An
			// earlier attempt of the call may have landed (ambiguous).
			var ge *ghclient.Error
			if errors.As(err, &ge) && ge.MaybeApplied {
				res.Ambiguous = true
				s.setUndecided(true)
			}
			s.forget()
			base = nil
			continue
		default:
			if mayHaveApplied(err) {
				res.Ambiguous = true
				s.setUndecided(true)
			}
			// A rule refusal ends the Update at once (refusals.go): no
			// later round can pass it.
			return res, s.refusal(err, s.StatePath())
		}
		s.forget()
		base = nil
		if res.Rounds < rounds {
			if err := s.opts.Clock.Sleep(ctx, s.conflictDelay(res.Conflicts)); err != nil {
				return res, err
			}
		}
	}
	return res, fmt.Errorf("update %s after %d rounds: %w", s.StatePath(), res.Rounds, ErrTooManyConflicts)
}

// ConfigSnapshot is one read of the lock config.
type ConfigSnapshot struct {
	lockstate.Config
	// Warnings explains every fallback to a default (safe to log).
	Warnings []string
	// Unavailable is true when the file could not be read at all and the
	// whole config is the safe default, as opposed to a file that was read
	// (and maybe found malformed). A caller that already holds a good
	// snapshot may prefer to keep it.
	Unavailable bool
	// Missing is true when the file does not exist: the lock runs on the
	// defaults (one seat). Warnings then says so; a lock name that differs
	// only in case from a real lock is the usual cause (CheckLockNameCase).
	Missing bool
	// Content is the file as read (nil when Missing or Unavailable): what
	// a later step of the job may decode instead of reading it again
	// (lockaction.RememberConfig).
	Content []byte
}

// ReadConfig reads locks/<lock>.config.json from the default branch with the
// fallback rules of spec §2.8: a missing file is the default config (with a
// warning and Missing, a deliberate divergence: the reference is silent); an
// unavailable one (transport, 401, 403, 408, 429, 5xx, exhausted budget) is the
// default config, a warning and Unavailable; a cancelled read and any other
// status (400, 422, ...) are errors. Malformed content falls back with
// warnings from lockstate.DecodeConfig.
func (s *Store) ReadConfig(ctx context.Context) (ConfigSnapshot, error) {
	data, _, err := s.readFile(ctx, s.ConfigPath(), "")
	if err != nil {
		if ctx.Err() != nil {
			return ConfigSnapshot{}, err
		}
		if ghclient.IsNotFound(err) {
			return ConfigSnapshot{Config: lockstate.DefaultConfig(), Missing: true, Warnings: []string{fmt.Sprintf(
				"Lock config %s does not exist on the default branch of %s/%s; lock %s runs on the defaults (maxHolders %d, no runner serialization). Commit the config, or fix lock-name if it is a typo (lock names are case-sensitive).",
				s.ConfigPath(), s.opts.Owner, s.opts.Repo, s.opts.Lock, lockstate.DefaultMaxHolders)}}, nil
		}
		switch st := ghclient.StatusOf(err); {
		case st == 0, st == http.StatusUnauthorized, st == http.StatusForbidden,
			st == http.StatusRequestTimeout, st == http.StatusTooManyRequests, st >= 500:
			return ConfigSnapshot{Config: lockstate.DefaultConfig(), Unavailable: true, Warnings: []string{fmt.Sprintf(
				"Unable to read lock config %s; using safe defaults (%v)", s.ConfigPath(), err)}}, nil
		default:
			return ConfigSnapshot{}, fmt.Errorf("read lock config %s: %w", s.ConfigPath(), err)
		}
	}
	cfg, warnings := lockstate.DecodeConfig(data)
	return ConfigSnapshot{Config: cfg, Warnings: warnings, Content: data}, nil
}

// LoadConfig is ReadConfig without the Unavailable flag.
func (s *Store) LoadConfig(ctx context.Context) (lockstate.Config, []string, error) {
	snap, err := s.ReadConfig(ctx)
	return snap.Config, snap.Warnings, err
}

// EnsureBranch creates the state branch from the default branch's head when
// it does not exist (spec §3.2 E5–E8). A concurrent creation (422) is success.
func (s *Store) EnsureBranch(ctx context.Context) error {
	gh := s.opts.Client.GitHub()
	o, r, b := s.opts.Owner, s.opts.Repo, s.opts.Branch
	err := s.opts.Client.Do(ctx, s.op("GET git ref heads/"+b, false), func(ctx context.Context) (*github.Response, error) {
		_, resp, err := gh.Git.GetRef(ctx, o, r, "heads/"+b)
		return resp, err
	})
	if err == nil || !ghclient.IsNotFound(err) {
		return err
	}
	def, err := s.defaultBranch(ctx)
	if err != nil {
		return err
	}
	var head *github.Reference
	if err := s.opts.Client.Do(ctx, s.op("GET git ref heads/"+def, false), func(ctx context.Context) (*github.Response, error) {
		var resp *github.Response
		var err error
		head, resp, err = gh.Git.GetRef(ctx, o, r, "heads/"+def)
		return resp, err
	}); err != nil {
		return err
	}
	err = s.opts.Client.Do(ctx, s.op("POST git refs", true), func(ctx context.Context) (*github.Response, error) {
		_, resp, err := gh.Git.CreateRef(ctx, o, r, &github.Reference{
			Ref:    github.String("refs/heads/" + b),
			Object: &github.GitObject{SHA: head.GetObject().SHA},
		})
		return resp, err
	})
	if err != nil && ghclient.IsConflict(err) && ghclient.StatusOf(err) == http.StatusUnprocessableEntity {
		return nil // "Reference already exists": another client won the race.
	}
	return s.refusal(err, "refs/heads/"+b)
}

// readFile returns the bytes and blob SHA of path at ref ("" = default branch).
func (s *Store) readFile(ctx context.Context, path, ref string) ([]byte, string, error) {
	var memo readMemo
	err := s.opts.Client.Do(ctx, s.op("GET contents "+path, false), func(ctx context.Context) (*github.Response, error) {
		var resp *github.Response
		var err error
		memo, resp, err = s.getContents(ctx, path, ref)
		return resp, err
	})
	if err != nil {
		return nil, "", err
	}
	if memo.raw {
		// Files over 1 MB come without inline content; fetch the raw bytes
		// and prove they are the version the SHA names.
		data, err := s.readRaw(ctx, path, ref)
		if err != nil {
			return nil, "", err
		}
		if got := BlobSHA(data); got != memo.sha {
			return nil, "", &ghclient.Error{Class: ghclient.ClassRetryable, Op: "GET raw " + path,
				Err: fmt.Errorf("raw content %s does not match blob %s (file changed between reads)", shortSHA(got), shortSHA(memo.sha))}
		}
		return data, memo.sha, nil
	}
	return bytes.Clone(memo.content), memo.sha, nil
}

// contentsRequest is the GET GetContents builds for path at ref: the path
// escaped as a URL path, ?ref=.
func (s *Store) contentsRequest(path, ref string) (*http.Request, error) {
	u := fmt.Sprintf("repos/%s/%s/contents/%s", s.opts.Owner, s.opts.Repo, (&url.URL{Path: path}).String())
	if ref != "" {
		u += "?ref=" + url.QueryEscape(ref)
	}
	return s.opts.Client.GitHub().NewRequest(http.MethodGet, u, nil)
}

// ConfigResponse is the client's cached answer to the config read
// (ghclient.Client.CachedResponse), for a later step of the job to seed its
// own cache with (lockaction.RememberConfig).
func (s *Store) ConfigResponse() (ghclient.CachedResponse, bool) {
	req, err := s.contentsRequest(s.ConfigPath(), "")
	if err != nil {
		return ghclient.CachedResponse{}, false
	}
	return s.opts.Client.CachedResponse(req.URL.String(), req.Header.Get("Accept"))
}

// SeedConfigResponse puts r, an earlier step's answer to the config read
// (ConfigResponse), in the client's cache when it is for this store's
// config URL, so the next config read is conditional.
func (s *Store) SeedConfigResponse(r ghclient.CachedResponse) {
	req, err := s.contentsRequest(s.ConfigPath(), "")
	if err != nil || r.URL != req.URL.String() || r.Accept != req.Header.Get("Accept") {
		return
	}
	s.opts.Client.SeedCachedResponse(r)
}

// getContents is one GET /repos/{o}/{r}/contents/{path} attempt, decoded as
// go-github's RepositoriesService.GetContents would decode it. A body
// byte-identical to the last one decoded for the same path and ref (the ETag
// cache's copy after a 304) reuses that decode.
func (s *Store) getContents(ctx context.Context, path, ref string) (readMemo, *github.Response, error) {
	gh := s.opts.Client.GitHub()
	req, err := s.contentsRequest(path, ref)
	if err != nil {
		return readMemo{}, nil, err
	}
	resp, err := gh.BareDo(ctx, req)
	if err != nil {
		return readMemo{}, resp, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return readMemo{}, resp, err
	}
	key := path + "\x00" + ref
	s.mu.Lock()
	prev, ok := s.reads[key]
	s.mu.Unlock()
	if ok && bytes.Equal(prev.body, body) {
		return prev, resp, nil
	}
	var file github.RepositoryContent
	if err := json.Unmarshal(body, &file); err != nil {
		var dir []*github.RepositoryContent
		if json.Unmarshal(body, &dir) == nil {
			return readMemo{}, resp, fmt.Errorf("read %s: a directory (%d entries) is where a file was expected", path, len(dir))
		}
		return readMemo{}, resp, fmt.Errorf("decode contents of %s: %w", path, err)
	}
	memo := readMemo{body: body, sha: file.GetSHA(), raw: file.GetEncoding() == "none"}
	if !memo.raw {
		content, err := file.GetContent()
		if err != nil {
			return readMemo{}, resp, fmt.Errorf("decode contents of %s: %w", path, err)
		}
		memo.content = []byte(content)
	}
	s.mu.Lock()
	if s.reads == nil {
		s.reads = map[string]readMemo{}
	}
	s.reads[key] = memo
	s.mu.Unlock()
	return memo, resp, nil
}

func (s *Store) readRaw(ctx context.Context, path, ref string) ([]byte, error) {
	gh := s.opts.Client.GitHub()
	u := fmt.Sprintf("repos/%s/%s/contents/%s", s.opts.Owner, s.opts.Repo, path)
	if ref != "" {
		u += "?ref=" + ref
	}
	var buf bytes.Buffer
	err := s.opts.Client.Do(ctx, s.op("GET raw contents "+path, false), func(ctx context.Context) (*github.Response, error) {
		req, err := gh.NewRequest(http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/vnd.github.raw")
		buf.Reset()
		return gh.Do(ctx, req, &buf)
	})
	return buf.Bytes(), err
}

// writeFile PUTs data with base as the CAS token ("" = create) and returns the
// new blob SHA.
func (s *Store) writeFile(ctx context.Context, message string, data []byte, base string) (string, error) {
	gh := s.opts.Client.GitHub()
	opts := &github.RepositoryContentFileOptions{
		Message: github.String(message),
		Content: data,
		Branch:  github.String(s.opts.Branch),
	}
	if base != "" {
		opts.SHA = github.String(base)
	}
	var out *github.RepositoryContentResponse
	err := s.opts.Client.Do(ctx, s.op("PUT contents "+s.StatePath(), true), func(ctx context.Context) (*github.Response, error) {
		var resp *github.Response
		var err error
		if s.opts.BeforeWrite != nil {
			s.opts.BeforeWrite()
		}
		out, resp, err = gh.Repositories.UpdateFile(ctx, s.opts.Owner, s.opts.Repo, s.StatePath(), opts)
		return resp, err
	})
	if err != nil {
		return "", err
	}
	sha := out.GetContent().GetSHA()
	if sha == "" {
		sha = BlobSHA(data)
	}
	return sha, nil
}

func (s *Store) op(name string, mutation bool) ghclient.Op {
	return ghclient.Op{Name: name, Mutation: mutation, Budget: s.opts.Budget}
}

// MaxConflictBackoff caps the growth of the conflict sleep at this many
// ConflictDelays.
const MaxConflictBackoff = 8

// conflictDelay is the sleep after the n-th lost compare-and-swap of one
// Update. The first is the reference's jitter(ConflictDelay): ConflictDelay
// plus up to a third more (at least 250 ms). Each further conflict doubles
// the window, up to MaxConflictBackoff × ConflictDelay, and draws uniformly
// from [ConflictDelay, window): when many writers arrive at once (a burst of
// jobs joining the queue) they spread out instead of colliding round after
// round, which matters because every attempt is a content-creating request
// that GitHub limits to about 80 per minute.
func (s *Store) conflictDelay(n int) time.Duration {
	d := s.opts.ConflictDelay
	if n <= 1 {
		spread := max(250*time.Millisecond, d/3)
		return d + time.Duration(s.opts.Jitter()*float64(spread))
	}
	window := d << min(n-1, 3)
	window = min(window, MaxConflictBackoff*d)
	return d + time.Duration(s.opts.Jitter()*float64(window-d))
}

func (s *Store) cached() *Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		return nil
	}
	c := *s.last
	return &c
}

func (s *Store) remember(snap Snapshot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last, s.lastHead = &snap, false
}

// rememberHead caches a version read at the branch head (monotonic.go).
func (s *Store) rememberHead(snap Snapshot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last, s.lastHead = &snap, true
}

// cachedBase is cached, and whether that version was read at the branch
// head.
func (s *Store) cachedBase() (*Snapshot, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		return nil, false
	}
	c := *s.last
	return &c, s.lastHead
}

func (s *Store) rememberOwn(snap Snapshot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.own = &snap
}

func (s *Store) forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last, s.lastHead = nil, false
}

// mayHaveApplied reports whether a failed mutation might still have been
// applied by GitHub: the request was sent and no definite answer came back
// (a 408, a 5xx, or a transport error).
func mayHaveApplied(err error) bool {
	var ge *ghclient.Error
	if !errors.As(err, &ge) || ge.CredentialFailure {
		return false
	}
	return ge.Status == 0 || ge.Status == http.StatusRequestTimeout || ge.Status >= 500
}

// BlobSHA returns the git blob object name of data: the SHA-1 of
// "blob <len>\x00" followed by data, which is what the Contents API reports
// as a file's sha.
func BlobSHA(data []byte) string {
	h := sha1.New() //nolint:gosec // git object naming
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

func defaultJitter() float64 { return mrand.Float64() }

func shortSHA(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	if sha == "" {
		return "(none)"
	}
	return sha
}
