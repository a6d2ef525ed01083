package preflight_test

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/preflight"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/runners"
)

func TestMain(m *testing.M) {
	actiontest.Setup()
	os.Exit(m.Run())
}

const (
	readerAppID = 5151
	unitySets   = `[["self-hosted","Windows","X64","unity"]]`
	groupsRoute = "GET /orgs/{org}/actions/runner-groups"
	runnersPath = "/orgs/acme/actions/runner-groups/*/runners"
	mintRoute   = "POST /app/installations/{installation_id}/access_tokens"
	lookupRoute = "GET /orgs/{org}/installation"
)

var unityLabels = []string{"self-hosted", "Windows", "X64", "unity"}

// world is the consumer organization with the reader App installed on it.
type world struct {
	*actiontest.World
	inst int64
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := actiontest.NewWorld(t, "")
	block, _ := pem.Decode([]byte(actiontest.KeyPEM()))
	key, err := x509.ParsePKCS1PrivateKey(block.Bytes)
	require.NoError(t, err)
	w.Em.AddApp(readerAppID, &key.PublicKey)
	inst := w.Em.InstallApp(readerAppID, actiontest.Owner, nil)
	return &world{World: w, inst: inst}
}

// group adds a runner group visible to the consumer repository with n
// runners carrying labels, returning its id and the runner ids.
func (w *world) group(name string, n int, status string, busy bool, labels ...string) (int64, []int64) {
	g := w.Em.AddRunnerGroup(actiontest.Owner, emulator.RunnerGroup{Name: name, Visibility: emulator.VisibilitySelected, SelectedRepos: []string{actiontest.Consumer}})
	var ids []int64
	for i := range n {
		ids = append(ids, w.Em.AddRunner(actiontest.Owner, g, emulator.Runner{Name: fmt.Sprintf("%s-%03d", name, i), OS: "Windows", Status: status, Busy: busy, Labels: labels}))
	}
	return g, ids
}

func (w *world) job(t *testing.T) *actiontest.Job {
	t.Helper()
	j := w.NewJob("preflight", "")
	return j.Input("reader-app-id", strconv.Itoa(readerAppID)).Input("reader-app-private-key", actiontest.KeyPEM()).Input("required-label-sets", unitySets)
}

func reason(t *testing.T, err error) string {
	t.Helper()
	var pe *preflight.Error
	require.True(t, errors.As(err, &pe), "want a *preflight.Error, got %v", err)
	return pe.Reason
}

func routeRequests(w *world, route string) int64 { return w.Em.Metrics().Routes[route].Requests }

func pathRequests(w *world, prefix string) int64 {
	var n int64
	for p, c := range w.Em.Metrics().Paths {
		if strings.HasPrefix(p, prefix) {
			n += c.Requests
		}
	}
	return n
}

func noSecrets(t *testing.T, j *actiontest.Job) {
	t.Helper()
	out := j.Unmasked()
	assert.NotContains(t, out, "PRIVATE KEY")
	assert.NotContains(t, out, "ghs_")
	assert.NotContains(t, j.Summary(), "ghs_")
}

