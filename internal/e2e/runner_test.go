package e2e_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actioncontract"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/checker"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/stretchr/testify/require"
)

// Fixed identities of the consumer side of the world.
const (
	lockName     = "seats"
	consumer     = "game"
	consumerID   = 5001
	workflowFile = "unity.yml"
	workflowName = "Unity"
	jobKey       = "unity" // GITHUB_JOB: the job's key in the workflow
	stateBranch  = "lock-state"
)

// world is one `buildlock emulator` process seeded with a lock config, a
// consumer repository and the checkout of this repository that the runner
// would have downloaded for a pinned `uses:`.
type world struct {
	t   *testing.T
	bin string
	em  *emu
	// actionSHA is the commit a consumer pinned; actionRoot is the runner's
	// checkout of it (_actions/<owner>/<repo>/<sha>), GITHUB_ACTION_PATH's
	// ../../.. (it carries locks/policy.json, read by the binaries).
	actionSHA, actionRoot string
	actions               map[string]actioncontract.Metadata

	mu       sync.Mutex
	removals []checker.Removal
	jobs     []*job
}

// newWorld starts the emulator and seeds it through the admin API.
func newWorld(t *testing.T, config string) *world {
	t.Helper()
	bin := binaries(t)
	root, err := moduleRoot()
	require.NoError(t, err)
	actions, err := actioncontract.LoadActions(root)
	require.NoError(t, err)
	w := &world{t: t, bin: bin, em: startEmulator(t, bin, lockName), actions: actions, actionSHA: randomHex(t, 20)}
	info := w.em.info
	w.em.admin(http.MethodPost, "/files", map[string]any{
		"owner": info.Owner, "repo": info.RepositoryName, "branch": "main",
		"path": "locks/" + lockName + ".config.json", "content": config,
	}, nil)
	committed := time.Now()
	w.em.admin(http.MethodPost, "/repos", map[string]any{
		"owner": info.Owner, "name": consumer, "id": consumerID, "default_branch": "main",
	}, nil)
	// The pinned checkout of the lock repository, with its caller policy
	// pinning the owner's numeric id (exercised by every step).
	w.actionRoot = filepath.Join(t.TempDir(), "_actions", info.Owner, info.RepositoryName, w.actionSHA)
	for name := range actions {
		mkdir(t, filepath.Join(w.actionRoot, ".github", "actions", name))
	}
	mkdir(t, filepath.Join(w.actionRoot, "locks"))
	writeFile(t, filepath.Join(w.actionRoot, "locks", "policy.json"), fmt.Sprintf(`{"ownerId": %d}`+"\n", info.OwnerID))
	// The emulator lags like GitHub: a read of the default branch within
	// DefaultReplicaLag of the config's commit may not see it yet (a 404),
	// and a job would then run on the defaults (one seat) until its next
	// config read, 5 minutes later: whether a test's first jobs see the
	// config would depend on which reads the replica draw makes lag.
	// Start once every read sees the config.
	waitFor(t, "the config commit to age past the replica lag", func() bool {
		return time.Since(committed) > emulator.DefaultReplicaLag+500*time.Millisecond
	})
	return w
}

// remove records that holderID's owner asked for its removal from now on
// (the checker's authorized-removal input).
func (w *world) remove(holderID string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.removals = append(w.removals, checker.Removal{HolderID: holderID, At: time.Now()})
}

// check audits every committed version of the state file.
func (w *world) check(maxHolders int) (checker.Report, []*lockstate.State) {
	w.t.Helper()
	hist := w.em.history(stateBranch, "locks/"+lockName+".json")
	var versions []checker.Version
	var states []*lockstate.State
	for _, v := range hist {
		versions = append(versions, checker.Version{Time: v.Time, Content: v.Content, Message: v.Message})
		if v.Content == nil {
			states = append(states, nil)
			continue
		}
		s, err := lockstate.Decode(v.Content, lockstate.DecodeOptions{Lock: lockName, ServerURL: w.em.info.ServerURL})
		require.NoError(w.t, err, "version %s (%s) does not decode", v.CommitSHA, v.Message)
		states = append(states, s)
	}
	w.mu.Lock()
	removals := append([]checker.Removal(nil), w.removals...)
	w.mu.Unlock()
	rep := checker.Check(versions, checker.Input{Lock: lockName, ServerURL: w.em.info.ServerURL, MaxHolders: maxHolders, Removals: removals})
	return rep, states
}

