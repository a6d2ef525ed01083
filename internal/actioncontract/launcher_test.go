package actioncontract_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/testexec"
)

// The launcher harness. Each case of the table in launchercases_test.go runs
// against every launcher this machine can run: launch.sh under bash (Linux,
// macOS), launch.ps1 under Windows PowerShell 5.1 (Windows) and launch.ps1
// under PowerShell 7 (pwsh, wherever it is installed: GitHub's Linux, macOS
// and Windows images have it). Each run gets a temporary "checkout" holding
// the committed launcher scripts, go.mod, go.sum, a manifest and a tiny
// cmd/acquire, so it exercises exactly the committed scripts. Release assets
// are served by a local httptest server; nothing reaches the network.
//
// The "binary" a release asset carries is a small Go program built once per
// test process for this machine (fakeSource): it records its arguments and
// environment, can wait for a console interrupt, and exits 7.

const fakeSource = `package main

import (
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

func main() {
	if p := os.Getenv("OUT_ARGS"); p != "" {
		_ = os.WriteFile(p, []byte(strings.Join(os.Args[1:], "\n")+"\n"), 0o644)
	}
	if p := os.Getenv("OUT_ENV"); p != "" {
		env := os.Environ()
		sort.Strings(env)
		_ = os.WriteFile(p, []byte(strings.Join(env, "\n")+"\n"), 0o644)
	}
	if os.Getenv("FAKE_WAIT_FOR_INTERRUPT") == "1" {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		fmt.Println("ready")
		s := <-ch
		_ = os.WriteFile(os.Getenv("OUT_CLEANUP"), []byte("cleaned up after "+s.String()+"\n"), 0o644)
		os.Exit(130)
	}
	os.Exit(7)
}
`

const tinyCmd = `package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Println("tiny:", os.Args[1:])
	os.Exit(3)
}
`

var (
	fakeOnce sync.Once
	fakeBin  []byte
	fakeErr  error
)

// fakeBinary returns the bytes of the fake release binary for this machine.
func fakeBinary(t *testing.T) []byte {
	t.Helper()
	fakeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "launcher-fake-")
		if err != nil {
			fakeErr = err
			return
		}
		defer os.RemoveAll(dir)
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module fake\n\ngo 1.22\n"), 0o644); err != nil {
			fakeErr = err
			return
		}
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(fakeSource), 0o644); err != nil {
			fakeErr = err
			return
		}
		out := filepath.Join(dir, "fake"+exeSuffix)
		cmd := exec.Command("go", "build", "-o", out, ".")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod")
		if b, err := cmd.CombinedOutput(); err != nil {
			fakeErr = fmt.Errorf("build fake binary: %v\n%s", err, b)
			return
		}
		fakeBin, fakeErr = os.ReadFile(out)
	})
	if fakeErr != nil {
		t.Skipf("cannot build the fake release binary: %v", fakeErr)
	}
	return fakeBin
}

var exeSuffix = map[bool]string{true: ".exe", false: ""}[runtime.GOOS == "windows"]

// hostRunner is this machine as RUNNER_OS/RUNNER_ARCH and as GOOS/GOARCH.
func hostRunner() (runnerOS, runnerArch, goos, goarch string) {
	runnerOS = map[string]string{"linux": "Linux", "darwin": "macOS", "windows": "Windows"}[runtime.GOOS]
	runnerArch = map[string]string{"amd64": "X64", "arm64": "ARM64"}[runtime.GOARCH]
	return runnerOS, runnerArch, runtime.GOOS, runtime.GOARCH
}

func assetKey(binary string) string {
	_, _, goos, goarch := hostRunner()
	return binary + "_" + goos + "_" + goarch
}

// launcher is one implementation of the launcher contract and the shell
// that runs it.
type launcher struct {
	name   string // bash, powershell or pwsh
	shell  string // the shell's path
	script string // launch.sh or launch.ps1
}

