package actioncontract_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// launcherCase is one row of the launcher case table: every implementation
// of the launcher contract (launch.sh, launch.ps1) must pass every row.
type launcherCase struct {
	name string
	test func(t *testing.T, l launcher)
}

// noGo is the environment of a run that must not need Go: no go on PATH
// and BUILD_LOCK_GO naming nothing.
func noGo(c checkout, extra map[string]string) map[string]string {
	env := map[string]string{"PATH": pathWithoutGo(), "BUILD_LOCK_GO": filepath.Join(c.out, "no-such-go")}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

var launcherCases = []launcherCase{
	{"refuses binary names outside the pattern", func(t *testing.T, l launcher) {
		c := newCheckout(t)
		c.manifest(t, "", nil)
		for _, name := range []string{"Acquire", "../acquire", "acquire/x", "a b", "-x", "1abc", "acquire_x", "", "acquire\n"} {
			r := l.run(t, c, nil, name)
			assert.Equal(t, 1, r.code, "%q: %s", name, r.stderr)
			assert.Contains(t, r.stderr, "error [binary-name]", name)
		}
		r := l.run(t, c, nil)
		assert.Equal(t, 1, r.code)
		assert.Contains(t, r.stderr, "error [usage]")
	}},
	{"a cached release asset runs without Go, with exact arguments, environment and exit code", func(t *testing.T, l launcher) {
		c := newCheckout(t)
		bin := fakeBinary(t)
		sum := sha(bin)
		c.manifest(t, c.digest(t), map[string][2]string{assetKey("acquire"): {sum, "https://example.invalid/never-fetched"}})
		c.cacheAsset(t, sum, bin)
		ghEnv, ghPath := filepath.Join(c.out, "github_env"), filepath.Join(c.out, "github_path")
		write(t, ghEnv, "")
		write(t, ghPath, "")
		env := noGo(c, map[string]string{"GITHUB_ENV": ghEnv, "GITHUB_PATH": ghPath, "INPUT_LOCK-NAME": "hyphen-kept", "SENTINEL": "x y"})
		r := l.run(t, c, env, "acquire", "a b", "", "c", `quote"d`, `back\slash\`)
		assert.Equal(t, 7, r.code, r.stderr)
		assert.Contains(t, r.stderr, "cache hit")
		assert.Equal(t, 1, strings.Count(r.stderr, "\n"), "one concise line: %q", r.stderr)
		assert.Equal(t, "a b\n\nc\nquote\"d\nback\\slash\\\n", readFile(t, filepath.Join(c.out, "args")))
		envText := "\n" + readFile(t, filepath.Join(c.out, "env"))
		if runtime.GOOS != "windows" { // Windows spells PATH as Path
			assert.Contains(t, envText, "\nPATH="+env["PATH"]+"\n", "PATH must be unchanged")
		}
		assert.Contains(t, envText, "\nSENTINEL=x y\n")
		assert.Contains(t, envText, "\nINPUT_LOCK-NAME=hyphen-kept\n", "hyphenated input names must survive the launcher")
		assert.NotContains(t, envText, "_bl_", "launcher variables must not leak into the child")
		assert.Empty(t, readFile(t, ghEnv), "GITHUB_ENV must be untouched")
		assert.Empty(t, readFile(t, ghPath), "GITHUB_PATH must be untouched")
	}},
	{"the digest of a pinned commit is computed once", func(t *testing.T, l launcher) {
		c := newCheckout(t)
		pinned := filepath.Join(filepath.Dir(c.root), strings.Repeat("ab", 20))
		require.NoError(t, os.Rename(c.root, pinned))
		c.root = pinned
		bin := fakeBinary(t)
		sum := sha(bin)
		c.manifest(t, c.digest(t), map[string][2]string{assetKey("acquire"): {sum, "https://example.invalid/never-fetched"}})
		c.cacheAsset(t, sum, bin)
		r := l.run(t, c, noGo(c, nil), "acquire")
		require.Equal(t, 7, r.code, r.stderr)
		memo := filepath.Join(c.cache, "ambiguous-build-lock", "digests", strings.Repeat("ab", 20))
		require.FileExists(t, memo)
		// A pinned commit cannot change, so the memo is trusted and the
		// verified asset still runs.
		write(t, filepath.Join(c.root, "cmd", "acquire", "extra.go"), "package main\n")
		r = l.run(t, c, noGo(c, nil), "acquire")
		assert.Equal(t, 7, r.code, r.stderr)
		assert.Contains(t, r.stderr, "cache hit")
		// A corrupt memo is ignored and recomputed (now the sources differ).
		write(t, memo, "garbage")
		r = l.run(t, c, noGo(c, nil), "acquire")
		assert.Equal(t, 1, r.code)
		assert.Contains(t, r.stderr, "differ from the manifest")
	}},
	{"an asset is downloaded, verified and cached; a warm start needs no network", func(t *testing.T, l launcher) {
		c := newCheckout(t)
		bin := fakeBinary(t)
		srv, hits := assetServer(t, assetKey("acquire"), bin)
		c.manifest(t, c.digest(t), map[string][2]string{assetKey("acquire"): {sha(bin), srv.URL + "/download/" + assetKey("acquire")}})
		r := l.run(t, c, noGo(c, nil), "acquire", "x")
		assert.Equal(t, 7, r.code, r.stderr)
		assert.Contains(t, r.stderr, "downloaded and verified")
		assert.Equal(t, int32(1), hits.Load())
		cached, err := os.ReadFile(filepath.Join(c.cache, "ambiguous-build-lock", sha(bin), "acquire"+exeSuffix))
		require.NoError(t, err)
		assert.Equal(t, bin, cached)
		r = l.run(t, c, noGo(c, nil), "acquire", "x")
		assert.Equal(t, 7, r.code, r.stderr)
		assert.Contains(t, r.stderr, "cache hit")
		assert.Equal(t, int32(1), hits.Load(), "a warm start must not touch the network")
	}},
	{"a download whose checksum differs is refused before it runs", func(t *testing.T, l launcher) {
		c := newCheckout(t)
		tampered := append(append([]byte{}, fakeBinary(t)...), "tampered"...)
		srv, _ := assetServer(t, assetKey("acquire"), tampered)
		pinned := sha(fakeBinary(t))
		c.manifest(t, c.digest(t), map[string][2]string{assetKey("acquire"): {pinned, srv.URL + "/download/" + assetKey("acquire")}})
		r := l.run(t, c, noGo(c, nil), "acquire")
		assert.Equal(t, 1, r.code)
		assert.Contains(t, r.stderr, "error [checksum-mismatch]")
		assert.Contains(t, r.stderr, "checksum mismatch for "+assetKey("acquire"))
		assert.Contains(t, r.stderr, pinned)
		assert.Contains(t, r.stderr, "refusing to run it")
		assert.False(t, fileExists(filepath.Join(c.out, "args")), "the unverified download must never run")
		assert.False(t, fileExists(filepath.Join(c.cache, "ambiguous-build-lock", pinned, "acquire"+exeSuffix)), "nor be cached")
	}},
	{"a corrupt cache entry is discarded and downloaded again", func(t *testing.T, l launcher) {
		c := newCheckout(t)
		bin := fakeBinary(t)
		srv, hits := assetServer(t, assetKey("acquire"), bin)
		c.manifest(t, c.digest(t), map[string][2]string{assetKey("acquire"): {sha(bin), srv.URL + "/download/" + assetKey("acquire")}})
		c.cacheAsset(t, sha(bin), []byte("not the binary"))
		r := l.run(t, c, noGo(c, nil), "acquire")
		assert.Equal(t, 7, r.code, r.stderr)
		assert.Contains(t, r.stderr, "failed SHA-256 verification")
		assert.Equal(t, int32(1), hits.Load())
	}},
	{"a manifest URL that is not https is refused", func(t *testing.T, l launcher) {
		c := newCheckout(t)
		bin := fakeBinary(t)
		c.manifest(t, c.digest(t), map[string][2]string{assetKey("acquire"): {sha(bin), "http://example.invalid/acquire"}})
		r := l.run(t, c, noGo(c, nil), "acquire")
		assert.Equal(t, 1, r.code)
		assert.Contains(t, r.stderr, "error [insecure-url]")
	}},
	{"the test release origin is loopback https only, and a pinned checkout ignores it", func(t *testing.T, l launcher) {
		c := newCheckout(t)
		bin := fakeBinary(t)
		srv, hits := assetServer(t, assetKey("acquire"), bin)
		c.manifest(t, c.digest(t), map[string][2]string{assetKey("acquire"): {sha(bin), srv.URL + "/download/" + assetKey("acquire")}})
		for _, bad := range []string{"http://127.0.0.1:1", "https://example.com:443", "https://10.0.0.1:443", "https://127.0.0.1.example.com:1",
			"https://127.0.0.1:1/path", "https://localhost", "https://user@127.0.0.1:1", " https://127.0.0.1:1", "https://127.0.0.1:1\nx"} {
			r := l.run(t, c, noGo(c, map[string]string{"BUILD_LOCK_TEST_RELEASE_ORIGIN": bad}), "acquire")
			assert.Equal(t, 1, r.code, "%q: %s", bad, r.stderr)
			assert.Contains(t, r.stderr, "error [test-origin]", bad)
		}
		assert.Equal(t, int32(0), hits.Load(), "a refused origin downloads nothing")
		assert.False(t, fileExists(filepath.Join(c.out, "args")), "and runs nothing")

		// In a pinned checkout (every consumer's) the knob does nothing: the
		// manifest's own URL is fetched, even though the knob names a valid
		// loopback origin where nothing listens.
		pinned := filepath.Join(filepath.Dir(c.root), strings.Repeat("cd", 20))
		require.NoError(t, os.Rename(c.root, pinned))
		c.root = pinned
		r := l.run(t, c, noGo(c, map[string]string{"BUILD_LOCK_TEST_RELEASE_ORIGIN": "https://127.0.0.1:1"}), "acquire")
		assert.Equal(t, 7, r.code, r.stderr)
		assert.Contains(t, r.stderr, "ignoring BUILD_LOCK_TEST_RELEASE_ORIGIN")
		assert.Contains(t, r.stderr, "downloaded and verified")
		assert.Equal(t, int32(1), hits.Load())
	}},
	{"a failed download and a redirect to plain http are refused", func(t *testing.T, l launcher) {
		c := newCheckout(t)
		bin := fakeBinary(t)
		srv, hits := assetServer(t, assetKey("acquire"), bin)
		for _, path := range []string{"/missing", "/redirect"} {
			c.manifest(t, c.digest(t), map[string][2]string{assetKey("acquire"): {sha(bin), srv.URL + path}})
			r := l.run(t, c, noGo(c, nil), "acquire")
			assert.Equal(t, 1, r.code, path)
			assert.Contains(t, r.stderr, "error [download]", path)
		}
		assert.Equal(t, int32(0), hits.Load(), "the redirect target must never be fetched")
	}},
	{"without an asset it builds from source, then reuses the build", func(t *testing.T, l launcher) {
		bin := fakeBinary(t)
		for _, tc := range []struct {
			name   string
			setup  func(t *testing.T, c checkout)
			extra  map[string]string
			reason string
		}{
			{"empty manifest", func(t *testing.T, c checkout) { c.manifest(t, "", nil) }, nil, "no release asset " + assetKey("acquire")},
			{"sources differ from the manifest", func(t *testing.T, c checkout) {
				c.manifest(t, strings.Repeat("0", 64), map[string][2]string{assetKey("acquire"): {sha(bin), "https://example.invalid/x"}})
			}, nil, "differ from the manifest's source_digest"},
			{"forced", func(t *testing.T, c checkout) {
				c.manifest(t, c.digest(t), map[string][2]string{assetKey("acquire"): {sha(bin), "https://example.invalid/x"}})
			}, map[string]string{"BUILD_LOCK_FROM_SOURCE": "1"}, "BUILD_LOCK_FROM_SOURCE=1"},
			{"unsupported architecture", func(t *testing.T, c checkout) {
				c.manifest(t, c.digest(t), map[string][2]string{assetKey("acquire"): {sha(bin), "https://example.invalid/x"}})
			}, map[string]string{"RUNNER_ARCH": "X86"}, "no release asset acquire_" + runtime.GOOS + "_unsupported"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				c := newCheckout(t)
				tc.setup(t, c)
				r := l.run(t, c, tc.extra, "acquire", "p", "q")
				assert.Equal(t, 3, r.code, r.stderr)
				assert.Equal(t, "tiny: [p q]\n", strings.ReplaceAll(r.stdout, "\r\n", "\n"), "build output must not reach stdout")
				assert.Contains(t, r.stderr, "built from source")
				assert.Contains(t, r.stderr, tc.reason)
				r = l.run(t, c, tc.extra, "acquire")
				assert.Equal(t, 3, r.code, r.stderr)
				assert.Contains(t, r.stderr, "cache hit")
			})
		}
	}},
	{"without Go the error names the release to pin", func(t *testing.T, l launcher) {
		c := newCheckout(t)
		c.manifest(t, "", nil)
		r := l.run(t, c, noGo(c, map[string]string{"BUILD_LOCK_ACTION_REPOSITORY": "example-org/build-lock"}), "acquire")
		assert.Equal(t, 1, r.code)
		assert.Contains(t, r.stderr, "error [no-go]")
		assert.Contains(t, r.stderr, "no Go toolchain")
		assert.Contains(t, r.stderr, "https://github.com/example-org/build-lock/releases")

		bin := fakeBinary(t)
		c.manifest(t, strings.Repeat("0", 64), map[string][2]string{assetKey("acquire"): {sha(bin), "https://example.invalid/x"}})
		r = l.run(t, c, noGo(c, nil), "acquire")
		assert.Equal(t, 1, r.code)
		assert.Contains(t, r.stderr, "error [no-go]")
		assert.Contains(t, r.stderr, "pin the commit that release tag v0.0.1 points to")
	}},
	{"an interrupt reaches the binary, which cleans up before the step ends", func(t *testing.T, l launcher) {
		c := newCheckout(t)
		bin := fakeBinary(t)
		sum := sha(bin)
		c.manifest(t, c.digest(t), map[string][2]string{assetKey("acquire"): {sum, "https://example.invalid/never-fetched"}})
		c.cacheAsset(t, sum, bin)
		cleanup := filepath.Join(c.out, "cleanup")
		cmd, stderr := l.start(t, c, noGo(c, map[string]string{"FAKE_WAIT_FOR_INTERRUPT": "1", "OUT_CLEANUP": cleanup}), "acquire")
		require.NoError(t, interrupt(cmd, l))
		err := cmd.Wait()
		require.Error(t, err, "the step must fail when cancelled; stderr:\n%s", stderr.String())
		assert.FileExists(t, cleanup, "the binary's cleanup must have run before the step's process ended")
	}},
}

// TestLauncherCases runs the case table against every launcher
// implementation this machine can run (see launchers).
func TestLauncherCases(t *testing.T) {
	t.Parallel()
	for _, l := range launchers(t) {
		for _, tc := range launcherCases {
			t.Run(l.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				tc.test(t, l)
			})
		}
	}
}

// TestSourceDigestScriptMatchesTheDefinition: the one shell
// implementation of the digest (used by make dist and the release
// workflow) agrees with the written definition, skips what it must skip and
// changes with any hashed byte.
func TestSourceDigestScriptMatchesTheDefinition(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("source-digest.sh is the release build's; launch.ps1 is checked by TestLauncherCases")
	}
	bash, err := lookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	c := newCheckout(t)
	write(t, filepath.Join(c.root, "cmd", "acquire", "extra_test.go"), "package main\n")
	require.NoError(t, os.MkdirAll(filepath.Join(c.root, "dist"), 0o755))
	write(t, filepath.Join(c.root, "dist", "ignored.go"), "package x\n")
	write(t, filepath.Join(c.root, "README.md"), "not hashed\n")
	script := func() string {
		out, err := execCommand(bash, filepath.Join(c.root, "tools", "launcher", "source-digest.sh"), c.root)
		require.NoError(t, err)
		return strings.TrimSpace(out)
	}
	assert.Equal(t, c.digest(t), script())
	before := script()
	write(t, filepath.Join(c.root, "README.md"), "still not hashed\n")
	assert.Equal(t, before, script())
	write(t, filepath.Join(c.root, "cmd", "acquire", "extra_test.go"), "package main // changed\n")
	assert.NotEqual(t, before, script())
	assert.Equal(t, c.digest(t), script())
}
