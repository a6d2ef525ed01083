package ghclient

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v66/github"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
)

// DefaultAPIURL is used when Config.APIURL (GITHUB_API_URL) is empty.
const DefaultAPIURL = "https://api.github.com"

// Version is the product version in the default User-Agent. Release builds
// set it with -ldflags "-X …/internal/ghclient.Version=v1.2.3".
var Version = "dev"

// DefaultUserAgent returns "ambiguous-organization-build-lock/<Version>".
func DefaultUserAgent() string { return "ambiguous-organization-build-lock/" + Version }

// Config configures a Client. Exactly one credential must be given: Token,
// or AppID with PrivateKey and one of InstallationRepository or
// InstallationOwner.
type Config struct {
	// APIURL is GITHUB_API_URL; default DefaultAPIURL. A GHES-style prefix
	// such as https://ghe.example.com/api/v3 works; a trailing slash is
	// optional.
	APIURL string
	// Token is a plain token (e.g. the workflow GITHUB_TOKEN).
	Token string
	// AppID and PrivateKey (PEM) select GitHub App installation auth. A key
	// that has no real newline but literal "\n" sequences is converted.
	AppID      int64
	PrivateKey []byte
	// InstallationRepository ("owner/name") looks the installation up via
	// GET /repos/{owner}/{name}/installation (writer).
	InstallationRepository string
	// InstallationOwner looks it up via GET /orgs/{owner}/installation
	// (reader).
	InstallationOwner string
	// Installation, when set, is the installation an earlier step of the
	// same job looked up for InstallationRepository or InstallationOwner
	// (Client.KnownInstallation): the client mints its first token from it
	// without looking it up again. A mint answered 404 (the installation
	// is gone or was never this App's) looks it up once, as for any cached
	// id.
	Installation *KnownInstallation
	// InstallationToken, when set with Installation, is a token an earlier
	// step of the same job minted from that installation (with the same
	// repositories and permissions): the client uses it while it is fresh
	// (TokenRefreshMargin before its expiry) instead of minting, masks it
	// first, and mints anew when it is stale or GitHub rejects it (401).
	InstallationToken *KnownToken
	// TokenRepositories and Permissions scope each minted token (writer:
	// the lock repository's name and contents: write).
	TokenRepositories []string
	Permissions       *github.InstallationPermissions
	// Transport is the base RoundTripper; default http.DefaultTransport.
	Transport http.RoundTripper
	// UserAgent defaults to DefaultUserAgent().
	UserAgent string
	// Clock drives backoff sleeps, deadlines and token freshness; default
	// clock.Real{}.
	Clock clock.Clock
	// Jitter returns a value in [0,1); default math/rand/v2.Float64.
	Jitter func() float64
	// Knobs are the shared backoff settings (see KnobsFromValues). Zero fields
	// take defaults; a set field outside its range is an error.
	Knobs Knobs
	// Warn receives one line per retry; the caller formats it (e.g. as a
	// ::warning:: command). Optional.
	Warn func(msg string)
	// Mask is called with every minted installation token before it is used
	// (githubactions AddMask). Optional.
	Mask func(secret string)
	// ETagCacheEntries bounds the conditional-GET cache; 0 means
	// DefaultETagCacheEntries, negative disables the cache.
	ETagCacheEntries int
	// AttemptTimeout, when positive, bounds every attempt of an
	// attempt-bounded call (a Budget without Deadline) in flight: a stalled
	// connection fails that attempt as a transport error (outcome unknown
	// for a mutation), which is retried within the attempt budget. Zero
	// leaves such attempts bounded only by the caller's context.
	AttemptTimeout time.Duration
}

// Client is a go-github client plus the one retry/deadline contract shared
// by every caller. It is safe for concurrent use.
type Client struct {
	gh     *github.Client
	clock  clock.Clock
	jitter func() float64
	knobs  Knobs
	warnFn func(string)
	mask   func(string)
	token  string
	app    *appAuth
	cache  *etagCache
	stats  *statsCounter
	// usage keeps the x-ratelimit-used counts of the first answers
	// (usage.go).
	usage *usageLog
	// baseURL is the API base; pins are the repository ids redirects must
	// keep to (redirect.go).
	baseURL *url.URL
	pins    repoPins

	attemptTimeout time.Duration

	// gateUntil is the server-directed wait (Retry-After) every attempt
	// on this client honors; primaryUntil is the x-ratelimit-reset of an
	// exhausted primary limit, per credential kind (index 0: the
	// installation token or plain token of resource calls; 1: the App JWT
	// of installation lookups and mints, which GitHub limits separately).
	// See noteServerWait.
	gateMu       sync.Mutex
	gateUntil    time.Time
	primaryUntil [2]time.Time
	// secondaryUntil is the end of the wait a secondary rate limit
	// imposed (never capped: see noteServerWait); secondaryStreak counts
	// secondary-limit answers since the last success, for the exponential
	// growth of waits GitHub did not direct.
	secondaryUntil  time.Time
	secondaryStreak int
	// lastWrite is when the last mutation attempt was sent: writes of one
	// client are at least MinWriteSpacing apart.
	lastWrite time.Time
}

