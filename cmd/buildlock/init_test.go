package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockinit"
)

// lockRepoCopy is a directory holding the files of this repository that a
// fork carries and init checks (the two workflows and their actions).
func lockRepoCopy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, p := range []string{lockinit.ReaperWorkflowPath, lockinit.RecoverWorkflowPath,
		".github/actions/reap-stale-locks/action.yml", ".github/actions/recover-build-lock/action.yml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(p)))
		require.NoError(t, err)
		dst := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
		require.NoError(t, os.WriteFile(dst, data, 0o644))
	}
	return dir
}

// TestInitThenDoctorPasses: init writes the lock config and policy into a
// fork of this repository; once those files are on the default branch and
// the printed manual steps are done (two Apps with exactly their
// permissions, the branch rules; the lock-state branch is NOT created, the
// first acquire does that), buildlock doctor passes every check.
func TestInitThenDoctorPasses(t *testing.T) {
	t.Parallel()
	dir := lockRepoCopy(t)
	var out, errOut strings.Builder
	args := []string{"init", "--lock", "unity", "--seats", "2", "--dir", dir, "--owner-id", "1001", "--repository", "example-org/build-lock"}
	require.Equal(t, 0, run(context.Background(), args, &out, &errOut), errOut.String())
	assert.Contains(t, out.String(), "created     locks/unity.config.json")
	assert.Contains(t, out.String(), "created     locks/policy.json")
	assert.Contains(t, out.String(), "buildlock doctor --lock-repository example-org/build-lock --lock unity")

	// A second run with another seat count refuses and writes nothing.
	out.Reset()
	errOut.Reset()
	require.Equal(t, 1, run(context.Background(), []string{"init", "--lock", "unity", "--seats", "3", "--dir", dir}, &out, &errOut))
	assert.Contains(t, errOut.String(), "nothing was written")
	assert.Contains(t, errOut.String(), "--force")
	cfg, err := os.ReadFile(filepath.Join(dir, "locks", "unity.config.json"))
	require.NoError(t, err)
	assert.Equal(t, lockinit.ConfigJSON(2), cfg)

	// The manual steps, on the emulator.
	em := emulator.New(emulator.Options{Seed: 1})
	em.AddOwner("example-org", 1001, true)
	em.AddRepo("example-org", "build-lock", 2001, "main")
	em.AddRepo("example-org", "game", 2002, "main")
	wk, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	em.AddApp(3001, &wk.PublicKey)
	em.AddApp(3002, &rk.PublicKey)
	require.NoError(t, em.SetInstallationPermissions(em.InstallApp(3001, "example-org", []string{"build-lock"}), map[string]string{"contents": "write", "metadata": "read"}))
	require.NoError(t, em.SetInstallationPermissions(em.InstallApp(3002, "example-org", []string{"game", "build-lock"}),
		map[string]string{"actions": "read", "contents": "read", "metadata": "read", "organization_self_hosted_runners": "read"}))
	for _, p := range []string{"locks/unity.config.json", "locks/policy.json", lockinit.ReaperWorkflowPath, lockinit.RecoverWorkflowPath} {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		require.NoError(t, err)
		_, err = em.PutFile("example-org", "build-lock", "main", p, data)
		require.NoError(t, err)
	}
	_, err = em.SetWorkflow("example-org", "build-lock", emulator.Workflow{Path: lockinit.ReaperWorkflowPath, Name: "Reap stale build locks"})
	require.NoError(t, err)
	require.NoError(t, em.SetBranchRules("example-org", "build-lock", "lock-state", []emulator.BranchRule{{Type: "deletion"}, {Type: "non_fast_forward"}}))
	require.NoError(t, em.SetBranchRules("example-org", "build-lock", "main", []emulator.BranchRule{{Type: "deletion"}, {Type: "non_fast_forward"}, {Type: "pull_request"}}))
	pemOf := func(k *rsa.PrivateKey) string {
		return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
	}
	env := map[string]string{
		"GITHUB_API_URL":    "https://api.emulator.test",
		"BUILD_LOCK_APP_ID": "3001", "BUILD_LOCK_APP_PRIVATE_KEY": pemOf(wk),
		"BUILD_LOCK_READER_APP_ID": "3002", "BUILD_LOCK_READER_APP_PRIVATE_KEY": pemOf(rk),
	}
	out.Reset()
	errOut.Reset()
	err = doctorCommand(context.Background(), []string{"--lock-repository", "example-org/build-lock", "--lock", "unity"}, &out, &errOut,
		doctorDeps{getenv: func(k string) string { return env[k] }, transport: em.Transport()})
	require.NoError(t, err, out.String())
	assert.NotContains(t, out.String(), "FAIL")
	assert.Contains(t, out.String(), "does not exist yet; the first acquire creates it")
}

func TestInitUsageErrors(t *testing.T) {
	t.Parallel()
	var out, errOut strings.Builder
	for _, args := range [][]string{
		{"init"},
		{"init", "--lock", "unity"},
		{"init", "--lock", "a/b", "--seats", "2"},
		{"init", "--lock", "unity", "--seats", "65"},
		{"init", "--lock", "unity", "--seats", "2", "extra"},
	} {
		assert.Equal(t, 2, run(context.Background(), args, &out, &errOut), "%v", args)
	}
	// Not a fork of the build lock repository: refused, nothing written.
	dir := t.TempDir()
	assert.Equal(t, 1, run(context.Background(), []string{"init", "--lock", "unity", "--seats", "2", "--dir", dir}, &out, &errOut))
	assert.Contains(t, errOut.String(), "fork or mirror")
	_, err := os.Stat(filepath.Join(dir, "locks"))
	assert.True(t, os.IsNotExist(err), "nothing was written")
}
