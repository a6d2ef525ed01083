package ghclient

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	jwt "github.com/golang-jwt/jwt/v4"
	"github.com/google/go-github/v66/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
)

const testAppID = 42

var (
	keyOnce sync.Once
	testKey *rsa.PrivateKey
)

// appKey returns a process-wide RSA key (generating one per test is slow
// under -race).
func appKey(t *testing.T) (*rsa.PrivateKey, []byte) {
	t.Helper()
	keyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		testKey = k
	})
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(testKey)})
	return testKey, pemBytes
}

// appHarness is a harness configured for GitHub App auth as the writer.
func appHarness(t *testing.T, mutate func(*Config)) *harness {
	t.Helper()
	_, pemBytes := appKey(t)
	return newHarness(t, func(c *Config) {
		c.Token = ""
		c.AppID = testAppID
		c.PrivateKey = pemBytes
		c.InstallationRepository = "o/r"
		c.TokenRepositories = []string{"r"}
		c.Permissions = &github.InstallationPermissions{Contents: github.String("write")}
		c.UserAgent = "build-lock-test/1"
		if mutate != nil {
			mutate(c)
		}
	})
}

// checkJWT verifies the App JWT against the public key and the reference's
// claims (iss=app id, iat=now−60 s, exp=now+540 s on the injected clock).
func checkJWT(clk clock.Clock) func(t *testing.T, r *http.Request, _ []byte) {
	return func(t *testing.T, r *http.Request, _ []byte) {
		t.Helper()
		raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !assert.True(t, ok, "JWT call without Bearer auth: %q", r.Header.Get("Authorization")) {
			return
		}
		claims := &jwt.RegisteredClaims{}
		_, err := jwt.ParseWithClaims(raw, claims, func(*jwt.Token) (any, error) { return &testKey.PublicKey, nil },
			jwt.WithValidMethods([]string{"RS256"}), jwt.WithoutClaimsValidation())
		if !assert.NoError(t, err, "JWT does not verify") {
			return
		}
		now := clk.Now().Truncate(time.Second)
		assert.Equal(t, strconv.Itoa(testAppID), claims.Issuer, "iss")
		assert.WithinDuration(t, now.Add(-60*time.Second), claims.IssuedAt.Time, 0, "iat")
		assert.WithinDuration(t, now.Add(540*time.Second), claims.ExpiresAt.Time, 0, "exp")
	}
}

func lookupOK(h *harness, id int) reply {
	return reply{body: `{"id":` + strconv.Itoa(id) + `}`, check: checkJWT(h.clock)}
}

func mintOK(h *harness, token string) reply {
	exp := h.clock.Now().Add(time.Hour).Format(time.RFC3339)
	return reply{status: 201, body: `{"token":"` + token + `","expires_at":"` + exp + `"}`,
		check: func(t *testing.T, r *http.Request, body []byte) {
			checkJWT(h.clock)(t, r, body)
			var got map[string]any
			if !assert.NoError(t, json.Unmarshal(body, &got), "mint body %q", body) {
				return
			}
			want := map[string]any{"repositories": []any{"r"}, "permissions": map[string]any{"contents": "write"}}
			assert.Equal(t, want, got, "mint body")
		}}
}

func withToken(token string, rep reply) reply {
	rep.check = func(t *testing.T, r *http.Request, _ []byte) {
		assert.Equal(t, "Bearer "+token, r.Header.Get("Authorization"), "resource Authorization")
	}
	return rep
}