func TestAvailableRunnersPass(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		g, ids := w.group("win", 3, "online", false, unityLabels...)
		require.NoError(t, w.Em.SetRunnerStatus(actiontest.Owner, ids[1], "online", true))
		require.NoError(t, w.Em.SetRunnerStatus(actiontest.Owner, ids[2], "offline", false))
		w.Em.AddRunner(actiontest.Owner, g, emulator.Runner{Name: "linux-1", Labels: []string{"self-hosted", "Linux"}})
		j := w.job(t)
		require.NoError(t, preflight.Run(context.Background(), j.Deps()))

		out := j.Outputs()
		assert.Equal(t, "4", out["registered-runner-count"])
		assert.Equal(t, "3", out["online-runner-count"])
		assert.Equal(t, "1", out["busy-runner-count"])
		var matched []struct {
			Labels  []string `json:"labels"`
			Runners []string `json:"runners"`
		}
		require.NoError(t, json.Unmarshal([]byte(out["matched-runners"]), &matched))
		require.Len(t, matched, 1)
		assert.Equal(t, []string{"self-hosted", "windows", "x64", "unity"}, matched[0].Labels)
		assert.Equal(t, []string{"win-000", "win-001", "win-002"}, matched[0].Runners)

		sum := j.Summary()
		assert.Contains(t, sum, "| `self-hosted, windows, x64, unity` | win-000 (online, idle)<br>win-001 (online, busy)<br>win-002 (offline, idle) | available: 2 online, 1 busy |")
		assert.NotContains(t, j.Out.String(), "::warning::")

		// One installation lookup, one mint restricted to the runner
		// permission, one group page, one runner page.
		assert.Equal(t, int64(1), routeRequests(w, lookupRoute))
		assert.Equal(t, int64(1), routeRequests(w, mintRoute))
		assert.Equal(t, int64(1), routeRequests(w, groupsRoute))
		assert.Equal(t, int64(1), pathRequests(w, "GET /orgs/acme/actions/runner-groups/"))
		for _, tok := range w.Em.State().Tokens {
			if tok.Kind == "installation" {
				assert.Equal(t, map[string]string{"organization_self_hosted_runners": "read"}, tok.Perms, "least privilege")
			}
		}
		noSecrets(t, j)
	})
}

// Both listings span three or more pages; the one token serves them all.
func TestPaginationAcrossPages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		for i := range 204 {
			w.group(fmt.Sprintf("empty-%03d", i), 0, "online", false)
		}
		w.group("win", 250, "online", false, unityLabels...)
		j := w.job(t)
		require.NoError(t, preflight.Run(context.Background(), j.Deps()))
		assert.Equal(t, "250", j.Outputs()["registered-runner-count"])
		assert.Equal(t, int64(3), routeRequests(w, groupsRoute), "205 groups: 3 pages")
		assert.Equal(t, int64(204+3), pathRequests(w, "GET /orgs/acme/actions/runner-groups/"), "one page per empty group, 3 for 250 runners")
		assert.Equal(t, int64(1), routeRequests(w, mintRoute), "one token for every page")
		var matched []struct{ Runners []string }
		require.NoError(t, json.Unmarshal([]byte(j.Outputs()["matched-runners"]), &matched))
		assert.Len(t, matched[0].Runners, 250)
		assert.Contains(t, j.Summary(), "and 230 more")
	})
}

// TestTotalCountChangingDuringChurnPasses: a runner deregistered between
// two page reads shifts the later pages and changes total_count. The
// runners read are real, so a label set they satisfy passes (as in the
// reference), with a warning that the inventory changed while it was read.
func TestTotalCountChangingDuringChurnPasses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		_, ids := w.group("win", 150, "online", false, unityLabels...)
		w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: runnersPath, Kind: emulator.Latency, Latency: 2 * time.Second})
		j := w.job(t)
		done := make(chan error, 1)
		go func() { done <- preflight.Run(context.Background(), j.Deps()) }()
		time.Sleep(3 * time.Second) // page 1 answered at 2 s; page 2 is in its latency
		require.NoError(t, w.Em.RemoveRunner(actiontest.Owner, ids[0]))
		require.NoError(t, <-done)
		assert.Equal(t, "149", j.Outputs()["registered-runner-count"])
		assert.Contains(t, j.Out.String(), "::warning::The runner inventory changed while it was read (")
		assert.Contains(t, j.Out.String(), "total_count changed from 150 to 149")
		assert.Equal(t, int64(2), pathRequests(w, "GET /orgs/acme/actions/runner-groups/"), "no second read: nothing is missing")
	})
}

