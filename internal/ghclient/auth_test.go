package ghclient

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	jwt "github.com/golang-jwt/jwt/v4"
	"github.com/google/go-github/v66/github"

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
		if !ok {
			t.Errorf("JWT call without Bearer auth: %q", r.Header.Get("Authorization"))
			return
		}
		claims := &jwt.RegisteredClaims{}
		_, err := jwt.ParseWithClaims(raw, claims, func(*jwt.Token) (any, error) { return &testKey.PublicKey, nil },
			jwt.WithValidMethods([]string{"RS256"}), jwt.WithoutClaimsValidation())
		if err != nil {
			t.Errorf("JWT does not verify: %v", err)
			return
		}
		now := clk.Now().Truncate(time.Second)
		if claims.Issuer != strconv.Itoa(testAppID) {
			t.Errorf("iss = %q", claims.Issuer)
		}
		if !claims.IssuedAt.Time.Equal(now.Add(-60 * time.Second)) {
			t.Errorf("iat = %s, want %s", claims.IssuedAt.Time, now.Add(-60*time.Second))
		}
		if !claims.ExpiresAt.Time.Equal(now.Add(540 * time.Second)) {
			t.Errorf("exp = %s, want %s", claims.ExpiresAt.Time, now.Add(540*time.Second))
		}
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
			if err := json.Unmarshal(body, &got); err != nil {
				t.Errorf("mint body %q: %v", body, err)
				return
			}
			want := map[string]any{"repositories": []any{"r"}, "permissions": map[string]any{"contents": "write"}}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("mint body = %v, want %v", got, want)
			}
		}}
}

func withToken(token string, rep reply) reply {
	rep.check = func(t *testing.T, r *http.Request, _ []byte) {
		if got := r.Header.Get("Authorization"); got != "Bearer "+token {
			t.Errorf("resource Authorization = %q, want the token %q", got, token)
		}
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
		mustNoErr(t, h.getRepo(context.Background(), Budget{}))
	}
	eq(t, strings.Join(h.masked(), ","), "ghs_tokenOne", "masked tokens")
	st := h.c.Stats()
	eq(t, st.TokenMints, int64(1), "Stats.TokenMints")
	eq(t, st.Requests, int64(5), "Stats.Requests")
	for _, r := range h.srv.requests() {
		eq(t, r.header.Get("X-GitHub-Api-Version"), APIVersion, r.method+" "+r.path+" api version")
		eq(t, r.header.Get("User-Agent"), "build-lock-test/1", r.method+" "+r.path+" user agent")
		has(t, r.header.Get("Accept"), "application/vnd.github", r.method+" "+r.path+" accept")
	}
}

func TestAppTokenRefreshedFiveMinutesBeforeExpiry(t *testing.T) {
	t.Parallel()
	h := appHarness(t, nil)
	h.srv.on("GET", "/repos/o/r/installation", lookupOK(h, 7))
	h.srv.on("POST", "/app/installations/7/access_tokens", mintOK(h, "ghs_first"))
	h.srv.on("GET", repoPath, withToken("ghs_first", reply{body: okRepo}), withToken("ghs_first", reply{body: okRepo}))
	mustNoErr(t, h.getRepo(context.Background(), Budget{}))
	h.clock.Advance(54 * time.Minute) // 6 min left: still fresh
	mustNoErr(t, h.getRepo(context.Background(), Budget{}))
	h.clock.Advance(time.Minute) // 5 min left: refresh
	h.srv.on("POST", "/app/installations/7/access_tokens", mintOK(h, "ghs_second"))
	h.srv.on("GET", repoPath, withToken("ghs_second", reply{body: okRepo}))
	mustNoErr(t, h.getRepo(context.Background(), Budget{}))
	eq(t, h.c.Stats().TokenMints, int64(2), "Stats.TokenMints")
	eq(t, strings.Join(h.masked(), ","), "ghs_first,ghs_second", "masked")
}

