package acttest_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v4"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/acttest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// The emulated organization of the adoption run: the owner of this
// repository's actions (the lock repository is where the actions are
// pinned from) and one consumer repository.
const (
	adoptOwner      = "Ambiguous-Interactive"
	adoptOwnerID    = 7001
	adoptLockRepo   = "ambiguous-organization-build-lock"
	adoptLockRepoID = 7101
	adoptConsumer   = "game"
	adoptConsumerID = 7201
	adoptWriterApp  = 8001
	adoptReaderApp  = 8002
	adoptLock       = "unity"
	adoptRunner     = "unity-win-01"
)

// stubbedSteps are the README workflow's steps that need a Windows runner
// with a Unity editor, replaced for this Linux host (the rest of the
// workflow runs as written): each is named, so a change to the README's
// workflow that renames one fails here instead of running unstubbed.
var stubbedSteps = map[string]string{
	// ensure-unity-editor validates a signed editor in the runner's tool
	// cache (Windows Authenticode): the stub names the fake editor.
	"Require the managed Unity editor": `echo "editor-path=$RUNNER_TOOL_CACHE/u6-v3/fake/Editor/Unity.exe" >> "$GITHUB_OUTPUT"`,
	// The tests themselves run in PowerShell with the editor.
	"Run Unity tests": `echo "licensed tests would run here with the seat (fencing token $BUILD_LOCK_FENCING_TOKEN)"`,
	// return-unity-license runs the editor's -returnlicense: the stub
	// writes what the return step writes after a clean return, where the
	// cleanup classifier (run as written) reads it.
	"Return Unity license": `set -euo pipefail
dir="$RUNNER_TEMP/unity-return-$GITHUB_RUN_ID-$GITHUB_RUN_ATTEMPT-$EVIDENCE_SUFFIX"
mkdir -p "$dir"
log="$dir/return-license.log"
printf '%s\n' "[Licensing::Module] Successfully returned the entitlement license" "[Licensing::Client] Successfully returned ULF license with serial number: SC-F4KE-SER1-AL00-0042" > "$log"
{
  echo "return-log-path=$log"
  echo "return-command-completed=true"
  echo "return-exit-code=0"
  echo "evidence-capture-complete=true"
  echo "return-log-digest=$(sha256sum "$log" | cut -d' ' -f1)"
} >> "$GITHUB_OUTPUT"`,
}