// TestAnInconsistentReadIsReadAgainBeforeClaimingAbsence: the only Unity
// runner shifts from page 2 into page 1 (already read) when another runner
// is removed, so the first read misses it; an inconsistent read cannot
// prove absence, so the inventory is read again, and the runner is found.
func TestAnInconsistentReadIsReadAgainBeforeClaimingAbsence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		g, ids := w.group("win", 100, "online", false, "self-hosted", "Linux")
		w.Em.AddRunner(actiontest.Owner, g, emulator.Runner{Name: "unity-1", Labels: unityLabels})
		w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: runnersPath, Kind: emulator.Latency, Latency: 2 * time.Second})
		j := w.job(t)
		done := make(chan error, 1)
		go func() { done <- preflight.Run(context.Background(), j.Deps()) }()
		time.Sleep(3 * time.Second)
		require.NoError(t, w.Em.RemoveRunner(actiontest.Owner, ids[0]))
		require.NoError(t, <-done)
		assert.Contains(t, j.Out.String(), "::notice::The runner inventory changed while it was read (")
		assert.Contains(t, j.Out.String(), "reading it once more")
		assert.Equal(t, int64(2), routeRequests(w, groupsRoute), "the whole inventory was read twice")
		assert.Equal(t, "100", j.Outputs()["registered-runner-count"])
	})
}

// rewrite serves the responses of requests whose path ends with suffix
// (method too, when set) from serve; everything else goes to the emulator.
func rewrite(base http.RoundTripper, method, suffix string, serve func(r *http.Request) *http.Response) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		if strings.HasSuffix(r.URL.Path, suffix) && (method == "" || r.Method == method) {
			resp := serve(r)
			resp.Request = r
			if resp.Header == nil {
				resp.Header = http.Header{}
			}
			return resp, nil
		}
		return base.RoundTrip(r)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func jsonResponse(body string) *http.Response {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}, Body: io.NopCloser(strings.NewReader(body))}
}

// TestAPersistentlyInconsistentInventoryIsNotReadAsNoRunner: when both reads
// are inconsistent and a label set finds no runner, the preflight fails with
// RUNNER_INVENTORY_INCONSISTENT, never with LABEL_SET_WITHOUT_RUNNER.
func TestAPersistentlyInconsistentInventoryIsNotReadAsNoRunner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		w.group("win", 1, "online", false, "self-hosted", "Linux")
		j := w.job(t)
		d := j.Deps()
		d.Transport = rewrite(d.Transport, "GET", "/runners", func(r *http.Request) *http.Response {
			if r.URL.Query().Get("page") == "1" {
				return jsonResponse(`{"total_count":3,"runners":[{"id":1,"name":"a","status":"online","busy":false,"labels":[{"name":"self-hosted"}]}]}`)
			}
			return jsonResponse(`{"total_count":3,"runners":[]}`)
		})
		err := preflight.Run(context.Background(), d)
		assert.Equal(t, preflight.ReasonInventoryInconsistent, reason(t, err))
		assert.ErrorContains(t, err, "read twice")
		assert.Empty(t, j.Outputs())
	})
}

// TestNonStringLabelNamesAreIgnored: a label whose name is not a string
// (GitHub never sends one, a proxy might) cannot match a required label;
// it is dropped with a warning instead of failing the whole inventory.
func TestNonStringLabelNamesAreIgnored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		w.group("win", 1, "online", false, unityLabels...)
		j := w.job(t)
		d := j.Deps()
		d.Transport = rewrite(d.Transport, "GET", "/runners", func(*http.Request) *http.Response {
			return jsonResponse(`{"total_count":1,"runners":[{"id":9,"name":"win-9","status":"online","busy":false,"labels":[{"name":7},{"name":null},{"name":["x"]},{"name":"self-hosted"},{"name":"Windows"},{"name":"X64"},{"name":"unity"}]}]}`)
		})
		require.NoError(t, preflight.Run(context.Background(), d))
		assert.Equal(t, "1", j.Outputs()["registered-runner-count"])
		assert.Contains(t, j.Out.String(), "::warning::2 runner label(s) whose name is not a string were ignored")
	})
}

