package doctor_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/doctor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
)

const (
	org      = "example-org"
	lockRepo = "build-lock"
	writerID = 3001
	readerID = 3002
)

var (
	keysOnce           sync.Once
	writerKey, readKey *rsa.PrivateKey
)

func keys(t *testing.T) (*rsa.PrivateKey, *rsa.PrivateKey) {
	t.Helper()
	keysOnce.Do(func() {
		var err error
		if writerKey, err = rsa.GenerateKey(rand.Reader, 2048); err == nil {
			readKey, err = rsa.GenerateKey(rand.Reader, 2048)
		}
		require.NoError(t, err)
	})
	return writerKey, readKey
}

func pemOf(k *rsa.PrivateKey) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
}

// world is a correctly installed lock repository on the emulator; each
// misconfiguration below changes one thing.
type world struct {
	em                   *emulator.Emulator
	writerInst, readInst int64
	env                  map[string]string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	wk, rk := keys(t)
	em := emulator.New(emulator.Options{Seed: 1})
	em.AddOwner(org, 1001, true)
	em.AddRepo(org, lockRepo, 2001, "main")
	em.AddRepo(org, "game", 2002, "main")
	em.AddApp(writerID, &wk.PublicKey)
	em.AddApp(readerID, &rk.PublicKey)
	w := &world{em: em}
	w.writerInst = em.InstallApp(writerID, org, []string{lockRepo})
	require.NoError(t, em.SetInstallationPermissions(w.writerInst, map[string]string{"contents": "write", "metadata": "read"}))
	w.readInst = em.InstallApp(readerID, org, []string{"game", lockRepo})
	require.NoError(t, em.SetInstallationPermissions(w.readInst, map[string]string{"actions": "read", "contents": "read", "metadata": "read", "organization_self_hosted_runners": "read"}))
	reaper, err := os.ReadFile(filepath.Join("..", "..", doctor.ReaperWorkflowPath))
	require.NoError(t, err)
	for p, body := range map[string]string{"locks/unity.config.json": "{\n  \"maxHolders\": 2\n}\n", doctor.ReaperWorkflowPath: string(reaper)} {
		_, err := em.PutFile(org, lockRepo, "main", p, []byte(body))
		require.NoError(t, err)
	}
	_, err = em.SetWorkflow(org, lockRepo, emulator.Workflow{Path: doctor.ReaperWorkflowPath, Name: "Reap stale build locks"})
	require.NoError(t, err)
	require.NoError(t, em.CreateBranch(org, lockRepo, "lock-state", "main"))
	require.NoError(t, em.SetBranchRules(org, lockRepo, "lock-state", []emulator.BranchRule{{Type: "deletion"}, {Type: "non_fast_forward"}}))
	require.NoError(t, em.SetBranchRules(org, lockRepo, "main", []emulator.BranchRule{{Type: "deletion"}, {Type: "non_fast_forward"}, {Type: "pull_request"}}))
	w.env = map[string]string{
		"GITHUB_API_URL":    "https://api.emulator.test",
		"BUILD_LOCK_APP_ID": "3001", "BUILD_LOCK_APP_PRIVATE_KEY": pemOf(wk),
		"BUILD_LOCK_READER_APP_ID": "3002", "BUILD_LOCK_READER_APP_PRIVATE_KEY": pemOf(rk),
	}
	return w
}

func (w *world) run(t *testing.T, lock string) map[string][]doctor.Result {
	t.Helper()
	rs, err := doctor.Run(context.Background(), doctor.Options{Repository: org + "/" + lockRepo, Lock: lock,
		Getenv: func(k string) string { return w.env[k] }, Transport: w.em.Transport()})
	require.NoError(t, err)
	byID := map[string][]doctor.Result{}
	for _, r := range rs {
		byID[r.ID] = append(byID[r.ID], r)
	}
	return byID
}

func statuses(rs map[string][]doctor.Result, s doctor.Status) []string {
	var out []string
	for id, list := range rs {
		for _, r := range list {
			if r.Status == s {
				out = append(out, id)
				break
			}
		}
	}
	return out
}

func TestACorrectInstallationPassesEveryCheck(t *testing.T) {
	t.Parallel()
	rs := newWorld(t).run(t, "")
	assert.Empty(t, statuses(rs, doctor.Fail), "%v", rs)
	assert.Empty(t, statuses(rs, doctor.Skip), "%v", rs)
	for _, id := range []string{doctor.CheckWriterInstalled, doctor.CheckWriterPermissions, doctor.CheckWriterRepositories,
		doctor.CheckReaderInstalled, doctor.CheckReaderPermissions, doctor.CheckReaderRepositories, doctor.CheckStateBranch,
		doctor.CheckStateBranchProtection, doctor.CheckDefaultBranchProtection, doctor.CheckLockConfig, doctor.CheckReaperWorkflow, doctor.CheckReaperEnabled} {
		assert.Contains(t, rs, id)
	}
}