// TestAdoptingGuideOnTheEmulator follows docs/adopting.md on a fresh
// emulated organization and runs the README's consumer workflow under
// nektos/act against it: `buildlock init --lock unity --seats 2` configures
// the lock in a copy of this repository (the lock repository), the two Apps
// are installed with exactly their permissions, the branch rules are set,
// no lock-state branch exists; then the workflow's hosted jobs (static,
// classify, preflight, fallback, gate) and the licensed job's guard,
// license validation, acquire, cleanup classification, release and cleanup
// gate run as written. The steps that need Windows or a Unity editor are
// replaced (stubbedSteps, and PowerShell by bash); one matrix leg runs
// (both legs of one runner would wait out the six-minute cooldown in real
// time). The first acquire creates the lock at schema 6 and is admitted,
// the release starts the cooldown, and the gate passes.
func TestAdoptingGuideOnTheEmulator(t *testing.T) {
	t.Parallel()
	act := actBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	work := t.TempDir()

	// 1. The lock repository: a copy of this repository, configured only
	// by buildlock init.
	lockRepo := filepath.Join(work, "build-lock")
	require.NoError(t, acttest.Snapshot(ctx, repoRoot, lockRepo, func(rel string) bool {
		return !strings.HasPrefix(rel, "tools/workflow-parser/node_modules/") && !strings.HasPrefix(rel, "tools/openapi/node_modules/")
	}))
	buildlock := filepath.Join(work, "buildlock")
	build := exec.CommandContext(ctx, "go", "build", "-o", buildlock, "./cmd/buildlock")
	build.Dir = lockRepo
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	initCmd := exec.CommandContext(ctx, buildlock, "init", "--lock", adoptLock, "--seats", "2",
		"--owner-id", strconv.Itoa(adoptOwnerID), "--repository", adoptOwner+"/"+adoptLockRepo)
	initCmd.Dir = lockRepo
	out, err = initCmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "created     locks/unity.config.json")

	// 2. The organization on the emulator, after the guide's manual steps.
	em := emulator.New(emulator.Options{Seed: 1})
	srv := httptest.NewServer(em.Handler())
	t.Cleanup(srv.Close)
	em.AddOwner(adoptOwner, adoptOwnerID, true)
	em.AddRepo(adoptOwner, adoptLockRepo, adoptLockRepoID, "main")
	em.AddRepo(adoptOwner, adoptConsumer, adoptConsumerID, "main")
	for _, p := range []string{"locks/unity.config.json", "locks/policy.json", ".github/workflows/reap-stale-locks.yml", ".github/workflows/recover-build-lock.yml"} {
		data, err := os.ReadFile(filepath.Join(lockRepo, filepath.FromSlash(p)))
		require.NoError(t, err)
		_, err = em.PutFile(adoptOwner, adoptLockRepo, "main", p, data)
		require.NoError(t, err)
	}
	require.NoError(t, em.SetBranchRules(adoptOwner, adoptLockRepo, "lock-state", []emulator.BranchRule{{Type: "deletion"}, {Type: "non_fast_forward"}}))
	writerKey, writerPEM := appKey(t)
	readerKey, readerPEM := appKey(t)
	em.AddApp(adoptWriterApp, &writerKey.PublicKey)
	em.AddApp(adoptReaderApp, &readerKey.PublicKey)
	require.NoError(t, em.SetInstallationPermissions(em.InstallApp(adoptWriterApp, adoptOwner, []string{adoptLockRepo}),
		map[string]string{"contents": "write", "metadata": "read"}))
	require.NoError(t, em.SetInstallationPermissions(em.InstallApp(adoptReaderApp, adoptOwner, []string{adoptConsumer, adoptLockRepo}),
		map[string]string{"actions": "read", "contents": "read", "metadata": "read", "organization_self_hosted_runners": "read"}))
	group := em.AddRunnerGroup(adoptOwner, emulator.RunnerGroup{Name: "unity", Visibility: emulator.VisibilitySelected, SelectedRepos: []string{adoptConsumer}})
	em.AddRunner(adoptOwner, group, emulator.Runner{Name: adoptRunner, OS: "Windows", Status: "online", Labels: []string{"self-hosted", "Windows", "X64", "unity"}})
	workflowToken := "ghs_" + strings.Repeat("c", 36)
	em.AddToken(workflowToken, emulator.TokenScope{Label: "game-workflow", Repos: []string{adoptOwner + "/" + adoptConsumer},
		Permissions: map[string]string{"actions": "read", "contents": "read", "pull-requests": "read", "metadata": "read"}})
	_, ok := em.BranchHead(adoptOwner, adoptLockRepo, "lock-state")
	require.False(t, ok, "the guide creates no lock-state branch: the first acquire does")

	// 3. The consumer repository with the README's workflow.
	consumer := filepath.Join(work, "game")
	wf := readmeWorkflow(t)
	require.NoError(t, os.MkdirAll(filepath.Join(consumer, ".github", "workflows"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(consumer, "ci"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(consumer, ".github", "workflows", "unity.yml"), wf, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(consumer, "ci", "static-checks.sh"), []byte("#!/usr/bin/env bash\necho static checks passed\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(consumer, "README.md"), []byte("game\n"), 0o644))
	git(t, consumer, "init", "-q", "-b", "main")
	git(t, consumer, "remote", "add", "origin", "https://github.com/"+adoptOwner+"/"+adoptConsumer+".git")
	git(t, consumer, "add", "-A")
	git(t, consumer, "commit", "-q", "-m", "ci: the licensed Unity workflow")

	uses, err := acttest.RemoteUses(wf)
	require.NoError(t, err)
	actions, err := acttest.Stubs(filepath.Join(work, "stubs"), thisRepository, uses)
	require.NoError(t, err)
	actions[thisRepository+"@"+pinPlaceholder] = lockRepo

	res, err := acttest.Run{
		Act: act, Dir: consumer, Workflow: ".github/workflows/unity.yml", Event: "push",
		EventPayload: map[string]any{"ref": "refs/heads/main"},
		Matrix:       []string{"test-mode:editmode"},
		Actions:      actions,
		Platforms:    map[string]string{"ubuntu-latest": "-self-hosted", "self-hosted": "-self-hosted"},
		Env: map[string]string{
			"GITHUB_API_URL": srv.URL, "GITHUB_REPOSITORY_ID": strconv.Itoa(adoptConsumerID),
			"GITHUB_REPOSITORY_OWNER_ID": strconv.Itoa(adoptOwnerID), "RUNNER_NAME": adoptRunner,
		},
		Secrets: map[string]string{
			"GITHUB_TOKEN":      workflowToken,
			"BUILD_LOCK_APP_ID": strconv.Itoa(adoptWriterApp), "BUILD_LOCK_APP_PRIVATE_KEY": writerPEM,
			"BUILD_LOCK_READER_APP_ID": strconv.Itoa(adoptReaderApp), "BUILD_LOCK_READER_APP_PRIVATE_KEY": readerPEM,
			"UNITY_SERIAL": "SC-F4KE-SER1-AL00-0042", "UNITY_EMAIL": "ci@studio.example", "UNITY_PASSWORD": "fake-password-for-the-emulator",
		},
		BaseEnv: os.Environ(),
		WorkDir: filepath.Join(work, "act"),
	}.Exec(ctx)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "act failed:\n%s", res.Log)
	for _, job := range []string{"static", "classify", "preflight", "licensed", "fallback", "gate"} {
		assert.Equal(t, "succeeded", res.Jobs[job], "job %s:\n%s", job, res.Log)
	}

	// The lock was created by its first acquire, at the schema init's
	// config asks for, and the seat is back (a cooldown, as a confirmed
	// return leaves it).
	h := em.History(adoptOwner, adoptLockRepo, "lock-state", "locks/"+adoptLock+".json")
	require.NotEmpty(t, h)
	first, err := lockstate.Decode(h[0].Content, lockstate.DecodeOptions{Lock: adoptLock})
	require.NoError(t, err)
	assert.Equal(t, lockstate.FencedSchemaVersion, first.SchemaVersion, "the first write is at schema 6")
	require.Len(t, first.Holders, 1)
	assert.Equal(t, int64(1), first.Holders[0].FencingToken)
	last, err := lockstate.Decode(h[len(h)-1].Content, lockstate.DecodeOptions{Lock: adoptLock})
	require.NoError(t, err)
	assert.Empty(t, last.Holders)
	assert.Empty(t, last.Queue)
	require.Len(t, last.Reservations, 1)
	assert.Equal(t, lockstate.ReservationCooldown, last.Reservations[0].State)
	assert.Contains(t, res.Log, "Acquired unity as")
	// The release step, seconds after acquire, cleans up with acquire's
	// config read (lockaction.ConfigNoteMaxAge, divergences R13): the
	// note in the job's RUNNER_TEMP works under a real runner.
	assert.Contains(t, res.Log, "Using the lock config this job's acquire read")
	// And with the installation token acquire minted, sealed in RUNNER_TEMP
	// under the App's key (divergences R14): no mint of its own.
	assert.Contains(t, res.Log, "Using the installation token this job's acquire step minted")
	assert.NotRegexp(t, `ghs_[A-Za-z0-9]{16,}`, res.Log, "no installation token in the log")
}

// readmeWorkflow is the README's consumer workflow with the Windows and
// Unity steps of the licensed job replaced (stubbedSteps) and its
// PowerShell default replaced by bash.
func readmeWorkflow(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "docs", "examples", "consumer-workflow.yml"))
	require.NoError(t, err)
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(raw, &doc))
	licensed := mapValue(t, mapValue(t, doc.Content[0], "jobs"), "licensed")
	run := mapValue(t, mapValue(t, licensed, "defaults"), "run")
	mapValue(t, run, "shell").Value = "bash"
	steps := mapValue(t, licensed, "steps")
	found := map[string]bool{}
	for _, step := range steps.Content {
		name := mapGet(step, "name")
		body, ok := stubbedSteps[name]
		if !ok {
			continue
		}
		found[name] = true
		var kept []*yaml.Node
		for i := 0; i+1 < len(step.Content); i += 2 {
			switch step.Content[i].Value {
			case "uses", "with", "run", "timeout-minutes":
				continue
			}
			kept = append(kept, step.Content[i], step.Content[i+1])
		}
		kept = append(kept, &yaml.Node{Kind: yaml.ScalarNode, Value: "run"}, &yaml.Node{Kind: yaml.ScalarNode, Value: body, Style: yaml.LiteralStyle})
		if name == "Return Unity license" {
			kept = append(kept, &yaml.Node{Kind: yaml.ScalarNode, Value: "env"}, &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
				{Kind: yaml.ScalarNode, Value: "EVIDENCE_SUFFIX"}, {Kind: yaml.ScalarNode, Value: "${{ matrix.test-mode }}"},
			}})
		}
		step.Content = kept
	}
	for name := range stubbedSteps {
		require.True(t, found[name], "the README workflow has no licensed step named %q any more: update stubbedSteps", name)
	}
	out, err := yaml.Marshal(&doc)
	require.NoError(t, err)
	return out
}

func mapValue(t *testing.T, m *yaml.Node, key string) *yaml.Node {
	t.Helper()
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	require.FailNowf(t, "readme workflow", "no key %q", key)
	return nil
}

func mapGet(m *yaml.Node, key string) string {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1].Value
		}
	}
	return ""
}

func appKey(t *testing.T) (*rsa.PrivateKey, string) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	return k, string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
}