// TestAnAnswerThatIsNotJSONIsReportedAsWhatItIs: an HTML page (a proxy, a
// captive portal) or a broken JSON body answered with 200 is not a
// transport error: it fails at once, unretried, saying what it was.
func TestAnAnswerThatIsNotJSONIsReportedAsWhatItIs(t *testing.T) {
	cases := map[string]struct {
		resp func() *http.Response
		want string
	}{
		"an HTML page": {func() *http.Response {
			return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/html; charset=utf-8"}}, Body: io.NopCloser(strings.NewReader("<html><body>Sign in to the network</body></html>"))}
		}, "GitHub answered HTTP 200 with a text/html body, not JSON"},
		"truncated JSON": {func() *http.Response { return jsonResponse(`{"total_count":1,"runner_groups":[`) }, "GitHub answered HTTP 200 with a body that is not valid JSON"},
		"no total_count": {func() *http.Response { return jsonResponse(`{"runner_groups":[]}`) }, "has no total_count"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := newWorld(t)
				w.group("win", 1, "online", false, unityLabels...)
				j := w.job(t)
				d := j.Deps()
				calls := 0
				d.Transport = rewrite(d.Transport, "GET", "/actions/runner-groups", func(*http.Request) *http.Response {
					calls++
					return tc.resp()
				})
				began := time.Now()
				err := preflight.Run(context.Background(), d)
				assert.Equal(t, preflight.ReasonInventoryUnreadable, reason(t, err))
				assert.ErrorContains(t, err, tc.want)
				assert.NotContains(t, err.Error(), "HTTP 200: OK")
				assert.Equal(t, 1, calls, "not retried")
				assert.Zero(t, time.Since(began))
				assert.NotContains(t, j.Out.String(), "retrying")
			})
		})
	}
}

// hugeBody is a JSON document of about size bytes, produced as it is read
// (a string field of n bytes), counting what was read.
type hugeBody struct {
	prefix, suffix string
	size, pos      int
	read           *int
}

