package ghclient

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewValidation(t *testing.T) {
	t.Parallel()
	_, pemBytes := appKey(t)
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no credentials", Config{}, "no credentials"},
		{"both credentials", Config{Token: "x", AppID: 1, PrivateKey: pemBytes, InstallationOwner: "o"}, "either a token or a GitHub App"},
		{"app without installation target", Config{AppID: 1, PrivateKey: pemBytes}, "exactly one of InstallationRepository"},
		{"app with both targets", Config{AppID: 1, PrivateKey: pemBytes, InstallationOwner: "o", InstallationRepository: "o/r"}, "exactly one of"},
		{"bad repository", Config{AppID: 1, PrivateKey: pemBytes, InstallationRepository: "o/r/x"}, "is not owner/name"},
		{"app without key", Config{AppID: 1, InstallationOwner: "o"}, "private key is empty"},
		{"key without app id", Config{PrivateKey: pemBytes, InstallationOwner: "o"}, "positive integer"},
		{"bad api url", Config{Token: "x", APIURL: "ftp://example.com"}, "invalid GitHub API URL"},
		{"credentials in api url", Config{Token: "x", APIURL: "https://user:secret@example.com/api/v3"}, "must not contain credentials"},
		{"knob out of range", Config{Token: "x", Knobs: Knobs{MaxAttempts: 1000}}, "max attempts"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := New(context.Background(), tc.cfg)
			require.Error(t, err, "expected error containing %q", tc.want)
			assert.Contains(t, err.Error(), tc.want, "error")
			assert.NotContains(t, err.Error(), "secret", "error echoes a credential")
		})
	}
}

func TestAPIURLForms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", "https://api.github.com/"},
		{"https://api.github.com", "https://api.github.com/"},
		{"https://api.github.com/", "https://api.github.com/"},
		{"https://ghe.example.com/api/v3", "https://ghe.example.com/api/v3/"},
		{"https://ghe.example.com/api/v3/", "https://ghe.example.com/api/v3/"},
	} {
		c, err := New(context.Background(), Config{Token: "x", APIURL: tc.in})
		require.NoError(t, err)
		assert.Equal(t, tc.want, c.GitHub().BaseURL.String(), "BaseURL for "+tc.in)
	}
}

func TestEveryRequestCarriesPinnedHeaders(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.srv.on("GET", repoPath, reply{status: 500}, reply{body: okRepo})
	h.srv.on("PUT", filePath, reply{body: okPut})
	require.NoError(t, h.getRepo(context.Background(), Budget{}))
	require.NoError(t, h.putFile(context.Background(), Budget{}))
	// A call made directly through GitHub(), outside Do.
	h.srv.on("GET", repoPath, reply{body: okRepo})
	_, _, err := h.c.GitHub().Repositories.Get(context.Background(), "o", "r")
	require.NoError(t, err)
	reqs := h.srv.requests()
	assert.Equal(t, 4, len(reqs), "requests")
	for _, r := range reqs {
		assert.Equal(t, "2022-11-28", r.header.Get("X-GitHub-Api-Version"), "api version")
		assert.Equal(t, DefaultUserAgent(), r.header.Get("User-Agent"), "user agent")
		assert.Contains(t, r.header.Get("Accept"), "application/vnd.github", "accept")
		assert.Equal(t, "Bearer test-plain-token-value", r.header.Get("Authorization"), "authorization")
	}
}

func TestOpNameDefaultsToTheRequest(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.srv.on("GET", repoPath, reply{status: 404, body: msg("Not Found"), header: hdr("X-GitHub-Request-Id", "ID-9")})
	err := h.c.Do(context.Background(), Op{}, func(ctx context.Context) (*github.Response, error) {
		_, resp, err := h.c.GitHub().Repositories.Get(ctx, "o", "r")
		return resp, err
	})
	assert.Equal(t, "GET /api/v3/repos/o/r failed with HTTP 404: Not Found; request-id=ID-9", err.Error(), "Error()")
}