// stateBySHA returns the decoded version of the state file with blob sha.
func (w *world) stateBySHA(sha string) *lockstate.State {
	w.t.Helper()
	for _, v := range w.em.history(stateBranch, "locks/"+lockName+".json") {
		if v.BlobSHA == sha && v.Content != nil {
			s, err := lockstate.Decode(v.Content, lockstate.DecodeOptions{Lock: lockName, ServerURL: w.em.info.ServerURL})
			require.NoError(w.t, err)
			return s
		}
	}
	return nil
}

// latest returns the newest committed state (nil before the first write).
func (w *world) latest() *lockstate.State {
	w.t.Helper()
	hist := w.em.history(stateBranch, "locks/"+lockName+".json")
	if len(hist) == 0 || hist[len(hist)-1].Content == nil {
		return nil
	}
	s, err := lockstate.Decode(hist[len(hist)-1].Content, lockstate.DecodeOptions{Lock: lockName, ServerURL: w.em.info.ServerURL})
	require.NoError(w.t, err)
	return s
}

// job is one workflow job of the consumer repository: its own workflow run
// (one attempt, one in-progress job on runner) and its own GITHUB_TOKEN.
type job struct {
	w      *world
	runner string
	runID  int64
	jobID  int64
	token  string
	dir    string

	mu    sync.Mutex
	env   map[string]string // what the runner sets for every step of the job
	steps []*step
	n     int
}

