package crashtest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/acquire"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/release"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/checker"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/linearizability"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/stretchr/testify/require"
)

// readerAppID is the reaper's reader App in the crash-test world.
const readerAppID = 4343

var (
	readerOnce sync.Once
	readerKey  *rsa.PrivateKey
	readerPEM  string
)

func setupKeys() {
	actiontest.Setup()
	readerOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		readerKey = k
		readerPEM = string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
	})
}

// world is an actiontest world (writer App on the lock repository, the
// consumer repository acme/game) plus the reaper's reader App on the
// consumer, and the bookkeeping the history audit needs: every authorized
// removal intent and which runs are terminal.
type world struct {
	*actiontest.World
	t testing.TB

	mu       sync.Mutex
	removals []checker.Removal
	jobs     map[string]*actiontest.Job // holderID -> job
	terminal map[string]bool            // holderID -> run terminal
	ids      int
	steps    int
	// background are jobs a setup started (a waiter polling behind the
	// victim); the case waits for them before the bubble ends.
	background sync.WaitGroup
	// lin records the case's history for the linearizability check;
	// victim is the job whose step is being cut (its outcome is taken from
	// the outputs it wrote before a kill).
	lin    *linearizability.Recorder
	victim *actiontest.Job
}

func newWorld(t testing.TB, config string) *world {
	return newWorldAt(t, config, lockstate.FencedSchemaVersion)
}

// newWorldAt seeds the state at schema (reservations from schema 4); schema
// 0 seeds nothing (a brand-new lock: no state file, no lock-state branch).
func newWorldAt(t testing.TB, config string, schema int) *world {
	setupKeys()
	w := &world{World: actiontest.NewWorld(t, config), t: t, jobs: map[string]*actiontest.Job{}, terminal: map[string]bool{}}
	w.Em.AddApp(readerAppID, &readerKey.PublicKey)
	w.Em.InstallApp(readerAppID, actiontest.Owner, []string{actiontest.Consumer})
	if schema == 0 {
		w.linInit(config) // a brand-new lock: the history starts with no file
		return w
	}
	s := lockstate.Empty(actiontest.Lock)
	s.SchemaVersion = schema
	if schema >= 4 {
		s.Reservations = []lockstate.Reservation{}
	}
	s.UpdatedAt = lockstate.FormatTime(time.Now())
	w.SeedState(s)
	w.linInit(config)
	return w
}

// victimTimeout is timeout-minutes of every consumer job.
const victimTimeout = 2 * time.Minute

// job creates a consumer job on runner with timeout-minutes victimTimeout.
func (w *world) job(name, runner string) *actiontest.Job {
	j := w.NewJob(name, runner).Input("timeout-minutes", strconv.Itoa(int(victimTimeout/time.Minute)))
	w.mu.Lock()
	w.jobs[j.HolderID()] = j
	w.mu.Unlock()
	linWorlds.Store(j, w)
	w.t.Cleanup(func() { linWorlds.Delete(j) })
	return j
}

// intent declares that an authorized actor may remove holderID from at on.
func (w *world) intent(holderID string, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.removals = append(w.removals, checker.Removal{HolderID: holderID, At: at})
}

func (w *world) intents() []checker.Removal {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]checker.Removal(nil), w.removals...)
}

// finish marks j's run and job completed with conclusion.
func (w *world) finish(j *actiontest.Job, conclusion string) {
	w.mu.Lock()
	done := w.terminal[j.HolderID()]
	w.terminal[j.HolderID()] = true
	w.mu.Unlock()
	if done {
		return
	}
	w.linFinish(j)
	require.NoError(w.t, w.Em.SetJobStatus(actiontest.Owner, actiontest.Consumer, j.JobID, "completed", conclusion))
	require.NoError(w.t, w.Em.SetRunStatus(actiontest.Owner, actiontest.Consumer, j.RunID, "completed", conclusion))
}

// deps is a step's Deps on transport tr (nil: the emulator's).
func deps(j *actiontest.Job, tr http.RoundTripper) acquire.Deps {
	d := j.Deps()
	d.MachineID = crashMachineID(j.Env["RUNNER_NAME"])
	if tr != nil {
		d.Transport = tr
	}
	d.Transport = linWrap(j, d.Transport)
	return d
}

// acquire runs acquire for j (fault-free). It declares j's own removal
// intents: at its deadline for a timeout, at its start for any other
// refusal (the acquire cleans up its own entry before returning).
func (w *world) acquire(ctx context.Context, j *actiontest.Job) error {
	j.ResetFiles()
	start := time.Now()
	call := w.lin.BeginAcquire(linFile, linJob(j))
	err := acquire.Run(ctx, deps(j, nil))
	w.linAcquired(j, call, j.Outputs())
	if err != nil {
		at := start
		if j.Outputs()["admission-result"] == "timeout" {
			at = start.Add(victimTimeout)
		}
		w.intent(j.HolderID(), at)
	}
	return err
}

// release runs release for j with inputs (name, value pairs), declaring its
// removal intent at the start.
func (w *world) release(ctx context.Context, j *actiontest.Job, tr http.RoundTripper, inputs ...string) error {
	w.intent(j.HolderID(), time.Now())
	for i := 0; i+1 < len(inputs); i += 2 {
		j.Input(inputs[i], inputs[i+1])
	}
	j.ResetFiles()
	call := w.lin.Now()
	err := release.Run(ctx, deps(j, tr))
	w.mu.Lock()
	victim := j == w.victim
	w.mu.Unlock()
	if !victim {
		w.linReleased(j, call, j.Outputs())
	}
	return err
}

