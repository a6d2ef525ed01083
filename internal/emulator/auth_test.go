package emulator

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// JWT rules: RS256, iss = app id, iat/exp with drift, exp at most 10 minutes.
// https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-json-web-token-jwt-for-a-github-app
func TestJWTVerification(t *testing.T) {
	v := newEnv(t)
	_, wrong := keys(t)
	require.Equal(t, http.StatusOK, v.do("GET", "/app", v.appJWT(), nil).status)
	require.Equal(t, http.StatusOK, v.do("GET", "/app", v.jwt(-60*time.Second, 540*time.Second, v.key, 77), nil).status, "numeric iss")
	require.Equal(t, http.StatusOK, v.do("GET", "/repos/example-org/build-lock/installation", v.appJWT(), nil).status)
	require.Equal(t, http.StatusOK, v.do("GET", "/orgs/example-org/installation", v.appJWT(), nil).status)
	require.Equal(t, http.StatusNotFound, v.do("GET", "/orgs/unknown-org/installation", v.appJWT(), nil).status)
	cases := map[string]string{
		"wrong key": v.jwt(-60*time.Second, 540*time.Second, wrong, "77"),
		"expired":   v.jwt(-20*time.Minute, -5*time.Minute, v.key, "77"),
		"too long":  v.jwt(-60*time.Second, 11*time.Minute, v.key, "77"),
		"future":    v.jwt(5*time.Minute, 9*time.Minute, v.key, "77"),
		"unknown":   v.jwt(-60*time.Second, 540*time.Second, v.key, "999"),
	}
	for name, tok := range cases {
		res := v.do("GET", "/app", tok, nil)
		require.Equal(t, http.StatusUnauthorized, res.status, name)
	}
	// An installation token is not a JWT.
	require.Equal(t, http.StatusUnauthorized, v.do("GET", "/app", v.mint(nil), nil).status)
	// Not installed on a repository → 404.
	v.e.AddRepo("someone-else", "r", 0, "")
	require.Equal(t, http.StatusNotFound, v.do("GET", "/repos/someone-else/r/installation", v.appJWT(), nil).status)
}

// Installation tokens: https://docs.github.com/en/rest/apps/apps#create-an-installation-access-token-for-an-app
func TestInstallationTokenScoping(t *testing.T) {
	v := newEnv(t)
	res := v.do("POST", "/app/installations/"+itoa(v.instID)+"/access_tokens", v.appJWT(),
		map[string]any{"repositories": []string{testRepo}, "permissions": map[string]string{"contents": "read"}})
	require.Equal(t, http.StatusCreated, res.status)
	m := res.json(t)
	tok := m["token"].(string)
	require.True(t, strings.HasPrefix(tok, "ghs_") && len(tok) == 40, tok)
	exp, err := time.Parse(time.RFC3339, m["expires_at"].(string))
	require.NoError(t, err)
	require.Equal(t, testStart.Add(time.Hour), exp)
	require.Equal(t, "selected", m["repository_selection"].(string))

	// Readable repo; repo outside the list → 404; missing permission → 403.
	require.Equal(t, http.StatusOK, v.do("GET", "/repos/example-org/build-lock", tok, nil).status)
	require.Equal(t, http.StatusNotFound, v.do("GET", "/repos/example-org/other", tok, nil).status)
	res = v.put(tok, "x.json", "{}", "", "")
	require.Equal(t, http.StatusForbidden, res.status)
	require.Equal(t, "Resource not accessible by integration", res.json(t)["message"].(string))
	require.Equal(t, http.StatusForbidden, v.do("GET", "/repos/example-org/build-lock/actions/runs/1", tok, nil).status)

	// Requests beyond the installation → 422; unknown installation → 404.
	require.Equal(t, http.StatusUnprocessableEntity, v.do("POST", "/app/installations/"+itoa(v.instID)+"/access_tokens", v.appJWT(),
		map[string]any{"permissions": map[string]string{"administration": "write"}}).status)
	require.Equal(t, http.StatusUnprocessableEntity, v.do("POST", "/app/installations/"+itoa(v.instID)+"/access_tokens", v.appJWT(),
		map[string]any{"repositories": []string{"missing"}}).status)
	require.Equal(t, http.StatusNotFound, v.do("POST", "/app/installations/1/access_tokens", v.appJWT(), nil).status)

	// Tokens expire after an hour (fake clock) → 401 Bad credentials.
	v.clk.Advance(time.Hour)
	res = v.do("GET", "/repos/example-org/build-lock", tok, nil)
	require.Equal(t, http.StatusUnauthorized, res.status)
	require.Equal(t, "Bad credentials", res.json(t)["message"].(string))
	require.Equal(t, http.StatusUnauthorized, v.do("GET", "/repos/example-org/build-lock", "ghs_unknown", nil).status)
}