func (b *hugeBody) Read(p []byte) (int, error) {
	if b.pos >= b.size {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && b.pos < b.size {
		switch {
		case b.pos < len(b.prefix):
			p[n] = b.prefix[b.pos]
		case b.pos >= b.size-len(b.suffix):
			p[n] = b.suffix[b.pos-(b.size-len(b.suffix))]
		default:
			p[n] = 'a'
		}
		n++
		b.pos++
	}
	*b.read += n
	return n, nil
}

func (b *hugeBody) Close() error { return nil }

// TestResponseBodiesAreBounded: a 64 MiB answer (a 300 MB one used 1.4 GB
// before) is read no further than its bound, for inventory pages and the
// token mint alike, and the preflight fails at once saying why.
func TestResponseBodiesAreBounded(t *testing.T) {
	const size = 64 << 20
	cases := map[string]struct {
		method, suffix, prefix, suffixJSON string
		bound                              int
	}{
		"a runner group page": {"GET", "/actions/runner-groups", `{"total_count":1,"runner_groups":[{"id":1,"name":"`, `"}]}`, preflight.MaxResponseBytes},
		"the token mint":      {"POST", "/access_tokens", `{"token":"`, `","expires_at":"2099-01-01T00:00:00Z"}`, 2 * preflight.MaxResponseBytes},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := newWorld(t)
				w.group("win", 1, "online", false, unityLabels...)
				j := w.job(t)
				d := j.Deps()
				read := 0
				d.Transport = rewrite(d.Transport, tc.method, tc.suffix, func(*http.Request) *http.Response {
					return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
						Body: &hugeBody{prefix: tc.prefix, suffix: tc.suffixJSON, size: size, read: &read}}
				})
				err := preflight.Run(context.Background(), d)
				require.Error(t, err)
				assert.Equal(t, preflight.ReasonInventoryUnreadable, reason(t, err), "%v", err)
				t.Logf("read %d bytes of a %d-byte answer", read, size)
				assert.LessOrEqual(t, read, tc.bound+64<<10, "bytes read of a %d-byte answer", size)
			})
		})
	}
}
func TestInvisibleGroupsAreIgnored(t *testing.T) {
	t.Run("a matching runner in another repository's group does not count", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			w.group("linux", 1, "online", false, "self-hosted", "Linux")
			hidden := w.Em.AddRunnerGroup(actiontest.Owner, emulator.RunnerGroup{Name: "hidden", Visibility: emulator.VisibilitySelected, SelectedRepos: []string{actiontest.LockRepo}})
			w.Em.AddRunner(actiontest.Owner, hidden, emulator.Runner{Name: "win-hidden", Labels: unityLabels})
			j := w.job(t)
			err := preflight.Run(context.Background(), j.Deps())
			assert.Equal(t, preflight.ReasonLabelSetWithoutRunner, reason(t, err))
			assert.ErrorContains(t, err, "[self-hosted, windows, x64, unity]")
			assert.NotContains(t, j.Summary(), "win-hidden")
			assert.Contains(t, j.Summary(), "**no registered runner**")
			assert.Empty(t, j.Outputs())
			assert.Zero(t, pathRequests(w, fmt.Sprintf("GET /orgs/acme/actions/runner-groups/%d/", hidden)), "an invisible group is never read")
		})
	})
	t.Run("no visible group at all", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			hidden := w.Em.AddRunnerGroup(actiontest.Owner, emulator.RunnerGroup{Name: "hidden", Visibility: emulator.VisibilitySelected, SelectedRepos: []string{actiontest.LockRepo}})
			w.Em.AddRunner(actiontest.Owner, hidden, emulator.Runner{Name: "win-hidden", Labels: unityLabels})
			j := w.job(t)
			err := preflight.Run(context.Background(), j.Deps())
			assert.Equal(t, preflight.ReasonNoVisibleGroup, reason(t, err))
			assert.ErrorContains(t, err, "acme/game")
		})
	})
	t.Run("a public repository and a group that refuses public repositories", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			w.group("win", 1, "online", false, unityLabels...)
			require.NoError(t, w.Em.SetRepoPublic(actiontest.Owner, actiontest.Consumer, true))
			err := preflight.Run(context.Background(), w.job(t).Deps())
			assert.Equal(t, preflight.ReasonNoVisibleGroup, reason(t, err))
		})
	})
}

func TestAllOfflineWarnsWithNames(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		w.group("win", 2, "offline", false, unityLabels...)
		j := w.job(t)
		require.NoError(t, preflight.Run(context.Background(), j.Deps()), "an all-offline label set passes")
		assert.Contains(t, j.Out.String(), "::warning::Label set [self-hosted, windows, x64, unity] has no online runner: the licensed job will wait until one of these comes back: win-000, win-001 (all offline).")
		assert.Contains(t, j.Summary(), "⚠️ all 2 offline")
		assert.Equal(t, "0", j.Outputs()["online-runner-count"])
	})
}

func TestAllBusyNotice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		w.group("win", 3, "online", true, unityLabels...)
		j := w.job(t)
		require.NoError(t, preflight.Run(context.Background(), j.Deps()))
		assert.Contains(t, j.Out.String(), "::notice::Label set [self-hosted, windows, x64, unity]: all 3 runner(s) are busy; the licensed job will queue until one is free.")
		assert.NotContains(t, j.Out.String(), "::warning::")
		assert.Equal(t, "3", j.Outputs()["busy-runner-count"])
	})
}

