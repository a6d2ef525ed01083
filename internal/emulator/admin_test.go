package emulator

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func adminCall(t *testing.T, srv *httptest.Server, method, path string, body any) map[string]any {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, srv.URL+"/_emulator"+path, rd)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	require.Less(t, resp.StatusCode, 300, "%s %s: %s", method, path, b)
	var m map[string]any
	if len(b) > 0 && b[0] == '{' {
		require.NoError(t, json.Unmarshal(b, &m))
	}
	return m
}

// Seeding over the admin HTTP API, then using the seeded App over REST.
func TestAdminAPISeeding(t *testing.T) {
	k, _ := keys(t)
	v := newEnv(t)
	e := New(Options{Clock: v.clk})
	v.e = e
	srv := httptest.NewServer(e.Handler())
	defer srv.Close()
	pub, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	adminCall(t, srv, "POST", "/owners", map[string]any{"login": "acme", "id": 5, "org": true})
	adminCall(t, srv, "POST", "/repos", map[string]any{"owner": "acme", "name": "locks", "default_branch": "main"})
	adminCall(t, srv, "POST", "/branches", map[string]any{"owner": "acme", "repo": "locks", "branch": "lock-state"})
	f := adminCall(t, srv, "POST", "/files", map[string]any{"owner": "acme", "repo": "locks", "branch": "main", "path": "locks/x.config.json", "content": `{"maxHolders":2}`})
	require.Equal(t, BlobSHA([]byte(`{"maxHolders":2}`)), f["sha"].(string))
	adminCall(t, srv, "POST", "/apps", map[string]any{"app_id": testAppID, "public_key_pem": string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}))})
	inst := adminCall(t, srv, "POST", "/installations", map[string]any{"app_id": testAppID, "owner": "acme"})
	instID := int64(inst["installation_id"].(float64))
	adminCall(t, srv, "POST", "/tokens", map[string]any{"token": "wf-secret", "label": "wf", "repos": []string{"acme/locks"}})
	run := adminCall(t, srv, "POST", "/runs", map[string]any{"owner": "acme", "repo": "locks", "run": map[string]any{"workflow": "ci.yml", "status": "in_progress"}})
	runID := int64(run["id"].(float64))
	adminCall(t, srv, "POST", "/jobs", map[string]any{"owner": "acme", "repo": "locks", "run_id": runID, "job": map[string]any{"name": "build", "runner_name": "r1", "status": "in_progress"}})
	adminCall(t, srv, "POST", "/runs/"+itoa(runID), map[string]any{"owner": "acme", "repo": "locks", "status": "completed", "conclusion": "failure"})
	adminCall(t, srv, "POST", "/pulls", map[string]any{"owner": "acme", "repo": "locks", "number": 3, "state": "open", "head_sha": "deadbeef"})
	adminCall(t, srv, "POST", "/faults", map[string]any{"kind": "latency", "latency": "2s", "count": 1})

	// REST through the seeded credentials.
	v.instID = instID
	res := v.do("POST", "/app/installations/"+itoa(instID)+"/access_tokens", v.appJWT(), nil)
	require.Equal(t, http.StatusCreated, res.status, string(res.body))
	tok := res.json(t)["token"].(string)
	res = v.do("GET", "/repos/acme/locks/contents/locks/x.config.json", tok, nil)
	require.Equal(t, http.StatusOK, res.status)
	res = v.do("GET", "/repos/acme/locks/actions/runs/"+itoa(runID), "wf-secret", nil)
	require.Equal(t, "failure", res.json(t)["conclusion"].(string))

	m := adminCall(t, srv, "GET", "/metrics", nil)
	require.True(t, m["requests"].(float64) >= 3, m["requests"])
	state := adminCall(t, srv, "GET", "/state", nil)
	b, _ := json.Marshal(state)
	require.True(t, !strings.Contains(string(b), "wf-secret") && !strings.Contains(string(b), tok), "state dump leaks a secret")
	req, _ := http.NewRequest("GET", srv.URL+"/_emulator/history?owner=acme&repo=locks&branch=main&path=locks/x.config.json", nil)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	var hist []Version
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&hist))
	resp.Body.Close()
	require.Equal(t, 1, len(hist))
	adminCall(t, srv, "DELETE", "/faults", nil)
	require.Equal(t, 0, len(e.Faults()))
	mb, _ := json.Marshal(e.Metrics())
	require.True(t, !strings.Contains(string(mb), "ghs_"), "metrics leak a token")
}
