package actioncontract_test

import (
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
)

// The release path, end to end and offline: `make dist` builds a real
// release binary, tools/manifest writes the real manifest from it, and
// launch.sh, on a runner without Go, downloads the asset from a local HTTPS
// server, checks its SHA-256 against the manifest, caches it, runs it, and
// starts it again from the cache with the server gone. The failure paths are
// a wrong checksum, a server that is down and a truncated asset.
//
// To stay fast it builds one command for the host target only (make dist's
// DIST_TARGETS and DIST_CMDS). The manifest is still the real, complete one:
// every other command and target gets a placeholder file, hashed like any
// asset, so tools/manifest writes and checks it exactly as in a release.
//
// The launcher is pointed at the server with BUILD_LOCK_TEST_RELEASE_ORIGIN
// (honored only outside a pinned checkout and only for a loopback https
// origin; see the case table), and curl trusts the server's certificate
// through CURL_CA_BUNDLE, curl's own setting, in this test's environment
// only: the launcher has no switch that relaxes TLS verification.

// releasePathCmd is the command the test releases and runs: a real action
// binary that decides from its inputs alone, with no network.
const releasePathCmd = "require-unity-validation"

// releasePathTag is the release the test cuts.
const releasePathTag = "v9.9.9"

// releaseServer serves dist/ at GitHub's release download path over TLS,
// in one of the modes below, and counts the downloads it answered.
type releaseServer struct {
	srv    *httptest.Server
	dist   string
	mode   atomic.Value // string: serve, tamper, short, cut
	hits   atomic.Int32
	caFile string
}

func newReleaseServer(t *testing.T, dist string) *releaseServer {
	t.Helper()
	rs := &releaseServer{dist: dist}
	rs.mode.Store("serve")
	prefix := "/" + thisRepository + "/releases/download/" + releasePathTag + "/"
	rs.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := strings.CutPrefix(r.URL.Path, prefix)
		if !ok || strings.Contains(name, "/") {
			http.NotFound(w, r)
			return
		}
		body, err := os.ReadFile(filepath.Join(rs.dist, name))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		rs.hits.Add(1)
		switch rs.mode.Load().(string) {
		case "tamper": // a replaced asset: same size, other bytes
			body = append([]byte{}, body...)
			body[len(body)/2] ^= 0xff
		case "short": // a truncated upload: an honest, shorter answer
			body = body[:len(body)/2]
		case "cut": // the connection drops half way through the body
			w.Header().Set("Content-Length", fmt.Sprint(len(body)))
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(body[:len(body)/2])
			if hj, ok := w.(http.Hijacker); ok {
				if conn, _, err := hj.Hijack(); err == nil {
					_ = conn.Close()
				}
			}
			return
		}
		_, _ = w.Write(body)
	}))
	t.Cleanup(rs.srv.Close)
	rs.caFile = filepath.Join(t.TempDir(), "release-server.pem")
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rs.srv.Certificate().Raw})
	require.NoError(t, os.WriteFile(rs.caFile, cert, 0o644))
	return rs
}

// cleanMakeEnv is the test's environment without the outer make's
// variables (make test runs go test): a nested make must not inherit a
// jobserver it cannot reach.
func cleanMakeEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "DIST_TARGETS", "DIST_CMDS", "DIST":
			continue
		}
		env = append(env, kv)
	}
	return env
}

func runIn(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %s:\n%s", name, strings.Join(args, " "), out)
	return string(out)
}

// copySourceTree copies what the source digest covers (go.mod, go.sum and
// every .go file, with the definition's skipped directories) and the POSIX
// launcher from the repository into dst: the checkout of the release
// commit, as the runner would have it.
func copySourceTree(t *testing.T, dst string) {
	t.Helper()
	copyFile := func(rel string) {
		b, err := os.ReadFile(filepath.Join(repoRoot, rel))
		require.NoError(t, err)
		p := filepath.Join(dst, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, b, 0o644))
	}
	for _, f := range []string{"go.mod", "go.sum", "tools/launcher/launch.sh", "tools/launcher/source-digest.sh"} {
		copyFile(f)
	}
	require.NoError(t, filepath.WalkDir(repoRoot, func(p string, d os.DirEntry, err error) error {
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
			rel, err := filepath.Rel(repoRoot, p)
			if err != nil {
				return err
			}
			copyFile(rel)
		}
		return nil
	}))
}

