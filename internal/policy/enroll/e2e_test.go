package enroll_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy/enroll"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy/registry"
)

const (
	org         = "acme"
	lockName    = "build-lock"
	lockRepo    = org + "/" + lockName
	lockPin     = "0000000000000000000000000000000000000000"
	wfToken     = "ghs_workflowtoken0123456789abcdefABCDEF"
	readerAppID = 4242
	runID       = "42"
	artifactURL = "https://github.com/" + lockRepo + "/actions/runs/" + runID + "/artifacts/7"
	unityPath   = ".github/workflows/unity.yml"
)

var (
	keyOnce   sync.Once
	readerKey *rsa.PrivateKey
)

func key(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	keyOnce.Do(func() {
		var err error
		readerKey, err = rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
	})
	return readerKey
}

// consumer is the corpus's consumer pattern, pinned to this test's lock
// repository.
func consumer(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "corpus", "consumer-workflow.yml"))
	require.NoError(t, err)
	return strings.ReplaceAll(string(b), "Ambiguous-Interactive/ambiguous-organization-build-lock", lockRepo)
}

type world struct {
	t    testing.TB
	em   *emulator.Emulator
	clk  *clock.Fake
	env  map[string]string
	dir  string
	inst int64
}

func registryDoc(repos ...string) string {
	reg := &registry.Registry{SchemaVersion: 1, Organization: org, ApprovedLockShas: []string{lockPin}, ApprovedReturnShas: []string{lockPin}}
	for _, r := range repos {
		reg.Repositories = append(reg.Repositories, registry.Repository{Repository: org + "/" + r, DefaultBranch: "main"})
	}
	data, err := registry.Encode(reg, registry.DecodeOptions{Organization: org})
	if err != nil {
		panic(err)
	}
	return string(data)
}

func newWorld(t testing.TB, readable []string, repos ...string) *world {
	t.Helper()
	clk := clock.NewFake(time.Date(2026, 6, 1, 8, 23, 0, 0, time.UTC))
	em := emulator.New(emulator.Options{Clock: clk, Seed: 7, ServerURL: "https://github.com"})
	em.AddOwner(org, 1000, true)
	em.AddRepo(org, lockName, 1001, "main")
	_, err := em.PutFile(org, lockName, "main", registry.Path, []byte(registryDoc(repos...)))
	require.NoError(t, err)
	for i, r := range repos {
		em.AddRepo(org, r, int64(2000+i), "main")
	}
	em.AddApp(readerAppID, &key(t).PublicKey)
	inst := em.InstallApp(readerAppID, org, readable)
	em.AddToken(wfToken, emulator.TokenScope{Label: "workflow", Repos: []string{lockRepo},
		Permissions: map[string]string{"contents": "write", "issues": "write", "pull_requests": "write"}})
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key(t))}))
	return &world{t: t, em: em, clk: clk, dir: t.TempDir(), inst: inst, env: map[string]string{
		"GITHUB_API_URL": "https://api.emulator.test", "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": lockRepo,
		"GITHUB_TOKEN": wfToken, "GITHUB_RUN_ID": runID,
		"BUILD_LOCK_READER_APP_ID": strconv.Itoa(readerAppID), "BUILD_LOCK_READER_APP_PRIVATE_KEY": pemKey,
	}}
}

func (w *world) put(repo, p, content string) {
	w.t.Helper()
	_, err := w.em.PutFile(org, repo, "main", p, []byte(content))
	require.NoError(w.t, err)
}

// run runs one audit-enrollment command in-process.
func (w *world) run(args ...string) (string, error) {
	w.t.Helper()
	var out, errOut bytes.Buffer
	err := enroll.Main(context.Background(), args, func(k string) string { return w.env[k] }, &out, &errOut,
		monitor.Deps{Transport: w.em.Transport(), Clock: w.clk})
	all := out.String() + errOut.String()
	assert.NotContains(w.t, all, wfToken)
	assert.NotContains(w.t, all, "PRIVATE KEY-----\nMII", "the key never reaches output")
	return all, err
}

// audit runs audit then sync-issue, as the scheduled workflow does.
func (w *world) audit() (*enroll.Artifact, string, error, error) {
	w.t.Helper()
	file := filepath.Join(w.dir, "audit.json")
	_, auditErr := w.run("audit", "--out", file)
	data, err := os.ReadFile(file)
	require.NoError(w.t, err)
	art, err := enroll.DecodeArtifact(bytes.NewReader(data))
	require.NoError(w.t, err, string(data))
	out, syncErr := w.run("sync-issue", "--audit", file, "--artifact-url", artifactURL)
	return art, out, auditErr, syncErr
}

type issue struct {
	Number int    `json:"number"`
	Body   string `json:"body"`
	State  string `json:"state"`
	User   struct {
		Login string `json:"login"`
	} `json:"user"`
	PullRequest any `json:"pull_request"`
}