// opEnv is the environment of a reaper or recovery step in the lock
// repository; outputs go to fresh files.
func (w *world) opEnv(inputs ...string) map[string]string {
	w.mu.Lock()
	w.steps++
	n := w.steps
	w.mu.Unlock()
	dir := w.t.TempDir()
	env := map[string]string{
		"INPUT_LOCK-NAME":            actiontest.Lock,
		"INPUT_OPERATION":            reap.OperationReap,
		"GITHUB_ACTION_REPOSITORY":   actiontest.Owner + "/" + actiontest.LockRepo,
		"GITHUB_REPOSITORY":          actiontest.Owner + "/" + actiontest.LockRepo,
		"GITHUB_REPOSITORY_ID":       strconv.Itoa(actiontest.LockRepoID),
		"GITHUB_REPOSITORY_OWNER_ID": strconv.Itoa(actiontest.OwnerID),
		"GITHUB_RUN_ID":              strconv.Itoa(900000 + n),
		"GITHUB_RUN_ATTEMPT":         "1",
		"GITHUB_JOB":                 "reap",
		"GITHUB_WORKFLOW":            "Reap stale build locks",
		"GITHUB_API_URL":             actiontest.APIURL,
		"GITHUB_SERVER_URL":          actiontest.ServerURL,
		"GITHUB_OUTPUT":              filepath.Join(dir, "output"),
		"GITHUB_STEP_SUMMARY":        filepath.Join(dir, "summary"),
		lockaction.EnvAppID:          strconv.Itoa(actiontest.AppID),
		lockaction.EnvAppPrivateKey:  actiontest.KeyPEM(),
		lockaction.EnvReaderAppID:    strconv.Itoa(readerAppID),
		lockaction.EnvReaderAppKey:   readerPEM,
	}
	for i := 0; i+1 < len(inputs); i += 2 {
		env["INPUT_"+strings.ToUpper(inputs[i])] = inputs[i+1]
	}
	return env
}

// opDeps are the reaper/recover Deps of env on tr (nil: the emulator's).
func (w *world) opDeps(env map[string]string, out *actiontest.SyncBuffer, tr http.RoundTripper) reap.Deps {
	if tr == nil {
		tr = w.Em.Transport()
	}
	return reap.Deps{
		Getenv: func(k string) string { return env[k] }, Stdout: out, Transport: w.lin.Transport(tr, linOp(env)),
		Jitter: func() float64 { return 0.5 },
		NewID: func() string {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.ids++
			return fmt.Sprintf("crash-res-%d", w.ids)
		},
	}
}

// reapIntents declares the reaper's authority: every identity whose run is
// terminal when the reaper starts may be removed by it.
func (w *world) reapIntents() {
	now := time.Now()
	w.mu.Lock()
	var ids []string
	for id, done := range w.terminal {
		if done {
			ids = append(ids, id)
		}
	}
	w.mu.Unlock()
	for _, id := range ids {
		w.intent(id, now)
	}
}

// reap runs the reaper fault-free.
func (w *world) reap(ctx context.Context) error {
	w.reapIntents()
	env := w.opEnv()
	return reap.Run(ctx, w.opDeps(env, &actiontest.SyncBuffer{}, nil))
}

// history is every committed version of the state file, for the checker.
func (w *world) history() []checker.Version {
	var out []checker.Version
	for _, v := range w.Em.History(actiontest.Owner, actiontest.LockRepo, "lock-state", actiontest.StatePath) {
		out = append(out, checker.Version{Time: v.Time, Content: v.Content, Message: v.Message})
	}
	return out
}

// versions is the raw history (with blob SHAs).
func (w *world) versions() []emulator.Version {
	return w.Em.History(actiontest.Owner, actiontest.LockRepo, "lock-state", actiontest.StatePath)
}

func decodeState(data []byte) (*lockstate.State, error) {
	return lockstate.Decode(data, lockstate.DecodeOptions{Lock: actiontest.Lock, ServerURL: actiontest.ServerURL})
}

// stateAt is the newest version committed at or before t (the empty
// schema-2 state of a missing file when none was committed yet).
func (w *world) stateAt(t time.Time) *lockstate.State {
	var last []byte
	for _, v := range w.versions() {
		if !v.Time.After(t) {
			last = v.Content
		}
	}
	if last == nil {
		return lockstate.Empty(actiontest.Lock)
	}
	s, err := decodeState(last)
	require.NoError(w.t, err, "decode state at %s", t)
	return s
}

// presence says where holderID is in s: "holder", "queue" or "".
func presence(s *lockstate.State, holderID string) string {
	for _, h := range s.Holders {
		if h.HolderID == holderID {
			return "holder"
		}
	}
	for _, e := range s.Queue {
		if e.HolderID == holderID {
			return "queue"
		}
	}
	return ""
}

func reservationsOf(s *lockstate.State, holderID string) []lockstate.Reservation {
	var out []lockstate.Reservation
	for _, r := range s.Reservations {
		if r.HolderID == holderID {
			out = append(out, r)
		}
	}
	return out
}

// readOutputs parses a GITHUB_OUTPUT file.
func readOutputs(path string) map[string]string {
	out, err := actionio.ReadFileCommands(path)
	if err != nil {
		return map[string]string{}
	}
	return out
}
