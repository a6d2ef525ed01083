//go:build linux

package e2e_test

import (
	"context"
	crand "crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit/machineslot"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/checker"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	mq "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue/filestore"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/testexec"
)

// Knobs of TestMachineQueueAcceptance.
const (
	// envMachineJobs scales the number of jobs (default 30).
	envMachineJobs = "BUILDLOCK_E2E_MACHINE_JOBS"
	// envMachineSeed replays a kill schedule.
	envMachineSeed = "BUILDLOCK_E2E_MACHINE_SEED"
	machineSlots   = 2
	orgSeats       = 3
	readerAppID    = 4242
)

// machineJob is one job of the acceptance test and what became of it.
type machineJob struct {
	j          *job
	worker     *exec.Cmd
	killAfter  time.Duration // SIGKILL of the acquire step (worker lives)
	groupAfter time.Duration // SIGKILL of the whole job (worker and steps)
	groupKill  bool          // the job was killed whole
	res        workerResult
	resErr     error
}

// TestMachineQueueAcceptance is issue 26's acceptance on this machine: 30
// concurrent jobs, each with machine-slots 2, on two machine queues (two
// directories: two machines of 2 slots, so up to 4 jobs want the 3 seats),
// against a 3-seat organization lock served by the emulator over HTTP, some killed
// at random: their acquire step alone (SIGKILL; the job's release step
// still runs), or the whole job (SIGKILL of the worker's process group: the
// runner lost it, no step of it runs again; GitHub marks such a job
// completed, and the reaper, run by the test after each such kill, removes
// its organization entry on that evidence). Checked: every machine queue
// state ever committed holds at most 2 slots; every organization state
// version holds at most 3 seats and passes the checker; every job that was
// not killed is admitted and released; nothing is left in either state
// (the machine queue after one Reclaim, which proves the killed workers
// dead).
func TestMachineQueueAcceptance(t *testing.T) {
	t.Parallel()
	n := 30
	if v, err := strconv.Atoi(os.Getenv(envMachineJobs)); err == nil && v > 0 {
		n = v
	}
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv(envMachineSeed), 10, 64); err == nil {
		seed = v
	}
	t.Logf("%d jobs, machine-slots %d, %d organization seats; kill schedule %s=%d", n, machineSlots, orgSeats, envMachineSeed, seed)
	rng := rand.New(rand.NewPCG(seed, 26))

	w := newWorld(t, fmt.Sprintf(`{"maxHolders":%d,"releaseCooldownSeconds":0}`, orgSeats)+"\n")
	readerKey := w.addReaderApp()
	tmp := t.TempDir()
	// Two machines (two queue directories) of 2 slots each: up to 4 jobs
	// want the 3 organization seats at once, so both bounds bind.
	machineDirs := []string{filepath.Join(tmp, "machine-a"), filepath.Join(tmp, "machine-b")}
	journals := []string{filepath.Join(tmp, "journal-a"), filepath.Join(tmp, "journal-b")}
	worker := workerBinary(t, tmp)
	self, err := os.Executable()
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
	defer cancel()
	var reapMu sync.Mutex
	jobs := make([]*machineJob, n)
	for i := range jobs {
		mj := &machineJob{j: w.newJob(fmt.Sprintf("agent-%d", i%3+1))}
		switch r := rng.Float64(); {
		case r < 0.15:
			mj.killAfter = time.Duration(rng.Int64N(int64(4 * time.Second)))
		case r < 0.3:
			mj.groupAfter = time.Duration(rng.Int64N(int64(8 * time.Second)))
		}
		jobs[i] = mj
	}
	start := time.Now()
	var wg sync.WaitGroup
	for i, mj := range jobs {
		spec := w.machineSpec(t, mj, self, machineDirs[i%2], journals[i%2], filepath.Join(tmp, fmt.Sprintf("result-%d.json", i)))
		result := spec[:len(spec)-len(".spec.json")] + ".result.json"
		mj.worker = exec.Command(worker)
		mj.worker.Env = append(minimalEnv(), envWorkerSpec+"="+spec)
		mj.worker.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		require.NoError(t, mj.worker.Start())
		wg.Go(func() {
			var timer *time.Timer
			var mu sync.Mutex
			if mj.groupAfter > 0 {
				timer = time.AfterFunc(mj.groupAfter, func() {
					mu.Lock()
					defer mu.Unlock()
					mj.groupKill = syscall.Kill(-mj.worker.Process.Pid, syscall.SIGKILL) == nil
				})
			}
			werr := mj.worker.Wait()
			if timer != nil {
				timer.Stop()
			}
			mu.Lock()
			killed := mj.groupKill && werr != nil
			mj.groupKill = killed
			mu.Unlock()
			if killed {
				// The runner lost the job: GitHub completes it as failed,
				// and the reaper removes its organization entry.
				w.completeJob(mj.j)
				if at, ok := releaseStart(result); ok {
					// Killed during or after its release step, whose
					// write may have landed before the kill.
					w.removeAt(mj.j.holderID(), at)
				}
				w.remove(mj.j.holderID())
				reapMu.Lock()
				w.reapOnce(ctx, readerKey)
				reapMu.Unlock()
				return
			}
			data, err := os.ReadFile(result)
			if err == nil {
				err = json.Unmarshal(data, &mj.res)
			}
			mj.resErr = err
		})
	}
	wg.Wait()
	elapsed := time.Since(start)

	// Cleanup of what killed jobs left: the reaper once more, and one
	// machine queue Reclaim (every killed worker is proven dead).
	w.reapOnce(ctx, readerKey)
	for i, dir := range machineDirs {
		st, err := filestore.Open(dir, filestore.Options{Observe: func(b []byte) { appendJournal(journals[i], b) }})
		require.NoError(t, err)
		_, err = st.Reclaim(ctx)
		require.NoError(t, err)
		final, err := st.Snapshot(ctx)
		require.NoError(t, err)
		assert.Empty(t, final.Holders, "machine %d: queue holders left", i)
		assert.Empty(t, final.Queue, "machine %d: queue waiters left", i)
	}

	survivors, stepKilled, groupKilled := 0, 0, 0
	for _, mj := range jobs {
		id := mj.j.holderID()
		switch {
		case mj.groupKill:
			groupKilled++
			continue
		case !assert.NoError(t, mj.resErr, "%s: worker result", id):
			continue
		}
		w.removeAt(id, mj.res.ReleaseAt)
		assert.Equal(t, 0, mj.res.ReleaseExit, "%s: release exit %d\n%s", id, mj.res.ReleaseExit, mj.res.Log)
		if mj.res.AcquireKilled {
			stepKilled++
			continue
		}
		survivors++
		out := mj.res.AcquireOutputs
		if assert.True(t, mj.res.Acquired, "%s: not acquired (%v)\n%s", id, out, mj.res.Log) {
			slot, _ := strconv.Atoi(out["machine-slot"])
			assert.True(t, slot >= 1 && slot <= machineSlots, "%s: machine-slot %q", id, out["machine-slot"])
			assert.NotEmpty(t, out["machine-wait-seconds"], id)
			assert.NotEmpty(t, out["lock-wait-seconds"], id)
			assert.Equal(t, "true", mj.res.ReleaseOutputs["released"], "%s: release outputs %v\n%s", id, mj.res.ReleaseOutputs, mj.res.Log)
		}
	}

	states, maxSlots := 0, 0
	for _, j := range journals {
		n, m := checkJournal(t, j)
		states, maxSlots = states+n, max(maxSlots, m)
	}
	if n >= 12 {
		assert.Equal(t, machineSlots, maxSlots, "the slots were never all used: the test did not contend")
	}
	rep, orgStates := w.check(orgSeats)
	assert.Empty(t, rep.Violations, "organization checker")
	assert.LessOrEqual(t, rep.MaxOccupied, orgSeats)
	for i, s := range orgStates {
		if s != nil {
			assert.LessOrEqual(t, len(s.Holders), orgSeats, "organization version %d", i)
		}
	}
	if last := w.latest(); assert.NotNil(t, last) {
		assert.Empty(t, last.Holders, "organization holders left")
		assert.Empty(t, last.Queue, "organization queue left")
		assert.Empty(t, last.Reservations, "organization reservations left")
	}
	t.Logf("%d jobs in %s: %d survived, %d acquire steps killed, %d jobs killed whole; %d machine queue states journaled (max %d slots held), %d organization versions (max %d seats)",
		n, elapsed.Round(time.Millisecond), survivors, stepKilled, groupKilled, states, maxSlots, rep.Versions, rep.MaxOccupied)
}