// TestMisconfigurationsFailTheRightCheck: each deliberate misconfiguration
// fails exactly the checks it should, each with a fix.
func TestMisconfigurationsFailTheRightCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		break_ func(t *testing.T, w *world)
		lock   string
		fails  []string
		skips  []string
		says   string
	}{
		{"the writer App has an extra permission", func(t *testing.T, w *world) {
			require.NoError(t, w.em.SetInstallationPermissions(w.writerInst, map[string]string{"contents": "write", "metadata": "read", "issues": "write"}))
		}, "", []string{doctor.CheckWriterPermissions}, nil, "must not have issues: write"},
		{"the writer App lacks contents: write", func(t *testing.T, w *world) {
			require.NoError(t, w.em.SetInstallationPermissions(w.writerInst, map[string]string{"contents": "read", "metadata": "read"}))
		}, "", []string{doctor.CheckWriterPermissions}, nil, "needs contents: write"},
		{"the writer App is installed on every repository", func(t *testing.T, w *world) {
			inst := w.em.InstallApp(writerID, org, nil)
			require.NoError(t, w.em.SetInstallationPermissions(inst, map[string]string{"contents": "write", "metadata": "read"}))
		}, "", []string{doctor.CheckWriterRepositories}, nil, "all repositories"},
		{"the writer App is not installed", func(t *testing.T, w *world) {
			w.em.AddRepo(org, "other", 2003, "main")
			inst := w.em.InstallApp(writerID, org, []string{"other"})
			require.NoError(t, w.em.SetInstallationPermissions(inst, map[string]string{"contents": "write", "metadata": "read"}))
		}, "", []string{doctor.CheckWriterInstalled}, []string{doctor.CheckWriterPermissions, doctor.CheckStateBranch, doctor.CheckLockConfig}, "not installed on"},
		{"no credentials", func(t *testing.T, w *world) {
			w.env = map[string]string{"GITHUB_API_URL": w.env["GITHUB_API_URL"]}
		}, "", []string{doctor.CheckWriterInstalled, doctor.CheckReaderInstalled}, []string{doctor.CheckStateBranch}, "BUILD_LOCK_APP_ID"},
		{"the reader App lacks actions: read", func(t *testing.T, w *world) {
			require.NoError(t, w.em.SetInstallationPermissions(w.readInst, map[string]string{"contents": "read", "metadata": "read", "organization_self_hosted_runners": "read"}))
		}, "", []string{doctor.CheckReaderPermissions}, []string{doctor.CheckReaperEnabled}, "needs actions: read"},
		{"the reader App can write", func(t *testing.T, w *world) {
			require.NoError(t, w.em.SetInstallationPermissions(w.readInst, map[string]string{"actions": "write", "contents": "read", "metadata": "read", "organization_self_hosted_runners": "read"}))
		}, "", []string{doctor.CheckReaderPermissions}, nil, "actions: read"},
		{"the state branch is missing", func(t *testing.T, w *world) {
			require.NoError(t, w.em.SetBranchRules(org, lockRepo, "lock-state", nil))
		}, "", []string{doctor.CheckStateBranchProtection}, nil, "can be deleted"},
		{"the state branch needs pull requests", func(t *testing.T, w *world) {
			require.NoError(t, w.em.SetBranchRules(org, lockRepo, "lock-state", []emulator.BranchRule{{Type: "deletion"}, {Type: "non_fast_forward"}, {Type: "pull_request"}}))
		}, "", []string{doctor.CheckStateBranchProtection}, nil, "block the writer App"},
		{"the default branch takes direct pushes", func(t *testing.T, w *world) {
			require.NoError(t, w.em.SetBranchRules(org, lockRepo, "main", []emulator.BranchRule{{Type: "deletion"}}))
		}, "", []string{doctor.CheckDefaultBranchProtection}, nil, "pull_request"},
		{"a lock config is invalid", func(t *testing.T, w *world) {
			_, err := w.em.PutFile(org, lockRepo, "main", "locks/unity.config.json", []byte("{\"maxHolders\": 0}\n"))
			require.NoError(t, err)
		}, "", []string{doctor.CheckLockConfig}, nil, "falls back"},
		{"no lock config at all", func(t *testing.T, w *world) {
			require.NoError(t, w.em.DeleteFile(org, lockRepo, "main", "locks/unity.config.json"))
		}, "", []string{doctor.CheckLockConfig}, nil, "no locks/"},
		{"the reaper workflow is missing", func(t *testing.T, w *world) {
			require.NoError(t, w.em.DeleteFile(org, lockRepo, "main", doctor.ReaperWorkflowPath))
		}, "", []string{doctor.CheckReaperWorkflow}, nil, "is missing"},
		{"the reaper is not scheduled", func(t *testing.T, w *world) {
			_, err := w.em.PutFile(org, lockRepo, "main", doctor.ReaperWorkflowPath, []byte(
				"on: workflow_dispatch\npermissions: {}\njobs:\n  reap:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: ./.github/actions/reap-stale-locks\n        with:\n          lock-name: x\n"))
			require.NoError(t, err)
		}, "", []string{doctor.CheckReaperWorkflow}, nil, "no schedule"},
		{"the reaper was disabled for inactivity", func(t *testing.T, w *world) {
			_, err := w.em.SetWorkflow(org, lockRepo, emulator.Workflow{Path: doctor.ReaperWorkflowPath, State: "disabled_inactivity"})
			require.NoError(t, err)
		}, "", []string{doctor.CheckReaperEnabled}, nil, "disabled_inactivity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			tc.break_(t, w)
			rs := w.run(t, tc.lock)
			assert.ElementsMatch(t, tc.fails, statuses(rs, doctor.Fail), "%v", rs)
			for _, id := range tc.skips {
				assert.Contains(t, statuses(rs, doctor.Skip), id)
			}
			var text strings.Builder
			for _, id := range tc.fails {
				for _, r := range rs[id] {
					if r.Status == doctor.Fail {
						assert.NotEmpty(t, r.Fix, "%s must say how to fix it", id)
						text.WriteString(r.Detail + "\n")
					}
				}
			}
			assert.Contains(t, text.String(), tc.says)
		})
	}
}