func TestAppAuthMintsOnceMasksAndReuses(t *testing.T) {
	t.Parallel()
	h := appHarness(t, nil)
	h.srv.on("GET", "/repos/o/r/installation", lookupOK(h, 7))
	h.srv.on("POST", "/app/installations/7/access_tokens", mintOK(h, "ghs_tokenOne"))
	for i := 0; i < 3; i++ {
		h.srv.on("GET", repoPath, withToken("ghs_tokenOne", reply{body: okRepo}))
	}
	for i := 0; i < 3; i++ {
		require.NoError(t, h.getRepo(context.Background(), Budget{}))
	}
	assert.Equal(t, "ghs_tokenOne", strings.Join(h.masked(), ","), "masked tokens")
	st := h.c.Stats()
	assert.Equal(t, int64(1), st.TokenMints, "Stats.TokenMints")
	assert.Equal(t, int64(5), st.Requests, "Stats.Requests")
	for _, r := range h.srv.requests() {
		assert.Equal(t, APIVersion, r.header.Get("X-GitHub-Api-Version"), r.method+" "+r.path+" api version")
		assert.Equal(t, "build-lock-test/1", r.header.Get("User-Agent"), r.method+" "+r.path+" user agent")
		assert.Contains(t, r.header.Get("Accept"), "application/vnd.github", r.method+" "+r.path+" accept")
	}
}

func TestAppTokenRefreshedFiveMinutesBeforeExpiry(t *testing.T) {
	t.Parallel()
	h := appHarness(t, nil)
	h.srv.on("GET", "/repos/o/r/installation", lookupOK(h, 7))
	h.srv.on("POST", "/app/installations/7/access_tokens", mintOK(h, "ghs_first"))
	h.srv.on("GET", repoPath, withToken("ghs_first", reply{body: okRepo}), withToken("ghs_first", reply{body: okRepo}))
	require.NoError(t, h.getRepo(context.Background(), Budget{}))
	h.clock.Advance(54 * time.Minute) // 6 min left: still fresh
	require.NoError(t, h.getRepo(context.Background(), Budget{}))
	h.clock.Advance(time.Minute) // 5 min left: refresh
	h.srv.on("POST", "/app/installations/7/access_tokens", mintOK(h, "ghs_second"))
	h.srv.on("GET", repoPath, withToken("ghs_second", reply{body: okRepo}))
	require.NoError(t, h.getRepo(context.Background(), Budget{}))
	assert.Equal(t, int64(2), h.c.Stats().TokenMints, "Stats.TokenMints")
	assert.Equal(t, "ghs_first,ghs_second", strings.Join(h.masked(), ","), "masked")
}

func TestApp401ReplaysOnceThenBacksOff(t *testing.T) {
	t.Parallel()
	t.Run("first 401 re-mints and replays without an attempt", func(t *testing.T) {
		t.Parallel()
		h := appHarness(t, nil)
		h.srv.on("GET", "/repos/o/r/installation", lookupOK(h, 7))
		h.srv.on("POST", "/app/installations/7/access_tokens", mintOK(h, "ghs_stale"), mintOK(h, "ghs_fresh"))
		h.srv.on("GET", repoPath, withToken("ghs_stale", reply{status: 401, body: msg("Bad credentials")}), withToken("ghs_fresh", reply{body: okRepo}))
		require.NoError(t, h.getRepo(context.Background(), Budget{MaxAttempts: 1}))
		eqSleeps(t, h.clock.Sleeps())
		st := h.c.Stats()
		assert.Equal(t, int64(1), st.Replays, "Stats.Replays")
		assert.Equal(t, int64(2), st.TokenMints, "Stats.TokenMints")
		assert.Equal(t, "ghs_stale,ghs_fresh", strings.Join(h.masked(), ","), "masked")
	})
	t.Run("later 401s back off", func(t *testing.T) {
		t.Parallel()
		h := appHarness(t, nil)
		h.srv.on("GET", "/repos/o/r/installation", lookupOK(h, 7))
		h.srv.on("POST", "/app/installations/7/access_tokens", mintOK(h, "ghs_a"), mintOK(h, "ghs_b"))
		h.srv.on("GET", repoPath, reply{status: 401}, reply{status: 401}, reply{status: 401}, withToken("ghs_b", reply{body: okRepo}))
		require.NoError(t, h.getRepo(context.Background(), Budget{}))
		eqSleeps(t, h.clock.Sleeps(), ms(500), ms(1000))
		assert.Equal(t, int64(2), h.c.Stats().TokenMints, "Stats.TokenMints")
	})
	t.Run("replay does not consume an attempt", func(t *testing.T) {
		t.Parallel()
		h := appHarness(t, nil)
		h.srv.on("GET", "/repos/o/r/installation", lookupOK(h, 7))
		h.srv.on("POST", "/app/installations/7/access_tokens", mintOK(h, "ghs_a"), mintOK(h, "ghs_b"))
		h.srv.on("GET", repoPath, reply{status: 401}, reply{status: 401})
		e := mustErr(t, h.getRepo(context.Background(), Budget{MaxAttempts: 1}))
		assert.Equal(t, 1, e.Attempts, "Attempts")
		assert.Equal(t, 401, e.Status, "Status")
		assert.Equal(t, CodeRetryExhausted, e.Code, "Code")
	})
}