// TestReleasePathEndToEnd runs make dist, tools/manifest and launch.sh
// together against a local HTTPS release server, on a runner without Go.
func TestReleasePathEndToEnd(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("launch.sh is the POSIX launcher; Windows PowerShell 5.1 cannot trust a test certificate without a validation callback, which launch.ps1 must never carry (its download rows run in the case table)")
	}
	for _, tool := range []string{"bash", "curl", "make", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	_, _, goos, goarch := hostRunner()
	base := t.TempDir()
	dist, checkoutDir := filepath.Join(base, "dist"), filepath.Join(base, "checkout")
	env := cleanMakeEnv()

	// 1. make dist: the host target, one command.
	runIn(t, repoRoot, env, "make", "--no-print-directory", "-s", "dist", "DIST="+dist, "DIST_TARGETS="+goos+"/"+goarch, "DIST_CMDS="+releasePathCmd)
	hostAsset := releasePathCmd + "_" + goos + "_" + goarch
	built, err := os.ReadFile(filepath.Join(dist, hostAsset))
	require.NoError(t, err, "make dist must have built %s", hostAsset)
	sums := readFile(t, filepath.Join(dist, "SHA256SUMS"))
	assert.Contains(t, sums, sha(built)+"  "+hostAsset+"\n", "make dist writes SHA256SUMS")

	// Every other release key gets a placeholder, so the manifest is the
	// complete one tools/manifest insists on.
	cmds := strings.Fields(runIn(t, repoRoot, env, "go", "run", "./tools/manifest", "-list-cmds"))
	require.Contains(t, cmds, releasePathCmd)
	for _, c := range cmds {
		for _, tg := range []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"} {
			tos, tarch, _ := strings.Cut(tg, "/")
			name := c + "_" + tos + "_" + tarch
			if tos == "windows" {
				name += ".exe"
			}
			if _, err := os.Stat(filepath.Join(dist, name)); err == nil {
				continue
			}
			write(t, filepath.Join(dist, name), "placeholder "+name+": not built by this test\n")
		}
	}

	// 2. The release commit's checkout and its manifest, from make dist's
	// source digest, written and checked by tools/manifest.
	copySourceTree(t, checkoutDir)
	digest := strings.TrimSpace(readFile(t, filepath.Join(dist, "source-digest")))
	require.Equal(t, goSourceDigest(t, checkoutDir), digest, "make dist's source digest is the checkout's")
	manifest := filepath.Join(checkoutDir, ".github", "dist", "manifest.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(manifest), 0o755))
	runIn(t, repoRoot, env, "go", "run", "./tools/manifest", "-dist", dist, "-version", releasePathTag, "-tag", releasePathTag,
		"-repo", thisRepository, "-source-digest", digest, "-out", manifest)
	runIn(t, repoRoot, env, "go", "run", "./tools/manifest", "-check", manifest)
	m := readFile(t, manifest)
	wantURL := "https://github.com/" + thisRepository + "/releases/download/" + releasePathTag + "/" + hostAsset
	assert.Contains(t, m, fmt.Sprintf("%q: {\"sha256\": %q, \"url\": %q}", hostAsset, sha(built), wantURL), "the real manifest names GitHub's release URL")

	// 3. The runner: no Go on PATH (proved), a fresh tool cache per case.
	srv := newReleaseServer(t, dist)
	noGoPath := pathWithoutGo()
	for _, dir := range filepath.SplitList(noGoPath) {
		_, err := os.Stat(filepath.Join(dir, "go"))
		require.Error(t, err, "the runner's PATH must hold no go")
	}
	ghOutput := filepath.Join(base, "github_output")
	run := func(t *testing.T, cache string, origin string) result {
		t.Helper()
		write(t, ghOutput, "")
		c := checkout{root: checkoutDir, cache: cache, out: filepath.Join(base, "out")}
		require.NoError(t, os.MkdirAll(c.out, 0o755))
		l := launcher{name: "bash", shell: mustLookPath(t, "bash"), script: "launch.sh"}
		return l.run(t, c, map[string]string{
			"PATH":                           noGoPath,
			"BUILD_LOCK_GO":                  filepath.Join(base, "no-such-go"),
			"BUILD_LOCK_TEST_RELEASE_ORIGIN": origin,
			"CURL_CA_BUNDLE":                 srv.caFile,
			"GITHUB_OUTPUT":                  ghOutput,
			// The untrusted-revision skip: a safe verdict.
			"INPUT_STATIC_VALIDATION_RESULT": "success", "INPUT_CLASSIFIER_RESULT": "success",
			"INPUT_UNITY_REQUIRED": "true", "INPUT_TRUSTED_REVISION": "false",
			"INPUT_PREFLIGHT_RESULT": "skipped", "INPUT_UNITY_RESULT": "skipped", "INPUT_FALLBACK_RESULT": "skipped",
			"INPUT_FALLBACK_CLEANUP_RESULT": "",
		}, releasePathCmd)
	}
	cachedBinary := func(cache string) string {
		return filepath.Join(cache, "ambiguous-build-lock", sha(built), releasePathCmd)
	}
	// noLeftovers: a refused download leaves neither the binary nor a
	// temporary file in the cache.
	noLeftovers := func(t *testing.T, cache string) {
		t.Helper()
		entries, _ := os.ReadDir(filepath.Dir(cachedBinary(cache)))
		for _, e := range entries {
			assert.Failf(t, "cache", "a refused download left %s in the cache", e.Name())
		}
	}

	t.Run("download, verify, cache, run; then a warm start with the server gone", func(t *testing.T) {
		cache := filepath.Join(base, "cache-ok")
		srv.mode.Store("serve")
		before := srv.hits.Load()
		r := run(t, cache, srv.srv.URL)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stderr, "running "+hostAsset+" "+releasePathTag+" (downloaded and verified, sha256 "+sha(built)[:12]+")")
		outs, err := actionio.ReadFileCommands(ghOutput)
		require.NoError(t, err)
		assert.Equal(t, "true", outs["validation-safe"], "the real binary ran and judged the untrusted skip safe")
		assert.Equal(t, before+1, srv.hits.Load())
		got, err := os.ReadFile(cachedBinary(cache))
		require.NoError(t, err)
		assert.Equal(t, sha(built), sha(got), "the cache holds exactly the verified asset")

		r = run(t, cache, srv.srv.URL)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stderr, "(cache hit, sha256 "+sha(built)[:12]+")")
		assert.Equal(t, before+1, srv.hits.Load(), "a warm start does not download")

		// With nothing listening at all, the cache alone still runs it.
		r = run(t, cache, "https://127.0.0.1:1")
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stderr, "cache hit")
	})
	t.Run("a wrong checksum is refused before it runs", func(t *testing.T) {
		cache := filepath.Join(base, "cache-tamper")
		srv.mode.Store("tamper")
		r := run(t, cache, srv.srv.URL)
		assert.Equal(t, 1, r.code, r.stderr)
		assert.Contains(t, r.stderr, "error [checksum-mismatch]: checksum mismatch for "+hostAsset+": the manifest pins sha256 "+sha(built))
		assert.Empty(t, strings.TrimSpace(readFile(t, ghOutput)), "the tampered binary never ran")
		noLeftovers(t, cache)
	})
	t.Run("a truncated asset is refused", func(t *testing.T) {
		for _, mode := range []string{"short", "cut"} {
			cache := filepath.Join(base, "cache-"+mode)
			srv.mode.Store(mode)
			r := run(t, cache, srv.srv.URL)
			assert.Equal(t, 1, r.code, r.stderr)
			if mode == "short" { // the server claimed it complete: the hash decides
				assert.Contains(t, r.stderr, "error [checksum-mismatch]", mode)
			} else { // the transfer broke: curl fails it
				assert.Contains(t, r.stderr, "error [download]", mode)
			}
			assert.Empty(t, strings.TrimSpace(readFile(t, ghOutput)), "%s: nothing ran", mode)
			noLeftovers(t, cache)
		}
	})
	t.Run("a server that is down fails the download", func(t *testing.T) {
		down := httptest.NewUnstartedServer(http.NotFoundHandler())
		down.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
		down.StartTLS()
		url := down.URL
		down.Close()
		cache := filepath.Join(base, "cache-down")
		r := run(t, cache, url)
		assert.Equal(t, 1, r.code, r.stderr)
		assert.Contains(t, r.stderr, "error [download]: download of "+hostAsset+" ("+releasePathTag+") failed after retries")
		noLeftovers(t, cache)
	})
}

func mustLookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	require.NoError(t, err)
	return p
}