// launchers returns every launcher implementation this machine can run.
func launchers(t *testing.T) []launcher {
	t.Helper()
	var out []launcher
	if runtime.GOOS != "windows" {
		if p, err := exec.LookPath("bash"); err == nil {
			out = append(out, launcher{"bash", p, "launch.sh"})
		}
	} else if p, err := exec.LookPath("powershell"); err == nil {
		out = append(out, launcher{"powershell", p, "launch.ps1"})
	}
	if p, err := exec.LookPath("pwsh"); err == nil {
		out = append(out, launcher{"pwsh", p, "launch.ps1"})
	}
	if len(out) == 0 {
		t.Skip("neither bash nor PowerShell is installed")
	}
	return out
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

type checkout struct {
	root, cache, out string
}

func newCheckout(t *testing.T) checkout {
	t.Helper()
	base := t.TempDir()
	c := checkout{root: filepath.Join(base, "repo"), cache: filepath.Join(base, "cache"), out: filepath.Join(base, "out")}
	for _, d := range []string{"tools/launcher", ".github/dist", "cmd/acquire"} {
		require.NoError(t, os.MkdirAll(filepath.Join(c.root, d), 0o755))
	}
	require.NoError(t, os.MkdirAll(c.out, 0o755))
	for _, f := range []string{"launch.sh", "launch.ps1", "source-digest.sh"} {
		b, err := os.ReadFile(filepath.Join(repoRoot, "tools", "launcher", f))
		require.NoError(t, err)
		require.NoError(t, testexec.WriteFile(filepath.Join(c.root, "tools", "launcher", f), b, 0o755))
	}
	write(t, filepath.Join(c.root, "go.mod"), "module example.com/fake\n\ngo 1.22\n")
	write(t, filepath.Join(c.root, "go.sum"), "")
	write(t, filepath.Join(c.root, "cmd", "acquire", "main.go"), tinyCmd)
	return c
}

func write(t *testing.T, p, s string) {
	t.Helper()
	require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
}

// manifest writes a canonical manifest (tag v0.0.1) with the given assets,
// key → {sha256, url}.
func (c checkout) manifest(t *testing.T, digest string, assets map[string][2]string) {
	t.Helper()
	var b strings.Builder
	if len(assets) == 0 {
		fmt.Fprintf(&b, "{\n  \"version\": \"\",\n  \"tag\": \"\",\n  \"source_digest\": %q,\n  \"assets\": {}\n}\n", digest)
		write(t, filepath.Join(c.root, ".github", "dist", "manifest.json"), b.String())
		return
	}
	fmt.Fprintf(&b, "{\n  \"version\": \"v0.0.1\",\n  \"tag\": \"v0.0.1\",\n  \"source_digest\": %q,\n  \"assets\": {\n", digest)
	keys := make([]string, 0, len(assets))
	for k := range assets {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		sep := ","
		if i == len(keys)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "    %q: {\"sha256\": %q, \"url\": %q}%s\n", k, assets[k][0], assets[k][1], sep)
	}
	b.WriteString("  }\n}\n")
	write(t, filepath.Join(c.root, ".github", "dist", "manifest.json"), b.String())
}

// digest computes the source digest of the checkout in Go, from the
// written definition (tools/launcher/source-digest.sh header); both
// launchers must agree with it.
func (c checkout) digest(t *testing.T) string {
	t.Helper()
	return goSourceDigest(t, c.root)
}

func goSourceDigest(t *testing.T, root string) string {
	t.Helper()
	files := []string{"go.mod", "go.sum"}
	require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "dist", "bin", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && strings.HasSuffix(d.Name(), ".go") {
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	}))
	sort.Strings(files)
	var listing strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		require.NoError(t, err)
		fmt.Fprintf(&listing, "%s  %s\n", sha(b), f)
	}
	return sha([]byte(listing.String()))
}

// cacheAsset places bin in the launcher cache as the asset with sha256 sum.
func (c checkout) cacheAsset(t *testing.T, sum string, bin []byte) string {
	t.Helper()
	dir := filepath.Join(c.cache, "ambiguous-build-lock", sum)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	p := filepath.Join(dir, "acquire"+exeSuffix)
	require.NoError(t, testexec.WriteFile(p, bin, 0o755))
	return p
}