func TestErrorTextNeverCarriesSecrets(t *testing.T) {
	t.Parallel()
	forbidden := []string{"ghs_", "Bearer", "eyJ", "PRIVATE KEY", "test-plain-token-value"}
	var texts []string
	collect := func(h *harness, err error) {
		if err != nil {
			texts = append(texts, err.Error())
			for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(u) {
				texts = append(texts, u.Error())
			}
		}
		texts = append(texts, h.warnings()...)
	}
	// Servers that echo credentials back in their messages; the plain token
	// does not look like a token, so only exact redaction can catch it.
	echo := `{"message":"token ghs_leakedToken1 rejected; Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiI0MiJ9.c2ln; -----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----"}`
	echoPlain := `{"message":"token test-plain-token-value rejected; Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiI0MiJ9.c2ln"}`

	h := appHarness(t, nil)
	h.srv.on("GET", "/repos/o/r/installation", lookupOK(h, 7))
	h.srv.on("POST", "/app/installations/7/access_tokens", mintOK(h, "ghs_tokenSecret1"), reply{status: 503, body: echo}, reply{status: 500, body: echo}, reply{status: 502, body: echo})
	h.srv.on("GET", repoPath, reply{status: 401, body: echo})
	collect(h, h.getRepo(context.Background(), Budget{MaxAttempts: 1}))

	h2 := appHarness(t, nil)
	h2.srv.on("GET", "/repos/o/r/installation", lookupOK(h2, 7))
	h2.srv.on("POST", "/app/installations/7/access_tokens", mintOK(h2, "ghs_tokenSecret2"))
	h2.srv.on("PUT", filePath, reply{status: 503, body: echo}, reply{status: 409, body: echo})
	collect(h2, h2.putFile(context.Background(), Budget{}))

	h3 := newHarness(t, nil)
	h3.srv.on("GET", repoPath, reply{status: 403, body: echoPlain}, reply{status: 400, body: "<html><title>bad request</title>" + echo + echoPlain + "</html>", header: hdr("Content-Type", "text/html")})
	collect(h3, h3.getRepo(context.Background(), Budget{}))
	collect(h3, h3.getRepo(context.Background(), Budget{}))

	_, err := New(context.Background(), Config{AppID: 1, InstallationOwner: "o", PrivateKey: []byte("-----BEGIN RSA PRIVATE KEY-----\nnot a key\n-----END RSA PRIVATE KEY-----")})
	texts = append(texts, err.Error())

	require.GreaterOrEqual(t, len(texts), 8, "collected only %d texts: %q", len(texts), texts)
	for _, s := range texts {
		for _, f := range forbidden {
			assert.NotContains(t, s, f)
		}
	}
}

func TestRedactText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"token ghs_abc123 and gho_x":                                  "token [REDACTED] and [REDACTED]",
		"github_pat_11ABC_def":                                        "[REDACTED]",
		"Authorization: Bearer abc.def":                               "[REDACTED]",
		"bearer xyz; rest":                                            "[REDACTED]; rest",
		"jwt eyJhbGciOi.eyJzdWIi.sig end":                             "jwt [REDACTED] end",
		"https://h/x?access_token=abc&y=1":                            "https://h/x?access_token=[REDACTED]&y=1",
		"https://user:pw@host/api":                                    "https://[REDACTED]@host/api",
		"-----BEGIN PRIVATE KEY-----\nAAA\n-----END PRIVATE KEY-----": "[REDACTED]",
		"installation token response is missing a valid token":        "installation token response is missing a valid token",
	} {
		assert.Equal(t, want, redactText(in), "redactText("+in+")")
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 6, 2, 12, 0, 0, 0, time.UTC) // a Monday
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{"30", 30 * time.Second, true},
		{"007", 7 * time.Second, true},
		{"+5", 0, false},
		{"5 ", 0, false},
		{"Mon, 02 Jun 2025 12:00:30 GMT", 30 * time.Second, true},
		{"Mon, 02 Jun 2025 11:00:00 GMT", 0, true},
		{"Tue, 02 Jun 2025 12:00:30 GMT", 0, false},
		{"Mon, 2 Jun 2025 12:00:30 GMT", 0, false},
		{"Mon, 02 Jun 2025 12:00:30.5 GMT", 0, false},
		{"Mon, 02 Jun 2025 12:00:30 UTC", 0, false},
		{"Monday, 02-Jun-25 12:00:30 GMT", 0, false},
		{"Mon, 02 Jun 2025 12:00:30 GMT x", 0, false},
	} {
		got, ok := parseRetryAfter(tc.in, now)
		assert.Equal(t, tc.want, got, "parseRetryAfter(%q)", tc.in)
		assert.Equal(t, tc.ok, ok, "parseRetryAfter(%q) ok", tc.in)
	}
}

func TestWhoaThereNeedsAllMarkers(t *testing.T) {
	t.Parallel()
	html := http.Header{"Content-Type": {"text/html"}}
	assert.Equal(t, true, isWhoaThere(html, whoaBody), "full page")
	assert.Equal(t, false, isWhoaThere(http.Header{"Content-Type": {"application/json"}}, whoaBody), "json content type")
	assert.Equal(t, false, isWhoaThere(html, strings.Replace(whoaBody, "Whoa there!", "Hello", 1)), "missing marker")
}

func TestClassString(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "ambiguous", ClassAmbiguous.String(), "String")
	assert.Equal(t, "class(42)", Class(42).String(), "String")
}
