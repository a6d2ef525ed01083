package prhead_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/prhead"
)

var head = strings.Repeat("c", 40)

func request() prhead.Request {
	return prhead.Request{APIURL: actiontest.APIURL, Repository: actiontest.Owner + "/" + actiontest.Consumer,
		Number: "5", ExpectedSHA: head, Token: actiontest.ConsumerToken}
}

func world(t *testing.T) *actiontest.World {
	w := actiontest.NewWorld(t, "")
	w.Em.SetPullRequest(actiontest.Owner, actiontest.Consumer, 5, "open", head)
	return w
}

func TestCheckCurrentHead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := world(t)
		res, err := prhead.Checker{Transport: w.Em.Transport()}.Check(context.Background(), request())
		require.NoError(t, err)
		assert.Equal(t, prhead.Result{Current: true, HeadSHA: head}, res)
		m := w.Em.Metrics()
		assert.Equal(t, int64(1), m.Requests)
	})
}

// go-github v66 arms a client-side gate after a 403 with a Retry-After or an
// exhausted primary limit and then answers without sending; the guard's
// retries must still reach GitHub (ghclient's transport keeps the gates
// unarmed).
func TestRateLimitedForbiddenIsRetriedOverTheNetwork(t *testing.T) {
	for _, f := range []emulator.Fault{
		{PathPattern: "/repos/acme/game/pulls/", Kind: emulator.SecondaryRateLimit403, RetryAfter: "3", Count: 2},
		{PathPattern: "/repos/acme/game/pulls/", Kind: emulator.SecondaryRateLimit403, RetryAfter: "none", Count: 2},
	} {
		t.Run("retry-after="+f.RetryAfter, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := world(t)
				w.Em.AddFault(f)
				began := time.Now()
				_, err := prhead.Checker{Transport: w.Em.Transport()}.Check(context.Background(), request())
				if f.RetryAfter == "none" {
					// A 403 without Retry-After or an exhausted limit is not a rate limit.
					require.ErrorIs(t, err, prhead.ErrCheckFailed)
					assert.Equal(t, int64(1), w.Em.Metrics().Requests)
					return
				}
				require.NoError(t, err)
				assert.Equal(t, int64(3), w.Em.Metrics().Requests, "three requests sent, none answered client-side")
				assert.Equal(t, 6*time.Second, time.Since(began), "Retry-After 3 s honored twice")
			})
		})
	}
}

func TestHTTPDateRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := world(t)
		at := time.Now().Add(4 * time.Second).UTC().Format(http.TimeFormat)
		w.Em.AddFault(emulator.Fault{PathPattern: "/repos/acme/game/pulls/", Kind: emulator.TooManyRequests429, RetryAfter: at, Count: 1})
		began := time.Now()
		_, err := prhead.Checker{Transport: w.Em.Transport()}.Check(context.Background(), request())
		require.NoError(t, err)
		assert.Equal(t, 4*time.Second, time.Since(began))
	})
}

func TestTransportErrorsAreRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := world(t)
		w.Em.AddFault(emulator.Fault{PathPattern: "/repos/acme/game/pulls/", Kind: emulator.TransportReset, Count: 2})
		began := time.Now()
		res, err := prhead.Checker{Transport: w.Em.Transport()}.Check(context.Background(), request())
		require.NoError(t, err)
		assert.True(t, res.Current)
		assert.Equal(t, 750*time.Millisecond, time.Since(began), "250 ms then 500 ms")
	})
}

func TestNotFoundIsTerminal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := world(t)
		req := request()
		req.Number = "6"
		_, err := prhead.Checker{Transport: w.Em.Transport()}.Check(context.Background(), req)
		require.ErrorIs(t, err, prhead.ErrCheckFailed)
		assert.ErrorContains(t, err, "HTTP 404")
		assert.Equal(t, int64(1), w.Em.Metrics().Requests)
	})
}

func TestMalformedRequestsSendNothing(t *testing.T) {
	for name, mutate := range map[string]func(*prhead.Request){
		"repository":     func(r *prhead.Request) { r.Repository = "acme" },
		"number":         func(r *prhead.Request) { r.Number = "05" },
		"negative":       func(r *prhead.Request) { r.Number = "-5" },
		"api url":        func(r *prhead.Request) { r.APIURL = "ftp://example.test" },
		"no token":       func(r *prhead.Request) { r.Token = "" },
		"nested repo":    func(r *prhead.Request) { r.Repository = "acme/game/x" },
		"empty owner":    func(r *prhead.Request) { r.Repository = "/game" },
		"number too big": func(r *prhead.Request) { r.Number = "99999999999999999999999" },
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := world(t)
				req := request()
				mutate(&req)
				_, err := prhead.Checker{Transport: w.Em.Transport()}.Check(context.Background(), req)
				require.ErrorIs(t, err, prhead.ErrCheckFailed)
				assert.Zero(t, w.Em.Metrics().Requests)
				assert.NotContains(t, err.Error(), actiontest.ConsumerToken)
			})
		})
	}
}

func TestCancelledContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := world(t)
		w.Em.AddFault(emulator.Fault{PathPattern: "/repos/acme/game/pulls/", Kind: emulator.ServerError, Status: 503})
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			time.Sleep(100 * time.Millisecond)
			cancel()
		}()
		_, err := prhead.Checker{Transport: w.Em.Transport()}.Check(ctx, request())
		require.ErrorIs(t, err, context.Canceled)
	})
}
