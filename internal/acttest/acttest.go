package acttest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/testexec"
)

// Version is the nektos/act release the harness is written against; it
// equals ACT_VERSION in tools/versions.env (a test keeps them equal), and
// Find refuses any other.
const Version = "v0.2.89"

// Module is act's Go module: make test runs
// `go install github.com/nektos/act@$(ACT_VERSION)`.
const Module = "github.com/nektos/act"

// EnvAct names the act binary to use (set by make test).
const EnvAct = "BUILD_LOCK_ACT"

// ErrNoAct means no act binary was named: the caller decides whether that
// skips (a developer's go test) or fails (CI).
var ErrNoAct = errors.New("acttest: no act binary: set " + EnvAct + " to act " + Version + " (make test installs it: go install " + Module + "@" + Version + ")")

// Find returns the act binary named by BUILD_LOCK_ACT, checked to be
// Version. lookupEnv is os.LookupEnv in a test (injected, so the harness
// reads no environment itself).
func Find(ctx context.Context, lookupEnv func(string) (string, bool)) (string, error) {
	p, ok := lookupEnv(EnvAct)
	if !ok || strings.TrimSpace(p) == "" {
		return "", ErrNoAct
	}
	out, err := exec.CommandContext(ctx, p, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("acttest: %s --version: %w", p, err)
	}
	want := "act version " + strings.TrimPrefix(Version, "v")
	if got := strings.TrimSpace(string(out)); got != want {
		return "", fmt.Errorf("acttest: %s says %q, the harness needs %q (tools/versions.env ACT_VERSION)", p, got, want)
	}
	return p, nil
}

// Run is one act invocation: one workflow file of a repository work tree,
// one event, on the host.
type Run struct {
	// Act is the act binary (Find).
	Act string
	// Dir is the repository work tree act runs in; it must be a git
	// repository (act reads the ref, the commit and, from the remote
	// "origin", the repository name).
	Dir string
	// Workflow is the workflow file, relative to Dir.
	Workflow string
	// Event is the event name (workflow_dispatch, push, pull_request...).
	Event string
	// EventPayload is the event's JSON payload (github.event); empty is {}.
	EventPayload map[string]any
	// Job runs only this job id (act -j); empty runs every job.
	Job string
	// Matrix keeps only the matrix legs with these values (act --matrix
	// key:value, for example "test-mode:editmode"); empty runs every leg.
	Matrix []string
	// Platforms maps runs-on labels to act platforms; nil is
	// {"ubuntu-latest": "-self-hosted"}. Every value must be "-self-hosted".
	Platforms map[string]string
	// Actions maps OWNER/REPO@REF to a local directory (act
	// --local-repository). Every remote uses: of the workflow must be here.
	Actions map[string]string
	// Env is passed with --env: the job environment of every step.
	Env map[string]string
	// Secrets are written to a file for act's --secret-file, never on the
	// command line.
	Secrets map[string]string
	// Vars are the workflow's vars context (act --var).
	Vars map[string]string
	// BaseEnv is the environment act itself runs with (host steps inherit
	// it), usually os.Environ(); GITHUB_*, RUNNER_*, ACTIONS_*, INPUT_*
	// and BUILD_LOCK_* variables of the caller are dropped, so a harness
	// run inside a real runner does not leak that runner's context.
	BaseEnv []string
	// Commands are stub executables (name → bash script body) placed first
	// on PATH.
	Commands map[string]string
	// GitRemotes redirects git URLs (prefix → local path or URL, git's
	// url.<base>.insteadOf) for every git command a step runs.
	GitRemotes map[string]string
	// WorkDir holds act's action cache, workspaces, tool cache and the
	// harness's files; it must be an empty or harness-owned directory.
	WorkDir string
	// Stream, when set, also receives act's output as it is printed (to
	// follow a long run); Result.Log always has all of it.
	Stream io.Writer
}

// Result is what one act run produced.
type Result struct {
	// Log is act's combined output.
	Log string
	// ExitCode is act's exit status (0: every job succeeded).
	ExitCode int
	// Jobs maps a job id to "succeeded" or "failed", from act's "Job
	// succeeded/failed" lines.
	Jobs map[string]string
}

// jobEndRE matches act's last line of a job; --log-prefix-job-id makes the
// prefix the job id ("[release] 🏁  Job succeeded").
var jobEndRE = regexp.MustCompile(`(?m)^\[([^\]]+)\]\s+🏁\s+Job (succeeded|failed)\s*$`)

// droppedEnvPrefixes are the caller's variables act must not inherit.
var droppedEnvPrefixes = []string{"GITHUB_", "RUNNER_", "ACTIONS_", "INPUT_", "BUILD_LOCK_", "STATE_"}