type result struct {
	code           int
	stdout, stderr string
}

// pathWithoutGo is PATH minus every directory holding a go executable, so
// a run proves it needs no Go.
func pathWithoutGo() string {
	var keep []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "go"+exeSuffix)); err == nil {
			continue
		}
		keep = append(keep, d)
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

// env is the environment of one launcher run: the test's own (which a
// PowerShell needs on Windows) without the launcher's knobs, plus the
// runner's platform variables, the cache and extra.
func (c checkout) env(extra map[string]string) []string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			env[k] = v
		}
	}
	for k := range env {
		if strings.HasPrefix(k, "BUILD_LOCK_") || strings.HasPrefix(k, "GITHUB_") || strings.HasPrefix(k, "RUNNER_") {
			delete(env, k)
		}
	}
	runnerOS, runnerArch, _, _ := hostRunner()
	env["RUNNER_OS"] = runnerOS
	env["RUNNER_ARCH"] = runnerArch
	env["RUNNER_TOOL_CACHE"] = c.cache
	env["OUT_ARGS"] = filepath.Join(c.out, "args")
	env["OUT_ENV"] = filepath.Join(c.out, "env")
	for k, v := range extra {
		// Windows names are case-insensitive (PATH is "Path" there): one
		// spelling only, or the child sees either.
		for old := range env {
			if old != k && strings.EqualFold(old, k) {
				delete(env, old)
			}
		}
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// command builds the process that runs the launcher the way a composite
// step does: bash runs launch.sh with the arguments; PowerShell runs a
// script with the runner's own wrapper lines around a call of launch.ps1
// (actions/runner src/Runner.Worker/Handlers/ScriptHandlerHelpers.cs).
func (l launcher) command(ctx context.Context, t *testing.T, c checkout, args ...string) *exec.Cmd {
	t.Helper()
	script := filepath.Join(c.root, "tools", "launcher", l.script)
	if l.name == "bash" {
		return exec.CommandContext(ctx, l.shell, append([]string{script}, args...)...)
	}
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	call := "& " + quote(script)
	for _, a := range args {
		call += " " + quote(a)
	}
	wrapper := filepath.Join(t.TempDir(), "step.ps1")
	write(t, wrapper, "$ErrorActionPreference = 'stop'\n"+call+"\nif ((Test-Path -LiteralPath variable:\\LASTEXITCODE)) { exit $LASTEXITCODE }\n")
	psArgs := []string{"-NoLogo", "-NoProfile", "-NonInteractive"}
	if runtime.GOOS == "windows" {
		psArgs = append(psArgs, "-ExecutionPolicy", "Bypass")
	}
	return exec.CommandContext(ctx, l.shell, append(psArgs, "-Command", ". "+quote(wrapper))...)
}

func (l launcher) run(t *testing.T, c checkout, extra map[string]string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := l.command(ctx, t, c, args...)
	cmd.Env = c.env(extra)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// start runs the launcher with the fake binary waiting for an interrupt;
// it returns once the binary has said "ready" on stdout. Stdout is a plain
// pipe, so cmd.Wait returns when the launcher's own process ends, not when
// the binary closes its copy of the pipe.
func (l launcher) start(t *testing.T, c checkout, extra map[string]string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	cmd := l.command(ctx, t, c, args...)
	cmd.Env = c.env(extra)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	configureConsole(cmd, l)
	r, w, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	cmd.Stdout = w
	require.NoError(t, cmd.Start())
	_ = w.Close()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "ready" {
			go func() { _, _ = io.Copy(io.Discard, r) }()
			return cmd, &stderr
		}
	}
	_ = cmd.Wait()
	t.Fatalf("the binary never became ready; stderr:\n%s", stderr.String())
	return nil, nil
}

// assetServer serves body at /download/<key>, answers 404 at /missing and
// redirects /redirect to the plain-http download (which both launchers must
// refuse to follow).
func assetServer(t *testing.T, key string, body []byte) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/download/" + key:
			hits.Add(1)
			_, _ = w.Write(body)
		case "/redirect":
			http.Redirect(w, r, srv.URL+"/download/"+key, http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}
