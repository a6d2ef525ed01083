package actioncontract_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fake binary is a bash script because dash (/bin/sh on Debian) drops
// environment names containing hyphens, which would hide what the launcher
// passes on; a Go binary receives the environment exactly as exec gives it.
//
// The launcher tests run tools/launcher/launch.sh with bash in a temporary
// "checkout" (launcher scripts, go.mod, go.sum, a manifest and a tiny
// cmd/acquire), so they exercise exactly the committed script. Downloads go
// to a local httptest server; nothing reaches the network.

const fakeBinary = `#!/usr/bin/env bash
printf '%s\n' "$@" > "$OUT_ARGS"
env > "$OUT_ENV"
exit 7
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

func needBash(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the launcher tests exec shell-script fakes; covered on Linux/macOS")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	return bash
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
	for _, f := range []string{"launch.sh", "source-digest.sh"} {
		b, err := os.ReadFile(filepath.Join(repoRoot, "tools", "launcher", f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(c.root, "tools", "launcher", f), b, 0o755))
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

func (c checkout) manifest(t *testing.T, digest string, assets map[string][2]string) {
	t.Helper()
	var b strings.Builder
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

func (c checkout) digest(t *testing.T, bash string) string {
	t.Helper()
	out, err := exec.Command(bash, filepath.Join(c.root, "tools", "launcher", "source-digest.sh"), c.root).Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}

type result struct {
	code           int
	stdout, stderr string
}

func (c checkout) run(t *testing.T, bash string, extra map[string]string, args ...string) result {
	t.Helper()
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	for _, k := range []string{"BUILD_LOCK_FROM_SOURCE", "BUILD_LOCK_GO", "GITHUB_ENV", "GITHUB_PATH"} {
		delete(env, k)
	}
	env["RUNNER_OS"] = "Linux"
	env["RUNNER_ARCH"] = "X64"
	env["RUNNER_TOOL_CACHE"] = c.cache
	env["OUT_ARGS"] = filepath.Join(c.out, "args")
	env["OUT_ENV"] = filepath.Join(c.out, "env")
	for k, v := range extra {
		env[k] = v
	}
	cmd := exec.Command(bash, append([]string{filepath.Join(c.root, "tools", "launcher", "launch.sh")}, args...)...)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
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

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func TestLauncherRefusesInvalidBinaryNames(t *testing.T) {
	t.Parallel()
	bash := needBash(t)
	c := newCheckout(t)
	c.manifest(t, "", nil)
	for _, name := range []string{"Acquire", "../acquire", "acquire/x", "a b", "-x", "1abc", "acquire_x", ""} {
		r := c.run(t, bash, nil, name)
		assert.Equal(t, 1, r.code, name)
		assert.Contains(t, r.stderr, "refusing binary name", name)
	}
	r := c.run(t, bash, nil)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "usage: launch.sh")
}

func TestLauncherCacheHitExecsWithArgsEnvAndExitCode(t *testing.T) {
	t.Parallel()
	bash := needBash(t)
	c := newCheckout(t)
	bin := []byte(fakeBinary)
	sum := sha(bin)
	c.manifest(t, c.digest(t, bash), map[string][2]string{
		"acquire_linux_amd64": {sum, "https://example.invalid/never-fetched"},
	})
	dir := filepath.Join(c.cache, "ambiguous-build-lock", sum)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "acquire"), bin, 0o755))
	ghEnv := filepath.Join(c.out, "github_env")
	ghPath := filepath.Join(c.out, "github_path")
	write(t, ghEnv, "")
	write(t, ghPath, "")

	r := c.run(t, bash, map[string]string{
		"GITHUB_ENV": ghEnv, "GITHUB_PATH": ghPath, "PATH": os.Getenv("PATH"),
		"INPUT_LOCK-NAME": "hyphen-kept", "SENTINEL": "x y",
	}, "acquire", "a b", "", "c")
	assert.Equal(t, 7, r.code, r.stderr)
	assert.Contains(t, r.stderr, "cache hit")
	assert.Equal(t, 1, strings.Count(r.stderr, "\n"), "one concise line: %q", r.stderr)

	args, err := os.ReadFile(filepath.Join(c.out, "args"))
	require.NoError(t, err)
	assert.Equal(t, "a b\n\nc\n", string(args))

	envDump, err := os.ReadFile(filepath.Join(c.out, "env"))
	require.NoError(t, err)
	envText := "\n" + string(envDump)
	assert.Contains(t, envText, "\nPATH="+os.Getenv("PATH")+"\n")
	assert.Contains(t, envText, "\nSENTINEL=x y\n")
	assert.Contains(t, envText, "\nINPUT_LOCK-NAME=hyphen-kept\n", "hyphenated input env names must survive the launcher")
	assert.NotContains(t, envText, "_bl_", "launcher variables must not leak into the child")
	for _, f := range []string{ghEnv, ghPath} {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.Empty(t, b, "%s must be untouched", f)
	}
}

// TestLauncherMemoizesTheDigestOfAPinnedCommit: a checkout the runner laid out
// under a 40-hex commit directory is hashed once; the warm start after that
// trusts the memo (a commit names its tree) and still verifies the binary.
func TestLauncherMemoizesTheDigestOfAPinnedCommit(t *testing.T) {
	t.Parallel()
	bash := needBash(t)
	c := newCheckout(t)
	pinned := filepath.Join(filepath.Dir(c.root), strings.Repeat("ab", 20))
	require.NoError(t, os.Rename(c.root, pinned))
	c.root = pinned
	bin := []byte(fakeBinary)
	sum := sha(bin)
	c.manifest(t, c.digest(t, bash), map[string][2]string{"acquire_linux_amd64": {sum, "https://example.invalid/never-fetched"}})
	dir := filepath.Join(c.cache, "ambiguous-build-lock", sum)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "acquire"), bin, 0o755))

	r := c.run(t, bash, nil, "acquire")
	require.Equal(t, 7, r.code, r.stderr)
	memo := filepath.Join(c.cache, "ambiguous-build-lock", "digests", strings.Repeat("ab", 20))
	require.FileExists(t, memo)
	// Change the sources: a pinned commit cannot change, so the memo is used
	// and the verified release asset still runs.
	write(t, filepath.Join(c.root, "cmd", "acquire", "extra.go"), "package main\n")
	r = c.run(t, bash, nil, "acquire")
	assert.Equal(t, 7, r.code, r.stderr)
	assert.Contains(t, r.stderr, "cache hit")
	// A corrupt memo is ignored and recomputed (now the sources differ).
	write(t, memo, "garbage")
	r = c.run(t, bash, map[string]string{"BUILD_LOCK_GO": "/nonexistent/go"}, "acquire")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "differ from the manifest")
}

func assetServer(t *testing.T, body []byte) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/download/acquire_linux_amd64" {
			assert.Fail(t, "unexpected request "+r.URL.Path)
			http.NotFound(w, r)
			return
		}
		hits.Add(1)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestLauncherDownloadsVerifiesAndCaches(t *testing.T) {
	t.Parallel()
	bash := needBash(t)
	c := newCheckout(t)
	bin := []byte(fakeBinary)
	srv, hits := assetServer(t, bin)
	c.manifest(t, c.digest(t, bash), map[string][2]string{
		"acquire_linux_amd64": {sha(bin), srv.URL + "/download/acquire_linux_amd64"},
	})

	r := c.run(t, bash, nil, "acquire", "x")
	assert.Equal(t, 7, r.code, r.stderr)
	assert.Contains(t, r.stderr, "downloaded and verified")
	assert.Equal(t, int32(1), hits.Load())
	cached, err := os.ReadFile(filepath.Join(c.cache, "ambiguous-build-lock", sha(bin), "acquire"))
	require.NoError(t, err)
	assert.Equal(t, bin, cached)

	r = c.run(t, bash, nil, "acquire", "x")
	assert.Equal(t, 7, r.code, r.stderr)
	assert.Contains(t, r.stderr, "cache hit")
	assert.Equal(t, int32(1), hits.Load(), "a warm start must not touch the network")
}

func TestLauncherRefusesChecksumMismatchBeforeExec(t *testing.T) {
	t.Parallel()
	bash := needBash(t)
	c := newCheckout(t)
	marker := filepath.Join(c.out, "executed")
	tampered := []byte("#!/bin/sh\ntouch " + marker + "\n")
	srv, _ := assetServer(t, tampered)
	pinned := sha([]byte(fakeBinary))
	c.manifest(t, c.digest(t, bash), map[string][2]string{
		"acquire_linux_amd64": {pinned, srv.URL + "/download/acquire_linux_amd64"},
	})

	r := c.run(t, bash, nil, "acquire")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "checksum mismatch for acquire_linux_amd64")
	assert.Contains(t, r.stderr, pinned)
	assert.Contains(t, r.stderr, "refusing to run it")
	assert.False(t, fileExists(marker), "the unverified download must never run")
	assert.False(t, fileExists(filepath.Join(c.cache, "ambiguous-build-lock", pinned, "acquire")), "nor be cached")
}

func TestLauncherReplacesCorruptCacheEntry(t *testing.T) {
	t.Parallel()
	bash := needBash(t)
	c := newCheckout(t)
	bin := []byte(fakeBinary)
	srv, hits := assetServer(t, bin)
	c.manifest(t, c.digest(t, bash), map[string][2]string{
		"acquire_linux_amd64": {sha(bin), srv.URL + "/download/acquire_linux_amd64"},
	})
	dir := filepath.Join(c.cache, "ambiguous-build-lock", sha(bin))
	require.NoError(t, os.MkdirAll(dir, 0o755))
	marker := filepath.Join(c.out, "executed")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "acquire"), []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755))

	r := c.run(t, bash, nil, "acquire")
	assert.Equal(t, 7, r.code, r.stderr)
	assert.Contains(t, r.stderr, "failed SHA-256 verification")
	assert.False(t, fileExists(marker))
	assert.Equal(t, int32(1), hits.Load())
}

func TestLauncherBuildsFromSource(t *testing.T) {
	t.Parallel()
	bash := needBash(t)
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not on PATH")
	}
	bin := []byte(fakeBinary)
	tests := []struct {
		name   string
		setup  func(t *testing.T, c checkout)
		extra  map[string]string
		reason string
	}{
		{"empty manifest", func(t *testing.T, c checkout) { c.manifest(t, "", nil) }, nil, "no release asset acquire_linux_amd64"},
		{"sources differ from manifest", func(t *testing.T, c checkout) {
			c.manifest(t, strings.Repeat("0", 64), map[string][2]string{"acquire_linux_amd64": {sha(bin), "https://example.invalid/x"}})
		}, nil, "differ from the manifest's source_digest"},
		{"forced", func(t *testing.T, c checkout) {
			c.manifest(t, c.digest(t, bash), map[string][2]string{"acquire_linux_amd64": {sha(bin), "https://example.invalid/x"}})
		}, map[string]string{"BUILD_LOCK_FROM_SOURCE": "1"}, "BUILD_LOCK_FROM_SOURCE=1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newCheckout(t)
			tc.setup(t, c)
			r := c.run(t, bash, tc.extra, "acquire", "p", "q")
			assert.Equal(t, 3, r.code, r.stderr)
			assert.Equal(t, "tiny: [p q]\n", r.stdout, "build output must not reach stdout")
			assert.Contains(t, r.stderr, "built from source")
			assert.Contains(t, r.stderr, tc.reason)

			r = c.run(t, bash, tc.extra, "acquire")
			assert.Equal(t, 3, r.code, r.stderr)
			assert.Contains(t, r.stderr, "cache hit")
		})
	}
}

func TestLauncherWithoutGoFailsActionably(t *testing.T) {
	t.Parallel()
	bash := needBash(t)
	c := newCheckout(t)
	c.manifest(t, "", nil)
	r := c.run(t, bash, map[string]string{"BUILD_LOCK_GO": filepath.Join(c.out, "no-such-go")}, "acquire")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "no Go toolchain")
	assert.Contains(t, r.stderr, "pin a released commit")
}

// TestSourceDigestDefinition recomputes the digest in Go from its written
// definition (tools/launcher/source-digest.sh header) and compares.
func TestSourceDigestDefinition(t *testing.T) {
	t.Parallel()
	bash := needBash(t)
	c := newCheckout(t)
	write(t, filepath.Join(c.root, "cmd", "acquire", "extra_test.go"), "package main\n")
	require.NoError(t, os.MkdirAll(filepath.Join(c.root, "dist"), 0o755))
	write(t, filepath.Join(c.root, "dist", "ignored.go"), "package x\n")
	write(t, filepath.Join(c.root, "README.md"), "not hashed\n")

	var files []string
	require.NoError(t, filepath.WalkDir(c.root, func(p string, d os.DirEntry, err error) error {
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
		rel, _ := filepath.Rel(c.root, p)
		if strings.HasSuffix(rel, ".go") || rel == "go.mod" || rel == "go.sum" {
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	}))
	sort.Strings(files)
	var listing strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(c.root, f))
		require.NoError(t, err)
		fmt.Fprintf(&listing, "%s  %s\n", sha(b), f)
	}
	assert.Equal(t, sha([]byte(listing.String())), c.digest(t, bash))

	before := c.digest(t, bash)
	write(t, filepath.Join(c.root, "README.md"), "still not hashed\n")
	assert.Equal(t, before, c.digest(t, bash))
	write(t, filepath.Join(c.root, "cmd", "acquire", "extra_test.go"), "package main // changed\n")
	assert.NotEqual(t, before, c.digest(t, bash))
}
