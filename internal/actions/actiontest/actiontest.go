// Package actiontest is the shared test harness of the action packages: a
// GitHub emulator seeded with a lock repository, a consumer repository and a
// writer App, and jobs whose environment, output, state and summary files
// are what the runner would give a step. It is imported only by tests.
package actiontest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator/openapi"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// Fixed identities of the seeded world.
const (
	Owner         = "acme"
	OwnerID       = 7
	LockRepo      = "build-lock"
	LockRepoID    = 100
	Consumer      = "game"
	ConsumerID    = 42
	Lock          = "seats"
	AppID         = 4242
	ServerURL     = "https://github.com"
	APIURL        = "https://api.github.com"
	ConsumerToken = "ghs_" + "consumerworkflowtoken0000000000000000" // token-shaped on purpose: leak checks look for it; split so no real-looking token sits in the source
	StatePath     = "locks/" + Lock + ".json"
	ConfigPath    = "locks/" + Lock + ".config.json"
	// PutRoute is the emulator route key of a contents write.
	PutRoute = "PUT /repos/{owner}/{repo}/contents/{path}"
)

var (
	keyOnce sync.Once
	key     *rsa.PrivateKey
	keyPEM  string
)

// Setup generates the App key once per test binary; call it from TestMain.
func Setup() {
	keyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		key = k
		keyPEM = string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
	})
}

// KeyPEM returns the App private key (tests assert it never leaks).
func KeyPEM() string { Setup(); return keyPEM }

// World is one emulated GitHub with the lock repository set up.
type World struct {
	T  testing.TB
	Em *emulator.Emulator
	// API is the transport of every job's steps: the emulator's, checked
	// against GitHub's API description (internal/emulator/openapi; the
	// test fails on a violation).
	API *openapi.Recorder
	mu  sync.Mutex
	n   int
}

// NewWorld builds the world; config is the lock config JSON ("" = none).
// Create it inside the synctest bubble so every timestamp is virtual.
func NewWorld(t testing.TB, config string) *World {
	t.Helper()
	Setup()
	em := emulator.New(emulator.Options{Clock: clock.Real{}, Seed: 1, ServerURL: ServerURL})
	em.AddOwner(Owner, OwnerID, true)
	em.AddRepo(Owner, LockRepo, LockRepoID, "main")
	em.AddRepo(Owner, Consumer, ConsumerID, "main")
	em.AddApp(AppID, &key.PublicKey)
	em.InstallApp(AppID, Owner, []string{LockRepo})
	em.AddToken(ConsumerToken, emulator.TokenScope{Label: "consumer", Repos: []string{Owner + "/" + Consumer}})
	w := &World{T: t, Em: em, API: openapi.Attach(t, em.Transport())}
	if config != "" {
		w.SetConfig(config)
	}
	return w
}

// SetConfig commits the lock config on the default branch.
func (w *World) SetConfig(config string) {
	w.T.Helper()
	if _, err := w.Em.PutFile(Owner, LockRepo, "main", ConfigPath, []byte(config)); err != nil {
		w.T.Fatal(err)
	}
}

// SeedState commits s on lock-state (creating the branch if needed).
func (w *World) SeedState(s *lockstate.State) string {
	w.T.Helper()
	if _, ok := w.Em.BranchHead(Owner, LockRepo, "lock-state"); !ok {
		if err := w.Em.CreateBranch(Owner, LockRepo, "lock-state", "main"); err != nil {
			w.T.Fatal(err)
		}
	}
	data, err := lockstate.Encode(s)
	if err != nil {
		w.T.Fatal(err)
	}
	sha, err := w.Em.PutFile(Owner, LockRepo, "lock-state", StatePath, data)
	if err != nil {
		w.T.Fatal(err)
	}
	return sha
}

// State decodes the newest committed state (the empty state when none).
func (w *World) State() *lockstate.State {
	w.T.Helper()
	h := w.Em.History(Owner, LockRepo, "lock-state", StatePath)
	if len(h) == 0 || h[len(h)-1].Content == nil {
		return lockstate.Empty(Lock)
	}
	s, err := lockstate.Decode(h[len(h)-1].Content, lockstate.DecodeOptions{Lock: Lock, ServerURL: ServerURL})
	if err != nil {
		w.T.Fatal(err)
	}
	return s
}

// Versions returns how many versions of the state file were committed.
func (w *World) Versions() int {
	return len(w.Em.History(Owner, LockRepo, "lock-state", StatePath))
}

// Puts counts contents PUT requests received (applied or not).
func (w *World) Puts() int64 { return w.Em.Metrics().Routes[PutRoute].Requests }

// Job is one workflow job of the consumer repository.
type Job struct {
	w       *World
	Name    string
	Runner  string
	RunID   int64
	JobID   int64
	Env     map[string]string
	Dir     string
	Out     *SyncBuffer
	Signals *lockaction.Signals
}

