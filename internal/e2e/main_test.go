// Package e2e_test runs the real action binaries as separate processes
// against the GitHub emulator, itself a separate process (`buildlock
// emulator`), with the environment a GitHub runner gives a composite action
// step. Nothing here is in-process: the jobs talk to the emulator over TCP,
// receive real signals and exit with real exit codes, so this is the suite
// that proves the binaries, not just the packages behind them.
//
// It builds cmd/acquire, cmd/release and cmd/buildlock once per test binary
// (CGO_ENABLED=0, as released) and is skipped under -short.
package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator/openapi"
	"github.com/stretchr/testify/require"
)

// Environment variables that turn the test binary into the "licensed step"
// helper process of a job (see holdMain).
const (
	envHoldFor   = "BUILDLOCK_E2E_HOLD_FOR"
	envHoldUntil = "BUILDLOCK_E2E_HOLD_UNTIL"
)

// Timeouts. They are generous on purpose: the suite must pass on a loaded
// two-core CI machine, and nothing asserts on timing.
const (
	buildTimeout    = 5 * time.Minute
	startTimeout    = 30 * time.Second
	stepTimeout     = 90 * time.Second
	scenarioTimeout = 4 * time.Minute
)

func TestMain(m *testing.M) {
	if code, ok := holdMain(); ok {
		os.Exit(code)
	}
	if code, ok := machineMain(); ok {
		os.Exit(code)
	}
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// holdMain is the licensed step of a job when the test binary is started
// as a helper: it "works" for BUILDLOCK_E2E_HOLD_FOR, or until the file
// named by BUILDLOCK_E2E_HOLD_UNTIL exists. ok reports whether it ran; the
// process then exits with code without running any test.
func holdMain() (code int, ok bool) {
	hold, until := os.Getenv(envHoldFor), os.Getenv(envHoldUntil)
	if hold == "" && until == "" {
		return 0, false
	}
	fmt.Printf("licensed work started on %s\n", os.Getenv("RUNNER_NAME"))
	if hold != "" {
		d, err := time.ParseDuration(hold)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2, true
		}
		time.Sleep(d)
	} else {
		deadline := time.Now().Add(stepTimeout)
		for {
			if _, err := os.Stat(until); err == nil {
				break
			}
			if time.Now().After(deadline) {
				fmt.Fprintln(os.Stderr, "licensed step: gave up waiting for", until)
				return 3, true
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	fmt.Println("licensed work finished")
	return 0, true
}

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// binaries builds acquire, release and buildlock once per test binary and
// returns the directory holding them. It skips the test under -short.
func binaries(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("process-level end-to-end test: skipped with -short")
	}
	buildOnce.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			buildErr = err
			return
		}
		dir, err := os.MkdirTemp("", "buildlock-e2e-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binDir = dir
		ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", dir+string(filepath.Separator),
			"./cmd/acquire", "./cmd/release", "./cmd/buildlock")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return binDir
}

// moduleRoot walks up from the working directory to the go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

func exe(dir, name string) string {
	p := filepath.Join(dir, name)
	if _, err := os.Stat(p + ".exe"); err == nil {
		return p + ".exe"
	}
	return p
}

// emulatorInfo is the JSON line `buildlock emulator` prints.
type emulatorInfo struct {
	APIURL         string `json:"api_url"`
	ServerURL      string `json:"server_url"`
	Owner          string `json:"owner"`
	OwnerID        int64  `json:"owner_id"`
	Repository     string `json:"repository"`
	RepositoryName string `json:"repository_name"`
	RepositoryID   int64  `json:"repository_id"`
	AppID          int64  `json:"app_id"`
	InstallationID int64  `json:"installation_id"`
	PrivateKeyPath string `json:"private_key_path"`
	AdminURL       string `json:"admin_url"`
}

// emu is a running `buildlock emulator` child process.
type emu struct {
	t    *testing.T
	info emulatorInfo
	key  string // the App private key PEM (only to hand to jobs and to look for leaks)
}

// firstLine is an io.Writer that keeps everything written and closes ready
// once a full first line has arrived.
type firstLine struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	ready chan struct{}
	done  bool
}

