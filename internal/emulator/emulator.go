package emulator

import (
	"crypto/rsa"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
)

// Default rate limits. GitHub documents at least 5,000 requests per hour for
// an App installation and 1,000 per hour per repository for GITHUB_TOKEN:
// https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api
const (
	DefaultInstallationRateLimit  = 5000
	DefaultWorkflowTokenRateLimit = 1000
	DefaultAppRateLimit           = 5000
	// DefaultAPIVersion is the REST API version GitHub selects when the
	// request carries no X-GitHub-Api-Version header.
	DefaultAPIVersion = "2022-11-28"
	// WorkflowBotLogin is the author of content created with a workflow's
	// GITHUB_TOKEN.
	WorkflowBotLogin = "github-actions[bot]"
	// WorkflowBotID is github-actions[bot]'s real user id.
	WorkflowBotID = 41898282
)

// Options configures an Emulator. The zero value is usable.
type Options struct {
	// Clock supplies every timestamp. Default clock.Real{}.
	Clock clock.Clock
	// Seed makes generated tokens, request IDs and probabilistic faults
	// deterministic.
	Seed int64
	// ServerURL is the web origin used in html_url fields, e.g.
	// "https://github.com". When empty it is derived from the request
	// ("http://<host>").
	ServerURL string
	// InstallationRateLimit is the hourly primary limit per installation
	// (default 5000).
	InstallationRateLimit int
	// AppRateLimit is the hourly primary limit for JWT-authenticated calls
	// per App (default 5000).
	AppRateLimit int
	// AllowMissingUserAgent disables GitHub's rejection (403) of requests
	// without a User-Agent header.
	AllowMissingUserAgent bool
	// LogLimit bounds the request log kept in Metrics (default 100000; the
	// oldest records are dropped first).
	LogLimit int
	// TreeEntryLimit bounds a recursive Git tree listing before it is
	// truncated (default DefaultTreeEntryLimit, GitHub's 100,000).
	TreeEntryLimit int
	// SecondaryLimits are GitHub's secondary rate limits (secondary.go);
	// the zero value is off. GitHubSecondaryLimits() is GitHub's set.
	SecondaryLimits SecondaryLimits
	// FileSizeLimit is the largest file the Contents API serves or accepts
	// (default DefaultFileSizeLimit, GitHub's 100 MB); tests lower it.
	FileSizeLimit int
	// ReplicaLag makes contents reads of a branch eventually consistent, as
	// GitHub's are: a read may return any version of the branch committed
	// in the last ReplicaLag (lag.go). 0 (the default) serves every read
	// from the branch head. DefaultReplicaLag is the realistic value the
	// simulation, the bench, the demo and the end-to-end tests use.
	ReplicaLag time.Duration
	// ReplicaLagFraction is the share of reads served by a lagging replica
	// (each draws its lag uniformly from [0, ReplicaLag]); 0 means every
	// read. DefaultReplicaLagFraction goes with DefaultReplicaLag.
	ReplicaLagFraction float64
	// CommitLatency is how long a contents write takes to commit on the
	// emulator clock: the write reads the branch head when it arrives and
	// moves the branch only if no other commit landed meanwhile, else it
	// answers 409 "is at <head> but expected <base>" as GitHub does for
	// concurrent writes to one branch, even to different files (lag.go).
	// 0 (the default) commits at once. DefaultCommitLatency is the
	// realistic value.
	CommitLatency time.Duration
}

// Emulator is a stateful GitHub REST emulator. It is safe for concurrent use.
type Emulator struct {
	clk       clock.Clock
	serverURL string
	opts      Options

	mu      sync.Mutex
	rng     *rand.Rand
	nextID  int64
	reqSeq  int64
	owners  map[string]*owner
	repos   map[string]*repo
	apps    map[int64]*app
	insts   map[int64]*installation
	tokens  map[string]*credential // secret → credential (never exported)
	buckets map[string]*bucket
	faults  []*faultEntry
	faultID int
	metrics metricsState

	contentsJSON map[string][]byte // encoded Contents API file bodies (hGetContents)

	settings repoSettings // branch rules and workflow states (settings.go)

	renamed map[string]int64 // old repoKey → repository id (redirect.go)

	sec secondaryState // secondary rate limits (secondary.go)
}

