package ghclient

import (
	"bytes"
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	jwt "github.com/golang-jwt/jwt/v4"
	"github.com/google/go-github/v66/github"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
)

// App-auth constants (spec §3.4, Appendix A).
const (
	// TokenRefreshMargin: a cached installation token is reused while
	// now + 5 min < expires_at (APP_TOKEN_REFRESH_MS). ghinstallation's own
	// margin is 1 min by the wall clock; ours is checked first, on the
	// injected clock, and replaces the transport to force a mint.
	TokenRefreshMargin = 5 * time.Minute
	// CredentialMaxAttempts is the fixed budget of each JWT call (lookup,
	// mint) when the call it serves has no deadline.
	CredentialMaxAttempts = 3
	// jwtIssuedAtSkew and jwtLifetime follow the reference: iat now−60 s,
	// exp now+540 s.
	jwtIssuedAtSkew = 60 * time.Second
	jwtLifetime     = 540 * time.Second
)

// errInvalidPrivateKey never includes the key or the parser's detail.
var errInvalidPrivateKey = errors.New("ghclient: the GitHub App private key is not a valid private key")

// normalizePrivateKey converts literal "\n" sequences when the key has no
// real newline (secrets pasted as one line; spec §3.4).
func normalizePrivateKey(key []byte) []byte {
	if !bytes.Contains(key, []byte("\n")) && bytes.Contains(key, []byte(`\n`)) {
		return bytes.ReplaceAll(key, []byte(`\n`), []byte("\n"))
	}
	return key
}

// parsePrivateKey parses a PKCS#1 or PKCS#8 RSA PEM key.
func parsePrivateKey(key []byte) (*rsa.PrivateKey, error) {
	k, err := jwt.ParseRSAPrivateKeyFromPEM(normalizePrivateKey(bytes.TrimSpace(key)))
	if err != nil {
		return nil, errInvalidPrivateKey
	}
	return k, nil
}

// clockSigner signs the App JWT with the reference's claims on the injected
// clock (ghinstallation's own claims use time.Now with a 2-minute lifetime).
type clockSigner struct {
	key   *rsa.PrivateKey
	appID int64
	clock clock.Clock

	mu     sync.Mutex
	signed time.Time // the second the memoized JWT was signed for
	jwt    string
}

// Sign implements ghinstallation.Signer. The claims ghinstallation proposes
// are replaced by iat=now−60 s, exp=now+540 s, iss=<app id>. RS256
// (PKCS #1 v1.5) is deterministic and the claims have one-second
// resolution, so a JWT requested again within the same second is the same
// bytes: it is memoized instead of paying for another RSA signature.
func (s *clockSigner) Sign(jwt.Claims) (string, error) {
	now := s.clock.Now().Truncate(time.Second)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.jwt != "" && s.signed.Equal(now) {
		return s.jwt, nil
	}
	tok, err := s.sign(now)
	if err != nil {
		return "", err
	}
	s.signed, s.jwt = now, tok
	return tok, nil
}

// sign signs the reference's claims for the second now.
func (s *clockSigner) sign(now time.Time) (string, error) {
	claims := &jwt.RegisteredClaims{
		IssuedAt:  jwt.NewNumericDate(now.Add(-jwtIssuedAtSkew)),
		ExpiresAt: jwt.NewNumericDate(now.Add(jwtLifetime)),
		Issuer:    strconv.FormatInt(s.appID, 10),
	}
	return jwt.NewWithClaims(jwt.SigningMethodRS256, claims).SignedString(s.key)
}

// appAuth holds the GitHub App credential state: the cached installation ID
// and the current installation token with its generation.
type appAuth struct {
	c         *Client
	atr       *ghinstallation.AppsTransport
	jwtGitHub *github.Client
	repoOwner string
	repoName  string
	org       string
	tokenOpts *github.InstallationTokenOptions
	sem       chan struct{} // one credential refresh at a time; waiters can abort
	mu        sync.Mutex
	installID int64
	// account is the installation's account (the owner of the repository
	// or organization it was looked up for), from the lookup response.
	accountLogin string
	accountID    int64
	token        string
	expiresAt    time.Time
	gen          uint64
	maskedSeen   map[string]struct{}
}

// fresh reports whether the cached token may be used at now.
func (a *appAuth) fresh(now time.Time) bool {
	return a.token != "" && now.Add(TokenRefreshMargin).Before(a.expiresAt)
}

// current implements tokenSource for the resource transport. Inside Do the
// token is already fresh (ensure ran first); a direct use of GitHub()
// outside Do mints here on the default credential budget.
func (a *appAuth) current(ctx context.Context) (string, uint64, error) {
	a.mu.Lock()
	if a.fresh(a.c.clock.Now()) {
		tok, gen := a.token, a.gen
		a.mu.Unlock()
		return tok, gen, nil
	}
	a.mu.Unlock()
	if err := a.ensure(ctx, Budget{}); err != nil {
		return "", 0, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.token, a.gen, nil
}

// invalidate drops the token of generation gen (the one a 401 rejected). A
// newer token minted meanwhile by a concurrent call is kept.
func (a *appAuth) invalidate(gen uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.gen == gen {
		a.token = ""
		a.expiresAt = time.Time{}
	}
}

// secrets returns the tokens this client has held, for exact redaction.
func (a *appAuth) secrets() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]string, 0, len(a.maskedSeen))
	for s := range a.maskedSeen {
		out = append(out, s)
	}
	return out
}