// Primary limits and headers: https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api
func TestPrimaryRateLimitAndReset(t *testing.T) {
	v := newEnv(t, func(o *Options) { o.InstallationRateLimit = 3 })
	tok := v.mint(nil)
	for i := 0; i < 3; i++ {
		res := v.do("GET", "/repos/example-org/build-lock", tok, nil)
		require.Equal(t, http.StatusOK, res.status)
		require.Equal(t, "3", res.header.Get("X-RateLimit-Limit"))
		require.Equal(t, strconv.Itoa(2-i), res.header.Get("X-RateLimit-Remaining"))
		require.Equal(t, strconv.Itoa(i+1), res.header.Get("X-RateLimit-Used"))
		require.Equal(t, "core", res.header.Get("X-RateLimit-Resource"))
		require.Equal(t, strconv.FormatInt(testStart.Add(time.Hour).Unix(), 10), res.header.Get("X-RateLimit-Reset"))
		require.True(t, res.header.Get("X-GitHub-Request-Id") != "")
	}
	res := v.do("GET", "/repos/example-org/build-lock", tok, nil)
	require.Equal(t, http.StatusForbidden, res.status)
	require.Equal(t, "0", res.header.Get("X-RateLimit-Remaining"))
	require.True(t, strings.HasPrefix(res.json(t)["message"].(string), "API rate limit exceeded for installation ID "+itoa(v.instID)))
	v.clk.Advance(time.Hour)
	tok = v.mint(nil)
	res = v.do("GET", "/repos/example-org/build-lock", tok, nil)
	require.Equal(t, http.StatusOK, res.status)
	require.Equal(t, "2", res.header.Get("X-RateLimit-Remaining"))
}

// GITHUB_TOKEN: 1,000 requests/hour; issue authors are github-actions[bot].
func TestPlainTokenAndUserAgent(t *testing.T) {
	v := newEnv(t)
	v.e.AddToken("gh-workflow-token", TokenScope{Label: "ci", Repos: []string{"example-org/build-lock"}})
	res := v.do("GET", "/repos/example-org/build-lock", "gh-workflow-token", nil)
	require.Equal(t, http.StatusOK, res.status)
	require.Equal(t, "1000", res.header.Get("X-RateLimit-Limit"))
	require.Equal(t, http.StatusNotFound, v.do("GET", "/repos/example-org/other", "gh-workflow-token", nil).status)
	// An explicitly empty User-Agent is not sent by net/http; GitHub answers 403:
	// https://docs.github.com/en/rest/using-the-rest-api/getting-started-with-the-rest-api#user-agent
	res = v.do("GET", "/repos/example-org/build-lock", "gh-workflow-token", nil, "User-Agent", "")
	require.Equal(t, http.StatusForbidden, res.status)
	require.True(t, strings.Contains(res.json(t)["message"].(string), "User-Agent"))
	m := v.e.Metrics()
	require.Equal(t, int64(2), m.ByCredential["token:ci"].Charged) // 404s count too; the UA 403 does not
	require.Equal(t, "2022-11-28", m.Log[0].APIVersion)
	// Unsupported API version → 400.
	require.Equal(t, http.StatusBadRequest, v.do("GET", "/repos/example-org/build-lock", "gh-workflow-token", nil, "X-GitHub-Api-Version", "1999-01-01").status)
}