type owner struct {
	Login string
	ID    int64
	Org   bool
	// runner groups / runners (organizations only)
	groups  []*RunnerGroup
	runners []*runnerEntry
}

type runnerEntry struct {
	groupID int64
	Runner
}

type repo struct {
	owner         *owner
	Name          string
	ID            int64
	DefaultBranch string
	Private       bool
	Fork          bool
	branches      map[string]string // branch → head commit sha
	commits       map[string]*commit
	blobs         map[string][]byte
	runs          map[int64]*runEntry
	runOrder      []int64
	jobs          map[int64]*jobEntry
	workflows     map[string]int64 // workflow file → id
	issues        map[int]*issue
	pulls         map[int]*PullRequest
}

func (r *repo) fullName() string { return r.owner.Login + "/" + r.Name }

type app struct {
	ID    int64
	Slug  string
	Name  string
	Key   *rsa.PublicKey
	Perms map[string]string
}

type installation struct {
	ID      int64
	AppID   int64
	Owner   *owner
	Repos   []string // lower-case repo names; nil = all
	Perms   map[string]string
	Created time.Time
}

// New returns an empty Emulator.
func New(opts Options) *Emulator {
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.InstallationRateLimit <= 0 {
		opts.InstallationRateLimit = DefaultInstallationRateLimit
	}
	if opts.AppRateLimit <= 0 {
		opts.AppRateLimit = DefaultAppRateLimit
	}
	if opts.LogLimit <= 0 {
		opts.LogLimit = 100000
	}
	e := &Emulator{
		clk:          opts.Clock,
		serverURL:    strings.TrimRight(opts.ServerURL, "/"),
		opts:         opts,
		rng:          rand.New(rand.NewSource(opts.Seed)),
		nextID:       100000,
		owners:       map[string]*owner{},
		repos:        map[string]*repo{},
		contentsJSON: map[string][]byte{},
		apps:         map[int64]*app{},
		insts:        map[int64]*installation{},
		tokens:       map[string]*credential{},
		buckets:      map[string]*bucket{},
	}
	e.metrics.reset()
	if opts.SecondaryLimits.Enabled {
		e.sec.limits = opts.SecondaryLimits.resolved()
	}
	return e
}

func (e *Emulator) now() time.Time { return e.clk.Now().UTC() }

func (e *Emulator) newID() int64 {
	e.nextID++
	return e.nextID
}

func repoKey(owner, name string) string { return strings.ToLower(owner) + "/" + strings.ToLower(name) }

// AddOwner registers a user (org=false) or an organization. Calling it again
// for an existing login updates the id and kind.
func (e *Emulator) AddOwner(login string, id int64, org bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.addOwnerLocked(login, id, org)
}

func (e *Emulator) addOwnerLocked(login string, id int64, org bool) *owner {
	k := strings.ToLower(login)
	if id == 0 {
		id = e.newID()
	}
	if o, ok := e.owners[k]; ok {
		o.ID, o.Org = id, org
		return o
	}
	o := &owner{Login: login, ID: id, Org: org}
	e.owners[k] = o
	return o
}

// AddRepo creates a private repository (creating the owner as an
// organization if unknown) whose default branch holds one initial commit with
// an empty tree. id 0 picks an id; defaultBranch "" means "main". Adding an
// existing repository is a no-op.
func (e *Emulator) AddRepo(ownerLogin, name string, id int64, defaultBranch string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.addRepoLocked(ownerLogin, name, id, defaultBranch)
}

func (e *Emulator) addRepoLocked(ownerLogin, name string, id int64, defaultBranch string) *repo {
	if r, ok := e.repos[repoKey(ownerLogin, name)]; ok {
		return r
	}
	o, ok := e.owners[strings.ToLower(ownerLogin)]
	if !ok {
		o = e.addOwnerLocked(ownerLogin, 0, true)
	}
	if id == 0 {
		id = e.newID()
	}
	if defaultBranch == "" {
		defaultBranch = "main"
	}
	r := &repo{
		owner: o, Name: name, ID: id, DefaultBranch: defaultBranch, Private: true,
		branches: map[string]string{}, commits: map[string]*commit{}, blobs: map[string][]byte{},
		runs: map[int64]*runEntry{}, jobs: map[int64]*jobEntry{}, workflows: map[string]int64{},
		issues: map[int]*issue{}, pulls: map[int]*PullRequest{},
	}
	c := e.newCommitLocked(r, "", map[string]string{}, "Initial commit", "seed")
	r.branches[defaultBranch] = c.SHA
	e.repos[repoKey(ownerLogin, name)] = r
	return r
}

