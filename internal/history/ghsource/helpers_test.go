package ghsource_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history/ghsource"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history/histgen"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/store"
)

// generate builds and runs one history.
func generate(t *testing.T, o histgen.Options) (*histgen.World, *histgen.Truth) {
	t.Helper()
	w, err := histgen.New(o)
	require.NoError(t, err)
	truth, err := w.Run(context.Background())
	require.NoError(t, err)
	return w, truth
}

// client is a reader client on w's reader token (contents: read).
func client(t *testing.T, w *histgen.World) *ghclient.Client {
	t.Helper()
	c, err := ghclient.New(context.Background(), ghclient.Config{APIURL: "https://api.github.com/", Token: w.ReaderToken(),
		Transport: w.Emulator.Transport(), Clock: w.Clock, Jitter: func() float64 { return 0 }})
	require.NoError(t, err)
	return c
}

func options(t *testing.T, w *histgen.World) ghsource.Options {
	return ghsource.Options{Client: client(t, w), Owner: histgen.Owner, Repo: histgen.Repo, Branch: histgen.Branch, Lock: histgen.Lock}
}

// verify loads after cp and verifies with the generated writer and
// operator.
func verify(t *testing.T, o ghsource.Options, cp *history.Checkpoint, ack ...string) (*ghsource.Loaded, *history.Result) {
	t.Helper()
	l, err := ghsource.Load(context.Background(), o, cp)
	require.NoError(t, err)
	in := l.Input
	in.ServerURL = histgen.ServerURL
	in.Writers = []string{histgen.WriterLogin}
	in.Operators = []string{histgen.OperatorLogin}
	in.Acknowledged = ack
	return l, history.Verify(in)
}

type lockStateAlias = lockstate.State

// acquireExtra is one more acquire by a new job, as the writer would make
// it under cfg.
func acquireExtra(s *lockstate.State, cfg lockstate.Config, i int, now time.Time) error {
	run := strconv.Itoa(990000 + i)
	id := lockstate.Identity{HolderID: "example-org/late:" + run + ":build:default", Repository: "example-org/late", Workflow: "Unity build", Job: "build",
		RunID: run, RunAttempt: "1", RunURL: histgen.ServerURL + "/example-org/late/actions/runs/" + run, RunnerID: "late-runner-" + strconv.Itoa(i), QueuedAt: now}
	next, dec, err := lockstate.Acquire(s, cfg, lockstate.AcquireRequest{Identity: id, Lease: time.Hour}, now)
	if err != nil {
		return err
	}
	if !dec.Changed {
		return store.ErrNoChange
	}
	*s = *next
	return nil
}

// rewriting wraps the emulator's transport and edits responses.
type rewriting struct {
	base http.RoundTripper
	edit func(req *http.Request, resp *http.Response)
}

func (r rewriting) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.base.RoundTrip(req)
	if err == nil {
		r.edit(req, resp)
	}
	return resp, err
}

func clientWith(t *testing.T, w *histgen.World, rt http.RoundTripper) *ghclient.Client {
	t.Helper()
	c, err := ghclient.New(context.Background(), ghclient.Config{APIURL: "https://api.github.com/", Token: w.ReaderToken(),
		Transport: rt, Clock: w.Clock, Jitter: func() float64 { return 0 }, ETagCacheEntries: -1})
	require.NoError(t, err)
	return c
}

// truncating is a client behind a proxy that drops the commits list's
// Link header: the listing ends after its first page.
func truncating(t *testing.T, w *histgen.World) *ghclient.Client {
	return clientWith(t, w, rewriting{base: w.Emulator.Transport(), edit: func(req *http.Request, resp *http.Response) {
		if strings.HasSuffix(req.URL.Path, "/commits") {
			resp.Header.Del("Link")
		}
	}})
}

// tampering is a client behind a proxy that replaces the state file's bytes
// in Contents responses (keeping the blob id).
func tampering(t *testing.T, w *histgen.World) *ghclient.Client {
	return clientWith(t, w, rewriting{base: w.Emulator.Transport(), edit: func(req *http.Request, resp *http.Response) {
		if !strings.Contains(req.URL.Path, "/contents/locks/"+histgen.Lock+".json") || resp.StatusCode != http.StatusOK {
			return
		}
		body, _ := io.ReadAll(resp.Body)
		var m map[string]any
		if json.Unmarshal(body, &m) == nil {
			m["content"] = base64.StdEncoding.EncodeToString([]byte(`{"forged":true}`))
			body, _ = json.Marshal(m)
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Del("Content-Length")
	}})
}

func stringsReader(s string) io.Reader { return strings.NewReader(s) }