func (w *world) issues() []issue {
	w.t.Helper()
	req, err := http.NewRequest(http.MethodGet, "https://api.emulator.test/repos/"+lockRepo+"/issues?state=all&per_page=100", nil)
	require.NoError(w.t, err)
	req.Header.Set("Authorization", "Bearer "+wfToken)
	resp, err := w.em.Transport().RoundTrip(req)
	require.NoError(w.t, err)
	defer resp.Body.Close()
	var all []issue
	require.NoError(w.t, json.NewDecoder(resp.Body).Decode(&all))
	var out []issue
	for _, is := range all {
		if is.PullRequest == nil && strings.Contains(is.Body, enroll.Marker) {
			out = append(out, is)
		}
	}
	return out
}

func codesOf(art *enroll.Artifact, repo string) []policy.Code {
	var out []policy.Code
	for _, f := range art.Findings {
		if f.Repository == org+"/"+repo {
			out = append(out, f.Code)
		}
	}
	return out
}

// TestAuditEndToEnd: three enrolled repositories (one clean, one drifting,
// one the reader App cannot read) through the real command against the
// emulator. The drift issue is created once, updated on the next run,
// left alone when nothing changed, closed when every repository is clean,
// and reopened when drift returns.
func TestAuditEndToEnd(t *testing.T) {
	t.Parallel()
	w := newWorld(t, []string{"clean-game", "drifting-game"}, "clean-game", "drifting-game", "unreadable-game")
	good := consumer(t)
	w.put("clean-game", unityPath, good)
	w.put("drifting-game", unityPath, strings.Replace(good, "  cancel-in-progress: false\n", "  cancel-in-progress: true\n", 1))
	w.put("unreadable-game", unityPath, good)

	art, out, auditErr, syncErr := w.audit()
	assert.ErrorIs(t, auditErr, enroll.ErrIncomplete)
	assert.Equal(t, 1, enroll.ExitCode(auditErr))
	assert.ErrorIs(t, syncErr, enroll.ErrIncomplete, "synced, but an incomplete audit keeps the run red")
	assert.False(t, art.Complete)
	assert.Empty(t, codesOf(art, "clean-game"))
	assert.Equal(t, []policy.Code{policy.UnsafeWorkflowCancellation}, codesOf(art, "drifting-game"))
	assert.Equal(t, []policy.Code{policy.RepositoryRetrievalIncomplete}, codesOf(art, "unreadable-game"), "the unreadable repository is a finding, not a pass")
	head, _ := w.em.BranchHead(org, "clean-game", "main")
	assert.Contains(t, art.Repositories, enroll.RepositoryRow{Repository: org + "/clean-game", SHA: head})
	assert.Contains(t, art.Repositories, enroll.RepositoryRow{Repository: org + "/unreadable-game", SHA: ""})
	assert.Contains(t, art.Inventory, enroll.InventoryRow{Repository: org + "/clean-game", SHA: head, Path: unityPath, Job: "licensed", Classification: policy.PaidSerial})
	assert.Contains(t, out, "issue=created")
	iss := w.issues()
	require.Len(t, iss, 1)
	first := iss[0]
	assert.Equal(t, "open", first.State)
	assert.Equal(t, emulator.WorkflowBotLogin, first.User.Login)
	assert.Contains(t, first.Body, "unsafe-workflow-cancellation")
	assert.Contains(t, first.Body, "repository-retrieval-incomplete")
	assert.Contains(t, first.Body, artifactURL)
	assert.NotContains(t, first.Body, "cancel-in-progress", "source-free: no file content")

	// Nothing changed: no write.
	w.em.ResetMetrics()
	_, out, _, _ = w.audit()
	assert.Contains(t, out, "issue=none")
	assert.Zero(t, w.em.Metrics().Writes)

	// More drift: the same issue is updated.
	w.put("drifting-game", ".github/workflows/ci.yml", "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n")
	art, out, _, _ = w.audit()
	assert.ElementsMatch(t, []policy.Code{policy.UnsafeWorkflowCancellation, policy.MutableActionRef}, codesOf(art, "drifting-game"))
	assert.Contains(t, out, "issue=updated")
	iss = w.issues()
	require.Len(t, iss, 1)
	assert.Equal(t, first.Number, iss[0].Number)
	assert.Contains(t, iss[0].Body, "mutable-action-ref")

	// Fixed, and the reader App now reads the third repository: clean,
	// complete, closed.
	w.put("drifting-game", unityPath, good)
	w.put("drifting-game", ".github/workflows/ci.yml", "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ok\n")
	w.em.InstallApp(readerAppID, org, []string{"clean-game", "drifting-game", "unreadable-game"})
	art, out, auditErr, syncErr = w.audit()
	require.NoError(t, auditErr)
	require.NoError(t, syncErr)
	assert.True(t, art.Clean())
	assert.Contains(t, out, "issue=closed")
	iss = w.issues()
	require.Len(t, iss, 1)
	assert.Equal(t, "closed", iss[0].State)
	assert.Contains(t, iss[0].Body, "audit is clean")

	// Still clean: the closed issue is left alone.
	w.em.ResetMetrics()
	_, out, _, _ = w.audit()
	assert.Contains(t, out, "issue=none")
	assert.Zero(t, w.em.Metrics().Writes)

	// Drift returns: reopened, never a second issue.
	w.put("clean-game", unityPath, strings.Replace(good, "      fail-fast: false\n      matrix:\n        unity-version: [\"6000.0.40f1\"]\n        test-mode: [editmode, playmode, standalone]\n    steps:",
		"      matrix:\n        unity-version: [\"6000.0.40f1\"]\n        test-mode: [editmode, playmode, standalone]\n    steps:", 1))
	art, out, auditErr, _ = w.audit()
	assert.ErrorIs(t, auditErr, enroll.ErrDrift)
	assert.Equal(t, []policy.Code{policy.UnsafeMatrixFailFast}, codesOf(art, "clean-game"))
	assert.Contains(t, out, "issue=reopened")
	iss = w.issues()
	require.Len(t, iss, 1)
	assert.Equal(t, first.Number, iss[0].Number)
	assert.Equal(t, "open", iss[0].State)
}