// checkJournal decodes every journaled machine queue state: none holds
// more than machineSlots slots. It returns how many it read and the most
// slots held.
func checkJournal(t *testing.T, path string) (int, int) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	maxHeld := 0
	for i, l := range lines {
		if l == "-" {
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(l)
		if !assert.NoError(t, err, "journal line %d", i) {
			continue
		}
		var s struct {
			Holders []json.RawMessage `json:"holders"`
		}
		require.NoError(t, json.Unmarshal(raw, &s), "journal line %d", i)
		assert.LessOrEqual(t, len(s.Holders), machineSlots, "machine queue state %d holds %d slots:\n%s", i, len(s.Holders), raw)
		_, derr := mq.Decode(raw)
		assert.NoError(t, derr, "machine queue state %d does not decode", i)
		maxHeld = max(maxHeld, len(s.Holders))
	}
	return len(lines), maxHeld
}

// workerBinary copies this test binary to dir/Runner.Worker.
func workerBinary(t *testing.T, dir string) string {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	in, err := os.Open(self)
	require.NoError(t, err)
	defer in.Close()
	p := filepath.Join(dir, machineslot.WorkerName)
	require.NoError(t, testexec.Copy(p, in, 0o755))
	return p
}

// machineSpec writes the worker spec of mj and returns its path
// (<result without .json>.spec.json).
func (w *world) machineSpec(t *testing.T, mj *machineJob, self, machineDir, journal, result string) string {
	t.Helper()
	j := mj.j
	with := j.acquireWith()
	with["machine-slots"] = strconv.Itoa(machineSlots)
	extra := map[string]string{machineslot.EnvMachineDir: machineDir, envStep: "acquire", envJournal: journal}
	for k, v := range j.secrets() {
		extra[k] = v
	}
	acq, err := j.stepEnv("acquire", "acquire-build-lock", with, extra)
	require.NoError(t, err)
	rel, err := j.stepEnv("release", "release-build-lock", j.releaseWith(), extra)
	require.NoError(t, err)
	rel[envStep] = "release"
	holdFiles, err := j.stepFiles("licensed")
	require.NoError(t, err)
	hold := map[string]string{envHoldFor: (100 * time.Millisecond).String()}
	for _, m := range []map[string]string{j.env, holdFiles} {
		for k, v := range m {
			hold[k] = v
		}
	}
	base := strings.TrimSuffix(result, ".json")
	spec := workerSpec{
		Acquire:          stepSpec{Path: self, Env: envList(acq), Output: acq["GITHUB_OUTPUT"]},
		Hold:             stepSpec{Path: self, Env: envList(hold), Output: holdFiles["GITHUB_OUTPUT"]},
		Release:          stepSpec{Path: self, Env: envList(rel), Output: rel["GITHUB_OUTPUT"]},
		KillAcquireAfter: mj.killAfter,
		Result:           base + ".result.json",
	}
	data, err := json.Marshal(spec)
	require.NoError(t, err)
	p := base + ".spec.json"
	require.NoError(t, os.WriteFile(p, data, 0o600))
	return p
}