func TestMissingPermissionFailsAtOnce(t *testing.T) {
	t.Run("the installation does not grant it: the mint is refused", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			w.group("win", 1, "online", false, unityLabels...)
			require.NoError(t, w.Em.SetInstallationPermissions(w.inst, map[string]string{"actions": "read", "metadata": "read"}))
			j := w.job(t)
			began := time.Now()
			err := preflight.Run(context.Background(), j.Deps())
			assert.Equal(t, preflight.ReasonInventoryUnreadable, reason(t, err))
			assert.ErrorContains(t, err, "organization_self_hosted_runners: read")
			assert.ErrorContains(t, err, "does not grant")
			assert.Zero(t, time.Since(began), "no retry")
			assert.Equal(t, int64(1), routeRequests(w, mintRoute))
			assert.Zero(t, routeRequests(w, groupsRoute))
			noSecrets(t, j)
		})
	})
	t.Run("a 403 from the inventory endpoint", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			w.group("win", 1, "online", false, unityLabels...)
			// The owner withdraws the permission while the first read is
			// in flight: GitHub answers 403 (not a rate limit).
			w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: "/orgs/acme/actions/runner-groups", Kind: emulator.Latency, Latency: time.Second, Count: 1})
			j := w.job(t)
			done := make(chan error, 1)
			began := time.Now()
			go func() { done <- preflight.Run(context.Background(), j.Deps()) }()
			time.Sleep(500 * time.Millisecond)
			require.NoError(t, w.Em.SetInstallationPermissions(w.inst, map[string]string{"metadata": "read"}))
			err := <-done
			assert.Equal(t, preflight.ReasonInventoryUnreadable, reason(t, err))
			assert.ErrorContains(t, err, "HTTP 403")
			assert.ErrorContains(t, err, "lacks the organization permission organization_self_hosted_runners: read")
			assert.Equal(t, time.Second, time.Since(began), "failed at once, no backoff")
			assert.Equal(t, int64(1), routeRequests(w, groupsRoute))
		})
	})
	t.Run("a 404 from the inventory endpoint", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			g, _ := w.group("win", 1, "online", false, unityLabels...)
			w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: runnersPath, Kind: emulator.Latency, Latency: time.Second, Count: 1})
			j := w.job(t)
			done := make(chan error, 1)
			began := time.Now()
			go func() { done <- preflight.Run(context.Background(), j.Deps()) }()
			time.Sleep(500 * time.Millisecond)
			require.NoError(t, w.Em.RemoveRunnerGroup(actiontest.Owner, g))
			err := <-done
			assert.Equal(t, preflight.ReasonInventoryUnreadable, reason(t, err))
			assert.ErrorContains(t, err, fmt.Sprintf("runner group %d disappeared", g))
			assert.Equal(t, time.Second, time.Since(began), "failed at once, no backoff")
			assert.Equal(t, int64(1), pathRequests(w, "GET /orgs/acme/actions/runner-groups/"))
		})
	})
	t.Run("the reader App is not installed on the organization", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			w.group("win", 1, "online", false, unityLabels...)
			j := w.job(t).Input("reader-app-id", strconv.Itoa(actiontest.AppID+1))
			w.Em.AddApp(actiontest.AppID+1, w.publicKey(t))
			err := preflight.Run(context.Background(), j.Deps())
			assert.Equal(t, preflight.ReasonInventoryUnreadable, reason(t, err))
			assert.ErrorContains(t, err, "is not installed on acme")
		})
	})
}

func (w *world) publicKey(t *testing.T) *rsa.PublicKey {
	t.Helper()
	block, _ := pem.Decode([]byte(actiontest.KeyPEM()))
	key, err := x509.ParsePKCS1PrivateKey(block.Bytes)
	require.NoError(t, err)
	return &key.PublicKey
}