// newJob seeds the run, its job and its GITHUB_TOKEN in the emulator and
// builds the job-level environment of a self-hosted runner named runner.
func (w *world) newJob(runner string) *job {
	w.t.Helper()
	info := w.em.info
	headSHA := randomHex(w.t, 20)
	var run struct {
		ID int64 `json:"id"`
	}
	w.em.admin(http.MethodPost, "/runs", map[string]any{"owner": info.Owner, "repo": consumer, "run": map[string]any{
		"name": workflowName, "workflow": workflowFile, "event": "push", "status": "in_progress", "head_sha": headSHA, "head_branch": "main",
	}}, &run)
	var jb struct {
		ID int64 `json:"id"`
	}
	w.em.admin(http.MethodPost, "/jobs", map[string]any{"owner": info.Owner, "repo": consumer, "run_id": run.ID, "attempt": 1, "job": map[string]any{
		"name": jobKey, "runner_name": runner, "status": "in_progress",
	}}, &jb)
	// A GITHUB_TOKEN has the ghs_ prefix and 40 characters, and reaches
	// exactly its own repository.
	token := "ghs_" + randomHex(w.t, 18)
	w.em.admin(http.MethodPost, "/tokens", map[string]any{
		"token": token, "label": fmt.Sprintf("github-token-run-%d", run.ID), "repos": []string{info.Owner + "/" + consumer},
		"permissions": map[string]string{"actions": "read", "contents": "read", "pull_requests": "read"},
	}, nil)
	dir := w.t.TempDir()
	for _, d := range []string{"workspace", "temp", "tool-cache", "file-commands"} {
		mkdir(w.t, filepath.Join(dir, d))
	}
	writeFile(w.t, filepath.Join(dir, "event.json"), "{}\n")
	repo := info.Owner + "/" + consumer
	j := &job{w: w, runner: runner, runID: run.ID, jobID: jb.ID, token: token, dir: dir}
	// The default environment variables of a job
	// (https://docs.github.com/en/actions/reference/workflows-and-actions/variables).
	j.env = map[string]string{
		"CI":                         "true",
		"GITHUB_ACTIONS":             "true",
		"GITHUB_ACTOR":               "octocat",
		"GITHUB_ACTOR_ID":            "583231",
		"GITHUB_API_URL":             info.APIURL,
		"GITHUB_BASE_REF":            "",
		"GITHUB_ENV":                 filepath.Join(dir, "file-commands", "set_env"),
		"GITHUB_EVENT_NAME":          "push",
		"GITHUB_EVENT_PATH":          filepath.Join(dir, "event.json"),
		"GITHUB_GRAPHQL_URL":         info.APIURL + "/graphql",
		"GITHUB_HEAD_REF":            "",
		"GITHUB_JOB":                 jobKey,
		"GITHUB_PATH":                filepath.Join(dir, "file-commands", "add_path"),
		"GITHUB_REF":                 "refs/heads/main",
		"GITHUB_REF_NAME":            "main",
		"GITHUB_REF_PROTECTED":       "true",
		"GITHUB_REF_TYPE":            "branch",
		"GITHUB_REPOSITORY":          repo,
		"GITHUB_REPOSITORY_ID":       strconv.Itoa(consumerID),
		"GITHUB_REPOSITORY_OWNER":    info.Owner,
		"GITHUB_REPOSITORY_OWNER_ID": strconv.FormatInt(info.OwnerID, 10),
		"GITHUB_RETENTION_DAYS":      "90",
		"GITHUB_RUN_ATTEMPT":         "1",
		"GITHUB_RUN_ID":              strconv.FormatInt(run.ID, 10),
		"GITHUB_RUN_NUMBER":          strconv.FormatInt(run.ID, 10),
		"GITHUB_SERVER_URL":          info.ServerURL,
		"GITHUB_SHA":                 headSHA,
		"GITHUB_TRIGGERING_ACTOR":    "octocat",
		"GITHUB_WORKFLOW":            workflowName,
		"GITHUB_WORKFLOW_REF":        repo + "/.github/workflows/" + workflowFile + "@refs/heads/main",
		"GITHUB_WORKFLOW_SHA":        headSHA,
		"GITHUB_WORKSPACE":           filepath.Join(dir, "workspace"),
		"RUNNER_ARCH":                "X64",
		"RUNNER_ENVIRONMENT":         "self-hosted",
		"RUNNER_NAME":                runner,
		"RUNNER_OS":                  "Linux",
		"RUNNER_TEMP":                filepath.Join(dir, "temp"),
		"RUNNER_TOOL_CACHE":          filepath.Join(dir, "tool-cache"),
	}
	w.mu.Lock()
	w.jobs = append(w.jobs, j)
	w.mu.Unlock()
	return j
}

// holderID is the holder id acquire computes for this job (suffix default).
func (j *job) holderID() string {
	return fmt.Sprintf("%s:%d:%s:default", j.env["GITHUB_REPOSITORY"], j.runID, jobKey)
}

// secrets is the `env:` of a consumer's acquire/release step: the writer
// App id and key, from organization secrets.
func (j *job) secrets() map[string]string {
	return map[string]string{
		"BUILD_LOCK_APP_ID":          strconv.FormatInt(j.w.em.info.AppID, 10),
		"BUILD_LOCK_APP_PRIVATE_KEY": j.w.em.key,
	}
}

// step is one running or finished step process of a job.
type step struct {
	name, id       string
	cmd            *exec.Cmd
	stdout, stderr syncBuffer
	outputPath     string
	statePath      string
	summaryPath    string
	done           chan struct{}
	err            error
	state          *os.ProcessState
}

// stepFiles creates the per-step file-command files the runner creates
// (empty) before a step starts and returns their environment.
func (j *job) stepFiles(id string) (map[string]string, error) {
	j.mu.Lock()
	j.n++
	n := j.n
	j.mu.Unlock()
	base := filepath.Join(j.dir, "file-commands", fmt.Sprintf("%02d-%s", n, id))
	env := map[string]string{
		"GITHUB_OUTPUT":       base + ".output",
		"GITHUB_STATE":        base + ".state",
		"GITHUB_STEP_SUMMARY": base + ".summary",
	}
	for _, p := range env {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			return nil, err
		}
	}
	return env, nil
}