// New validates cfg and builds a Client. It makes no network calls: the App
// installation lookup and the first token mint happen lazily, inside the
// first call that needs them, under that call's budget.
func New(ctx context.Context, cfg Config) (*Client, error) {
	if ctx == nil {
		return nil, errors.New("ghclient: nil context")
	}
	if err := cfg.Knobs.Validate(); err != nil {
		return nil, err
	}
	baseURL, err := parseAPIURL(cfg.APIURL)
	if err != nil {
		return nil, err
	}
	hasApp := cfg.AppID != 0 || len(cfg.PrivateKey) > 0
	switch {
	case cfg.Token != "" && hasApp:
		return nil, errors.New("ghclient: configure either a token or a GitHub App, not both")
	case cfg.Token == "" && !hasApp:
		return nil, errors.New("ghclient: no credentials: set a token or a GitHub App id and private key")
	case hasApp && cfg.AppID <= 0:
		return nil, errors.New("ghclient: GitHub App id must be a positive integer")
	case hasApp && len(cfg.PrivateKey) == 0:
		return nil, errors.New("ghclient: GitHub App private key is empty")
	case hasApp && (cfg.InstallationRepository == "") == (cfg.InstallationOwner == ""):
		return nil, errors.New("ghclient: set exactly one of InstallationRepository or InstallationOwner for GitHub App auth")
	}

	c := &Client{
		clock:  cfg.Clock,
		jitter: cfg.Jitter,
		knobs:  cfg.Knobs.withDefaults(),
		warnFn: cfg.Warn,
		mask:   cfg.Mask,
		token:  cfg.Token,
		stats:  newStatsCounter(),
		usage:  &usageLog{},

		attemptTimeout: cfg.AttemptTimeout,
	}
	if c.clock == nil {
		c.clock = clock.Real{}
	}
	if c.jitter == nil {
		c.jitter = rand.Float64
	}
	base := cfg.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	ua := cfg.UserAgent
	if ua == "" {
		ua = DefaultUserAgent()
	}
	bottom := &baseTransport{next: base, userAgent: ua, stats: c.stats, usage: c.usage, clock: c.clock}

	var source tokenSource = staticToken(cfg.Token)
	if hasApp {
		key, err := parsePrivateKey(cfg.PrivateKey)
		if err != nil {
			return nil, err
		}
		appBottom := &baseTransport{next: base, userAgent: ua, stats: c.stats, usage: c.usage, clock: c.clock, app: true}
		atr, err := ghinstallation.NewAppsTransportWithOptions(appBottom, cfg.AppID,
			ghinstallation.WithSigner(&clockSigner{key: key, appID: cfg.AppID, clock: c.clock}))
		if err != nil {
			return nil, fmt.Errorf("ghclient: build GitHub App transport: %w", err)
		}
		atr.BaseURL = strings.TrimSuffix(baseURL.String(), "/")
		jwtGH := github.NewClient(&http.Client{Transport: &shieldTransport{next: atr}})
		jwtGH.BaseURL = baseURL
		jwtGH.UserAgent = ua
		a := &appAuth{
			c:          c,
			atr:        atr,
			jwtGitHub:  jwtGH,
			org:        cfg.InstallationOwner,
			sem:        make(chan struct{}, 1),
			maskedSeen: make(map[string]struct{}),
		}
		if cfg.InstallationRepository != "" {
			owner, name, ok := splitRepository(cfg.InstallationRepository)
			if !ok {
				return nil, fmt.Errorf("ghclient: installation repository %q is not owner/name", cfg.InstallationRepository)
			}
			a.repoOwner, a.repoName = owner, name
		}
		if k := cfg.Installation; k != nil && k.ID > 0 && k.AccountID > 0 && k.AccountLogin != "" {
			a.installID, a.accountLogin, a.accountID = k.ID, k.AccountLogin, k.AccountID
			if t := cfg.InstallationToken; t != nil && t.Token != "" && !t.ExpiresAt.IsZero() {
				// Mask before anything else can see or print the token.
				if c.mask != nil {
					c.mask(t.Token)
				}
				a.token, a.expiresAt, a.gen = t.Token, t.ExpiresAt, 1
				a.maskedSeen[t.Token] = struct{}{}
			}
		}
		if len(cfg.TokenRepositories) > 0 || cfg.Permissions != nil {
			a.tokenOpts = &github.InstallationTokenOptions{
				Repositories: append([]string(nil), cfg.TokenRepositories...),
				Permissions:  cfg.Permissions,
			}
		}
		c.app = a
		source = a
	}

	var rt http.RoundTripper = &authTransport{next: bottom, source: source}
	if cfg.ETagCacheEntries >= 0 {
		c.cache = newETagCache(cfg.ETagCacheEntries)
		rt = &etagTransport{next: rt, cache: c.cache, stats: c.stats}
	}
	rt = &shieldTransport{next: rt}
	c.baseURL = baseURL
	gh := github.NewClient(&http.Client{Transport: rt, CheckRedirect: c.checkRedirect})
	gh.BaseURL = baseURL
	if baseURL.Host != "api.github.com" {
		gh.UploadURL = baseURL
	}
	gh.UserAgent = ua
	c.gh = gh
	return c, nil
}