func TestMintFailureCountsAsOneAttemptAndIsNeverAmbiguous(t *testing.T) {
	t.Parallel()
	h := appHarness(t, nil)
	h.srv.on("GET", "/repos/o/r/installation", lookupOK(h, 7))
	h.srv.on("POST", "/app/installations/7/access_tokens",
		reply{status: 503, body: msg("unavailable")}, reply{status: 503}, reply{status: 503}, mintOK(h, "ghs_ok"))
	h.srv.on("PUT", filePath, withToken("ghs_ok", reply{status: 409, body: msg("sha mismatch")}))
	err := h.putFile(context.Background(), Budget{})
	e := mustErr(t, err)
	assert.Equal(t, ClassConflict, e.Class, "Class")
	assert.Equal(t, false, e.MaybeApplied, "MaybeApplied")
	assert.Equal(t, 2, e.Attempts, "Attempts")
	eqSleeps(t, h.clock.Sleeps(), ms(500), ms(1000), ms(500))
	w := h.warnings()
	require.Len(t, w, 3, "warnings")
	assert.Equal(t, "POST /app/installations/7/access_tokens returned HTTP 503; retrying in 500 ms (attempt 1/3)", w[0], "warning 0")
	assert.Equal(t, "PUT contents locks/x.json could not obtain credentials; retrying in 500 ms (attempt 1/5)", w[2], "warning 2")
}

func TestCredentialExhaustionNamesTheCredentialFailure(t *testing.T) {
	t.Parallel()
	h := appHarness(t, nil)
	h.srv.on("GET", "/repos/o/r/installation", lookupOK(h, 7))
	for i := 0; i < 6; i++ {
		h.srv.on("POST", "/app/installations/7/access_tokens", reply{status: 502, body: msg("Bad Gateway"), header: hdr("X-GitHub-Request-Id", "MINT-"+strconv.Itoa(i))})
	}
	err := h.putFile(context.Background(), Budget{MaxAttempts: 2})
	e := mustErr(t, err)
	assert.Equal(t, true, e.CredentialFailure, "CredentialFailure")
	assert.Equal(t, true, IsCredentialFailure(err), "IsCredentialFailure")
	assert.Equal(t, CodeRetryExhausted, e.Code, "Code")
	assert.Equal(t, 0, e.Status, "Status")
	assert.Equal(t, false, e.MaybeApplied, "MaybeApplied")
	assert.Equal(t, "PUT contents locks/x.json exhausted its bounded GitHub API retry budget after 2 attempt(s); last failure: "+
		"credential unavailable: POST /app/installations/7/access_tokens exhausted its bounded GitHub API retry budget after 3 attempt(s); "+
		"last failure: HTTP 502: Bad Gateway; request-id=MINT-5", e.Error(), "Error()")
}

func TestMintInheritsTheCallDeadline(t *testing.T) {
	t.Parallel()
	h := appHarness(t, nil)
	start := h.clock.Now()
	h.srv.on("GET", "/repos/o/r/installation", lookupOK(h, 7))
	for i := 0; i < 4; i++ {
		h.srv.on("POST", "/app/installations/7/access_tokens", reply{status: 500})
	}
	e := mustErr(t, h.putFile(context.Background(), Budget{Deadline: start.Add(5 * time.Second)}))
	// Not 3 attempts: the mint retries for as long as the serving call may.
	eqSleeps(t, h.clock.Sleeps(), ms(500), ms(1000), ms(2000), ms(1500))
	assert.Equal(t, CodeRetryExhausted, e.Code, "Code")
	assert.Equal(t, true, e.DeadlineElapsed, "DeadlineElapsed")
	assert.Equal(t, true, e.CredentialFailure, "CredentialFailure")
}