func (w *firstLine) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.done && bytes.IndexByte(w.buf.Bytes(), '\n') >= 0 {
		w.done = true
		close(w.ready)
	}
	return len(p), nil
}

func (w *firstLine) line() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	l, _, _ := strings.Cut(w.buf.String(), "\n")
	return l
}

// startEmulator starts `buildlock emulator --listen 127.0.0.1:0 --lock seats`
// and stops it (SIGINT, then kill) when the test ends.
func startEmulator(t *testing.T, bin, lock string) *emu {
	t.Helper()
	keyDir := t.TempDir()
	// GitHub's replica lag and branch-head conflicts at their realistic
	// values (docs/emulator.md).
	cmd := exec.Command(exe(bin, "buildlock"), "emulator", "--listen", "127.0.0.1:0", "--lock", lock, "--key-dir", keyDir,
		"--replica-lag", emulator.DefaultReplicaLag.String(), "--commit-latency", emulator.DefaultCommitLatency.String())
	cmd.Env = minimalEnv()
	out := &firstLine{ready: make(chan struct{})}
	var stderr syncBuffer
	cmd.Stdout, cmd.Stderr = out, &stderr
	cmd.WaitDelay = 5 * time.Second
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	select {
	case <-out.ready:
	case err := <-exited:
		require.Fail(t, fmt.Sprintf("buildlock emulator exited before it was ready: %v\n%s", err, stderr.String()))
	case <-time.After(startTimeout):
		require.Fail(t, fmt.Sprintf("buildlock emulator printed nothing within %s\n%s", startTimeout, stderr.String()))
	}
	e := &emu{t: t}
	require.NoError(t, json.Unmarshal([]byte(out.line()), &e.info), "emulator info line %q", out.line())
	// Every exchange of the real binaries passes a proxy that checks it
	// against GitHub's API description (internal/emulator/openapi).
	target, err := url.Parse(e.info.APIURL)
	require.NoError(t, err)
	checked, rec := openapi.AttachHandler(t, httputil.NewSingleHostReverseProxy(target))
	proxy := httptest.NewServer(checked)
	t.Cleanup(proxy.Close)
	t.Cleanup(func() { t.Logf("OpenAPI check: %d exchanges", rec.Exchanges()) })
	e.info.APIURL = proxy.URL
	require.False(t, e.info.APIURL == "" || e.info.AdminURL == "" || e.info.PrivateKeyPath == "", "incomplete emulator info %+v", e.info)
	key, err := os.ReadFile(e.info.PrivateKeyPath)
	require.NoError(t, err)
	e.key = string(key)
	return e
}

// admin sends one admin API request and decodes the JSON answer into out
// (nil: discard). Any non-2xx answer fails the test.
func (e *emu) admin(method, path string, in, out any) {
	e.t.Helper()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		require.NoError(e.t, err)
		body = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, e.info.AdminURL+path, body)
	require.NoError(e.t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err, "admin %s %s", method, path)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	require.Equal(e.t, 2, resp.StatusCode/100, "admin %s %s: HTTP %d: %s", method, path, resp.StatusCode, data)
	if out != nil {
		require.NoError(e.t, json.Unmarshal(data, out), "admin %s %s: decode %s", method, path, data)
	}
}

// history returns every committed version of path on branch of the lock
// repository, oldest first.
func (e *emu) history(branch, path string) []emulator.Version {
	e.t.Helper()
	q := url.Values{"owner": {e.info.Owner}, "repo": {e.info.RepositoryName}, "branch": {branch}, "path": {path}}
	var vs []emulator.Version
	e.admin(http.MethodGet, "/history?"+q.Encode(), nil, &vs)
	return vs
}

// syncBuffer is a goroutine-safe buffer for a child's stdout or stderr.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// minimalEnv is what every child inherits from the test process: only what
// a process needs to run. In particular none of the test process's own
// GITHUB_* or RUNNER_* variables (CI runs this suite inside a GitHub job,
// whose GITHUB_OUTPUT a child must never write to).
func minimalEnv() []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "TMP", "TEMP", "SYSTEMROOT", "USERPROFILE"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// scanLines returns the lines of s.
func scanLines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}