var (
	inputExpr  = regexp.MustCompile(`^\$\{\{\s*inputs\.([A-Za-z0-9_-]+)\s*\}\}$`)
	actionRepo = regexp.MustCompile(`^\$\{\{\s*github\.action_repository\s*\}\}$`)
	checkRunID = regexp.MustCompile(`^\$\{\{\s*job\.check_run_id\s*\}\}$`)
)

// actionEnv evaluates the env: mapping of the run: step (for this OS) of composite
// action `action` for a caller's with: in job j — every ${{ inputs.x }} becomes the
// caller's value, else the declared default, exactly as the runner
// evaluates it (a default of ${{ job.check_run_id }} is j's job id, as on
// github.com) — and returns it with the binary the step launches.
// It refuses what a runner would reject or this harness cannot evaluate.
func (w *world) actionEnv(action string, with map[string]string, j *job) (map[string]string, string, error) {
	meta, ok := w.actions[action]
	if !ok {
		return nil, "", fmt.Errorf("no action %s", action)
	}
	reg, ok := actioncontract.Registry[action]
	step, hasStep := meta.StepFor(runtime.GOOS)
	if !ok || meta.Runs.Using != "composite" || !hasStep {
		return nil, "", fmt.Errorf("%s is not a registered composite action with a step for %s", action, runtime.GOOS)
	}
	for k := range with {
		if _, ok := meta.Inputs[k]; !ok {
			return nil, "", fmt.Errorf("%s has no input %q", action, k)
		}
	}
	inputs := map[string]string{}
	for name, in := range meta.Inputs {
		v, given := with[name]
		if !given && in.Required != nil && *in.Required {
			return nil, "", fmt.Errorf("%s: required input %s not given", action, name)
		}
		if !given && in.Default != nil {
			v = *in.Default
			switch {
			case checkRunID.MatchString(v):
				v = strconv.FormatInt(j.jobID, 10)
			case strings.Contains(v, "${{"):
				return nil, "", fmt.Errorf("%s: the default of input %s, %q, is an expression this harness cannot evaluate", action, name, v)
			}
		}
		inputs[name] = v
	}
	env := map[string]string{}
	for k, expr := range step.Env {
		switch {
		case inputExpr.MatchString(expr):
			name := inputExpr.FindStringSubmatch(expr)[1]
			v, ok := inputs[name]
			if !ok {
				return nil, "", fmt.Errorf("%s maps %s to undeclared input %s", action, k, name)
			}
			env[k] = v
		case actionRepo.MatchString(expr):
			env[k] = w.em.info.Repository
		default:
			return nil, "", fmt.Errorf("%s: env %s=%q is an expression this harness cannot evaluate", action, k, expr)
		}
	}
	return env, exe(w.bin, reg.Binary), nil
}

// uses starts the composite action `action` as a consumer step
// `uses: <owner>/<repo>/.github/actions/<action>@<sha>` with `with:` and
// `env:`. The process gets exactly what the runner gives the action's one
// `run:` step: the job environment, fresh file-command files, the action
// path, the caller's step env, and the action step's own env: mapping
// (INPUT_* in the underscore spelling only, see actionEnv). The launcher's
// `exec` is replaced by exec'ing the binary directly. Safe to call from
// any goroutine.
func (j *job) uses(ctx context.Context, id, action string, with, env map[string]string) (*step, error) {
	stepEnv, binary, err := j.w.actionEnv(action, with, j)
	if err != nil {
		return nil, err
	}
	files, err := j.stepFiles(id)
	if err != nil {
		return nil, err
	}
	full := map[string]string{}
	for _, m := range []map[string]string{j.env, files} {
		for k, v := range m {
			full[k] = v
		}
	}
	full["GITHUB_ACTION"] = id
	full["GITHUB_ACTION_PATH"] = filepath.Join(j.w.actionRoot, ".github", "actions", action)
	full["GITHUB_ACTION_REF"] = j.w.actionSHA
	// Composite run: steps see an empty github.action_repository
	// (actions/runner#2473); the env: mapping carries it instead.
	full["GITHUB_ACTION_REPOSITORY"] = ""
	for _, m := range []map[string]string{env, stepEnv} {
		for k, v := range m {
			full[k] = v
		}
	}
	return j.start(ctx, id, binary, full)
}