func TestMint404LooksUpTheInstallationOnceMore(t *testing.T) {
	t.Parallel()
	h := appHarness(t, nil)
	h.srv.on("GET", "/repos/o/r/installation", lookupOK(h, 7), lookupOK(h, 8))
	h.srv.on("POST", "/app/installations/7/access_tokens", reply{status: 404, body: msg("Not Found")})
	h.srv.on("POST", "/app/installations/8/access_tokens", mintOK(h, "ghs_eight"))
	h.srv.on("GET", repoPath, withToken("ghs_eight", reply{body: okRepo}))
	require.NoError(t, h.getRepo(context.Background(), Budget{}))
	eqSleeps(t, h.clock.Sleeps())
}

func TestFatalCredentialFailuresEndTheCall(t *testing.T) {
	t.Parallel()
	t.Run("no installation", func(t *testing.T) {
		t.Parallel()
		h := appHarness(t, nil)
		h.srv.on("GET", "/repos/o/r/installation", reply{status: 404, body: msg("Not Found")})
		e := mustErr(t, h.getRepo(context.Background(), Budget{}))
		assert.Equal(t, ClassFatal, e.Class, "Class")
		assert.Equal(t, true, e.CredentialFailure, "CredentialFailure")
		assert.Equal(t, false, IsNotFound(e), "IsNotFound (the resource was never asked)")
		assert.Equal(t, "GET repos o/r failed: credential unavailable: GET /repos/o/r/installation failed with HTTP 404: Not Found", e.Error(), "Error()")
	})
	t.Run("mint without expiry", func(t *testing.T) {
		t.Parallel()
		h := appHarness(t, nil)
		h.srv.on("GET", "/repos/o/r/installation", lookupOK(h, 7))
		h.srv.on("POST", "/app/installations/7/access_tokens", reply{status: 201, body: `{"token":"ghs_noexpiry"}`})
		e := mustErr(t, h.getRepo(context.Background(), Budget{}))
		assert.Equal(t, true, e.CredentialFailure, "CredentialFailure")
		assert.Contains(t, e.Error(), "missing a valid token or expiry", "Error()")
		assert.Equal(t, 0, len(h.masked()), "masked (an unusable token is never used)")
	})
	t.Run("org installation for the reader", func(t *testing.T) {
		t.Parallel()
		h := appHarness(t, func(c *Config) {
			c.InstallationRepository = ""
			c.InstallationOwner = "o"
			c.TokenRepositories = nil
			c.Permissions = nil
		})
		h.srv.on("GET", "/orgs/o/installation", lookupOK(h, 9))
		h.srv.on("POST", "/app/installations/9/access_tokens", reply{status: 201,
			body: `{"token":"ghs_reader","expires_at":"` + h.clock.Now().Add(time.Hour).Format(time.RFC3339) + `"}`})
		h.srv.on("GET", repoPath, withToken("ghs_reader", reply{body: okRepo}))
		require.NoError(t, h.getRepo(context.Background(), Budget{}))
	})
}

func TestPrivateKeyHandling(t *testing.T) {
	t.Parallel()
	_, pemBytes := appKey(t)
	oneLine := strings.ReplaceAll(strings.TrimSpace(string(pemBytes)), "\n", `\n`)
	require.NotContains(t, oneLine, "\n", "test key still has a real newline")
	base := Config{AppID: testAppID, InstallationRepository: "o/r", Clock: clock.NewFake(testStart())}
	cfg := base
	cfg.PrivateKey = []byte(oneLine)
	_, err := New(context.Background(), cfg)
	require.NoError(t, err, "key with literal \\n sequences")
	bad := "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n-----END RSA PRIVATE KEY-----\n"
	cfg.PrivateKey = []byte(bad)
	_, err = New(context.Background(), cfg)
	require.Error(t, err, "expected an invalid key error")
	assert.Contains(t, err.Error(), "is not a valid private key", "error")
	assert.NotContains(t, err.Error(), "PRIVATE KEY", "error echoes the key")
	assert.NotContains(t, err.Error(), "MIIB", "error echoes the key")
}