func TestRunRefusesABadRepository(t *testing.T) {
	t.Parallel()
	for _, repo := range []string{"", "owner", "owner/", "/name", "a/b/c"} {
		_, err := doctor.Run(context.Background(), doctor.Options{Repository: repo})
		assert.ErrorIs(t, err, doctor.ErrUsage, repo)
	}
}

func TestRulesArePure(t *testing.T) {
	t.Parallel()
	assert.Equal(t, doctor.Pass, doctor.Permissions("x", "App", doctor.WriterPermissions, map[string]string{"contents": "write", "metadata": "read"}).Status)
	assert.Equal(t, doctor.Fail, doctor.Permissions("x", "App", doctor.WriterPermissions, map[string]string{"contents": "write"}).Status)
	assert.Equal(t, doctor.Pass, doctor.StateRules("s", []string{"non_fast_forward", "deletion", "creation"}).Status)
	assert.Equal(t, doctor.Fail, doctor.StateRules("s", []string{"non_fast_forward", "deletion", "required_status_checks"}).Status)
	assert.Equal(t, doctor.Pass, doctor.WriterRepositories("selected", []string{"O/R"}, "o/r").Status)
	assert.Equal(t, doctor.Fail, doctor.WriterRepositories("selected", []string{"o/r", "o/s"}, "o/r").Status)
	assert.Equal(t, doctor.Fail, doctor.ReaderRepositories("all", 10).Status)
	assert.Equal(t, doctor.Fail, doctor.ReaperFile([]byte("not: [valid")).Status)
	assert.Equal(t, doctor.Fail, doctor.ReaperState("disabled_manually").Status)
}

// TestAdoptingGuideNamesWhatTheDoctorChecks: docs/adopting.md lists every
// check and exactly the permissions the doctor enforces.
func TestAdoptingGuideNamesWhatTheDoctorChecks(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "adopting.md"))
	require.NoError(t, err)
	doc := string(b)
	for _, id := range []string{doctor.CheckWriterInstalled, doctor.CheckWriterPermissions, doctor.CheckWriterRepositories,
		doctor.CheckReaderInstalled, doctor.CheckReaderPermissions, doctor.CheckReaderRepositories, doctor.CheckStateBranch,
		doctor.CheckStateBranchProtection, doctor.CheckDefaultBranchProtection, doctor.CheckLockConfig, doctor.CheckReaperWorkflow, doctor.CheckReaperEnabled} {
		assert.Contains(t, doc, "| `"+id+"` |", "docs/adopting.md must describe check %s", id)
	}
	assert.Contains(t, doc, "Contents: **read and write**; Metadata: read")
	assert.Equal(t, map[string]string{"contents": "write", "metadata": "read"}, doctor.WriterPermissions)
	assert.Contains(t, doc, "Actions: read; Contents: read; Metadata: read; Organization → Self-hosted runners: read")
	assert.Len(t, doctor.ReaderPermissions, 4)
}