func (e *Emulator) repoLocked(ownerLogin, name string) (*repo, error) {
	r, ok := e.repos[repoKey(ownerLogin, name)]
	if !ok {
		return nil, fmt.Errorf("emulator: repository %s/%s not found", ownerLogin, name)
	}
	return r, nil
}

// AddApp registers a GitHub App with the public half of its signing key. The
// app's slug defaults to "app-<id>" and its permissions to
// DefaultAppPermissions.
func (e *Emulator) AddApp(appID int64, publicKey *rsa.PublicKey) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if a, ok := e.apps[appID]; ok {
		a.Key = publicKey
		return
	}
	e.apps[appID] = &app{ID: appID, Slug: fmt.Sprintf("app-%d", appID), Name: fmt.Sprintf("App %d", appID), Key: publicKey, Perms: DefaultAppPermissions()}
}

// SetAppSlug sets the slug of a registered App; its installation tokens author
// content as "<slug>[bot]".
func (e *Emulator) SetAppSlug(appID int64, slug string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	a, ok := e.apps[appID]
	if !ok {
		return fmt.Errorf("emulator: app %d not registered", appID)
	}
	a.Slug, a.Name = slug, slug
	return nil
}

// DefaultAppPermissions returns the permissions an App (and so each new
// installation) is granted unless changed with SetInstallationPermissions.
func DefaultAppPermissions() map[string]string {
	return map[string]string{
		"contents": "write", "metadata": "read", "actions": "read", "pull_requests": "read",
		"issues": "write", "organization_self_hosted_runners": "read",
	}
}

// InstallApp installs a registered App on owner (created as an organization
// if unknown), for the named repositories or all of them (repos nil), and
// returns the installation id. Installing again replaces the repository
// selection and keeps the id.
func (e *Emulator) InstallApp(appID int64, ownerLogin string, repos []string) (installationID int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	a, ok := e.apps[appID]
	if !ok {
		a = &app{ID: appID, Slug: fmt.Sprintf("app-%d", appID), Name: fmt.Sprintf("App %d", appID), Perms: DefaultAppPermissions()}
		e.apps[appID] = a
	}
	o, ok := e.owners[strings.ToLower(ownerLogin)]
	if !ok {
		o = e.addOwnerLocked(ownerLogin, 0, true)
	}
	var sel []string
	if repos != nil {
		sel = make([]string, 0, len(repos))
		for _, r := range repos {
			sel = append(sel, strings.ToLower(r))
		}
	}
	for _, in := range e.insts {
		if in.AppID == appID && in.Owner == o {
			in.Repos = sel
			return in.ID
		}
	}
	in := &installation{ID: e.newID(), AppID: appID, Owner: o, Repos: sel, Perms: copyPerms(a.Perms), Created: e.now()}
	e.insts[in.ID] = in
	return in.ID
}

// SetInstallationPermissions replaces the permissions granted to an
// installation (the ceiling for the tokens minted from it).
func (e *Emulator) SetInstallationPermissions(installationID int64, perms map[string]string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	in, ok := e.insts[installationID]
	if !ok {
		return fmt.Errorf("emulator: installation %d not found", installationID)
	}
	in.Perms = copyPerms(perms)
	return nil
}

func (in *installation) covers(r *repo) bool {
	if r.owner != in.Owner {
		return false
	}
	if in.Repos == nil {
		return true
	}
	for _, n := range in.Repos {
		if n == strings.ToLower(r.Name) {
			return true
		}
	}
	return false
}

func copyPerms(p map[string]string) map[string]string {
	out := make(map[string]string, len(p))
	for k, v := range p {
		out[k] = v
	}
	return out
}

func sortedKeys[M ~map[K]V, K ~string, V any](m M) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}