// Args returns act's command line for r, with the files it needs written
// under r.WorkDir. The workflow is checked by CheckOffline first.
func (r Run) Args() ([]string, error) {
	if r.Act == "" || r.Dir == "" || r.Workflow == "" || r.Event == "" || r.WorkDir == "" {
		return nil, errors.New("acttest: Act, Dir, Workflow, Event and WorkDir are required")
	}
	wf, err := os.ReadFile(filepath.Join(r.Dir, r.Workflow))
	if err != nil {
		return nil, err
	}
	if err := CheckOffline(wf, r.Actions); err != nil {
		return nil, err
	}
	payload := r.EventPayload
	if payload == nil {
		payload = map[string]any{}
	}
	eventFile := filepath.Join(r.WorkDir, "event.json")
	b, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(eventFile, b, 0o600); err != nil {
		return nil, err
	}
	args := []string{r.Event, "-W", r.Workflow, "-e", eventFile,
		"--action-cache-path", filepath.Join(r.WorkDir, "act"),
		"--no-cache-server", "--log-prefix-job-id",
		// act's defaults read .env, .secrets, .vars and .input from the
		// work tree; point them at files of the harness instead.
		"--env-file", filepath.Join(r.WorkDir, "none.env"),
		"--var-file", filepath.Join(r.WorkDir, "none.vars"),
		"--input-file", filepath.Join(r.WorkDir, "none.input"),
	}
	if r.Job != "" {
		args = append(args, "-j", r.Job)
	}
	for _, m := range r.Matrix {
		args = append(args, "--matrix", m)
	}
	platforms := r.Platforms
	if platforms == nil {
		platforms = map[string]string{"ubuntu-latest": "-self-hosted"}
	}
	for _, k := range sortedKeys(platforms) {
		if platforms[k] != "-self-hosted" {
			return nil, fmt.Errorf("acttest: platform %s=%s: only -self-hosted (the host) is supported, there is no Docker engine", k, platforms[k])
		}
		args = append(args, "-P", k+"="+platforms[k])
	}
	for _, k := range sortedKeys(r.Actions) {
		args = append(args, "--local-repository", k+"="+r.Actions[k])
	}
	for _, k := range sortedKeys(r.Env) {
		args = append(args, "--env", k+"="+r.Env[k])
	}
	for _, k := range sortedKeys(r.Vars) {
		args = append(args, "--var", k+"="+r.Vars[k])
	}
	secretFile := filepath.Join(r.WorkDir, "secrets.env")
	var sb strings.Builder
	for _, k := range sortedKeys(r.Secrets) {
		// godotenv's double-quoted form: \n and \" are escapes.
		fmt.Fprintf(&sb, "%s=%s\n", k, strconv.Quote(r.Secrets[k]))
	}
	if err := os.WriteFile(secretFile, []byte(sb.String()), 0o600); err != nil {
		return nil, err
	}
	args = append(args, "--secret-file", secretFile)
	return args, nil
}

// Environ returns the environment act runs with: BaseEnv without the
// caller's runner context, PATH led by the stub commands, git remotes
// redirected, and no pager.
func (r Run) Environ() ([]string, error) {
	var env []string
	path := ""
	for _, kv := range r.BaseEnv {
		k, v, _ := strings.Cut(kv, "=")
		if k == "PATH" {
			path = v
			continue
		}
		if k == "GIT_CONFIG_COUNT" || strings.HasPrefix(k, "GIT_CONFIG_KEY_") || strings.HasPrefix(k, "GIT_CONFIG_VALUE_") {
			continue
		}
		// A make running inside a step must not join the jobserver of the
		// make that started the test.
		if k == "MAKEFLAGS" || k == "MFLAGS" || k == "MAKELEVEL" || k == "MAKEOVERRIDES" {
			continue
		}
		drop := false
		for _, p := range droppedEnvPrefixes {
			if strings.HasPrefix(k, p) {
				drop = true
				break
			}
		}
		if !drop {
			env = append(env, kv)
		}
	}
	if len(r.Commands) > 0 {
		bin := filepath.Join(r.WorkDir, "stub-bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			return nil, err
		}
		for _, name := range sortedKeys(r.Commands) {
			if strings.ContainsAny(name, `/\`) || name == "" {
				return nil, fmt.Errorf("acttest: stub command name %q", name)
			}
			if err := testexec.WriteFile(filepath.Join(bin, name), []byte("#!/usr/bin/env bash\n"+r.Commands[name]), 0o755); err != nil {
				return nil, err
			}
		}
		path = bin + string(os.PathListSeparator) + path
	}
	env = append(env, "PATH="+path, "GIT_PAGER=cat", "PAGER=cat", "GIT_TERMINAL_PROMPT=0")
	remotes := sortedKeys(r.GitRemotes)
	env = append(env, "GIT_CONFIG_COUNT="+strconv.Itoa(len(remotes)))
	for i, from := range remotes {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=url.%s.insteadOf", i, r.GitRemotes[from]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, from))
	}
	return env, nil
}

// Exec runs act and returns what it printed. An error means the harness
// could not run act at all (bad Run, unmapped action); a workflow that
// fails is a Result with a non-zero ExitCode.
func (r Run) Exec(ctx context.Context) (Result, error) {
	if err := os.MkdirAll(r.WorkDir, 0o755); err != nil {
		return Result{}, err
	}
	args, err := r.Args()
	if err != nil {
		return Result{}, err
	}
	env, err := r.Environ()
	if err != nil {
		return Result{}, err
	}
	cmd := exec.CommandContext(ctx, r.Act, args...)
	cmd.Dir = r.Dir
	cmd.Env = env
	var out bytes.Buffer
	var w io.Writer = &out
	if r.Stream != nil {
		w = io.MultiWriter(&out, r.Stream)
	}
	cmd.Stdout, cmd.Stderr = w, w
	err = cmd.Run()
	res := Result{Log: out.String(), Jobs: map[string]string{}}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
	case err != nil:
		return res, fmt.Errorf("acttest: run %s: %w", r.Act, err)
	}
	for _, m := range jobEndRE.FindAllStringSubmatch(res.Log, -1) {
		res.Jobs[m[1]] = m[2]
	}
	return res, nil
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