// addReaderApp installs a reader App on the consumer repository (the
// reaper reads runs and jobs with it) and returns its private key PEM.
func (w *world) addReaderApp() string {
	w.t.Helper()
	k, err := rsa.GenerateKey(crand.Reader, 2048)
	require.NoError(w.t, err)
	pub, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	require.NoError(w.t, err)
	w.em.admin(http.MethodPost, "/apps", map[string]any{"app_id": readerAppID, "public_key_pem": string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}))}, nil)
	w.em.admin(http.MethodPost, "/installations", map[string]any{"app_id": readerAppID, "owner": w.em.info.Owner, "repos": []string{consumer},
		"permissions": map[string]string{"actions": "read", "metadata": "read"}}, nil)
	return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
}

// completeJob marks j's job and run completed (failure), as GitHub does
// once the runner that ran it is gone.
func (w *world) completeJob(j *job) {
	info := w.em.info
	w.em.admin(http.MethodPost, "/jobs/"+strconv.FormatInt(j.jobID, 10), map[string]any{"owner": info.Owner, "repo": consumer, "status": "completed", "conclusion": "failure"}, nil)
	w.em.admin(http.MethodPost, "/runs/"+strconv.FormatInt(j.runID, 10), map[string]any{"owner": info.Owner, "repo": consumer, "status": "completed", "conclusion": "failure"}, nil)
}

// reapOnce runs the reap-stale-locks action in-process against the
// emulator over HTTP, on the real clock: it removes entries whose job is
// completed and keeps every live one.
func (w *world) reapOnce(ctx context.Context, readerKey string) {
	info := w.em.info
	dir := w.t.TempDir()
	env := map[string]string{
		"INPUT_LOCK_NAME":                   lockName,
		"INPUT_OPERATION":                   "reap",
		"BUILD_LOCK_ACTION_REPOSITORY":      info.Repository,
		"BUILD_LOCK_ACTION_ROOT":            w.actionRoot,
		"GITHUB_REPOSITORY":                 info.Repository,
		"GITHUB_REPOSITORY_ID":              strconv.FormatInt(info.RepositoryID, 10),
		"GITHUB_REPOSITORY_OWNER_ID":        strconv.FormatInt(info.OwnerID, 10),
		"GITHUB_API_URL":                    info.APIURL,
		"GITHUB_SERVER_URL":                 info.ServerURL,
		"GITHUB_OUTPUT":                     filepath.Join(dir, "output"),
		"GITHUB_STEP_SUMMARY":               filepath.Join(dir, "summary"),
		"BUILD_LOCK_APP_ID":                 strconv.FormatInt(info.AppID, 10),
		"BUILD_LOCK_APP_PRIVATE_KEY":        w.em.key,
		"BUILD_LOCK_READER_APP_ID":          strconv.Itoa(readerAppID),
		"BUILD_LOCK_READER_APP_PRIVATE_KEY": readerKey,
	}
	var out syncBuffer
	err := reap.Run(ctx, reap.Deps{Getenv: func(k string) string { return env[k] }, Stdout: &out, Clock: clock.Real{}})
	assert.NoError(w.t, err, "reaper:\n%s", out.String())
}

// removeAt records an authorized removal of holderID from at.
func (w *world) removeAt(holderID string, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.removals = append(w.removals, checker.Removal{HolderID: holderID, At: at})
}