// NewJob seeds a run with one in-progress job on runner and returns its
// step environment with the writer App credentials and lock-name set.
func (w *World) NewJob(name, runner string) *Job {
	w.T.Helper()
	w.mu.Lock()
	w.n++
	w.mu.Unlock()
	runID := w.Em.CreateRun(Owner, Consumer, emulator.Run{Workflow: "unity.yml", Status: "in_progress", RunAttempt: 1})
	jobID := w.Em.AddJob(Owner, Consumer, runID, 1, emulator.Job{Name: name, RunnerName: runner, Status: "in_progress"})
	dir := w.T.TempDir()
	j := &Job{w: w, Name: name, Runner: runner, RunID: runID, JobID: jobID, Dir: dir, Out: &SyncBuffer{}, Signals: &lockaction.Signals{}}
	j.Env = map[string]string{
		"GITHUB_ACTION_REPOSITORY":   Owner + "/" + LockRepo,
		"GITHUB_REPOSITORY":          Owner + "/" + Consumer,
		"GITHUB_REPOSITORY_ID":       strconv.Itoa(ConsumerID),
		"GITHUB_REPOSITORY_OWNER_ID": strconv.Itoa(OwnerID),
		"GITHUB_RUN_ID":              strconv.FormatInt(runID, 10),
		"GITHUB_RUN_ATTEMPT":         "1",
		"GITHUB_JOB":                 name,
		"GITHUB_WORKFLOW":            "Unity",
		"GITHUB_EVENT_NAME":          "push",
		"GITHUB_SERVER_URL":          ServerURL,
		"GITHUB_API_URL":             APIURL,
		"GITHUB_OUTPUT":              filepath.Join(dir, "output"),
		"GITHUB_STATE":               filepath.Join(dir, "state"),
		"GITHUB_STEP_SUMMARY":        filepath.Join(dir, "summary"),
		"RUNNER_TEMP":                filepath.Join(dir, "runner-temp"),
		lockaction.EnvAppID:          strconv.Itoa(AppID),
		lockaction.EnvAppPrivateKey:  keyPEM,
		"INPUT_LOCK-NAME":            Lock,
	}
	if runner != "" {
		j.Env["INPUT_RUNNER-ID"] = runner
		// The runner sets these for every step.
		j.Env["RUNNER_NAME"] = runner
		j.Env["RUNNER_OS"] = "Linux"
		j.Env["RUNNER_ARCH"] = "X64"
	}
	return j
}

// Input sets input name (hyphenated spelling, as the runner does).
func (j *Job) Input(name, value string) *Job {
	j.Env["INPUT_"+strings.ToUpper(name)] = value
	return j
}

// SameJobOn returns another job of j's run and attempt with the same job
// key (a second matrix leg) on runner: it computes j's holder id.
func (w *World) SameJobOn(j *Job, runner string) *Job {
	w.T.Helper()
	jobID := w.Em.AddJob(Owner, Consumer, j.RunID, 1, emulator.Job{Name: j.Name, RunnerName: runner, Status: "in_progress"})
	dir := w.T.TempDir()
	k := &Job{w: w, Name: j.Name, Runner: runner, RunID: j.RunID, JobID: jobID, Dir: dir, Out: &SyncBuffer{}, Signals: &lockaction.Signals{}}
	k.Env = make(map[string]string, len(j.Env))
	for key, v := range j.Env {
		k.Env[key] = v
	}
	k.Env["GITHUB_OUTPUT"] = filepath.Join(dir, "output")
	k.Env["GITHUB_STATE"] = filepath.Join(dir, "state")
	k.Env["GITHUB_STEP_SUMMARY"] = filepath.Join(dir, "summary")
	k.Env["RUNNER_TEMP"] = filepath.Join(dir, "runner-temp")
	k.Env["INPUT_RUNNER-ID"] = runner
	k.Env["RUNNER_NAME"] = runner
	return k
}

// HolderID is the holder ID acquire computes for suffix "default".
func (j *Job) HolderID() string {
	return fmt.Sprintf("%s/%s:%d:%s:default", Owner, Consumer, j.RunID, j.Name)
}

// Deps returns the in-process dependencies of one step of this job. The
// environment is copied, so later Input calls do not race the step.
func (j *Job) Deps() actionkit.Deps {
	env := make(map[string]string, len(j.Env))
	for k, v := range j.Env {
		env[k] = v
	}
	return actionkit.Deps{
		Getenv:    func(k string) string { return env[k] },
		Stdout:    j.Out,
		Transport: j.w.API,
		Signals:   j.Signals,
		Clock:     clock.Real{},
		Jitter:    func() float64 { return 0.5 },
	}
}

// ResetFiles empties the output and summary files between steps.
func (j *Job) ResetFiles() {
	_ = os.Remove(j.Env["GITHUB_OUTPUT"])
	_ = os.Remove(j.Env["GITHUB_STEP_SUMMARY"])
}

// Outputs parses GITHUB_OUTPUT (the runner's heredoc file-command format).
func (j *Job) Outputs() map[string]string { return parseFileCommands(j.Env["GITHUB_OUTPUT"]) }

// Saved parses GITHUB_STATE.
func (j *Job) Saved() map[string]string { return parseFileCommands(j.Env["GITHUB_STATE"]) }

// Summary returns the step summary markdown.
func (j *Job) Summary() string {
	b, _ := os.ReadFile(j.Env["GITHUB_STEP_SUMMARY"])
	return string(b)
}

func parseFileCommands(path string) map[string]string {
	out, err := actionio.ReadFileCommands(path)
	if err != nil {
		return map[string]string{}
	}
	return out
}

// SyncBuffer collects a step's stdout; see actionio.SyncBuffer.
type SyncBuffer = actionio.SyncBuffer

// Unmasked returns the step's stdout without the ::add-mask:: lines, which
// are the only place a secret may appear.
func (j *Job) Unmasked() string {
	var b strings.Builder
	for _, line := range strings.Split(j.Out.String(), "\n") {
		if !strings.HasPrefix(line, "::add-mask::") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