// ensure makes sure a fresh installation token is cached. The lookup and
// mint run as inner calls: on CredentialMaxAttempts attempts each, or — when
// the serving call has a deadline — inheriting that deadline ("Release Retry
// Budget"). A failure is returned as *credentialError: retryable (the
// caller's budget decides) when the inner budget was exhausted, final
// otherwise. A 404 from the mint clears the installation ID and looks it up
// once more (spec §3.4).
func (a *appAuth) ensure(ctx context.Context, outer Budget) error {
	select {
	case a.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-a.sem }()

	a.mu.Lock()
	if a.fresh(a.c.clock.Now()) {
		a.mu.Unlock()
		return nil
	}
	a.mu.Unlock()

	inner := Budget{MaxAttempts: CredentialMaxAttempts}
	if !outer.Deadline.IsZero() {
		inner = Budget{Deadline: outer.Deadline, MaxAttempts: outer.MaxAttempts}
	}
	relooked := false
	for {
		id, err := a.installation(ctx, inner)
		if err != nil {
			return a.credFailure(ctx, err)
		}
		err = a.mint(ctx, inner, id)
		if err == nil {
			return nil
		}
		if !relooked && StatusOf(err) == http.StatusNotFound && !IsExhausted(err) {
			relooked = true
			a.mu.Lock()
			a.installID = 0
			a.mu.Unlock()
			continue
		}
		return a.credFailure(ctx, err)
	}
}

// credFailure wraps an inner *Error for the resource call's retry loop.
func (a *appAuth) credFailure(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	e, ok := asError(err)
	if !ok {
		e = &Error{Class: ClassFatal, Op: "GitHub App authentication", Err: a.c.scrub(err), CredentialFailure: true}
	}
	return &credentialError{err: e, retryable: e.Class == ClassRetryable}
}

// lookupInstallation reads the App's installation with the App JWT under
// the retry contract: GET /repos/{o}/{r}/installation (writer) or GET
// /orgs/{o}/installation (reader). It returns the operation's name too.
func (a *appAuth) lookupInstallation(ctx context.Context, b Budget) (*github.Installation, string, error) {
	name := fmt.Sprintf("GET /orgs/%s/installation", a.org)
	if a.repoName != "" {
		name = fmt.Sprintf("GET /repos/%s/%s/installation", a.repoOwner, a.repoName)
	}
	var inst *github.Installation
	err := a.c.run(ctx, Op{Name: name, Budget: b}, true, func(actx context.Context) (*http.Response, error) {
		var (
			resp *github.Response
			err  error
		)
		if a.repoName != "" {
			inst, resp, err = a.jwtGitHub.Apps.FindRepositoryInstallation(actx, a.repoOwner, a.repoName)
		} else {
			inst, resp, err = a.jwtGitHub.Apps.FindOrganizationInstallation(actx, a.org)
		}
		if resp != nil {
			return resp.Response, err
		}
		return nil, err
	})
	if err != nil {
		return nil, name, err
	}
	return inst, name, nil
}

// installation returns the cached installation ID or looks it up with the
// App JWT: GET /repos/{o}/{r}/installation (writer) or GET
// /orgs/{o}/installation (reader).
func (a *appAuth) installation(ctx context.Context, b Budget) (int64, error) {
	a.mu.Lock()
	id := a.installID
	a.mu.Unlock()
	if id != 0 {
		return id, nil
	}
	inst, name, err := a.lookupInstallation(ctx, b)
	if err != nil {
		return 0, err
	}
	if inst.GetID() == 0 {
		return 0, &Error{Class: ClassFatal, Op: name, CredentialFailure: true,
			Err: errors.New("installation lookup returned no installation id")}
	}
	a.mu.Lock()
	a.installID = inst.GetID()
	a.accountLogin, a.accountID = inst.GetAccount().GetLogin(), inst.GetAccount().GetID()
	a.mu.Unlock()
	return inst.GetID(), nil
}

// mint creates an installation token through a fresh ghinstallation
// transport (so no stale token is ever reused), validates it, masks it and
// caches it.
func (a *appAuth) mint(ctx context.Context, b Budget, id int64) error {
	itr := ghinstallation.NewFromAppsTransport(a.atr, id)
	itr.InstallationTokenOptions = a.tokenOpts
	name := fmt.Sprintf("POST /app/installations/%d/access_tokens", id)
	var tok string
	err := a.c.run(ctx, Op{Name: name, Budget: b}, true, func(actx context.Context) (*http.Response, error) {
		t, err := itr.Token(actx)
		if err != nil {
			return nil, err
		}
		tok = t
		return nil, nil
	})
	if err != nil {
		return err
	}
	expiresAt, _, expErr := itr.Expiry()
	if tok == "" || expErr != nil || !expiresAt.After(a.c.clock.Now()) {
		return &Error{Class: ClassFatal, Op: name, CredentialFailure: true,
			Err: errors.New("the installation token response is missing a valid token or expiry")}
	}
	// Mask before anything else can see or print the token.
	if a.c.mask != nil {
		a.c.mask(tok)
	}
	a.mu.Lock()
	a.token = tok
	a.expiresAt = expiresAt
	a.gen++
	if len(a.maskedSeen) < 64 {
		a.maskedSeen[tok] = struct{}{}
	}
	a.mu.Unlock()
	a.c.stats.mint()
	return nil
}

// splitRepository splits "owner/name".
func splitRepository(s string) (string, string, bool) {
	owner, name, ok := strings.Cut(s, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return "", "", false
	}
	return owner, name, true
}