// parseAPIURL validates GITHUB_API_URL and returns it with a trailing slash
// (go-github requires one). Userinfo is rejected so no credential can ride
// in the URL into error text.
func parseAPIURL(raw string) (*url.URL, error) {
	if raw == "" {
		raw = DefaultAPIURL
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("ghclient: invalid GitHub API URL %q", redactText(raw))
	}
	if u.User != nil {
		return nil, errors.New("ghclient: GitHub API URL must not contain credentials")
	}
	u.RawQuery, u.Fragment = "", ""
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return u, nil
}

// GitHub returns the underlying go-github client. Calls made through it
// outside Do still get auth, pinned headers and the ETag cache, but no
// retries.
func (c *Client) GitHub() *github.Client { return c.gh }

// Do runs fn under the retry contract described in the package doc and
// returns nil or an *Error. fn must perform exactly one API request with
// the ctx it is given (which carries the in-flight deadline and attempt
// bookkeeping) and return go-github's response and error unchanged; it may
// be called several times, so it must not have side effects beyond the
// request and capturing its result.
func (c *Client) Do(ctx context.Context, op Op, fn func(ctx context.Context) (*github.Response, error)) error {
	if ctx == nil {
		return &Error{Class: ClassFatal, Op: op.Name, Err: errors.New("ghclient: nil context")}
	}
	if fn == nil {
		return &Error{Class: ClassFatal, Op: op.Name, Err: errors.New("ghclient: nil request function")}
	}
	err := c.run(ctx, op, false, func(actx context.Context) (*http.Response, error) {
		resp, err := fn(actx)
		if resp != nil {
			return resp.Response, err
		}
		return nil, err
	})
	if err == nil {
		return nil
	}
	return err
}

// InstallationAccount returns the account (login and numeric id) of the App
// installation this client authenticates as, as GitHub reported it when the
// installation was looked up: the owner of the lock repository for a writer
// client. ok is false for a token client or before the first request.
func (c *Client) InstallationAccount() (login string, id int64, ok bool) {
	k, _ := c.KnownInstallation()
	return k.AccountLogin, k.AccountID, k.AccountID != 0
}

// KnownInstallation is a GitHub App installation as its lookup described
// it: what a later step of the same job passes as Config.Installation so it
// does not look it up again.
type KnownInstallation struct {
	// ID is the installation id tokens are minted from.
	ID int64 `json:"id"`
	// AccountLogin and AccountID are the installation's account (the owner
	// of the repository or organization it was looked up for).
	AccountLogin string `json:"accountLogin"`
	AccountID    int64  `json:"accountId"`
}

