package emulator

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v4"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
)

const (
	testOwner = "example-org"
	testRepo  = "build-lock"
	testAppID = 77
)

var (
	keyOnce           sync.Once
	testKey, otherKey *rsa.PrivateKey
	testStart         = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
)

func keys(t *testing.T) (*rsa.PrivateKey, *rsa.PrivateKey) {
	t.Helper()
	keyOnce.Do(func() {
		var err error
		if testKey, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
		if otherKey, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
	})
	return testKey, otherKey
}

type env struct {
	t      *testing.T
	e      *Emulator
	clk    *clock.Fake
	instID int64
	key    *rsa.PrivateKey
}

func newEnv(t *testing.T, opts ...func(*Options)) *env {
	t.Helper()
	k, _ := keys(t)
	clk := clock.NewFake(testStart)
	o := Options{Clock: clk, Seed: 1}
	for _, f := range opts {
		f(&o)
	}
	e := New(o)
	e.AddOwner(testOwner, 1, true)
	e.AddRepo(testOwner, testRepo, 10, "main")
	e.AddRepo(testOwner, "other", 11, "main")
	e.AddApp(testAppID, &k.PublicKey)
	id := e.InstallApp(testAppID, testOwner, nil)
	return &env{t: t, e: e, clk: clk, instID: id, key: k}
}

func (v *env) jwt(iat, exp time.Duration, key *rsa.PrivateKey, iss any) string {
	v.t.Helper()
	now := v.clk.Now()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"iat": now.Add(iat).Unix(), "exp": now.Add(exp).Unix(), "iss": iss})
	s, err := tok.SignedString(key)
	require.NoError(v.t, err)
	return s
}

// appJWT is the reference client's JWT: iat = now-60s, exp = now+540s.
func (v *env) appJWT() string { return v.jwt(-60*time.Second, 540*time.Second, v.key, "77") }

type result struct {
	status int
	header http.Header
	body   []byte
}

func (r result) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.body, &m), string(r.body))
	return m
}

func (v *env) do(method, path, token string, body any, hdr ...string) result {
	v.t.Helper()
	res, err := v.try(context.Background(), method, path, token, body, hdr...)
	require.NoError(v.t, err)
	return res
}

func (v *env) try(ctx context.Context, method, path, token string, body any, hdr ...string) (result, error) {
	return v.tryVia(v.e.Transport(), ctx, method, path, token, body, hdr...)
}

// tryVia is try through tr (a wrapper of the emulator's transport).
func (v *env) tryVia(tr http.RoundTripper, ctx context.Context, method, path, token string, body any, hdr ...string) (result, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequestWithContext(ctx, method, "http://emulator.test"+path, rd)
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return result{}, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return result{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// mint returns an installation token (writer scope by default).
func (v *env) mint(body any) string {
	v.t.Helper()
	res := v.do("POST", "/app/installations/"+itoa(v.instID)+"/access_tokens", v.appJWT(), body)
	require.Equal(v.t, http.StatusCreated, res.status, string(res.body))
	return res.json(v.t)["token"].(string)
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func (v *env) put(token, path, content, branch, sha string) result {
	v.t.Helper()
	body := map[string]any{"message": "write " + path, "content": b64(content)}
	if branch != "" {
		body["branch"] = branch
	}
	if sha != "" {
		body["sha"] = sha
	}
	return v.do("PUT", "/repos/"+testOwner+"/"+testRepo+"/contents/"+path, token, body)
}