func TestRetryAfterIsHonored(t *testing.T) {
	for _, ra := range []string{"7", "date"} {
		t.Run(ra, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := newWorld(t)
				w.group("win", 1, "online", false, unityLabels...)
				began := time.Now()
				v := ra
				if ra == "date" {
					v = began.Add(7 * time.Second).UTC().Format(http.TimeFormat)
				}
				w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: "/orgs/acme/actions/runner-groups", Kind: emulator.TooManyRequests429, RetryAfter: v, Count: 1})
				j := w.job(t)
				require.NoError(t, preflight.Run(context.Background(), j.Deps()))
				assert.Equal(t, 7*time.Second, time.Since(began), "waited exactly what GitHub asked (above the 5 s floor)")
				assert.Equal(t, int64(2), routeRequests(w, groupsRoute))
				assert.Equal(t, int64(1), routeRequests(w, mintRoute), "the token survives the retry")
				assert.Equal(t, "1", j.Outputs()["registered-runner-count"])
			})
		})
	}
	t.Run("a Retry-After past the deadline is never retried into", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			w.group("win", 1, "online", false, unityLabels...)
			w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: "/orgs/acme/actions/runner-groups", Kind: emulator.TooManyRequests429, RetryAfter: "600"})
			j := w.job(t)
			began := time.Now()
			err := preflight.Run(context.Background(), j.Deps())
			assert.Equal(t, preflight.ReasonAPIUnavailable, reason(t, err))
			// The shared contract honors Retry-After in full: a 429 is a
			// secondary rate limit, nothing is sent on the token before its
			// wait ends, and a call whose deadline comes first fails at
			// once, unsent, instead of sleeping to the deadline.
			assert.Zero(t, time.Since(began), "fails fast: the wait does not fit the 150 s deadline")
			assert.Equal(t, int64(1), routeRequests(w, groupsRoute))
			// It says so: no retry is announced, and the error names the
			// time GitHub asked for.
			assert.NotContains(t, j.Out.String(), "retrying in")
			assert.Contains(t, j.Out.String(), "not retrying: GitHub asked to wait until "+began.Add(600*time.Second).UTC().Format(time.RFC3339))
			assert.ErrorContains(t, err, "asked it to wait until "+began.Add(600*time.Second).UTC().Format(time.RFC3339)+" (Retry-After), after the preflight's 2m30s deadline, so the call was not retried")
		})
	})
}

// Persistent 5xx: the retries end at the shared 150 s deadline with
// RUNNER_INVENTORY_API_UNAVAILABLE, reported as an availability failure.
func TestDeadlineExhaustion(t *testing.T) {
	for name, path := range map[string]string{"inventory": "/orgs/acme/actions/runner-groups", "token mint": "/app/installations/"} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := newWorld(t)
				w.group("win", 1, "online", false, unityLabels...)
				w.Em.AddFault(emulator.Fault{PathPattern: path, Kind: emulator.ServerError, Status: 503})
				j := w.job(t)
				began := time.Now()
				err := preflight.Run(context.Background(), j.Deps())
				elapsed := time.Since(began)
				assert.Equal(t, preflight.ReasonAPIUnavailable, reason(t, err))
				assert.ErrorContains(t, err, "not evidence that a required runner is missing")
				assert.LessOrEqual(t, elapsed, preflight.Deadline, "never past the deadline")
				assert.Greater(t, elapsed, preflight.Deadline-preflight.RetryMax, "the budget was used")
				assert.Contains(t, j.Out.String(), "::warning::"+preflight.ReasonAPIUnavailable)
				assert.Empty(t, j.Outputs())
				assert.Contains(t, j.Summary(), preflight.ReasonAPIUnavailable)
				assert.NotContains(t, j.Summary(), "no registered runner")
			})
		})
	}
}

func TestInputsAreRefusedBeforeAnyRequest(t *testing.T) {
	cases := map[string]struct {
		input, value, code string
	}{
		"another owner":         {"owner", "evil-corp", preflight.CodeOwnerNotCaller},
		"owner pattern":         {"owner", "acme/other", actionio.CodePatternMismatch},
		"no label sets":         {"required-label-sets", "", actionio.CodeRequired},
		"label set grammar":     {"required-label-sets", `[["unity"]]`, "label-set-without-self-hosted"},
		"app id":                {"reader-app-id", "01", actionio.CodePatternMismatch},
		"no app id":             {"reader-app-id", "", actionio.CodeRequired},
		"no key":                {"reader-app-private-key", "", actionio.CodeRequired},
		"owner before the key":  {"owner", "evil-corp", preflight.CodeOwnerNotCaller},
		"same owner other case": {"owner", "ACME", ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := newWorld(t)
				w.group("win", 1, "online", false, unityLabels...)
				j := w.job(t).Input(tc.input, tc.value)
				if name == "owner before the key" {
					j.Input("reader-app-private-key", "not a key")
				}
				err := preflight.Run(context.Background(), j.Deps())
				if tc.code == "" {
					require.NoError(t, err)
					return
				}
				var ie *actionio.InputError
				var le *runners.LabelSetError
				switch {
				case errors.As(err, &ie):
					assert.Equal(t, tc.code, ie.Code)
				case errors.As(err, &le):
					assert.Equal(t, tc.code, le.Code)
				default:
					t.Fatalf("untyped refusal %v", err)
				}
				assert.Zero(t, w.Em.Metrics().Requests, "refused before any credential is used")
				assert.NotContains(t, j.Unmasked(), "not a key")
			})
		})
	}
}