// TestConcurrentSyncsNeverDuplicate: two syncs racing on a lock
// repository without a drift issue leave exactly one issue with the marker.
func TestConcurrentSyncsNeverDuplicate(t *testing.T) {
	t.Parallel()
	for round := 0; round < 5; round++ {
		w := newWorld(t, []string{"game"}, "game")
		w.put("game", ".github/workflows/ci.yml", "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n")
		file := filepath.Join(w.dir, "audit.json")
		_, err := w.run("audit", "--out", file)
		require.ErrorIs(t, err, enroll.ErrDrift)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var out bytes.Buffer
				errs[i] = enroll.Main(context.Background(), []string{"sync-issue", "--audit", file, "--artifact-url", artifactURL},
					func(k string) string { return w.env[k] }, &out, &out, monitor.Deps{Transport: w.em.Transport(), Clock: w.clk})
			}()
		}
		wg.Wait()
		assert.True(t, errs[0] == nil || errs[1] == nil, "at least one sync succeeds: %v", errs)
		iss := w.issues()
		require.Len(t, iss, 1, "round %d", round)
		assert.Equal(t, "open", iss[0].State)
	}
}

func TestSyncRefusals(t *testing.T) {
	t.Parallel()
	w := newWorld(t, []string{"game"}, "game")
	w.put("game", ".github/workflows/ci.yml", "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo\n")
	file := filepath.Join(w.dir, "audit.json")
	_, err := w.run("audit", "--out", file)
	require.NoError(t, err)
	for name, u := range map[string]string{
		"missing":       "",
		"http":          "http://github.com/" + lockRepo + "/actions/runs/42/artifacts/7",
		"other host":    "https://evil.example/" + lockRepo + "/actions/runs/42/artifacts/7",
		"other repo":    "https://github.com/acme/other/actions/runs/42/artifacts/7",
		"other run":     "https://github.com/" + lockRepo + "/actions/runs/43/artifacts/7",
		"not artifact":  "https://github.com/" + lockRepo + "/actions/runs/42",
		"credentials":   "https://x:y@github.com/" + lockRepo + "/actions/runs/42/artifacts/7",
		"query":         artifactURL + "?download=1",
		"path traverse": "https://github.com/" + lockRepo + "/actions/runs/42/artifacts/7/../8",
	} {
		_, err := w.run("sync-issue", "--audit", file, "--artifact-url", u)
		assert.Equal(t, 2, enroll.ExitCode(err), "%s: %v", name, err)
	}
	require.NoError(t, os.WriteFile(file, []byte(`{"schemaVersion":1,"complete":true,"lockRepository":"acme/build-lock","repositories":[],"inventory":[],"findings":[{"repository":"acme/game","code":"made-up"}]}`), 0o600))
	_, err = w.run("sync-issue", "--audit", file, "--artifact-url", artifactURL)
	assert.Equal(t, 2, enroll.ExitCode(err))
	assert.Empty(t, w.issues())
}

func TestAuditRegistryErrors(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil, "game")
	w.put(lockName, registry.Path, `{"schemaVersion": 1}`)
	_, err := w.run("audit")
	assert.Equal(t, 2, enroll.ExitCode(err), "%v", err)
	bad := filepath.Join(w.dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"schemaVersion":1,"organization":"other"}`), 0o600))
	_, err = w.run("validate-registry", bad)
	assert.Equal(t, 2, enroll.ExitCode(err))
	good := filepath.Join(w.dir, "good.json")
	require.NoError(t, os.WriteFile(good, []byte(registryDoc("game")), 0o600))
	out, err := w.run("validate-registry", good)
	require.NoError(t, err)
	assert.Contains(t, out, "valid: 1 repositories")
	_, err = w.run("nope")
	assert.Equal(t, 2, enroll.ExitCode(err))
	delete(w.env, "BUILD_LOCK_READER_APP_PRIVATE_KEY")
	_, err = w.run("audit", "--registry", good)
	assert.Equal(t, 2, enroll.ExitCode(err), "reader credentials are required")
}