// KnownInstallation returns the installation an App client mints from, once
// a lookup (or Config.Installation) named it; ok is false for a token
// client and before the first request.
func (c *Client) KnownInstallation() (KnownInstallation, bool) {
	if c.app == nil {
		return KnownInstallation{}, false
	}
	c.app.mu.Lock()
	defer c.app.mu.Unlock()
	k := KnownInstallation{ID: c.app.installID, AccountLogin: c.app.accountLogin, AccountID: c.app.accountID}
	return k, k.ID != 0 && k.AccountID != 0
}

// KnownToken is an installation token with its expiry, as a step of a job
// minted it: what a later step of the same job passes as
// Config.InstallationToken so it does not mint again. It is a secret:
// whoever holds it may write what the token's permissions allow until it
// expires.
type KnownToken struct {
	Token     string
	ExpiresAt time.Time
}

// InstallationToken returns the installation token an App client holds and
// the installation it was minted from, while the token is fresh
// (TokenRefreshMargin before its expiry); ok is false for a token client,
// before the first mint and once it is stale.
func (c *Client) InstallationToken() (KnownToken, KnownInstallation, bool) {
	if c.app == nil {
		return KnownToken{}, KnownInstallation{}, false
	}
	c.app.mu.Lock()
	defer c.app.mu.Unlock()
	a := c.app
	if !a.fresh(c.clock.Now()) || a.installID == 0 {
		return KnownToken{}, KnownInstallation{}, false
	}
	return KnownToken{Token: a.token, ExpiresAt: a.expiresAt}, KnownInstallation{ID: a.installID, AccountLogin: a.accountLogin, AccountID: a.accountID}, true
}

// Knobs returns the effective backoff knobs (defaults applied).
func (c *Client) Knobs() Knobs { return c.knobs }

// warn emits one scrubbed warning line.
func (c *Client) warn(msg string) {
	if c.warnFn != nil {
		c.warnFn(redactText(redactKnown(msg, c.secrets()...)))
	}
}

// secrets lists every credential this client holds, for exact redaction.
func (c *Client) secrets() []string {
	out := []string{c.token}
	if c.app != nil {
		out = append(out, c.app.secrets()...)
	}
	return out
}

// scrub wraps err with its text redacted of this client's secrets.
func (c *Client) scrub(err error) error {
	if err == nil {
		return nil
	}
	return scrub(err, c.secrets()...)
}

// Stats is a snapshot of the client's counters.
type Stats struct {
	// Requests counts HTTP requests handed to the base transport, including
	// installation lookups and token mints.
	Requests int64
	// NotModified counts 304s answered from the ETag cache.
	NotModified int64
	// Retries counts backoff waits followed by another attempt.
	Retries int64
	// Replays counts immediate 401 replays after a re-mint.
	Replays int64
	// TokenMints counts installation tokens minted.
	TokenMints int64
	// TransportErrors counts requests that got no response.
	TransportErrors int64
	// Redirects counts renamed-repository redirects followed (redirect.go).
	Redirects int64
	// ByStatus counts responses per HTTP status (as received, so a
	// revalidated GET counts under 304).
	ByStatus map[int]int64
}

// Stats returns a snapshot of the counters.
func (c *Client) Stats() Stats { return c.stats.snapshot() }

// statsCounter is the mutable side of Stats.
type statsCounter struct {
	mu sync.Mutex
	s  Stats
}

func newStatsCounter() *statsCounter {
	return &statsCounter{s: Stats{ByStatus: make(map[int]int64)}}
}

func (s *statsCounter) add(f func(*Stats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.s)
}

func (s *statsCounter) request()        { s.add(func(st *Stats) { st.Requests++ }) }
func (s *statsCounter) transportError() { s.add(func(st *Stats) { st.TransportErrors++ }) }
func (s *statsCounter) status(code int) { s.add(func(st *Stats) { st.ByStatus[code]++ }) }
func (s *statsCounter) notModified()    { s.add(func(st *Stats) { st.NotModified++ }) }
func (s *statsCounter) retry()          { s.add(func(st *Stats) { st.Retries++ }) }
func (s *statsCounter) replay()         { s.add(func(st *Stats) { st.Replays++ }) }
func (s *statsCounter) mint()           { s.add(func(st *Stats) { st.TokenMints++ }) }
func (s *statsCounter) redirect()       { s.add(func(st *Stats) { st.Redirects++ }) }

func (s *statsCounter) snapshot() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.s
	out.ByStatus = make(map[int]int64, len(s.s.ByStatus))
	for k, v := range s.s.ByStatus {
		out.ByStatus[k] = v
	}
	return out
}