func TestCallingRepositoryIsValidated(t *testing.T) {
	for _, repo := range []string{"", "acme", "acme/..", "acme/.", "acme/a b", "-acme/game"} {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			j := w.job(t)
			j.Env["GITHUB_REPOSITORY"] = repo
			var ie *actionio.InputError
			require.ErrorAs(t, preflight.Run(context.Background(), j.Deps()), &ie, repo)
			assert.Equal(t, preflight.CodeRepository, ie.Code)
		})
	}
}

func TestAnInvalidKeyIsNotEchoed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		j := w.job(t).Input("reader-app-private-key", "-----BEGIN RSA PRIVATE KEY-----\nsecretkeymaterial\n-----END RSA PRIVATE KEY-----")
		err := preflight.Run(context.Background(), j.Deps())
		assert.Equal(t, preflight.ReasonInventoryUnreadable, reason(t, err))
		assert.NotContains(t, err.Error(), "secretkeymaterial")
		assert.Contains(t, j.Out.String(), "::add-mask::secretkeymaterial")
		assert.Zero(t, w.Em.Metrics().Requests)
	})
}

// With short backoffs the per-call ceiling of 13 attempts ends the call
// before the deadline does.
func TestAttemptCeiling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		w.group("win", 1, "online", false, unityLabels...)
		w.Em.AddFault(emulator.Fault{PathPattern: "/orgs/acme/actions/runner-groups", Kind: emulator.ServerError, Status: 502})
		d := w.job(t).Deps()
		d.Jitter = func() float64 { return 0 } // every full-jitter draw at its 100 ms floor
		err := preflight.Run(context.Background(), d)
		assert.Equal(t, preflight.ReasonAPIUnavailable, reason(t, err))
		assert.ErrorContains(t, err, "after 13 attempt(s)")
		assert.Equal(t, int64(preflight.MaxAttempts), routeRequests(w, groupsRoute))
	})
}

// TestInputsAreTrimmedAsJavaScriptTrims: the inputs and GITHUB_REPOSITORY
// are trimmed with String.prototype.trim (a U+FEFF before the JSON is not
// part of it), and a label is "trimmed" by the same rule.
func TestInputsAreTrimmedAsJavaScriptTrims(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		w.group("win", 1, "online", false, unityLabels...)
		j := w.job(t).Input("required-label-sets", "\ufeff"+unitySets+"\u2028").Input("reader-app-id", "\ufeff"+strconv.Itoa(readerAppID)).Input("owner", "acme\ufeff")
		j.Env["GITHUB_REPOSITORY"] = "\ufeff" + j.Env["GITHUB_REPOSITORY"]
		require.NoError(t, preflight.Run(context.Background(), j.Deps()))
		assert.Equal(t, "1", j.Outputs()["registered-runner-count"])

		for _, label := range []string{"\ufeffunity", "unity\u3000"} {
			j = w.job(t).Input("required-label-sets", `[["self-hosted",`+strconv.Quote(label)+`]]`)
			var le *runners.LabelSetError
			require.ErrorAs(t, preflight.Run(context.Background(), j.Deps()), &le, "%q", label)
			assert.Equal(t, runners.CodeLabelUntrimmed, le.Code)
		}
	})
}