// runStep starts a consumer `run:` step (the licensed work) as the test
// binary in helper mode, with the job environment plus extra. Safe to
// call from any goroutine.
func (j *job) runStep(ctx context.Context, id string, extra map[string]string) (*step, error) {
	files, err := j.stepFiles(id)
	if err != nil {
		return nil, err
	}
	full := map[string]string{}
	for _, m := range []map[string]string{j.env, files, extra} {
		for k, v := range m {
			full[k] = v
		}
	}
	full["GITHUB_ACTION"] = id
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return j.start(ctx, id, self, full)
}

func (j *job) start(ctx context.Context, id, path string, env map[string]string) (*step, error) {
	s := &step{name: fmt.Sprintf("%s/%s", j.holderID(), id), id: id, done: make(chan struct{}),
		outputPath: env["GITHUB_OUTPUT"], statePath: env["GITHUB_STATE"], summaryPath: env["GITHUB_STEP_SUMMARY"]}
	cmd := exec.CommandContext(ctx, path)
	cmd.Env = minimalEnv()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Dir = j.env["GITHUB_WORKSPACE"]
	cmd.Stdout, cmd.Stderr = &s.stdout, &s.stderr
	cmd.WaitDelay = 5 * time.Second
	s.cmd = cmd
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", s.name, err)
	}
	j.mu.Lock()
	j.steps = append(j.steps, s)
	j.mu.Unlock()
	go func() {
		s.err = cmd.Wait()
		s.state = cmd.ProcessState
		close(s.done)
	}()
	return s, nil
}

// wait blocks until the step's process has exited (the context of its
// start kills it at the latest).
func (s *step) wait() *step {
	<-s.done
	return s
}

// exitCode is the process exit code, or -1 when a signal killed it.
func (s *step) exitCode() int {
	if s.state == nil {
		return -1
	}
	return s.state.ExitCode()
}

// killedBy reports whether sig terminated the process.
func (s *step) killedBy(sig syscall.Signal) bool {
	if s.state == nil {
		return false
	}
	ws, ok := s.state.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

// signal sends sig to the step's process.
func (s *step) signal(sig os.Signal) error { return s.cmd.Process.Signal(sig) }

// outputs parses GITHUB_OUTPUT as the runner does.
func (s *step) outputs() map[string]string { return parseFileCommands(s.outputPath) }

// log is everything the step printed, for failure messages.
func (s *step) log() string {
	return fmt.Sprintf("--- %s (exit %d, %v)\nstdout:\n%sstderr:\n%s", s.name, s.exitCode(), s.err, s.stdout.String(), s.stderr.String())
}

// visible is what would appear in the Actions log and files: stdout and
// stderr without the ::add-mask:: commands (the runner consumes those and
// never prints them), plus the output, state and summary files.
func (s *step) visible() string {
	var b strings.Builder
	for _, line := range append(scanLines(s.stdout.String()), scanLines(s.stderr.String())...) {
		if strings.HasPrefix(line, "::add-mask::") {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	for _, p := range []string{s.outputPath, s.statePath, s.summaryPath} {
		data, _ := os.ReadFile(p)
		b.Write(data)
	}
	return b.String()
}

// parseFileCommands reads a GITHUB_OUTPUT/GITHUB_STATE file as the runner
// does; an unreadable file reads as no outputs.
func parseFileCommands(path string) map[string]string {
	out, err := actionio.ReadFileCommands(path)
	if err != nil {
		return map[string]string{}
	}
	return out
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}

func mkdir(t *testing.T, p string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(p, 0o755))
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	require.NoError(t, os.WriteFile(p, []byte(s), 0o600))
}