func TestConcurrentCallsShareOneMint(t *testing.T) {
	t.Parallel()
	h := appHarness(t, nil)
	h.srv.on("GET", "/repos/o/r/installation", lookupOK(h, 7))
	h.srv.on("POST", "/app/installations/7/access_tokens", mintOK(h, "ghs_shared"))
	const n = 8
	for i := 0; i < n; i++ {
		h.srv.on("GET", repoPath, withToken("ghs_shared", reply{body: okRepo}))
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- h.getRepo(context.Background(), Budget{})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.Equal(t, int64(1), h.c.Stats().TokenMints, "Stats.TokenMints")
}

func lookupWithAccount(h *harness, id int, login string, accountID int) reply {
	return reply{body: `{"id":` + strconv.Itoa(id) + `,"account":{"login":"` + login + `","id":` + strconv.Itoa(accountID) + `}}`, check: checkJWT(h.clock)}
}

// TestKnownInstallationSkipsTheLookup: an installation an earlier step
// looked up (Config.Installation) is minted from directly, its account
// answers InstallationAccount, and no lookup is made; one without its
// account is not trusted and the installation is looked up.
func TestKnownInstallationSkipsTheLookup(t *testing.T) {
	t.Parallel()
	known := KnownInstallation{ID: 7, AccountLogin: "o", AccountID: 99}
	h := appHarness(t, func(c *Config) { c.Installation = &known })
	h.srv.on("POST", "/app/installations/7/access_tokens", mintOK(h, "ghs_seven"))
	h.srv.on("GET", repoPath, withToken("ghs_seven", reply{body: okRepo}))
	require.NoError(t, h.getRepo(context.Background(), Budget{}))
	for _, r := range h.srv.requests() {
		assert.NotEqual(t, "/repos/o/r/installation", r.path, "no lookup")
	}
	got, ok := h.c.KnownInstallation()
	assert.True(t, ok)
	assert.Equal(t, known, got)
	login, id, ok := h.c.InstallationAccount()
	assert.True(t, ok)
	assert.Equal(t, "o", login)
	assert.Equal(t, int64(99), id)

	partial := appHarness(t, func(c *Config) { c.Installation = &KnownInstallation{ID: 7} })
	partial.srv.on("GET", "/repos/o/r/installation", lookupWithAccount(partial, 8, "o", 99))
	partial.srv.on("POST", "/app/installations/8/access_tokens", mintOK(partial, "ghs_eight"))
	partial.srv.on("GET", repoPath, withToken("ghs_eight", reply{body: okRepo}))
	require.NoError(t, partial.getRepo(context.Background(), Budget{}))
	got, ok = partial.c.KnownInstallation()
	assert.True(t, ok)
	assert.Equal(t, KnownInstallation{ID: 8, AccountLogin: "o", AccountID: 99}, got, "looked up, not taken from the partial note")
}

// TestKnownTokenSkipsTheMint: a token an earlier step of the job minted
// from the known installation is masked and used while fresh, with no
// lookup and no mint (issue 23: requests per admitted job); a token within
// TokenRefreshMargin of its expiry is not used; one GitHub rejects (401) is
// replaced by a fresh mint and the call replayed; without the installation
// it names, it is ignored.
func TestKnownTokenSkipsTheMint(t *testing.T) {
	t.Parallel()
	known := KnownInstallation{ID: 7, AccountLogin: "o", AccountID: 99}
	// Every harness's clock starts at testStart().
	fresh := &KnownToken{Token: "ghs_noted", ExpiresAt: testStart().Add(30 * time.Minute)}

	t.Run("fresh: used, masked, nothing minted", func(t *testing.T) {
		t.Parallel()
		h := appHarness(t, func(c *Config) { c.Installation, c.InstallationToken = &known, fresh })
		h.srv.on("GET", repoPath, withToken("ghs_noted", reply{body: okRepo}))
		h.srv.on("GET", repoPath, withToken("ghs_noted", reply{body: okRepo}))
		require.NoError(t, h.getRepo(context.Background(), Budget{}))
		require.NoError(t, h.getRepo(context.Background(), Budget{}))
		assert.Equal(t, []string{"ghs_noted"}, h.masked(), "masked before use")
		assert.Equal(t, int64(0), h.c.Stats().TokenMints)
		assert.Len(t, h.srv.requests(), 2, "the two reads only")
		tok, inst, ok := h.c.InstallationToken()
		require.True(t, ok)
		assert.Equal(t, "ghs_noted", tok.Token)
		assert.Equal(t, known, inst)
	})

	t.Run("stale: minted anew", func(t *testing.T) {
		t.Parallel()
		stale := &KnownToken{Token: "ghs_stale", ExpiresAt: testStart().Add(TokenRefreshMargin - time.Second)}
		h := appHarness(t, func(c *Config) { c.Installation, c.InstallationToken = &known, stale })
		h.srv.on("POST", "/app/installations/7/access_tokens", mintOK(h, "ghs_new"))
		h.srv.on("GET", repoPath, withToken("ghs_new", reply{body: okRepo}))
		require.NoError(t, h.getRepo(context.Background(), Budget{}))
		assert.Equal(t, int64(1), h.c.Stats().TokenMints)
	})

	t.Run("rejected: minted anew and replayed", func(t *testing.T) {
		t.Parallel()
		h := appHarness(t, func(c *Config) { c.Installation, c.InstallationToken = &known, fresh })
		h.srv.on("GET", repoPath, withToken("ghs_noted", reply{status: 401, body: msg("Bad credentials")}))
		h.srv.on("POST", "/app/installations/7/access_tokens", mintOK(h, "ghs_new"))
		h.srv.on("GET", repoPath, withToken("ghs_new", reply{body: okRepo}))
		require.NoError(t, h.getRepo(context.Background(), Budget{}))
		assert.Equal(t, int64(1), h.c.Stats().TokenMints)
		got, _, ok := h.c.InstallationToken()
		require.True(t, ok)
		assert.Equal(t, "ghs_new", got.Token)
	})

	t.Run("without its installation: ignored", func(t *testing.T) {
		t.Parallel()
		h := appHarness(t, func(c *Config) { c.InstallationToken = fresh })
		h.srv.on("GET", "/repos/o/r/installation", lookupWithAccount(h, 7, "o", 99))
		h.srv.on("POST", "/app/installations/7/access_tokens", mintOK(h, "ghs_new"))
		h.srv.on("GET", repoPath, withToken("ghs_new", reply{body: okRepo}))
		require.NoError(t, h.getRepo(context.Background(), Budget{}))
		assert.Equal(t, int64(1), h.c.Stats().TokenMints)
	})
}

// TestKnownInstallationGoneIsLookedUpAgain: a known installation whose mint
// answers 404 (uninstalled, or another App's) is looked up once more, and
// the client then reports the installation it really minted from.
func TestKnownInstallationGoneIsLookedUpAgain(t *testing.T) {
	t.Parallel()
	h := appHarness(t, func(c *Config) { c.Installation = &KnownInstallation{ID: 7, AccountLogin: "o", AccountID: 99} })
	h.srv.on("POST", "/app/installations/7/access_tokens", reply{status: 404, body: msg("Not Found")})
	h.srv.on("GET", "/repos/o/r/installation", lookupWithAccount(h, 8, "o", 100))
	h.srv.on("POST", "/app/installations/8/access_tokens", mintOK(h, "ghs_eight"))
	h.srv.on("GET", repoPath, withToken("ghs_eight", reply{body: okRepo}))
	require.NoError(t, h.getRepo(context.Background(), Budget{}))
	got, ok := h.c.KnownInstallation()
	assert.True(t, ok)
	assert.Equal(t, KnownInstallation{ID: 8, AccountLogin: "o", AccountID: 100}, got)
}