func TestApp401ReplaysOnceThenBacksOff(t *testing.T) {
	t.Parallel()
	t.Run("first 401 re-mints and replays without an attempt", func(t *testing.T) {
		t.Parallel()
		h := appHarness(t, nil)
		h.srv.on("GET", "/repos/o/r/installation", lookupOK(h, 7))
		h.srv.on("POST", "/app/installations/7/access_tokens", mintOK(h, "ghs_stale"), mintOK(h, "ghs_fresh"))
		h.srv.on("GET", repoPath, withToken("ghs_stale", reply{status: 401, body: msg("Bad credentials")}), withToken("ghs_fresh", reply{body: okRepo}))
		mustNoErr(t, h.getRepo(context.Background(), Budget{MaxAttempts: 1}))
		eqSleeps(t, h.clock.Sleeps())
		st := h.c.Stats()
		eq(t, st.Replays, int64(1), "Stats.Replays")
		eq(t, st.TokenMints, int64(2), "Stats.TokenMints")
		eq(t, strings.Join(h.masked(), ","), "ghs_stale,ghs_fresh", "masked")
	})
	t.Run("later 401s back off", func(t *testing.T) {
		t.Parallel()
		h := appHarness(t, nil)
		h.srv.on("GET", "/repos/o/r/installation", lookupOK(h, 7))
		h.srv.on("POST", "/app/installations/7/access_tokens", mintOK(h, "ghs_a"), mintOK(h, "ghs_b"))
		h.srv.on("GET", repoPath, reply{status: 401}, reply{status: 401}, reply{status: 401}, withToken("ghs_b", reply{body: okRepo}))
		mustNoErr(t, h.getRepo(context.Background(), Budget{}))
		eqSleeps(t, h.clock.Sleeps(), ms(500), ms(1000))
		eq(t, h.c.Stats().TokenMints, int64(2), "Stats.TokenMints")
	})
	t.Run("replay does not consume an attempt", func(t *testing.T) {
		t.Parallel()
		h := appHarness(t, nil)
		h.srv.on("GET", "/repos/o/r/installation", lookupOK(h, 7))
		h.srv.on("POST", "/app/installations/7/access_tokens", mintOK(h, "ghs_a"), mintOK(h, "ghs_b"))
		h.srv.on("GET", repoPath, reply{status: 401}, reply{status: 401})
		e := mustErr(t, h.getRepo(context.Background(), Budget{MaxAttempts: 1}))
		eq(t, e.Attempts, 1, "Attempts")
		eq(t, e.Status, 401, "Status")
		eq(t, e.Code, CodeRetryExhausted, "Code")
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
	eq(t, e.Class, ClassConflict, "Class")
	eq(t, e.MaybeApplied, false, "MaybeApplied")
	eq(t, e.Attempts, 2, "Attempts")
	eqSleeps(t, h.clock.Sleeps(), ms(500), ms(1000), ms(500))
	w := h.warnings()
	if len(w) != 3 {
		t.Fatalf("warnings = %q", w)
	}
	eq(t, w[0], "POST /app/installations/7/access_tokens returned HTTP 503; retrying in 500 ms (attempt 1/3)", "warning 0")
	eq(t, w[2], "PUT contents locks/x.json could not obtain credentials; retrying in 500 ms (attempt 1/5)", "warning 2")
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
	eq(t, e.CredentialFailure, true, "CredentialFailure")
	eq(t, IsCredentialFailure(err), true, "IsCredentialFailure")
	eq(t, e.Code, CodeRetryExhausted, "Code")
	eq(t, e.Status, 0, "Status")
	eq(t, e.MaybeApplied, false, "MaybeApplied")
	eq(t, e.Error(), "PUT contents locks/x.json exhausted its bounded GitHub API retry budget after 2 attempt(s); last failure: "+
		"credential unavailable: POST /app/installations/7/access_tokens exhausted its bounded GitHub API retry budget after 3 attempt(s); "+
		"last failure: HTTP 502: Bad Gateway; request-id=MINT-5", "Error()")
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
	eq(t, e.Code, CodeRetryExhausted, "Code")
	eq(t, e.DeadlineElapsed, true, "DeadlineElapsed")
	eq(t, e.CredentialFailure, true, "CredentialFailure")
}

func TestMint404LooksUpTheInstallationOnceMore(t *testing.T) {
	t.Parallel()
	h := appHarness(t, nil)
	h.srv.on("GET", "/repos/o/r/installation", lookupOK(h, 7), lookupOK(h, 8))
	h.srv.on("POST", "/app/installations/7/access_tokens", reply{status: 404, body: msg("Not Found")})
	h.srv.on("POST", "/app/installations/8/access_tokens", mintOK(h, "ghs_eight"))
	h.srv.on("GET", repoPath, withToken("ghs_eight", reply{body: okRepo}))
	mustNoErr(t, h.getRepo(context.Background(), Budget{}))
	eqSleeps(t, h.clock.Sleeps())
}

func TestFatalCredentialFailuresEndTheCall(t *testing.T) {
	t.Parallel()
	t.Run("no installation", func(t *testing.T) {
		t.Parallel()
		h := appHarness(t, nil)
		h.srv.on("GET", "/repos/o/r/installation", reply{status: 404, body: msg("Not Found")})
		e := mustErr(t, h.getRepo(context.Background(), Budget{}))
		eq(t, e.Class, ClassFatal, "Class")
		eq(t, e.CredentialFailure, true, "CredentialFailure")
		eq(t, IsNotFound(e), false, "IsNotFound (the resource was never asked)")
		eq(t, e.Error(), "GET repos o/r failed: credential unavailable: GET /repos/o/r/installation failed with HTTP 404: Not Found", "Error()")
	})
	t.Run("mint without expiry", func(t *testing.T) {
		t.Parallel()
		h := appHarness(t, nil)
		h.srv.on("GET", "/repos/o/r/installation", lookupOK(h, 7))
		h.srv.on("POST", "/app/installations/7/access_tokens", reply{status: 201, body: `{"token":"ghs_noexpiry"}`})
		e := mustErr(t, h.getRepo(context.Background(), Budget{}))
		eq(t, e.CredentialFailure, true, "CredentialFailure")
		has(t, e.Error(), "missing a valid token or expiry", "Error()")
		eq(t, len(h.masked()), 0, "masked (an unusable token is never used)")
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
		mustNoErr(t, h.getRepo(context.Background(), Budget{}))
	})
}

func TestPrivateKeyHandling(t *testing.T) {
	t.Parallel()
	_, pemBytes := appKey(t)
	oneLine := strings.ReplaceAll(strings.TrimSpace(string(pemBytes)), "\n", `\n`)
	if strings.Contains(oneLine, "\n") {
		t.Fatal("test key still has a real newline")
	}
	base := Config{AppID: testAppID, InstallationRepository: "o/r", Clock: clock.NewFake(testStart())}
	cfg := base
	cfg.PrivateKey = []byte(oneLine)
	if _, err := New(context.Background(), cfg); err != nil {
		t.Fatalf("key with literal \\n sequences: %v", err)
	}
	bad := "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n-----END RSA PRIVATE KEY-----\n"
	cfg.PrivateKey = []byte(bad)
	_, err := New(context.Background(), cfg)
	if err == nil {
		t.Fatal("expected an invalid key error")
	}
	has(t, err.Error(), "is not a valid private key", "error")
	if containsAny(err.Error(), "PRIVATE KEY", "MIIB") {
		t.Errorf("error echoes the key: %q", err)
	}
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
		mustNoErr(t, err)
	}
	eq(t, h.c.Stats().TokenMints, int64(1), "Stats.TokenMints")
}
